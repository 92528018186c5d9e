//! libacp's tokio runtime, and asyncio futures completed from it.
//!
//! `runtime` is the one multi-threaded runtime, started on first use, that
//! every connection, handler task and hook task runs on; its threads are
//! named `libacp` and give their Python thread state back when they stop
//! (`interpreter::forget_thread_state`). `awaitable` is
//! called with the GIL on the host's thread, inside a running asyncio loop:
//! it creates a future on that loop (owned by the loop and whoever awaits
//! it) and spawns the Rust future on the runtime. The result is handed back
//! with `call_soon_threadsafe`, so the asyncio future is only ever touched
//! on its loop's thread; cancelling it (on the loop) drops the Rust future.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use std::sync::Arc;

use serde_json::value::RawValue;

use libacp_core::{AcpPeer, CallOptions, CancelMode, CancellationToken};

use crate::errors::call_error;
use crate::inbox::PyInbox;
use crate::interpreter::attach_alive;

/// The runtime, or why it could not be started.
/// Its threads forget their interpreter state as they end.
static RUNTIME: libacp_core::host::ProcessRuntime =
    libacp_core::host::ProcessRuntime::with_thread_stop(crate::interpreter::forget_thread_state);

/// libacp's runtime (started on first use). Fails only if the OS refuses
/// its threads or its I/O driver.
pub(crate) fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    RUNTIME
        .get()
        .map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// Completes an asyncio future from libacp's threads, on its loop, unless
/// it is already done (cancelled meanwhile).
static COMPLETE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

fn completer(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    COMPLETE
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let code = c"def complete(fut, ok, value):\n    if not fut.done():\n        (fut.set_result if ok else fut.set_exception)(value)\n";
            let module = PyModule::from_code(py, code, c"_libacp_complete.py", c"_libacp_complete")?;
            Ok(module.getattr("complete")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// A new future on the running loop, and a token fired when it is
/// cancelled (the awaiting task was cancelled).
fn loop_future<'py>(
    py: Python<'py>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, CancellationToken)> {
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let future = event_loop.call_method0("create_future")?;
    let cancelled = CancellationToken::new();
    let on_done = {
        let cancelled = cancelled.clone();
        pyo3::types::PyCFunction::new_closure(
            py,
            None,
            None,
            move |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
                if args.get_item(0)?.call_method0("cancelled")?.is_truthy()? {
                    cancelled.cancel();
                }
                Ok(())
            },
        )?
    };
    future.call_method1("add_done_callback", (on_done,))?;
    Ok((event_loop, future, cancelled))
}

/// An asyncio future resolved by `fut`, which runs on libacp's runtime.
/// Cancelling the future (the awaiting task was cancelled) drops `fut`
/// (for a request: `$/cancel_request`). Completion goes through
/// `attach_alive`, so nothing touches the interpreter once it shuts down.
pub(crate) fn awaitable<'py, F>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: std::future::Future<Output = PyResult<Py<PyAny>>> + Send + 'static,
{
    let complete = completer(py)?.clone().unbind();
    let (event_loop, future, cancelled) = loop_future(py)?;
    let future_ref = future.clone().unbind();
    let loop_ref = event_loop.unbind();
    runtime()?.spawn(async move {
        let result = tokio::select! {
            result = fut => result,
            () = cancelled.cancelled() => return,
        };
        attach_alive(|py| {
            let (ok, value) = match result {
                Ok(v) => (true, v),
                Err(e) => (false, e.into_value(py).into_any()),
            };
            // The loop may be closed already: nothing is waiting then.
            let _ = loop_ref.call_method1(
                py,
                "call_soon_threadsafe",
                (complete, future_ref, ok, value),
            );
        });
    });
    Ok(future)
}

/// Sends a request whose outcome the dispatcher delivers from the inbox
/// (`(2, future, ok, value)`): returns that asyncio future. Cancelling the
/// future (the awaiting task was cancelled) abandons the call: the peer is
/// sent `$/cancel_request`. A refused call (nothing sent) is a future that
/// has already failed.
pub(crate) fn call_future<'py>(
    py: Python<'py>,
    peer: &AcpPeer,
    inbox: &Arc<PyInbox>,
    method: &str,
    params: Option<Box<RawValue>>,
    options: CallOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let future = running_loop(py)?.call_method0("create_future")?;
    let tag = future.clone().unbind();
    let sink = Arc::clone(inbox);
    let urgent = options.skip_barrier;
    let called = py.detach(|| {
        peer.call(method, params, options, move |outcome| {
            sink.push_result(tag, outcome, urgent);
        })
    });
    let handle = match called {
        Ok(handle) => handle,
        // Refused (nothing sent): the future fails at once, so awaiting it
        // and wrapping it in a task behave alike.
        Err(e) => {
            future.call_method1("set_exception", (call_error(py, &e).into_value(py),))?;
            return Ok(future);
        }
    };
    let on_done = pyo3::types::PyCFunction::new_closure(
        py,
        None,
        None,
        move |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
            if args.get_item(0)?.call_method0("cancelled")?.is_truthy()? {
                handle.cancel(CancelMode::Abandon);
            }
            Ok(())
        },
    )?;
    future.call_method1("add_done_callback", (on_done,))?;
    Ok(future)
}

/// `asyncio.get_running_loop`, looked up once.
static GET_RUNNING_LOOP: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// The running asyncio loop (raises outside one).
fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    GET_RUNNING_LOOP
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
        })?
        .bind(py)
        .call0()
}

/// A future on the running loop that has already failed with `error`.
pub(crate) fn failed_future(py: Python<'_>, error: PyErr) -> PyResult<Bound<'_, PyAny>> {
    let future = running_loop(py)?.call_method0("create_future")?;
    future.call_method1("set_exception", (error.into_value(py),))?;
    Ok(future)
}
