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

use super::outbox::Outbox;
use super::{ConnectionOptions, Direction, Event, lock};
use crate::error::{CallError, CloseReason, ConnectionError, RpcError};
use crate::message::{self, RequestId};

/// What an outgoing request resolves to.
pub(crate) type CallResult = Result<Box<RawValue>, CallError>;

pub(crate) struct PendingEntry {
    pub(crate) tx: oneshot::Sender<CallResult>,
    /// Whether the request was queued for the peer (so a cancellation must
    /// be sent to the peer too).
    pub(crate) sent: bool,
    /// Made from inside a notification handler of this connection: its
    /// response is delivered at once, ahead of the ordering barrier (the
    /// handler it would wait for is the one waiting for it).
    pub(crate) bypass_barrier: bool,
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

pub(crate) struct InflightState {
    pub(crate) answer: AtomicU8,
    /// What the handler watches: the peer cancelled (`$/cancel_request`, or
    /// `session/cancel` for a prompt) or the connection closed.
    pub(crate) token: CancellationToken,
    /// Fires when nobody needs the handler's answer any more: the engine
    /// answered on its behalf, or the connection closed.
    pub(crate) superseded: CancellationToken,
    pub(crate) finisher: Mutex<Option<Finisher>>,
    /// Runs once the answer was queued for the peer (whoever sent it).
    pub(crate) after_send: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl InflightState {
    /// Runs the after-send hook, if any.
    pub(crate) fn sent(&self) {
        let hook = lock(&self.after_send).take();
        if let Some(hook) = hook {
            hook();
        }
    }

    /// Applies the finisher, if any, to the answer about to be sent.
    pub(crate) fn finish(
        &self,
        result: Result<Box<RawValue>, RpcError>,
    ) -> Result<Box<RawValue>, RpcError> {
        let finisher = lock(&self.finisher).take();
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
    next_id: AtomicI64,
    /// Set (once) when the connection is closed.
    reason: watch::Sender<Option<CloseReason>>,
    /// Set when the writer finished and the agent process (if any) is gone.
    pub(crate) terminated: watch::Sender<bool>,
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
            outbox: Outbox::new(options.outgoing_queue, options.framing),
            options,
            pending: Mutex::new(PendingTable::default()),
            inflight: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(0),
            reason: watch::channel(None).0,
            terminated: watch::channel(false).0,
            stop: CancellationToken::new(),
            hard_stop: CancellationToken::new(),
            input_finished: std::sync::atomic::AtomicBool::new(false),
            runtime,
            process_status,
            extension,
        }
    }

    pub(crate) fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn trace(&self, direction: Direction, frame: &[u8]) {
        if let Some(hook) = &self.options.trace {
            hook(direction, frame);
        }
    }

    pub(crate) fn event(&self, event: Event) {
        if let Some(hook) = &self.options.events {
            hook(&event);
        }
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
    /// With `only_bypass`, fails only the requests that skip the barrier.
    pub(crate) fn fail_pending(&self, reason: &CloseReason, only_bypass: bool) {
        let drained: Vec<PendingEntry> = {
            let mut table = lock(&self.pending);
            if only_bypass {
                let ids: Vec<i64> = table
                    .map
                    .iter()
                    .filter(|(_, e)| e.bypass_barrier)
                    .map(|(id, _)| *id)
                    .collect();
                ids.into_iter()
                    .filter_map(|id| table.map.remove(&id))
                    .collect()
            } else {
                if table.closed.is_none() {
                    table.closed = Some(reason.clone());
                }
                table.map.drain().map(|(_, e)| e).collect()
            }
        };
        for entry in drained {
            let _ = entry
                .tx
                .send(Err(ConnectionError::Closed(reason.clone()).into()));
        }
    }

    /// The peer's stream ended and everything it sent was dispatched.
    /// Pending requests fail (no answer can come); requests still being
    /// handled may finish and their answers are written; then the
    /// connection closes.
    pub(crate) fn finish_input(self: &Arc<Self>, reason: CloseReason) {
        self.input_finished.store(true, Ordering::SeqCst);
        self.fail_pending(&reason, false);
        // The peer is gone or done: handlers still running are told to wind
        // down (their answers are still written), and get `flush_timeout`
        // to do so before the connection closes regardless.
        let running: Vec<Arc<InflightState>> = lock(&self.inflight).values().cloned().collect();
        for state in running {
            state.token.cancel();
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
            state.token.cancel();
            state.superseded.cancel();
        }
        self.fail_pending(&reason, false);
        self.outbox.close();
        self.stop.cancel();
        let hard_stop = self.hard_stop.clone();
        let flush = self.options.flush_timeout;
        self.runtime.spawn(async move {
            tokio::time::sleep(flush).await;
            hard_stop.cancel();
        });
        self.event(Event::Closed(reason));
    }
}
