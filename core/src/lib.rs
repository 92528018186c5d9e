//! # libacp-core
//!
//! The Agent Client Protocol engine shared by every libacp binding.
//!
//! Layers, bottom up (see `DESIGN.md` in the repository):
//! * [`framing`]: bytes to frames (NDJSON or Content-Length), bounded size;
//! * [`transport`]: stdio, a spawned agent process, in-memory pairs, sockets;
//! * [`message`]: JSON-RPC 2.0 decoding and encoding, params kept raw;
//! * [`rpc`]: the connection engine (ids, pending calls, ordering,
//!   cancellation, back-pressure, close);
//! * [`host`]: what bindings whose host runs an event loop share: the
//!   ordered inbox, calls delivered to it, the host-driven reader;
//! * [`schema`]: the ACP v1 types (the official schema crate) and
//!   [`schema::Tolerant`] decoding.
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
pub mod protocol;
pub mod rpc;
pub mod schema;
pub mod services;
pub mod transport;
pub mod typed;

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
