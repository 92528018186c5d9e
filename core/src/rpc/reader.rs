//! The reader, the dispatcher, and the host-driven reader.
//!
//! The **reader** turns frames into messages: it answers malformed frames,
//! handles `$/cancel_request`, registers incoming requests, matches
//! responses to pending calls, and hands everything else on in arrival
//! order ([`Dispatch`]). It never runs host code that could wait for the
//! peer, so a handler's nested request is always answered.
//!
//! **Dispatch** happens in one of two ways, chosen when the connection
//! starts:
//! * [`Dispatch::Task`] (Rust handlers): the reader queues messages on a
//!   bounded channel for the **dispatcher** task, which awaits each
//!   notification's handler before the next message (a full channel slows
//!   the reader: back-pressure reaches the peer through the pipe), starts
//!   each request's handler (not awaited: requests run concurrently) and
//!   completes each ordered call. That is the ordering barrier:
//!   `prompt().await` returns after all of the prompt's `session/update`s
//!   were handled.
//! * [`Dispatch::Inline`] (a binding's inbox, `host/inbox.rs`): the reader
//!   dispatches each message itself as it reads it. The handler's
//!   notification futures only wait for room in the inbox, never for the
//!   peer, so the reader may await them; the barrier is kept by the inbox,
//!   which the host drains in order. No channel, no second task.
//!
//! The reader runs as a task ([`run_reader`]) or, when a binding asks for it
//! and the transport is a descriptor, on the host's own event loop
//! ([`HostReader`]): the host watches the descriptor and calls
//! [`HostReader::pump`], which reads and dispatches on the host's thread.
//! Then a round trip, read to answer, crosses no thread at all.
//!
//! The input ends at end of stream, or, for a spawned agent, once the agent
//! process has exited, [`AGENT_EXIT_DRAIN`] has passed and nothing more is
//! ready to be read (a process it started may hold its stdout open forever).
//! Both end it the same way: pending calls fail, requests in flight get
//! `flush_timeout` to answer.
//!
//! [`AGENT_EXIT_DRAIN`]: crate::transport::process::AGENT_EXIT_DRAIN

use std::any::Any;
use std::future::Future;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::responder::{self, IncomingNotification, IncomingRequest, Responder};
use super::shared::{CallResult, PendingEntry, Shared};
use super::{BoxFuture, Direction, Event, Handler, NOTIFICATION_SCOPE, Peer, lock};
use crate::error::{CloseReason, RpcError};
use crate::framing::{Decoded, Frame, FrameDecoder, FrameReader};
use crate::message::{self, DecodeError, Message, RequestId};
use crate::transport::fd::{self, Mode};
use crate::transport::process::ProcessStatus;

pub(crate) enum Inbound {
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    Request(IncomingRequest, Responder),
    Response {
        entry: PendingEntry,
        result: CallResult,
    },
    /// End of the peer's stream (always the last item).
    End(CloseReason),
}

/// Where the reader hands what it read (see the module docs).
pub(crate) enum Dispatch {
    /// To the dispatcher task.
    Task(mpsc::Sender<Inbound>),
    /// Dispatched by the reader itself, in order.
    Inline(Arc<dyn Handler>),
}

/// A source of frames: a [`FrameReader`] in a task, or [`HostFrames`] on a
/// host's loop.
pub(crate) trait Frames: Send {
    fn next_frame(&mut self) -> impl Future<Output = std::io::Result<Option<Frame>>> + Send;
}

impl<R: tokio::io::AsyncRead + Unpin + Send> Frames for FrameReader<R> {
    fn next_frame(&mut self) -> impl Future<Output = std::io::Result<Option<Frame>>> + Send {
        FrameReader::next_frame(self)
    }
}

/// Frames handled before a pump yields to the host's loop.
const PUMP_BUDGET: usize = 128;

pub(crate) async fn run_reader(shared: Arc<Shared>, mut frames: impl Frames, dispatch: Dispatch) {
    let mut since_yield = 0usize;
    // A spawned agent that exited ends the input even when no end of stream
    // comes (a process it started holds its stdout): see `AGENT_EXIT_DRAIN`.
    let mut agent_gone = std::pin::pin!(ProcessStatus::exited_and_drained(
        shared.process_status.clone()
    ));
    loop {
        let item = tokio::select! {
            biased;
            () = shared.stop.cancelled() => return,
            next = frames.next_frame() => on_frame(&shared, next),
            // Only once no frame is ready: what the agent wrote is read first.
            exit = &mut agent_gone => Some(Inbound::End(CloseReason::AgentExited(exit))),
        };
        let Some(item) = item else { continue };
        let request = matches!(item, Inbound::Request(..));
        if !hand_on(&shared, &dispatch, item).await {
            return;
        }
        if request {
            // Bounded like notifications: wait while too many requests are
            // unanswered (the agent's exit still ends the input meanwhile).
            let exited = tokio::select! {
                biased;
                () = shared.request_room() => None,
                exit = &mut agent_gone => Some(exit),
            };
            if let Some(exit) = exited {
                hand_on(
                    &shared,
                    &dispatch,
                    Inbound::End(CloseReason::AgentExited(exit)),
                )
                .await;
                return;
            }
        }
        // A reader on a host's loop gives the loop a turn now and then
        // (frames already buffered would otherwise be read in one go).
        since_yield += 1;
        if since_yield >= PUMP_BUDGET {
            since_yield = 0;
            YieldOnce(false).await;
        }
    }
}

/// Hands one item to the dispatch; `false` when the reader must stop (the
/// item ended the input, or the connection stopped).
async fn hand_on(shared: &Arc<Shared>, dispatch: &Dispatch, item: Inbound) -> bool {
    let end = matches!(item, Inbound::End(_));
    match dispatch {
        Dispatch::Task(inbox) => {
            let sent = tokio::select! {
                biased;
                () = shared.stop.cancelled() => return false,
                sent = inbox.send(item) => sent.is_ok(),
            };
            sent && !end
        }
        Dispatch::Inline(handler) => dispatch_one(shared, handler, item).await && !end,
    }
}

/// What the reader makes of one read: a message to dispatch, the end of the
/// input, or nothing (a frame handled on the spot).
fn on_frame(shared: &Arc<Shared>, next: std::io::Result<Option<Frame>>) -> Option<Inbound> {
    match next {
        Ok(Some(Frame::Message(bytes))) => {
            shared.trace(Direction::Incoming, &bytes);
            on_message(shared, &bytes)
        }
        Ok(Some(frame @ Frame::Oversized { .. })) => {
            on_oversized(shared, frame);
            None
        }
        Ok(Some(Frame::BadHeader(detail))) => {
            shared.event(Event::BadHeader(detail));
            None
        }
        Ok(None) => Some(Inbound::End(CloseReason::PeerClosed)),
        // A socket whose peer closed with our data unread in its buffer
        // reports a reset: the peer is gone all the same.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            Some(Inbound::End(CloseReason::PeerClosed))
        }
        Err(e) => Some(Inbound::End(CloseReason::from_read_error(&e))),
    }
}

/// Returns `Pending` once, waking its waker first (a cooperative yield).
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn on_message(shared: &Arc<Shared>, bytes: &Bytes) -> Option<Inbound> {
    match message::decode(bytes) {
        Ok(Message::Request { id, method, params }) => {
            let state = responder::register(shared, &id)?;
            let request = IncomingRequest {
                id: id.clone(),
                method,
                params,
                cancellation: state.token.clone(),
                peer: Peer::new(Arc::clone(shared)),
                signals: Arc::clone(&state),
            };
            let responder = Responder::new(Arc::clone(shared), id, state);
            Some(Inbound::Request(request, responder))
        }
        Ok(Message::Notification { method, params }) => {
            if method == "$/cancel_request" {
                responder::cancel_from_peer(shared, params.as_deref());
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

/// Matches a response to its pending call. Calls that skip the barrier are
/// completed here; all others are dispatched in order.
fn deliver(
    shared: &Arc<Shared>,
    id: i64,
    result: Result<Box<RawValue>, RpcError>,
) -> Option<Inbound> {
    let Some(entry) = shared.take_pending(id) else {
        shared.event(Event::UnmatchedResponse {
            id: Some(RequestId::Number(id)),
            result,
        });
        return None;
    };
    let result = result.map_err(Into::into);
    if entry.bypass_barrier {
        entry.complete(result);
        return None;
    }
    Some(Inbound::Response { entry, result })
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
        if let Some(entry) = shared.take_pending(n) {
            entry.complete(Err(RpcError::new(
                crate::codes::INTERNAL_ERROR,
                "the peer's response exceeded the maximum frame size",
            )
            .with_data(serde_json::json!({ "size": size, "limit": limit }))
            .into()));
        }
    }
    shared.event(Event::OversizedFrame { size, id, answered });
}

/// Dispatches one message; `false` when the connection stopped meanwhile.
async fn dispatch_one(shared: &Arc<Shared>, handler: &Arc<dyn Handler>, item: Inbound) -> bool {
    match item {
        Inbound::Notification { method, params } => {
            let notification = IncomingNotification {
                method,
                params,
                peer: Peer::new(Arc::clone(shared)),
            };
            let scope = Arc::as_ptr(shared) as usize;
            let handled = CatchUnwind(handler.on_notification(notification));
            let outcome = tokio::select! {
                biased;
                () = shared.stop.cancelled() => return false,
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
        Inbound::Response { entry, result } => entry.complete(result),
        Inbound::End(reason) => {
            shared.finish_input(reason);
            return false;
        }
    }
    true
}

pub(crate) async fn run_dispatcher(
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    mut inbox: mpsc::Receiver<Inbound>,
) {
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
            if !dispatch_one(&shared, &handler, item).await {
                return;
            }
        }
    }
}

/// Polls a future, turning a panic into an error.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(fut).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// Runs one of the engine's own tasks; if it panics (a bug in libacp), the
/// connection closes with [`CloseReason::Internal`] saying which task, so
/// pending calls fail and the host sees the close instead of a connection
/// that silently stopped.
pub(crate) async fn supervised(
    shared: Arc<Shared>,
    task: &'static str,
    fut: impl Future<Output = ()> + Send + 'static,
) {
    let outcome = CatchUnwind(Box::pin(fut)).await;
    if let Err(panic) = outcome {
        shared.internal_failure(task, &panic_message(&*panic));
    }
}

pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a handler panicked".to_owned())
}

/// Frames read straight from a descriptor by the host's thread: `read(2)`
/// until it would block, then `Pending` without any waker (the host's own
/// poller says when the descriptor is readable again).
pub(crate) struct HostFrames {
    decoder: FrameDecoder,
    fd: RawFd,
    mode: Mode,
    /// Set when the last poll stopped because the descriptor had nothing.
    wants_read: Arc<AtomicBool>,
}

impl HostFrames {
    fn poll_frame(&mut self) -> Poll<std::io::Result<Option<Frame>>> {
        loop {
            match self.decoder.next_frame() {
                Decoded::Frame(frame) => return Poll::Ready(Ok(Some(frame))),
                Decoded::End => return Poll::Ready(Ok(None)),
                Decoded::NeedBytes => {}
            }
            let buf = self.decoder.read_buffer();
            let spare = buf.spare_capacity_mut();
            match fd::read_now(self.fd, self.mode, spare) {
                Ok(0) => self.decoder.end_of_stream(),
                Ok(n) => {
                    // SAFETY: `read_now` initialized `n` bytes of the spare
                    // capacity, right after the buffer's contents.
                    unsafe { buf.set_len(buf.len() + n) };
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.wants_read.store(true, Ordering::SeqCst);
                    return Poll::Pending;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl Frames for HostFrames {
    fn next_frame(&mut self) -> impl Future<Output = std::io::Result<Option<Frame>>> + Send {
        std::future::poll_fn(|_| self.poll_frame())
    }
}

/// What [`HostReader::pump`] left the reader waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PumpState {
    /// Everything available was read: call `pump` again when the descriptor
    /// is readable.
    Reading,
    /// More is buffered than one pump handles: call `pump` again soon (after
    /// letting the loop run other work), whether or not the descriptor is
    /// readable. Keep watching the descriptor.
    Again,
    /// Waiting for something other than input (room in the host's inbox):
    /// stop watching the descriptor; the wake callback is called when the
    /// reader can go on (then [`HostReader::take_pump_request`] is true).
    Waiting,
    /// The reader is done (end of stream, error, or the connection closed):
    /// stop watching the descriptor and drop the [`HostReader`].
    Finished,
}

/// Wakes the host when the reader can go on (see [`PumpState::Waiting`]).
struct PumpWaker {
    requested: AtomicBool,
    /// A pump is polling right now: it notices the request itself.
    polling: AtomicBool,
    wake: Arc<dyn Fn() + Send + Sync>,
}

impl Wake for PumpWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.requested.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst) {
            (self.wake)();
        }
    }
}

/// The read side of a connection driven by a host's event loop: the host
/// watches [`HostReader::fd`] for readability and calls
/// [`HostReader::pump`], which reads what is available and dispatches it on
/// the calling thread (into the host's inbox). Made by
/// `Connection::start_host_read`; owned by the host.
///
/// Threads: `pump` is called from one thread at a time (the host's loop);
/// the wake callback may be called from any thread.
///
/// Lifetime: the descriptor stays open until this handle is dropped, so the
/// host can stop watching it first (a descriptor number closed under a
/// poller could be reused by another file). Dropping the handle before it
/// finished closes the connection, since nothing would read it any more.
pub struct HostReader {
    fd: OwnedFd,
    future: Mutex<Option<BoxFuture<'static, ()>>>,
    wants_read: Arc<AtomicBool>,
    waker: Arc<PumpWaker>,
    shared: Weak<Shared>,
}

impl std::fmt::Debug for HostReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostReader")
            .field("fd", &self.fd.as_raw_fd())
            .finish_non_exhaustive()
    }
}

impl HostReader {
    /// A reader of `fd` (non-blocking, in `mode`) dispatching to `handler`
    /// inline; `wake` is called (from any thread) when a pump is wanted.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        fd: OwnedFd,
        mode: Mode,
        handler: Arc<dyn Handler>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let wants_read = Arc::new(AtomicBool::new(false));
        let frames = HostFrames {
            decoder: FrameDecoder::new(shared.options.framing, shared.options.max_frame_size),
            fd: fd.as_raw_fd(),
            mode,
            wants_read: Arc::clone(&wants_read),
        };
        let future = run_reader(Arc::clone(shared), frames, Dispatch::Inline(handler));
        Self {
            fd,
            future: Mutex::new(Some(Box::pin(future))),
            wants_read,
            waker: Arc::new(PumpWaker {
                // The first pump is the host's to make.
                requested: AtomicBool::new(true),
                polling: AtomicBool::new(false),
                wake,
            }),
            shared: Arc::downgrade(shared),
        }
    }

    /// The descriptor to watch for readability.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Whether a pump was asked for since the last one (and clears it): the
    /// host's wake handler checks this.
    pub fn take_pump_request(&self) -> bool {
        self.waker.requested.swap(false, Ordering::SeqCst)
    }

    /// Reads what is available and dispatches it, on the calling thread.
    /// Never blocks. Returns what to do next (see [`PumpState`]).
    pub fn pump(&self) -> PumpState {
        let mut slot = lock(&self.future);
        let Some(future) = slot.as_mut() else {
            return PumpState::Finished;
        };
        let Some(shared) = self.shared.upgrade() else {
            *slot = None;
            return PumpState::Finished;
        };
        let _runtime = shared.runtime.enter();
        self.waker.requested.store(false, Ordering::SeqCst);
        self.wants_read.store(false, Ordering::SeqCst);
        self.waker.polling.store(true, Ordering::SeqCst);
        let waker = Waker::from(Arc::clone(&self.waker));
        let mut cx = Context::from_waker(&waker);
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
        self.waker.polling.store(false, Ordering::SeqCst);
        match polled {
            Ok(Poll::Ready(())) => {
                *slot = None;
                PumpState::Finished
            }
            Err(panic) => {
                *slot = None;
                drop(slot);
                shared.internal_failure("reader", &panic_message(&*panic));
                PumpState::Finished
            }
            Ok(Poll::Pending) => {
                if self.waker.requested.swap(false, Ordering::SeqCst) {
                    PumpState::Again
                } else if self.wants_read.load(Ordering::SeqCst) {
                    PumpState::Reading
                } else {
                    PumpState::Waiting
                }
            }
        }
    }
}

impl Drop for HostReader {
    fn drop(&mut self) {
        // The reader future holds the descriptor's number: drop it first.
        let unfinished = lock(&self.future).take().is_some();
        // A reader that finished (the peer's end of stream was handled) may
        // go: the connection still waits for the answers in flight.
        if unfinished
            && let Some(shared) = self.shared.upgrade()
            && shared.close_reason().is_none()
        {
            shared.shutdown(CloseReason::Local);
        }
    }
}
