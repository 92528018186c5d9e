//! The reader task and the dispatcher task.
//!
//! The **reader** turns frames into messages and never runs host code: it
//! answers malformed frames, handles `$/cancel_request`, registers incoming
//! requests, matches responses to pending calls, and queues everything else
//! in arrival order on the bounded inbox (a full inbox slows the reader:
//! back-pressure reaches the peer through the pipe).
//!
//! The **dispatcher** takes the inbox in order: a notification's handler is
//! awaited before the next message is dispatched; a request's handler is
//! started (not awaited), so requests run concurrently; a response is handed
//! to its caller only here, after every notification queued before it was
//! handled. That is the ordering barrier: `prompt().await` returns after all
//! of the prompt's `session/update`s were handled.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::incoming::{self, IncomingNotification, IncomingRequest, Responder};
use super::shared::{CallResult, Shared};
use super::{Direction, Event, Handler, NOTIFICATION_SCOPE, Peer, lock};
use crate::error::{CloseReason, RpcError};
use crate::framing::{Frame, FrameReader};
use crate::message::{self, DecodeError, Message, RequestId};
use crate::transport::BoxReader;

pub(crate) enum Inbound {
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    Request(IncomingRequest, Responder),
    Response {
        tx: oneshot::Sender<CallResult>,
        result: CallResult,
    },
    /// End of the peer's stream (always the last item).
    End(CloseReason),
}

pub(crate) async fn run_reader(
    shared: Arc<Shared>,
    reader: BoxReader,
    inbox: mpsc::Sender<Inbound>,
) {
    let mut frames = FrameReader::new(
        reader,
        shared.options.framing,
        shared.options.max_frame_size,
    );
    loop {
        let next = tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            next = frames.next_frame() => next,
        };
        let item = match next {
            Ok(Some(Frame::Message(bytes))) => {
                shared.trace(Direction::Incoming, &bytes);
                on_message(&shared, &bytes)
            }
            Ok(Some(frame @ Frame::Oversized { .. })) => {
                on_oversized(&shared, frame);
                None
            }
            Ok(Some(Frame::BadHeader(detail))) => {
                shared.event(Event::BadHeader(detail));
                None
            }
            Ok(None) => Some(Inbound::End(CloseReason::PeerClosed)),
            Err(e) => Some(Inbound::End(CloseReason::Io(
                format!("read failed: {e}").into(),
            ))),
        };
        let Some(item) = item else { continue };
        let end = matches!(item, Inbound::End(_));
        let sent = tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            sent = inbox.send(item) => sent.is_ok(),
        };
        if end || !sent {
            return;
        }
    }
}

fn on_message(shared: &Arc<Shared>, bytes: &Bytes) -> Option<Inbound> {
    match message::decode(bytes) {
        Ok(Message::Request { id, method, params }) => {
            let state = incoming::register(shared, &id)?;
            let request = IncomingRequest {
                id: id.clone(),
                method,
                params,
                cancellation: state.token.clone(),
                peer: Peer::new(Arc::clone(shared)),
            };
            let responder = Responder::new(Arc::clone(shared), id, state);
            Some(Inbound::Request(request, responder))
        }
        Ok(Message::Notification { method, params }) => {
            if method == "$/cancel_request" {
                incoming::cancel_from_peer(shared, params.as_deref());
                return None;
            }
            Some(Inbound::Notification { method, params })
        }
        Ok(Message::Response { id, result }) => match id {
            Some(RequestId::Number(n)) => deliver(shared, n, result),
            id => {
                shared.event(Event::UnmatchedResponse { id, result });
                None
            }
        },
        Err(e) => {
            let DecodeError {
                error,
                id,
                answerable,
            } = *e;
            if answerable {
                shared.send_response(id.as_ref(), Err(&error));
            }
            shared.event(Event::InvalidFrame {
                error,
                answered: answerable,
            });
            None
        }
    }
}

/// Matches a response to its pending call. Calls made from inside a
/// notification handler are completed here; all others go through the
/// dispatcher so the ordering barrier holds.
fn deliver(
    shared: &Arc<Shared>,
    id: i64,
    result: Result<Box<RawValue>, RpcError>,
) -> Option<Inbound> {
    let entry = lock(&shared.pending).map.remove(&id);
    let Some(entry) = entry else {
        shared.event(Event::UnmatchedResponse {
            id: Some(RequestId::Number(id)),
            result,
        });
        return None;
    };
    let result = result.map_err(Into::into);
    if entry.bypass_barrier {
        let _ = entry.tx.send(result);
        return None;
    }
    Some(Inbound::Response {
        tx: entry.tx,
        result,
    })
}

fn on_oversized(shared: &Arc<Shared>, frame: Frame) {
    let Frame::Oversized {
        size,
        id,
        is_request,
    } = frame
    else {
        return;
    };
    let limit = shared.options.max_frame_size;
    let id = id.and_then(|text| serde_json::from_str::<RequestId>(&text).ok());
    let error = RpcError::invalid_request(format!(
        "frame of {size} bytes exceeds the limit of {limit} bytes"
    ))
    .with_data(serde_json::json!({ "size": size, "limit": limit }));
    let mut answered = false;
    if is_request {
        if let Some(id) = &id {
            answered = shared.send_response(Some(id), Err(&error));
        }
    } else if let Some(RequestId::Number(n)) = id {
        // An answer to one of our requests was too large: fail that call
        // rather than leave it pending forever.
        let entry = lock(&shared.pending).map.remove(&n);
        if let Some(entry) = entry {
            let _ = entry.tx.send(Err(RpcError::new(
                crate::codes::INTERNAL_ERROR,
                "the peer's response exceeded the maximum frame size",
            )
            .with_data(serde_json::json!({ "size": size, "limit": limit }))
            .into()));
        }
    }
    shared.event(Event::OversizedFrame { size, id, answered });
}

pub(crate) async fn run_dispatcher(
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    mut inbox: mpsc::Receiver<Inbound>,
) {
    let scope = Arc::as_ptr(&shared) as usize;
    let mut batch = Vec::with_capacity(64);
    loop {
        let n = tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            n = inbox.recv_many(&mut batch, 64) => n,
        };
        if n == 0 {
            return;
        }
        for item in batch.drain(..) {
            match item {
                Inbound::Notification { method, params } => {
                    let notification = IncomingNotification {
                        method,
                        params,
                        peer: Peer::new(Arc::clone(&shared)),
                    };
                    let handled = CatchUnwind(handler.on_notification(notification));
                    let outcome = tokio::select! {
                        biased;
                        () = shared.stop.cancelled() => return,
                        outcome = NOTIFICATION_SCOPE.scope(scope, handled) => outcome,
                    };
                    if let Err(panic) = outcome {
                        shared.event(Event::HandlerPanicked {
                            message: panic_message(&*panic),
                        });
                    }
                }
                Inbound::Request(request, responder) => {
                    let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        handler.on_request(request, responder);
                    }));
                    if let Err(panic) = started {
                        // The responder was dropped during unwinding and
                        // answered -32603.
                        shared.event(Event::HandlerPanicked {
                            message: panic_message(&*panic),
                        });
                    }
                }
                Inbound::Response { tx, result } => {
                    let _ = tx.send(result);
                }
                Inbound::End(reason) => {
                    shared.finish_input(reason);
                    return;
                }
            }
        }
    }
}

/// Polls a boxed future, turning a panic into an error.
struct CatchUnwind(super::BoxFuture<'static, ()>);

impl Future for CatchUnwind {
    type Output = Result<(), Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) => Poll::Ready(Ok(())),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a handler panicked".to_owned())
}
