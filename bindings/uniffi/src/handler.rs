//! The host's side of a connection: [`HostHandler`], a trait that Swift and
//! Kotlin implement (a UniFFI foreign trait), and the table of requests
//! handed to it and not answered yet ([`Requests`]). What comes from the
//! peer arrives through the core's inbox (`drain.rs`), which gives the
//! guarantees (DESIGN.md, "Contracts"): notifications reach
//! [`HostHandler::on_notifications`] in arrival order, in batches, each
//! batch handled before the next and before the answers that followed it on
//! the wire; requests start in arrival order and run concurrently.
//!
//! **Requests.** [`HostHandler::on_request`] starts the handler (a
//! coroutine, a `Task`) and returns at once; the host answers later, from
//! any thread, with [`Connection::respond`] or [`Connection::respond_error`]
//! (one call across the FFI per answer: no future is handed over, which in
//! Kotlin costs several JNA calls and a thread hop per request).
//!
//! **Cancellation.** The request's signals follow it through the core's
//! inbox (`HostRequest::arm`): when the peer cancels it (`$/cancel_request`,
//! `session/cancel` for a prompt, the end of the peer's input) or the
//! connection closes, [`HostHandler::on_cancel`] is called with its key,
//! once, always after `on_request` returned: the host cancels the handler's
//! coroutine or task, which answers `-32800` unless it answers first. An
//! answer the engine already gave for it (`-32800`, the connection closed)
//! is dropped.
//!
//! **Threads.** `on_notifications` runs on the host's async runtime
//! (UniFFI starts it there: a coroutine in Kotlin, a `Task` in Swift); the
//! sync methods are called on a libacp runtime thread and must return
//! quickly without blocking.
//!
//! [`Connection::respond`]: crate::Connection::respond
//! [`Connection::respond_error`]: crate::Connection::respond_error

use std::collections::HashMap;
use std::sync::Mutex;

use libacp_core::host::HostRequest;
use libacp_core::{RawValue, RequestId, RpcError};

use crate::error::AcpError;
use crate::options::{EngineEvent, WireDirection, lock};

/// What the host implements to receive what the peer sends. Errors thrown
/// by these methods are ignored, except by `on_request` (the request is
/// then answered `-32603` with the error's text).
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait HostHandler: Send + Sync {
    /// A request from the peer: start its handler and return at once
    /// (libacp runtime thread; do not block). Answer it later with
    /// [`Connection::respond`](crate::Connection::respond) or
    /// [`Connection::respond_error`](crate::Connection::respond_error);
    /// a request never answered keeps the peer waiting until the
    /// connection closes.
    fn on_request(&self, request: IncomingRequest) -> Result<(), AcpError>;

    /// Notifications from the peer, in arrival order (all that arrived
    /// since the last batch, up to a bound): handle them one after the
    /// other. Nothing that came after them is delivered until this returns.
    /// A call made while handling them must set `CallOptions.skip_barrier`
    /// (its answer would otherwise wait for this very batch).
    async fn on_notifications(&self, batch: Vec<Notification>) -> Result<(), AcpError>;

    /// The peer cancelled the request with this key, or the connection
    /// closed (libacp runtime thread; do not block). Called at most once
    /// per request, after its `on_request` returned.
    fn on_cancel(&self, key: u64) -> Result<(), AcpError>;

    /// The result (JSON text) of the call started with
    /// [`Connection::start_call`](crate::Connection::start_call) under
    /// `token` (libacp runtime thread; do not block). Each call ends with
    /// exactly one `on_call_result` or `on_call_error`, also when the
    /// connection closes; an abandoned call may still end with one.
    fn on_call_result(&self, token: u64, result: String) -> Result<(), AcpError>;

    /// How the call started under `token` failed (see
    /// [`HostHandler::on_call_result`]).
    fn on_call_error(&self, token: u64, error: AcpError) -> Result<(), AcpError>;

    /// A line the spawned agent wrote to its stderr (only with
    /// `ConnectOptions.stderr`; libacp runtime thread, in order; do
    /// not block).
    fn on_stderr(&self, line: String) -> Result<(), AcpError>;

    /// A frame as read from or written to the peer (only with
    /// `ConnectOptions.trace`). Called on a libacp runtime thread, one at a
    /// time, in wire order with the messages: after the notification batch
    /// before it was handled and before the answer that follows it reaches
    /// its caller (with `ordered_hooks` false: at once, possibly after that
    /// answer). Quick, no blocking.
    fn on_frame(&self, direction: WireDirection, frame: String) -> Result<(), AcpError>;

    /// Something the engine reports (only with `ConnectOptions.events`): a
    /// frame skipped, a request the core served (`served`), ... Called like
    /// [`HostHandler::on_frame`], in the same order.
    fn on_engine_event(&self, event: EngineEvent) -> Result<(), AcpError>;
}

/// A request from the peer, as the host's handler sees it.
#[derive(Debug, Clone, uniffi::Record)]
pub struct IncomingRequest {
    /// Unique per connection: what the answer and
    /// [`HostHandler::on_cancel`] name.
    pub key: u64,
    /// The id the peer chose, as JSON text (`1`, `"abc"`).
    pub id: String,
    /// The method name, as sent.
    pub method: String,
    /// The params as JSON text; `None` when absent.
    pub params: Option<String>,
}

/// A notification from the peer.
#[derive(Debug, Clone, uniffi::Record)]
pub struct Notification {
    /// The method name, as sent.
    pub method: String,
    /// The params as JSON text; `None` when absent.
    pub params: Option<String>,
}

/// The requests handed to the host and not answered yet, by key. Shared by
/// the inbox's task (which starts them, and forgets those the engine
/// answered: `drain.rs`) and the connection (whose `respond` answers them).
#[derive(Debug, Default)]
pub(crate) struct Requests(Mutex<HashMap<u64, HostRequest>>);

impl Requests {
    /// Hands `request` to the host, then arms its signals: a cancellation
    /// that came before is told now, a later one through the inbox.
    pub(crate) fn start(&self, host: &dyn HostHandler, request: HostRequest) {
        let key = request.key();
        let info = IncomingRequest {
            key,
            id: id_text(&request.id),
            method: request.method.clone(),
            params: request.params.as_ref().map(|p| p.get().to_owned()),
        };
        lock(&self.0).insert(key, request);
        if let Err(e) = host.on_request(info) {
            self.answer(
                key,
                Err(RpcError::internal_error(format!(
                    "the host could not start the handler: {e}"
                ))),
            );
            return;
        }
        // Armed after `on_request` returned, so `on_cancel` never comes
        // first; the state returned covers what happened in between. An
        // answer given meanwhile took the request out: nothing to arm.
        let Some((cancelled, superseded)) = lock(&self.0).get(&key).map(HostRequest::arm) else {
            return;
        };
        if superseded {
            self.forget(key);
        }
        if cancelled {
            let _ = host.on_cancel(key);
        }
    }

    /// Answers request `key`; `false` when it is not (or no longer) the
    /// host's to answer: unknown, answered already, or answered by the
    /// engine.
    pub(crate) fn answer(&self, key: u64, answer: Result<Box<RawValue>, RpcError>) -> bool {
        // Taken out before answering: the answer may be written by this
        // thread, which must not hold the table.
        let Some(request) = lock(&self.0).remove(&key) else {
            return false;
        };
        request.respond(answer).is_ok()
    }

    /// Drops request `key` unanswered (the engine answered it).
    pub(crate) fn forget(&self, key: u64) {
        let request = lock(&self.0).remove(&key);
        drop(request);
    }
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_else(|_| "null".into())
}
