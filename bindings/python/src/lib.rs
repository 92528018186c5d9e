//! `libacp._libacp`: the native half of the Python binding.
//!
//! Thin by design: it converts values (Python objects <-> JSON), hops
//! threads (tokio tasks <-> the host's asyncio loop) and maps errors. Every
//! protocol rule lives in `libacp-core`. The asyncio-facing API (handler
//! dispatch on the host's loop, exceptions) is the pure-Python package
//! `libacp` (`python/libacp/__init__.py`), which calls into this module:
//!
//! * a connection is started with a *dispatcher* (the Python object that
//!   runs handlers on the loop): it gets the core's inbox as
//!   `dispatcher.inbox` (`inbox.rs`), is woken with `dispatcher._wake()`
//!   from any thread, and drains the inbox on the loop, in order;
//! * every answer the binding gives on its own (`-32601` for a host without
//!   `on_request`, `-32800`, `-32603`) is one of the core's `RpcError`
//!   constructors, through `RequestResponder`;
//! * the constructors' `**options` are set through the core's option table
//!   (`Settings::set`: the same names, units, ranges and messages in every
//!   binding; unknown names and wrong types: `TypeError`; values out of
//!   range and options that do not apply: `ValueError`);
//! * outgoing calls return asyncio futures the dispatcher completes from
//!   the inbox; cancelling the awaiting task abandons the call and sends
//!   `$/cancel_request`;
//! * when the loop can watch descriptors (`add_reader`) it reads the
//!   transport itself (the core's host reader), so a round trip never
//!   leaves the loop's thread.
//!
//! The modules, each with its contract in its own docs:
//!
//! * `convert`: Python values <-> JSON (and request ids);
//! * `errors`: the Python exceptions built from the core's errors;
//! * `interpreter`: how engine threads enter Python (`attach_alive`) and the
//!   `atexit` hook that stops them during interpreter shutdown;
//! * `awaitable`: libacp's tokio runtime and the asyncio futures it completes;
//! * `handler`: `RequestResponder`, the answer side of a request;
//! * `inbox`: the core's inbox and host reader, as the loop's dispatcher
//!   takes them;
//! * `options`: the constructors' keyword arguments, through the core's
//!   option table;
//! * `connection`: `NativeConnection`, the handle Python holds;
//! * `start`: the local constructors (`spawn_agent`, `serve_stdio`,
//!   `from_fds`);
//! * `remote`: remote ACP, `connect` (a client by URL) and `serve` (the
//!   core's server, each remote connection's agent made on the host's loop).
//!
//! This file only builds the module.

mod awaitable;
mod connection;
mod convert;
mod errors;
mod handler;
mod inbox;
mod interpreter;
mod options;
mod remote;
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
    m.add_class::<inbox::NativeInbox>()?;
    m.add_function(wrap_pyfunction!(start::spawn_agent, m)?)?;
    m.add_function(wrap_pyfunction!(start::serve_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(start::from_fds, m)?)?;
    m.add_class::<remote::NativeServer>()?;
    m.add_class::<remote::NativeIncoming>()?;
    m.add_function(wrap_pyfunction!(remote::connect, m)?)?;
    m.add_function(wrap_pyfunction!(remote::serve, m)?)?;
    m.add_function(wrap_pyfunction!(options::option_table, m)?)?;
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
