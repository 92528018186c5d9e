//! # libacp-core
//!
//! The Agent Client Protocol engine shared by every libacp binding. Three
//! ways in, from the most to the least typed:
//!
//! * **Typed API** ([`typed`]): implement [`Agent`] or [`Client`] with
//!   `async fn`s on the official v1 types ([`v1`]); call the peer through
//!   [`AgentConnection`] / [`ClientConnection`].
//! * **Dynamic API** ([`AcpConnection`]): method names and raw JSON in and
//!   out, a [`Handler`] for what the peer sends. Every binding uses it; the
//!   ACP rules (phases, capabilities, sessions, turns, cancellation,
//!   validation, authentication) are enforced here ([`protocol`]).
//! * **Engine** ([`Connection`]): role-neutral JSON-RPC with the ordering,
//!   cancellation, back-pressure and close guarantees.
//!
//! ```no_run
//! use libacp_core::v1;
//! use libacp_core::{AcpOptions, AgentCommand, Client, ClientConnection, ClientServices};
//! use libacp_core::{RequestContext, RpcError, Tolerant};
//!
//! struct Editor;
//!
//! impl Client for Editor {
//!     async fn request_permission(
//!         &self,
//!         _cx: RequestContext<ClientConnection>,
//!         args: v1::RequestPermissionRequest,
//!     ) -> Result<v1::RequestPermissionResponse, RpcError> {
//!         let first = args.options[0].option_id.clone();
//!         Ok(v1::RequestPermissionResponse::new(v1::RequestPermissionOutcome::Selected(
//!             v1::SelectedPermissionOutcome::new(first),
//!         )))
//!     }
//!
//!     async fn session_update(&self, _c: ClientConnection, update: Tolerant<v1::SessionNotification>) {
//!         println!("{}", update.raw().get()); // typed view: update.typed()
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // fs/* and terminal/* answered by the core, sandboxed to each session's cwd.
//! let options = AcpOptions { services: ClientServices::all(), ..AcpOptions::default() };
//! let agent = ClientConnection::spawn(&AgentCommand::new("my-agent"), Editor, options)?;
//! agent.initialize(&v1::InitializeRequest::new(v1::ProtocolVersion::V1)).await?;
//! let session = agent.new_session(&v1::NewSessionRequest::new("/tmp")).await?;
//! let text = v1::ContentBlock::Text(v1::TextContent::new("hello"));
//! let done = agent.prompt(&v1::PromptRequest::new(session.session_id, vec![text])).await?;
//! println!("{:?}", done.stop_reason); // every session/update of the turn was handled before this
//! agent.close().await; // closes stdin, then SIGTERM, then SIGKILL the agent's process group
//! # Ok(()) }
//! ```
//!
//! Layers, bottom up (see `DESIGN.md` in the repository):
//! * [`framing`]: bytes to frames (NDJSON or Content-Length), bounded size;
//! * [`transport`]: stdio, a spawned agent process, in-memory pairs, sockets;
//! * [`remote`]: WebSocket and Streamable HTTP, client and server, as
//!   transports under the same engine;
//! * [`message`]: JSON-RPC 2.0 decoding and encoding, params kept raw;
//! * [`rpc`]: the connection engine (ids, pending calls, ordering,
//!   cancellation, back-pressure, close);
//! * [`protocol`]: the ACP rules over the engine (the dynamic API);
//! * [`options`]: every option a host can set, declared once (name, type,
//!   default, range, doc), with the one setter every binding calls;
//! * [`typed`]: the typed API over the dynamic one;
//! * [`services`]: what the core can answer for a client (`fs/*`,
//!   `terminal/*`, the session model);
//! * [`host`]: what bindings whose host runs an event loop share: the
//!   ordered inbox, calls delivered to it, the host-driven reader;
//! * [`schema`]: the ACP v1 types (the official schema crate) and
//!   [`schema::Tolerant`] decoding.
//!
//! The engine alone, for JSON-RPC without ACP rules:
//!
//! ```no_run
//! use libacp_core::{AgentCommand, Connection, ConnectionOptions, NoHandler};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let conn = Connection::spawn(&AgentCommand::new("my-agent"), NoHandler, ConnectionOptions::default())?;
//! let result = conn
//!     .request("initialize", &serde_json::json!({"protocolVersion": 1}))
//!     .await?;
//! println!("{}", result.get());
//! conn.close().await;
//! # Ok(()) }
//! ```

pub mod error;
pub mod framing;
pub mod host;
pub mod json;
pub mod message;
pub mod options;
pub mod protocol;
pub mod remote;
pub mod rpc;
pub mod schema;
pub mod services;
pub mod transport;
pub mod typed;

#[cfg(test)]
mod test_rng;

pub use error::{CallError, CloseReason, ConnectionError, Refusal, RespondError, RpcError, codes};
pub use framing::Framing;
pub use message::RequestId;
pub use protocol::{
    AcpCall, AcpConnection, AcpHooks, AcpOptions, AcpPeer, ClientServices, Phase, Role,
};
pub use rpc::{
    BoxFuture, CallOptions, CallTimeout, CancelHandle, CancelMode, Connection, ConnectionOptions,
    Direction, Event, EventHook, FnHandler, Handler, HostReader, IncomingNotification,
    IncomingRequest, NoHandler, OutgoingCall, Peer, PumpState, Responder, Signal, TraceHook,
    TryNotify,
};
pub use schema::{Tolerant, v1};
pub use serde_json::value::RawValue;
pub use tokio_util::sync::CancellationToken;
pub use transport::Transport;
pub use transport::process::{AgentCommand, ExitInfo, ProcessStatus, ShutdownGrace};
pub use typed::{Agent, AgentConnection, Client, ClientConnection, RequestContext};

/// The README's Rust examples, compiled as doc tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
