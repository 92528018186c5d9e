//! libacp for Swift and Kotlin, through UniFFI (namespace `libacp`).
//!
//! One [`Connection`] object serves both roles: [`Connection::spawn`] (a
//! client spawning its agent), [`Connection::serve_stdio`] (an agent) and
//! [`Connection::from_fds`] (either role over pipes or a socket). The host
//! implements [`HostHandler`] (a foreign trait) for what the peer sends,
//! delivered through the core's inbox (`drain.rs`) and answered with
//! [`Connection::respond`], and calls [`Connection::call`] (or
//! [`Connection::start_call`]) and [`Connection::notify`] for what it
//! sends; the
//! hand-written Kotlin (`bindings/uniffi/kotlin`) and Swift
//! (`bindings/uniffi/swift`) layers put typed ACP methods and models on top.
//!
//! Values cross as JSON text, errors as [`AcpError`]. Everything else is
//! the core's: this crate only converts values and threads (`runtime.rs`).
//! Kotlin's per-message operations may take a narrow JNI path beside UniFFI
//! (`jni/`, DESIGN.md decision 17), with the same types and behaviour.
//! The generated Kotlin and Swift sources are committed and drift-checked
//! (`scripts/uniffi/generate.sh --check`).

// `AcpError` is the FFI's error enum: its shape is what Swift and Kotlin
// see, and UniFFI cannot pass it boxed. Errors are the cold path.
#![allow(clippy::result_large_err)]

uniffi::setup_scaffolding!("libacp");

mod batch;
mod calls;
mod cancel;
mod connection;
mod drain;
mod error;
mod handler;
mod jni;
mod options;
#[cfg(test)]
mod options_gen;
mod options_record;
mod remote;
mod runtime;

pub use batch::{BatchError, BatchOutcome, OutgoingNotification};
pub use cancel::CallCanceller;
pub use connection::{
    Connection, ExitStatus, ProtocolMethod, libacp_version, protocol_methods, socket_pair,
};
pub use error::AcpError;
pub use handler::{HostHandler, IncomingRequest, Notification};
pub use options::{AcpRole, AgentCommand, CallOptions, ConnectOptions, EngineEvent, WireDirection};
pub use remote::{IncomingConnection, RemoteAgentFactory, Server, remote_connect, remote_serve};

#[cfg(test)]
mod tests;
