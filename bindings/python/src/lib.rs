//! `libacp._libacp`: the native half of the Python binding.
//!
//! Thin by design: it converts values (Python objects <-> JSON), hops
//! threads (tokio tasks <-> the host's asyncio loop) and maps errors. Every
//! protocol rule lives in `libacp-core`. The asyncio-facing API (handler
//! dispatch on the host's loop, exceptions) is the pure-Python package
//! `libacp` (`python/libacp/__init__.py`), which calls into this module:
//!
//! * a connection is started with a *dispatcher* (a Python object with
//!   `request(method, params, responder)` and
//!   `notification(method, params, done)`); both are called on a tokio
//!   thread with the GIL held and must only schedule work on the loop;
//! * every answer the binding gives on its own (`-32601` for a host without
//!   `on_request`, `-32800`, `-32603`) is one of the core's `RpcError`
//!   constructors, through `RequestResponder`;
//! * the constructors' `**options` are parsed here into the core's
//!   `AcpOptions` (unknown names and wrong types: `TypeError`; bad values:
//!   `ValueError`), so every binding shares the core's defaults;
//! * outgoing calls return asyncio futures completed from libacp's runtime;
//!   cancelling the awaiting task drops the core's call, which abandons it
//!   and sends `$/cancel_request`.
//!
//! The modules, each with its contract in its own docs:
//!
//! * `convert`: Python values <-> JSON (and request ids);
//! * `errors`: the Python exceptions built from the core's errors;
//! * `interpreter`: how engine threads enter Python (`attach_alive`) and the
//!   `atexit` hook that stops them during interpreter shutdown;
//! * `awaitable`: libacp's tokio runtime and the asyncio futures it completes;
//! * `handler`: the core's `Handler`, forwarding incoming messages to the
//!   connection's inbox (`RequestResponder`);
//! * `inbox`: the ordered inbox the loop's pump drains in batches;
//! * `options`: the constructors' keyword arguments, parsed into `AcpOptions`;
//! * `hooks`: the `trace` and `events` callbacks, called from engine threads;
//! * `connection`: `NativeConnection`, the handle Python holds;
//! * `start`: the constructors (`spawn_agent`, `serve_stdio`, `from_fds`).
//!
//! This file only builds the module.

mod awaitable;
mod connection;
mod convert;
mod errors;
mod handler;
mod hooks;
mod inbox;
mod interpreter;
mod options;
mod start;

use pyo3::prelude::*;

use libacp_core::codes;

// The native module. (Deliberately no doc comment: PyO3 would make it the
// module's `__doc__`, which is empty.)
#[pymodule]
fn _libacp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    interpreter::register_atexit_hook(m)?;
    m.add_class::<connection::NativeConnection>()?;
    m.add_class::<handler::RequestResponder>()?;
    m.add_class::<inbox::Inbox>()?;
    m.add_function(wrap_pyfunction!(start::spawn_agent, m)?)?;
    m.add_function(wrap_pyfunction!(start::serve_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(start::from_fds, m)?)?;
    m.add_function(wrap_pyfunction!(errors::method_not_found, m)?)?;
    for (name, code) in [
        ("PARSE_ERROR", codes::PARSE_ERROR),
        ("INVALID_REQUEST", codes::INVALID_REQUEST),
        ("METHOD_NOT_FOUND", codes::METHOD_NOT_FOUND),
        ("INVALID_PARAMS", codes::INVALID_PARAMS),
        ("INTERNAL_ERROR", codes::INTERNAL_ERROR),
        ("REQUEST_CANCELLED", codes::REQUEST_CANCELLED),
        ("AUTH_REQUIRED", codes::AUTH_REQUIRED),
        ("RESOURCE_NOT_FOUND", codes::RESOURCE_NOT_FOUND),
    ] {
        m.add(name, code)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
