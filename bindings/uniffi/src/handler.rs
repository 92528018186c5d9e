//! The host's side of a connection: [`HostHandler`], a trait that Swift and
//! Kotlin implement (a UniFFI foreign trait), and how each request reaches
//! it ([`serve_request`]). What comes from the peer arrives through the
//! core's inbox (`drain.rs`), which gives the guarantees (DESIGN.md,
//! "Contracts"): notifications reach [`HostHandler::on_notifications`] in
//! arrival order, in batches, each batch handled before the next and before
//! the answers that followed it on the wire; requests start in arrival order
//! and run concurrently.
//!
//! **Threads.** The async methods run on the host's async runtime (UniFFI
//! starts them there: a coroutine in Kotlin, a `Task` in Swift); the sync
//! ones ([`HostHandler::on_cancel`], [`HostHandler::on_stderr`]) are called
//! on a libacp runtime thread and must return quickly without blocking.
//!
//! **Cancellation.** Each request comes with a [`RequestSignals`]. When the
//! peer cancels it (`$/cancel_request`, `session/cancel` for a prompt, a
//! client cancelling a permission request) its flag is set and then
//! [`HostHandler::on_cancel`] is called with the request's key: the host
//! cancels the handler's coroutine or task. A handler that registers its
//! task under the key and then checks [`RequestSignals::is_cancelled`]
//! never misses a cancellation. When the answer is no longer the handler's
//! to give (the engine answered `-32800`, the connection closed) the
//! handler's future is dropped, which UniFFI turns into cancelling the
//! coroutine or task.

use std::sync::Arc;

use libacp_core::host::HostRequest;
use libacp_core::{CancellationToken, RawValue, RequestId, RpcError};

use crate::error::AcpError;

/// What the host implements to receive what the peer sends. Errors thrown
/// by `on_request` answer the request (see [`AcpError`]'s variants); errors
/// thrown elsewhere are ignored.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait HostHandler: Send + Sync {
    /// A request from the peer: returns the result as JSON text (`"null"`
    /// for a null result), or throws to answer with an error:
    /// [`AcpError::Rpc`] with its code and data, [`AcpError::Cancelled`] for
    /// `-32800` (a cancelled prompt then answers `stopReason: "cancelled"`),
    /// [`AcpError::InvalidParams`] for `-32602`; anything else is `-32603`.
    async fn on_request(
        &self,
        request: IncomingRequest,
        signals: Arc<RequestSignals>,
    ) -> Result<String, AcpError>;

    /// Notifications from the peer, in arrival order (all that arrived
    /// since the last batch, up to a bound): handle them one after the
    /// other. Nothing that came after them is delivered until this returns.
    /// A call made while handling them must set `CallOptions.skip_barrier`
    /// (its answer would otherwise wait for this very batch).
    async fn on_notifications(&self, batch: Vec<Notification>) -> Result<(), AcpError>;

    /// The peer cancelled the request with this key (libacp runtime thread;
    /// do not block).
    fn on_cancel(&self, key: u64) -> Result<(), AcpError>;

    /// A line the spawned agent wrote to its stderr (only with
    /// `AgentCommand.stderr_to_host`; libacp runtime thread, in order; do
    /// not block).
    fn on_stderr(&self, line: String) -> Result<(), AcpError>;
}

/// A request from the peer, as the host's handler sees it.
#[derive(Debug, Clone, uniffi::Record)]
pub struct IncomingRequest {
    /// Unique per connection: what [`HostHandler::on_cancel`] names.
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

/// The cancellation state of one incoming request (owned by the host's
/// handler; cheap to drop).
#[derive(Debug, uniffi::Object)]
pub struct RequestSignals {
    cancelled: CancellationToken,
}

#[uniffi::export]
impl RequestSignals {
    /// Whether the peer cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }
}

/// Runs the host's handler for `request` on the current runtime and answers
/// with what it returns (see the module docs for cancellation).
pub(crate) fn serve_request(host: Arc<dyn HostHandler>, request: HostRequest) {
    let info = IncomingRequest {
        key: request.key(),
        id: id_text(&request.id),
        method: request.method.clone(),
        params: request.params.as_ref().map(|p| p.get().to_owned()),
    };
    let cancelled = request.responder().cancellation().clone();
    let superseded = request.responder().superseded().clone();
    let signals = Arc::new(RequestSignals {
        cancelled: cancelled.clone(),
    });
    tokio::spawn(async move {
        let key = info.key;
        let work = host.on_request(info, signals);
        tokio::pin!(work);
        let mut told = false;
        let outcome = loop {
            tokio::select! {
                biased;
                result = &mut work => break result,
                // Dropping `work` cancels the host's coroutine or task.
                () = superseded.cancelled() => return,
                () = cancelled.cancelled(), if !told => {
                    told = true;
                    let _ = host.on_cancel(key);
                }
            }
        };
        let answer = match outcome {
            Ok(text) => RawValue::from_string(text).map_err(|e| {
                RpcError::internal_error(format!("the handler's result is not JSON: {e}"))
            }),
            Err(e) => Err(e.to_rpc()),
        };
        // Refused when the engine already answered: nothing to do.
        let _ = request.respond(answer);
    });
}

fn id_text(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_else(|_| "null".into())
}
