//! Outgoing requests: [`OutgoingCall`] (a future of the answer) and
//! [`CancelHandle`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Sleep;

use super::outbox::{OutboxClosed, Reserved};
use super::shared::{CallResult, PendingEntry, Shared};
use super::{NOTIFICATION_SCOPE, lock};
use crate::error::{CallError, ConnectionError};
use crate::message::{self, RequestId};

type ReserveFuture = Pin<Box<dyn Future<Output = Result<Reserved, OutboxClosed>> + Send>>;

enum State {
    /// Not yet queued: waiting for room in the outgoing queue.
    Reserving {
        frame: Vec<u8>,
        reserve: ReserveFuture,
    },
    /// Queued; waiting for the answer.
    Waiting,
    /// Failed before anything was sent.
    Failed(Option<CallError>),
    Done,
}

/// How [`CancelHandle::cancel`] treats the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelMode {
    /// Send `$/cancel_request` and keep waiting for the peer's answer
    /// (usually `-32800`, or a result if it finished first).
    KeepWaiting,
    /// Send `$/cancel_request` and resolve the call with
    /// [`CallError::Cancelled`] at once; a late answer is dropped.
    Abandon,
}

/// An outgoing request; resolves to the peer's result or a [`CallError`].
///
/// The request is queued when first polled (calls go out in the order they
/// are first awaited) and its id is fixed at creation. Dropping it before the
/// answer abandons it: the peer is sent `$/cancel_request` if the request
/// went out.
#[must_use = "a request is sent only when awaited"]
pub struct OutgoingCall {
    shared: Arc<Shared>,
    id: i64,
    state: State,
    rx: Option<oneshot::Receiver<CallResult>>,
    timeout: Option<Duration>,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl std::fmt::Debug for OutgoingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingCall")
            .field("id", &self.id)
            .finish()
    }
}

impl OutgoingCall {
    pub(crate) fn new(shared: Arc<Shared>, method: &str, params: Option<&RawValue>) -> Self {
        let id = shared.next_id();
        let timeout = shared.options.request_timeout;
        let bypass_barrier = NOTIFICATION_SCOPE
            .try_with(|conn| *conn == Arc::as_ptr(&shared) as usize)
            .unwrap_or(false);
        let (tx, rx) = oneshot::channel();
        let state = {
            let mut table = lock(&shared.pending);
            if let Some(reason) = &table.closed {
                State::Failed(Some(ConnectionError::Closed(reason.clone()).into()))
            } else {
                table.map.insert(
                    id,
                    PendingEntry {
                        tx,
                        sent: false,
                        bypass_barrier,
                    },
                );
                let frame = message::encode_request(&RequestId::Number(id), method, params);
                let reserve_shared = Arc::clone(&shared);
                State::Reserving {
                    frame,
                    reserve: Box::pin(async move { reserve_shared.outbox.reserve().await }),
                }
            }
        };
        Self {
            shared,
            id,
            state,
            rx: Some(rx),
            timeout,
            deadline: None,
        }
    }

    pub(crate) fn failed(shared: Arc<Shared>, error: CallError) -> Self {
        let id = shared.next_id();
        Self {
            shared,
            id,
            state: State::Failed(Some(error)),
            rx: None,
            timeout: None,
            deadline: None,
        }
    }

    /// The request's id on the wire.
    pub fn id(&self) -> RequestId {
        RequestId::Number(self.id)
    }

    /// Fails the call with [`CallError::Timeout`] (and sends
    /// `$/cancel_request`) if no answer arrives within `timeout` of the first
    /// poll. Overrides the connection's default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Delivers this call's answer as soon as it is read, ahead of the
    /// ordering barrier, as calls made inside a notification handler get
    /// automatically. For hosts whose notification handlers run outside the
    /// dispatcher (a binding's event loop): a call such a handler awaits
    /// must not wait for the handler to finish. Call before the first poll.
    pub fn skip_barrier(self) -> Self {
        if let Some(entry) = lock(&self.shared.pending).map.get_mut(&self.id) {
            // After the first poll the answer may already wait behind the
            // barrier: the flag would silently do nothing.
            debug_assert!(!entry.sent, "skip_barrier after the request was sent");
            entry.bypass_barrier = true;
        }
        self
    }

    /// Removes any timeout, including the connection's default.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }

    /// Awaits the answer and decodes it as `T`; a result that does not
    /// decode is [`CallError::InvalidResult`].
    pub async fn decode<T: serde::de::DeserializeOwned>(self) -> Result<T, CallError> {
        let raw = self.await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }

    /// A handle that cancels this call from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle {
            shared: Arc::clone(&self.shared),
            id: self.id,
        }
    }

    fn queue(&mut self, reserved: Reserved, frame: Vec<u8>) -> Result<(), CallError> {
        let mut table = lock(&self.shared.pending);
        let Some(entry) = table.map.get_mut(&self.id) else {
            // Cancelled (or the connection closed) while waiting for room:
            // never send it. The answer is already in `rx`.
            return Ok(());
        };
        if self.shared.outbox.push_reserved(reserved, frame).is_err() {
            table.map.remove(&self.id);
            return Err(self.shared.closed_error().into());
        }
        entry.sent = true;
        Ok(())
    }

    fn on_timeout(&mut self) -> Option<CallError> {
        let entry = lock(&self.shared.pending).map.remove(&self.id)?;
        if entry.sent {
            self.shared.send_cancel(self.id);
        }
        Some(CallError::Timeout)
    }
}

impl Future for OutgoingCall {
    type Output = CallResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallResult> {
        let this = &mut *self;
        if this.deadline.is_none()
            && let Some(t) = this.timeout
        {
            this.deadline = Some(Box::pin(tokio::time::sleep(t)));
        }
        loop {
            match &mut this.state {
                State::Failed(e) => {
                    let e = e.take().unwrap_or(CallError::Cancelled);
                    this.state = State::Done;
                    return Poll::Ready(Err(e));
                }
                State::Done => {
                    return Poll::Ready(Err(CallError::InvalidParams(
                        "OutgoingCall polled after completion".into(),
                    )));
                }
                State::Reserving { reserve, .. } => match reserve.as_mut().poll(cx) {
                    Poll::Pending => break,
                    Poll::Ready(reserved) => {
                        let State::Reserving { frame, .. } =
                            std::mem::replace(&mut this.state, State::Waiting)
                        else {
                            continue;
                        };
                        let queued = match reserved {
                            Ok(reserved) => this.queue(reserved, frame),
                            Err(OutboxClosed) => {
                                lock(&this.shared.pending).map.remove(&this.id);
                                Err(this.shared.closed_error().into())
                            }
                        };
                        if let Err(e) = queued {
                            this.state = State::Failed(Some(e));
                        }
                    }
                },
                State::Waiting => {
                    let Some(rx) = this.rx.as_mut() else {
                        this.state = State::Failed(Some(this.shared.closed_error().into()));
                        continue;
                    };
                    if let Poll::Ready(result) = Pin::new(rx).poll(cx) {
                        this.state = State::Done;
                        return Poll::Ready(
                            result.unwrap_or_else(|_| Err(this.shared.closed_error().into())),
                        );
                    }
                    break;
                }
            }
        }
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
            && let Some(e) = this.on_timeout()
        {
            this.state = State::Done;
            return Poll::Ready(Err(e));
        }
        Poll::Pending
    }
}

impl Drop for OutgoingCall {
    fn drop(&mut self) {
        if matches!(self.state, State::Done | State::Failed(_)) {
            return;
        }
        let entry = lock(&self.shared.pending).map.remove(&self.id);
        if entry.is_some_and(|e| e.sent) {
            self.shared.send_cancel(self.id);
        }
    }
}

/// Cancels an [`OutgoingCall`] from any thread. Cheap to clone.
#[derive(Clone)]
pub struct CancelHandle {
    shared: Arc<Shared>,
    id: i64,
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("id", &self.id)
            .finish()
    }
}

impl CancelHandle {
    /// The id of the request this cancels.
    pub fn id(&self) -> RequestId {
        RequestId::Number(self.id)
    }

    /// Cancels the call (see [`CancelMode`]). A call not yet sent is never
    /// sent and resolves [`CallError::Cancelled`] in either mode. Returns
    /// `false` when the call had already been answered or abandoned.
    pub fn cancel(&self, mode: CancelMode) -> bool {
        let mut table = lock(&self.shared.pending);
        let Some(entry) = table.map.get(&self.id) else {
            return false;
        };
        if entry.sent && mode == CancelMode::KeepWaiting {
            drop(table);
            self.shared.send_cancel(self.id);
            return true;
        }
        let Some(entry) = table.map.remove(&self.id) else {
            return false;
        };
        drop(table);
        if entry.sent {
            self.shared.send_cancel(self.id);
        }
        let _ = entry.tx.send(Err(CallError::Cancelled));
        true
    }
}
