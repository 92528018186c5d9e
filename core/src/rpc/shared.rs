//! State shared by a connection's tasks and handles: the pending table of
//! outgoing requests, the in-flight table of incoming requests, and the
//! close protocol.
//!
//! Lock order: `pending`, then `inflight`, then the outbox queue. No lock is
//! held across an `.await` or while host code runs.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU8, Ordering};

use serde_json::value::RawValue;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::writer::Outbox;
use super::{ConnectionOptions, Direction, Event, lock};
use crate::error::{CallError, CloseReason, ConnectionError, RpcError};
use crate::message::{self, RequestId};

/// What an outgoing request resolves to.
pub(crate) type CallResult = Result<Box<RawValue>, CallError>;

/// How an outgoing request's outcome reaches its caller. Invoked exactly
/// once, whatever ends the call (an answer, the close, a cancellation, a
/// timeout, the caller dropping it), never with a lock of the engine held.
pub(crate) enum Completion {
    /// An [`super::OutgoingCall`] future waiting on the other end.
    Channel(oneshot::Sender<CallResult>),
    /// A callback ([`super::Peer::call`]), run on the thread that ends the call.
    Callback(Box<dyn FnOnce(CallResult) + Send>),
}

impl Completion {
    pub(crate) fn complete(self, result: CallResult) {
        match self {
            Self::Channel(tx) => {
                let _ = tx.send(result);
            }
            Self::Callback(f) => f(result),
        }
    }
}

pub(crate) struct PendingEntry {
    pub(crate) completion: Completion,
    /// Made from inside a notification handler of this connection, or
    /// marked `skip_barrier`: its response is delivered at once, ahead of
    /// the ordering barrier (the handler it would wait for is the one
    /// waiting for it).
    pub(crate) bypass_barrier: bool,
    /// The callback API's timeout timer, stopped when the call ends.
    pub(crate) timer: Option<tokio::task::AbortHandle>,
}

impl PendingEntry {
    /// Ends the call with `result` (stopping its timer).
    pub(crate) fn complete(self, result: CallResult) {
        if let Some(timer) = self.timer {
            timer.abort();
        }
        self.completion.complete(result);
    }
}

#[derive(Default)]
pub(crate) struct PendingTable {
    pub(crate) map: HashMap<i64, PendingEntry>,
    /// Set once no answer can arrive any more; new requests fail at once.
    pub(crate) closed: Option<CloseReason>,
}

/// Answer state of one incoming request.
pub(crate) const OPEN: u8 = 0;
pub(crate) const ANSWERED: u8 = 1;
pub(crate) const CANCELLED: u8 = 2;

/// Rewrites (or just observes) the answer to an incoming request right
/// before it is sent, whoever sends it: the handler, the engine on
/// cancellation, or a dropped responder. Installed by the protocol layer.
pub(crate) type Finisher =
    Box<dyn FnOnce(Result<Box<RawValue>, RpcError>) -> Result<Box<RawValue>, RpcError> + Send>;

/// A change in an incoming request's cancellation state, as told to the
/// sink armed on it (see [`crate::host::HostRequest::arm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// The peer wants the request to wind down (`$/cancel_request`,
    /// `session/cancel` for a prompt, the peer's input ended) or the
    /// connection closed.
    Cancelled,
    /// The answer is no longer the handler's to give: the engine answered
    /// for it, or the connection closed. Always after `Cancelled`.
    Superseded,
}

/// Receives a request's [`Signal`]s; called on the thread that cancels
/// (never with a lock of the engine held).
pub type SignalSink = Box<dyn Fn(Signal) + Send + Sync>;

/// The cancellation state of one request, and who to tell about changes.
#[derive(Default)]
struct Watch {
    cancelled: bool,
    superseded: bool,
    sink: Option<Arc<SignalSink>>,
}

/// Hooks the protocol layer installs on a request's answer.
#[derive(Default)]
struct AnswerHooks {
    finisher: Option<Finisher>,
    /// Runs once the answer was queued for the peer (whoever sent it).
    after_send: Option<Box<dyn FnOnce() + Send>>,
    /// [`InflightState::clear_hooks`] ran: hooks set later are dropped at
    /// once. (The protocol layer sets them while it dispatches; a close on
    /// another thread may have settled the request in between, and a hook
    /// kept then would never run nor be dropped: hooks capture the handler
    /// and the peer, and the request's responder holds this state, so the
    /// three would keep each other alive.)
    cleared: bool,
}

pub(crate) struct InflightState {
    pub(crate) answer: AtomicU8,
    /// What the handler watches: the peer cancelled (`$/cancel_request`, or
    /// `session/cancel` for a prompt) or the connection closed.
    pub(crate) token: CancellationToken,
    /// Fires when nobody needs the handler's answer any more: the engine
    /// answered on its behalf, or the connection closed.
    pub(crate) superseded: CancellationToken,
    hooks: Mutex<AnswerHooks>,
    /// The same two signals, for a sink (a binding's inbox) instead of a
    /// task per request watching the tokens.
    watch: Mutex<Watch>,
}

impl std::fmt::Debug for InflightState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InflightState")
            .field("answer", &self.answer)
            .finish_non_exhaustive()
    }
}

impl InflightState {
    pub(crate) fn new() -> Self {
        Self {
            answer: AtomicU8::new(OPEN),
            token: CancellationToken::new(),
            superseded: CancellationToken::new(),
            hooks: Mutex::new(AnswerHooks::default()),
            watch: Mutex::new(Watch::default()),
        }
    }

    /// Fires the cancellation signal (idempotent): the token, then the sink.
    pub(crate) fn cancel(&self) {
        let sink = {
            let mut w = lock(&self.watch);
            if w.cancelled {
                return;
            }
            w.cancelled = true;
            w.sink.clone()
        };
        self.token.cancel();
        if let Some(sink) = sink {
            sink(Signal::Cancelled);
        }
    }

    /// Fires the superseded signal (idempotent), after the cancellation
    /// signal if that had not fired yet.
    pub(crate) fn supersede(&self) {
        self.cancel();
        let sink = {
            let mut w = lock(&self.watch);
            if w.superseded {
                return;
            }
            w.superseded = true;
            w.sink.clone()
        };
        self.superseded.cancel();
        if let Some(sink) = sink {
            sink(Signal::Superseded);
        }
    }

    /// Tells `sink` about every later signal, and returns the state as it
    /// stands `(cancelled, superseded)`: each signal is either in the
    /// returned state or given to the sink, never both, never lost.
    pub(crate) fn arm(&self, sink: SignalSink) -> (bool, bool) {
        let mut w = lock(&self.watch);
        w.sink = Some(Arc::new(sink));
        (w.cancelled, w.superseded)
    }

    /// Stops telling the sink (the request was answered).
    pub(crate) fn disarm(&self) {
        let sink = lock(&self.watch).sink.take();
        drop(sink);
    }

    /// The signals as they stand: `(cancelled, superseded)`.
    pub(crate) fn signals(&self) -> (bool, bool) {
        let w = lock(&self.watch);
        (w.cancelled, w.superseded)
    }

    /// Sets the finisher; dropped at once after [`Self::clear_hooks`].
    pub(crate) fn set_finisher(&self, finisher: Finisher) {
        let mut hooks = lock(&self.hooks);
        if hooks.cleared {
            drop(hooks);
            drop(finisher);
        } else {
            hooks.finisher = Some(finisher);
        }
    }

    /// Sets the after-send hook; dropped at once after
    /// [`Self::clear_hooks`].
    pub(crate) fn set_after_send(&self, hook: Box<dyn FnOnce() + Send>) {
        let mut hooks = lock(&self.hooks);
        if hooks.cleared {
            drop(hooks);
            drop(hook);
        } else {
            hooks.after_send = Some(hook);
        }
    }

    /// Drops the hooks unrun (the connection closed: no answer will be
    /// sent), and any set from now on.
    pub(crate) fn clear_hooks(&self) {
        let hooks = std::mem::replace(
            &mut *lock(&self.hooks),
            AnswerHooks {
                cleared: true,
                ..AnswerHooks::default()
            },
        );
        drop(hooks);
    }

    /// Runs the after-send hook, if any.
    pub(crate) fn sent(&self) {
        let hook = lock(&self.hooks).after_send.take();
        if let Some(hook) = hook {
            hook();
        }
    }

    /// Applies the finisher, if any, to the answer about to be sent.
    pub(crate) fn finish(
        &self,
        result: Result<Box<RawValue>, RpcError>,
    ) -> Result<Box<RawValue>, RpcError> {
        let finisher = lock(&self.hooks).finisher.take();
        match finisher {
            Some(f) => f(result),
            None => result,
        }
    }
}

pub(crate) struct Shared {
    pub(crate) options: ConnectionOptions,
    pub(crate) outbox: Outbox,
    pub(crate) pending: Mutex<PendingTable>,
    pub(crate) inflight: Mutex<HashMap<RequestId, Arc<InflightState>>>,
    /// Notified when a request leaves `inflight` (see [`Shared::request_room`]).
    inflight_left: tokio::sync::Notify,
    next_id: AtomicI64,
    /// Set (once) when the connection is closed.
    reason: watch::Sender<Option<CloseReason>>,
    /// Set when the writer finished and the agent process (if any) is gone.
    pub(crate) terminated: watch::Sender<bool>,
    /// Set once [`Event::Closed`] was reported (the last step of
    /// [`Shared::shutdown`]): `terminated` waits for it, so a host that
    /// stops listening once the connection terminated (the host inbox
    /// queues `Closed` then and refuses what comes after) never misses it.
    pub(crate) close_reported: watch::Sender<bool>,
    /// Stops the reader and the dispatcher.
    pub(crate) stop: CancellationToken,
    /// Aborts the writer, even mid-write (after `flush_timeout`).
    pub(crate) hard_stop: CancellationToken,
    /// The peer will send nothing more (end of stream seen and dispatched).
    input_finished: std::sync::atomic::AtomicBool,
    pub(crate) runtime: tokio::runtime::Handle,
    pub(crate) process_status: Option<crate::transport::process::ProcessStatus>,
    /// State a layer above the engine attaches to the connection (the
    /// protocol layer's), reachable from any [`super::Peer`].
    pub(crate) extension: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Shared {
    pub(crate) fn new(
        options: ConnectionOptions,
        runtime: tokio::runtime::Handle,
        process_status: Option<crate::transport::process::ProcessStatus>,
        extension: Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Self {
        Self {
            outbox: Outbox::new(
                options.outgoing_queue,
                options.framing,
                options.trace.clone(),
            ),
            options,
            pending: Mutex::new(PendingTable::default()),
            inflight: Mutex::new(HashMap::new()),
            inflight_left: tokio::sync::Notify::new(),
            next_id: AtomicI64::new(0),
            reason: watch::channel(None).0,
            terminated: watch::channel(false).0,
            close_reported: watch::channel(false).0,
            stop: CancellationToken::new(),
            hard_stop: CancellationToken::new(),
            input_finished: std::sync::atomic::AtomicBool::new(false),
            runtime,
            process_status,
            extension,
        }
    }

    /// Waits while `incoming_requests` requests from the peer are in flight
    /// (received, not yet answered), or until the connection stops: the
    /// reader stops reading meanwhile, so a peer flooding a host that does
    /// not answer is slowed down instead of growing memory.
    pub(crate) async fn request_room(&self) {
        let limit = self.options.incoming_requests.max(1);
        loop {
            let left = self.inflight_left.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            if lock(&self.inflight).len() < limit {
                return;
            }
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return,
                () = left => {}
            }
        }
    }

    /// A request left the in-flight table.
    pub(crate) fn request_left(&self) {
        self.inflight_left.notify_waiters();
    }

    pub(crate) fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Calls the trace hook; a panic in it is ignored (host code must not
    /// stop the reader).
    pub(crate) fn trace(&self, direction: Direction, frame: &[u8]) {
        if let Some(hook) = &self.options.trace {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                hook(direction, frame);
            }));
        }
    }

    /// Calls the event hook; a panic in it is ignored.
    pub(crate) fn event(&self, event: Event) {
        if let Some(hook) = &self.options.events {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                hook(&event);
            }));
        }
    }

    /// One of the engine's own tasks failed (a bug in libacp): the
    /// connection closes with a reason naming it, every pending call fails.
    pub(crate) fn internal_failure(&self, task: &str, detail: &str) {
        self.shutdown(CloseReason::Internal(
            format!("libacp's {task} failed: {detail}").into(),
        ));
    }

    pub(crate) fn close_reason(&self) -> Option<CloseReason> {
        self.reason.borrow().clone()
    }

    pub(crate) fn closed_error(&self) -> ConnectionError {
        ConnectionError::Closed(self.close_reason().unwrap_or(CloseReason::PeerClosed))
    }

    pub(crate) fn subscribe_reason(&self) -> watch::Receiver<Option<CloseReason>> {
        self.reason.subscribe()
    }

    /// Queues a control frame; false when the connection is closed.
    pub(crate) fn send_control(&self, frame: Vec<u8>) -> bool {
        self.outbox.push_control(frame).is_ok()
    }

    /// Sends `$/cancel_request` for one of our requests.
    pub(crate) fn send_cancel(&self, id: i64) {
        let params = format!(r#"{{"requestId":{id}}}"#);
        if let Ok(params) = RawValue::from_string(params) {
            self.send_control(message::encode_notification(
                "$/cancel_request",
                Some(&params),
            ));
        }
    }

    /// Sends an answer to an incoming request (or a frame-level error when
    /// `id` is `None`).
    pub(crate) fn send_response(
        &self,
        id: Option<&RequestId>,
        result: Result<&RawValue, &RpcError>,
    ) -> bool {
        self.send_control(message::encode_response(id, result))
    }

    /// Fails every pending outgoing request with `reason` and refuses new ones.
    pub(crate) fn fail_pending(&self, reason: &CloseReason) {
        let drained: Vec<PendingEntry> = {
            let mut table = lock(&self.pending);
            if table.closed.is_none() {
                table.closed = Some(reason.clone());
            }
            table.map.drain().map(|(_, e)| e).collect()
        };
        for entry in drained {
            entry.complete(Err(ConnectionError::Closed(reason.clone()).into()));
        }
    }

    /// Removes a pending call (`None` when it already ended).
    pub(crate) fn take_pending(&self, id: i64) -> Option<PendingEntry> {
        lock(&self.pending).map.remove(&id)
    }

    /// The peer's stream ended and everything it sent was dispatched.
    /// Pending requests fail (no answer can come); requests still being
    /// handled may finish and their answers are written; then the
    /// connection closes.
    pub(crate) fn finish_input(self: &Arc<Self>, reason: CloseReason) {
        self.input_finished.store(true, Ordering::SeqCst);
        self.fail_pending(&reason);
        // The peer is gone or done: handlers still running are told to wind
        // down (their answers are still written), and get `flush_timeout`
        // to do so before the connection closes regardless.
        let running: Vec<Arc<InflightState>> = lock(&self.inflight).values().cloned().collect();
        for state in running {
            state.cancel();
        }
        self.close_if_idle();
        let shared = Arc::clone(self);
        let grace = self.options.flush_timeout;
        self.runtime.spawn(async move {
            tokio::time::sleep(grace).await;
            shared.shutdown(reason);
        });
    }

    /// After input finished: closes once no incoming request is in flight.
    pub(crate) fn close_if_idle(&self) {
        if self.input_finished.load(Ordering::SeqCst) && lock(&self.inflight).is_empty() {
            let reason = lock(&self.pending)
                .closed
                .clone()
                .unwrap_or(CloseReason::PeerClosed);
            self.shutdown(reason);
        }
    }

    /// Closes the connection now (idempotent; the first reason wins):
    /// pending requests fail, in-flight handlers are cancelled, the reader
    /// and dispatcher stop, and what is queued is written within
    /// `flush_timeout` before the write half closes.
    pub(crate) fn shutdown(&self, reason: CloseReason) {
        let first = self.reason.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(reason.clone());
            true
        });
        if !first {
            return;
        }
        // Settle in-flight requests first (a handler woken by its failed
        // call can no longer answer), then fail pending calls (no answer
        // read from now on can reach them), and only then close the outbox
        // (which lets the writer close the peer's input, prompting answers
        // that must find nothing left to complete).
        let inflight: Vec<Arc<InflightState>> =
            lock(&self.inflight).drain().map(|(_, s)| s).collect();
        for state in inflight {
            let _ =
                state
                    .answer
                    .compare_exchange(OPEN, CANCELLED, Ordering::SeqCst, Ordering::SeqCst);
            state.supersede();
            state.clear_hooks();
        }
        self.fail_pending(&reason);
        self.outbox.close();
        self.stop.cancel();
        let hard_stop = self.hard_stop.clone();
        let flush = self.options.flush_timeout;
        self.runtime.spawn(async move {
            tokio::time::sleep(flush).await;
            hard_stop.cancel();
        });
        self.event(Event::Closed(reason));
        self.close_reported.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use super::InflightState;
    use std::sync::Arc;

    #[test]
    fn hooks_set_after_a_close_settled_the_request_are_dropped_at_once() {
        let state = InflightState::new();
        let held = Arc::new(());
        let a = Arc::clone(&held);
        state.set_finisher(Box::new(move |result| {
            let _ = &a;
            result
        }));
        assert_eq!(Arc::strong_count(&held), 2);
        state.clear_hooks();
        assert_eq!(Arc::strong_count(&held), 1, "cleared with the close");
        // The protocol layer, dispatching on another thread, sets its hooks
        // after the close: nothing may keep them.
        let (b, c) = (Arc::clone(&held), Arc::clone(&held));
        state.set_finisher(Box::new(move |result| {
            let _ = &c;
            result
        }));
        state.set_after_send(Box::new(move || {
            let _ = &b;
        }));
        assert_eq!(Arc::strong_count(&held), 1, "dropped when set");
    }
}
