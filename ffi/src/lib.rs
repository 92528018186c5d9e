//! The C ABI of libacp. The contract every function follows (status codes,
//! out-params, NULL checks, ownership, strings, threads) is written once in
//! `include/README.md`; each function's doc says only what is particular to
//! it. The header `include/acp.h` is generated from this crate by cbindgen.
//!
//! Modules:
//! * [`status`] and [`error`]: `acp_status` and the `acp_error` object;
//! * [`options`]: `acp_options`, the connection settings;
//! * [`connection`]: `acp_connection`, creating, calling, closing;
//! * [`events`]: `acp_event`, one delivery of the core's inbox;
//! * [`request`]: `acp_request`, answering the peer;
//! * [`call`]: `acp_call`, cancelling an outgoing call;
//! * [`string`]: `acp_str`, every string argument, and `acp_string`,
//!   text handed out by libacp;
//! * [`version`]: `acp_version`, and the header's `ACP_VERSION_*`.
//!
//! Implementation rule: every export goes through `ffi_guard`, which
//! catches panics; nothing here implements protocol behaviour (that lives in
//! `libacp-core`).

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
pub mod status;
pub mod string;
pub mod version;

mod gate;
mod runtime;
mod text;

pub use status::acp_status;

/// Runs `f`, turning a panic into `ACP_ERR_PANIC`.
pub(crate) fn ffi_guard(f: impl FnOnce() -> acp_status) -> acp_status {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(status) => status,
        Err(_) => acp_status::ACP_ERR_PANIC,
    }
}

/// Runs `f` for a function without a status (a `_free`, a getter);
/// a panic is swallowed and `fallback` returned.
pub(crate) fn ffi_guard_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}
