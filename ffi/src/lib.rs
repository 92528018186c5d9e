//! The C ABI of libacp. The contract every function follows (status codes,
//! out-params, NULL checks, ownership, strings, threads) is written once in
//! `include/README.md`; each function's doc says only what is particular to
//! it. The header `include/acp.h` is generated from this crate by cbindgen.
//!
//! Modules:
//! * [`status`] and [`error`]: `acp_status` and the `acp_error` object;
//! * [`options`]: `acp_options`, the connection settings;
//! * [`connection`]: `acp_connection`, creating (spawned agent, descriptors,
//!   stdio, remote agent by URL), calling, closing;
//! * [`server`]: `acp_server`, a remote ACP server handing each remote
//!   connection to the host as an `acp_connection`;
//! * [`events`]: `acp_event`, one delivery of the core's inbox;
//! * [`request`]: `acp_request`, answering the peer;
//! * [`call`]: `acp_call`, cancelling an outgoing call;
//! * [`string`]: `acp_str`, every string argument, and `acp_string`,
//!   text handed out by libacp;
//! * [`version`]: `acp_version`, and the header's `ACP_VERSION_*`.
//!
//! Implementation rules: every export has the one shape of `export.rs`
//! (panics caught, pointers cast by type, out-params written only on
//! success, failures in `*error`); nothing here implements protocol
//! behaviour (that lives in `libacp-core`).

#![allow(non_camel_case_types)]
// The exported functions take raw pointers from C; each documents its
// preconditions in the header (see include/README.md).
#![allow(clippy::missing_safety_doc)]

pub mod call;
pub mod connection;
pub mod error;
pub mod events;
pub mod options;
pub mod request;
pub mod server;
pub mod status;
pub mod string;
pub mod version;

mod export;
mod gate;
mod runtime;
mod text;

pub use status::acp_status;
