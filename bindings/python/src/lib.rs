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

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use libacp_core::rpc::{BoxFuture, IncomingNotification, IncomingRequest, Responder};
use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::session_model::SessionStore;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, AgentCommand, CallError, CancellationToken, ClientServices,
    ConnectionError, ConnectionOptions, Direction, Event, EventHook, ExitInfo, Framing, Handler,
    RequestId, Role, RpcError, ShutdownGrace, Transport, codes,
};

/// Deepest nesting converted (deeper values are refused, not overflowed).
const MAX_DEPTH: usize = 512;

// ---------------------------------------------------------------- values

/// A Python value as JSON. `path` names the offending member in errors.
fn to_json(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{path}: nested deeper than {MAX_DEPTH} levels"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(format!("{path}: integer out of the 64-bit range"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| format!("{path}: {v} is not a JSON number"));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_cow()
            .map(|s| Value::String(s.into_owned()))
            .map_err(|e| format!("{path}: {e}"));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(format!("{path}: keys must be str, not {}", type_name(&k)));
            };
            let key = key
                .to_cow()
                .map_err(|e| format!("{path}: {e}"))?
                .into_owned();
            let value = to_json(&v, &format!("{path}.{key}"), depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter().map_err(|e| e.to_string())?.enumerate() {
            let item = item.map_err(|e| e.to_string())?;
            items.push(to_json(&item, &format!("{path}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(format!(
        "{path}: {} is not JSON (use dict, list, tuple, str, int, float, bool or None)",
        type_name(obj)
    ))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A JSON value as a Python object (dict, list, str, int, float, bool, None).
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

fn raw_to_py<'py>(py: Python<'py>, raw: Option<&RawValue>) -> PyResult<Bound<'py, PyAny>> {
    match raw {
        None => Ok(py.None().into_bound(py)),
        Some(raw) => {
            let v: Value = serde_json::from_str(raw.get())
                .map_err(|e| PyValueError::new_err(format!("invalid JSON from the peer: {e}")))?;
            to_py(py, &v)
        }
    }
}

/// Params for an outgoing message: `None` or a JSON object/array.
fn params_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Box<RawValue>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let value = to_json(obj, "params", 0).map_err(|e| invalid_params(obj.py(), &e))?;
    if !(value.is_object() || value.is_array()) {
        return Err(invalid_params(
            obj.py(),
            &format!("params must be a dict or a list, not {}", type_name(obj)),
        ));
    }
    serde_json::value::to_raw_value(&value)
        .map(Some)
        .map_err(|e| invalid_params(obj.py(), &e.to_string()))
}

// ---------------------------------------------------------------- errors

/// Builds the Python exception for a failure (`libacp._errors` defines the
/// classes; this module only names the kind).
fn py_error(py: Python<'_>, kind: &str, message: &str, info: Value) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let module = py.import("libacp._errors")?;
        let info = to_py(py, &info)?;
        let exc = module.call_method1("_from_native", (kind, message, info))?;
        Ok(PyErr::from_value(exc))
    })();
    made.unwrap_or_else(|e| e)
}

fn invalid_params(py: Python<'_>, detail: &str) -> PyErr {
    py_error(
        py,
        "invalid_params",
        &format!("invalid params: {detail}"),
        serde_json::json!({ "detail": detail }),
    )
}

fn connection_error(py: Python<'_>, e: &ConnectionError) -> PyErr {
    match e {
        ConnectionError::Closed(reason) => py_error(
            py,
            "closed",
            &e.to_string(),
            serde_json::json!({ "reason": reason.to_string() }),
        ),
        ConnectionError::Spawn { program, error } => py_error(
            py,
            "spawn",
            &e.to_string(),
            serde_json::json!({ "program": program, "error": error }),
        ),
    }
}

fn call_error(py: Python<'_>, e: &CallError) -> PyErr {
    let message = e.to_string();
    match e {
        CallError::Rpc(rpc) => py_error(
            py,
            "rpc",
            &rpc.message,
            serde_json::json!({ "code": rpc.code, "data": rpc.data }),
        ),
        CallError::Connection(c) => connection_error(py, c),
        CallError::Cancelled => py_error(py, "cancelled", &message, Value::Null),
        CallError::Timeout => py_error(py, "timeout", &message, Value::Null),
        CallError::InvalidParams(d) => py_error(
            py,
            "invalid_params",
            &message,
            serde_json::json!({ "detail": d }),
        ),
        CallError::InvalidResult(d) => py_error(
            py,
            "invalid_result",
            &message,
            serde_json::json!({ "detail": d }),
        ),
        CallError::Refused(r) => py_error(py, "refused", &message, r.to_json()),
    }
}

// ---------------------------------------------------------------- handler

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers one incoming request from Python. Dropping it unanswered makes
/// the core answer `-32603`. Every answer is built by the core (`RpcError`'s
/// constructors); Python only chooses which.
#[pyclass(module = "libacp._libacp", frozen)]
struct RequestResponder {
    responder: Mutex<Option<Responder>>,
    /// Fired once answered (or dropped): stops the cancellation watcher.
    done: CancellationToken,
    /// The request's method (for `-32601`'s `data`).
    method: String,
    /// The id the peer chose.
    id: RequestId,
}

impl Drop for RequestResponder {
    fn drop(&mut self) {
        self.done.cancel();
    }
}

impl RequestResponder {
    fn send(&self, result: Result<Box<RawValue>, RpcError>) -> bool {
        let responder = lock(&self.responder).take();
        self.done.cancel();
        responder.is_some_and(|r| r.respond(result).is_ok())
    }

    fn send_error(&self, py: Python<'_>, error: RpcError) -> bool {
        py.detach(|| self.send(Err(error)))
    }
}

/// A request id as Python sees it: int, str or None (other JSON numbers as
/// `json.loads` reads their text, so they stay exact).
fn id_to_py<'py>(py: Python<'py>, id: &RequestId) -> PyResult<Bound<'py, PyAny>> {
    match id {
        RequestId::Null => Ok(py.None().into_bound(py)),
        RequestId::Number(n) => Ok(n.into_pyobject(py)?.into_any()),
        RequestId::Str(s) => Ok(PyString::new(py, s).into_any()),
        RequestId::Other(text) => py.import("json")?.call_method1("loads", (text.as_str(),)),
    }
}

/// A request id as JSON (for event details).
fn id_to_json(id: &RequestId) -> Value {
    match id {
        RequestId::Null => Value::Null,
        RequestId::Number(n) => Value::from(*n),
        RequestId::Str(s) => Value::String(s.clone()),
        RequestId::Other(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
    }
}

#[pymethods]
impl RequestResponder {
    /// Answers with `result` (any JSON value). A value that is not JSON is
    /// answered `-32603` and raises `InvalidParams`. Returns whether the
    /// answer was sent (False: already answered, cancelled, or closed).
    fn respond(&self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<bool> {
        let value = to_json(result, "result", 0);
        let raw =
            value.and_then(|v| serde_json::value::to_raw_value(&v).map_err(|e| e.to_string()));
        match raw {
            Ok(raw) => Ok(py.detach(|| self.send(Ok(raw)))),
            Err(e) => {
                self.send_error(
                    py,
                    RpcError::internal_error(format!("the handler's result is not JSON: {e}")),
                );
                Err(invalid_params(py, &e))
            }
        }
    }

    /// Answers with a JSON-RPC error. `data` that is not JSON is answered
    /// `-32603` instead and raises `InvalidParams`.
    #[pyo3(signature = (code, message, data=None))]
    fn respond_error(
        &self,
        py: Python<'_>,
        code: i64,
        message: String,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let mut error = RpcError::new(code, message);
        if let Some(data) = data.filter(|d| !d.is_none()) {
            match to_json(data, "data", 0) {
                Ok(value) => error = error.with_data(value),
                Err(e) => {
                    self.send_error(
                        py,
                        RpcError::internal_error(format!(
                            "the handler's error data is not JSON: {e}"
                        )),
                    );
                    return Err(invalid_params(py, &e));
                }
            }
        }
        Ok(self.send_error(py, error))
    }

    /// Answers the core's `-32601` (`data: {"method": ...}`).
    fn respond_method_not_found(&self, py: Python<'_>) -> bool {
        self.send_error(py, RpcError::method_not_found(&self.method))
    }

    /// Answers the core's `-32800` ("Request cancelled").
    fn respond_cancelled(&self, py: Python<'_>) -> bool {
        self.send_error(py, RpcError::request_cancelled())
    }

    /// Answers the core's `-32603` with `detail` as `data`.
    fn respond_internal_error(&self, py: Python<'_>, detail: String) -> bool {
        self.send_error(py, RpcError::internal_error(detail))
    }

    /// Whether this responder can still answer.
    #[getter]
    fn open(&self) -> bool {
        lock(&self.responder)
            .as_ref()
            .is_some_and(|r| !r.is_answered())
    }

    /// The request's id, as the peer sent it (int, str or None).
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        id_to_py(py, &self.id)
    }

    /// The request's method.
    #[getter]
    fn method(&self) -> &str {
        &self.method
    }
}

/// Called by Python when a notification's handler finished: releases the
/// core's ordering barrier.
#[pyclass(module = "libacp._libacp")]
struct NotificationDone {
    tx: Mutex<Option<oneshot::Sender<()>>>,
}

#[pymethods]
impl NotificationDone {
    fn __call__(&self) {
        if let Some(tx) = lock(&self.tx).take() {
            let _ = tx.send(());
        }
    }
}

/// The core's `Handler`, forwarding to the Python dispatcher.
struct PyHandler {
    dispatcher: Py<PyAny>,
}

fn report(py: Python<'_>, e: &PyErr) {
    e.print(py);
}

impl Handler for PyHandler {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let done = CancellationToken::new();
        let cancellation = request.cancellation.clone();
        let superseded = responder.superseded().clone();
        let handle = RequestResponder {
            responder: Mutex::new(Some(responder)),
            done: done.clone(),
            method: request.method.clone(),
            id: request.id.clone(),
        };
        let started = attach_alive(|py| -> PyResult<Py<PyAny>> {
            let params = raw_to_py(py, request.params.as_deref())?;
            let handle = Py::new(py, handle)?;
            self.dispatcher
                .call_method1(py, "request", (request.method.as_str(), params, handle))
        });
        let req = match started {
            Ok(req) => req,
            Err(e) => {
                // The responder was dropped with the failed call: -32603.
                attach_alive(|py| report(py, &e));
                return;
            }
        };
        tokio::spawn(async move {
            let notify = |name: &str| {
                attach_alive(|py| {
                    if let Err(e) = req.call_method0(py, name) {
                        report(py, &e);
                    }
                });
            };
            tokio::select! {
                biased;
                () = done.cancelled() => return,
                () = superseded.cancelled() => {
                    notify("_native_superseded");
                    return;
                }
                () = cancellation.cancelled() => notify("_native_cancel_requested"),
            }
            tokio::select! {
                biased;
                () = done.cancelled() => {}
                () = superseded.cancelled() => notify("_native_superseded"),
            }
        });
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        let (tx, rx) = oneshot::channel();
        let sent = attach_alive(|py| -> PyResult<()> {
            let params = raw_to_py(py, notification.params.as_deref())?;
            let done = Py::new(
                py,
                NotificationDone {
                    tx: Mutex::new(Some(tx)),
                },
            )?;
            self.dispatcher.call_method1(
                py,
                "notification",
                (notification.method.as_str(), params, done),
            )?;
            Ok(())
        });
        if let Err(e) = sent {
            attach_alive(|py| report(py, &e));
        }
        // Resolves when Python calls `done()` or drops it.
        Box::pin(async move {
            let _ = rx.await;
        })
    }
}

// ---------------------------------------------------------------- connection

/// An ACP connection in one role (the dynamic API of the core).
#[pyclass(module = "libacp._libacp")]
struct NativeConnection {
    /// Keeps the connection open; `None` after `release()`.
    owner: Mutex<Option<AcpConnection>>,
    peer: AcpPeer,
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

/// An asyncio future resolved by `fut`, which runs on libacp's runtime.
/// Cancelling the future (the awaiting task was cancelled) drops `fut`
/// (for a request: `$/cancel_request`). Completion goes through
/// `attach_alive`, so nothing touches the interpreter once it shuts down.
fn awaitable<'py, F>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: std::future::Future<Output = PyResult<Py<PyAny>>> + Send + 'static,
{
    let complete = completer(py)?.clone().unbind();
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
    let future_ref = future.clone().unbind();
    let loop_ref = event_loop.unbind();
    runtime().spawn(async move {
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

#[pymethods]
impl NativeConnection {
    /// `"client"` or `"agent"`.
    #[getter]
    fn role(&self) -> &'static str {
        role_name(self.peer.role())
    }

    /// Sends a request; returns an awaitable of the result (a JSON value).
    #[pyo3(signature = (method, params=None, timeout=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = params_of(params)?;
        let timeout = timeout
            .filter(|t| !t.is_none())
            .map(|t| opt_seconds("timeout", t, false))
            .transpose()?;
        let mut call = self.peer.request(method, params);
        if let Some(t) = timeout {
            call = call.timeout(t);
        }
        awaitable(py, async move {
            let result = call.await;
            attach_alive(|py| match result {
                Ok(raw) => Ok(raw_to_py(py, Some(&raw))?.unbind()),
                Err(e) => Err(call_error(py, &e)),
            })
        })
    }

    /// Sends a notification; returns an awaitable of None.
    #[pyo3(signature = (method, params=None))]
    fn notify<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = params_of(params)?;
        let peer = self.peer.clone();
        awaitable(py, async move {
            let result = peer.notify(&method, params).await;
            attach_alive(|py| match result {
                Ok(()) => Ok(py.None()),
                Err(e) => Err(call_error(py, &e)),
            })
        })
    }

    /// Client side: `session/cancel` (see the core's `cancel_session`).
    fn cancel_session<'py>(
        &self,
        py: Python<'py>,
        session_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let peer = self.peer.clone();
        awaitable(py, async move {
            let result = peer.cancel_session(&session_id).await;
            attach_alive(|py| match result {
                Ok(()) => Ok(py.None()),
                Err(e) => Err(call_error(py, &e)),
            })
        })
    }

    /// Closes the connection (idempotent); resolves when it is all done.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let peer = self.peer.clone();
        awaitable(py, async move {
            peer.close().await;
            attach_alive(|py| Ok(py.None()))
        })
    }

    /// Resolves with the reason (a str) when the connection has closed.
    fn closed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let peer = self.peer.clone();
        awaitable(py, async move {
            let reason = peer.closed().await.to_string();
            attach_alive(|py| Ok(PyString::new(py, &reason).into_any().unbind()))
        })
    }

    /// Resolves when the connection is closed, everything queued was
    /// written and a spawned agent is gone.
    fn terminated<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let peer = self.peer.clone();
        awaitable(py, async move {
            peer.terminated().await;
            attach_alive(|py| Ok(py.None()))
        })
    }

    /// Why the connection closed, or None while open.
    #[getter]
    fn close_reason(&self) -> Option<String> {
        self.peer.peer().close_reason().map(|r| r.to_string())
    }

    /// The capabilities the peer advertised (`{}` before `initialize`).
    fn peer_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.peer.peer_capabilities())
    }

    /// The negotiated protocol version, once initialized.
    #[getter]
    fn protocol_version(&self) -> Option<u16> {
        self.peer.protocol_version()
    }

    /// Ids of the sessions open on this connection.
    fn sessions(&self) -> Vec<String> {
        self.peer.sessions()
    }

    /// The spawned agent's process id (client side), else None.
    #[getter]
    fn pid(&self) -> Option<u32> {
        self.peer.process().map(libacp_core::ProcessStatus::pid)
    }

    /// Client side with `session_model=True`: the session's state as the
    /// core's snapshot (a dict; shape in `core/src/services/session_model.rs`),
    /// or None for a session the model has not seen. Raises `RuntimeError`
    /// when the session model is off.
    fn session_snapshot<'py>(
        &self,
        py: Python<'py>,
        session_id: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(store) = self.peer.services().sessions else {
            return Err(PyRuntimeError::new_err(
                "the session model is not enabled (pass session_model=True)",
            ));
        };
        match py.detach(|| store.snapshot_json(session_id)) {
            Some(snapshot) => to_py(py, &snapshot),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The spawned agent's exit status as `(code, signal)` once it has
    /// exited; None while it runs or when no agent was spawned.
    #[getter]
    fn exit_status(&self) -> Option<(Option<i32>, Option<i32>)> {
        self.peer
            .process()
            .and_then(libacp_core::ProcessStatus::try_exit)
            .map(exit_pair)
    }

    /// Resolves with the spawned agent's `(code, signal)` once it exits.
    /// Raises `RuntimeError` when this connection did not spawn an agent.
    fn wait_exit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let Some(process) = self.peer.process().cloned() else {
            return Err(PyRuntimeError::new_err(
                "this connection did not spawn an agent (only Connection.spawn_agent has an exit status)",
            ));
        };
        awaitable(py, async move {
            let (code, signal) = exit_pair(process.wait().await);
            attach_alive(|py| Ok((code, signal).into_pyobject(py)?.into_any().unbind()))
        })
    }

    /// Drops this handle's ownership: the connection closes (without
    /// waiting) unless another handle keeps it.
    fn release(&self) {
        lock(&self.owner).take();
    }
}

fn exit_pair(info: ExitInfo) -> (Option<i32>, Option<i32>) {
    (info.code, info.signal)
}

// ---------------------------------------------------------------- starting

// ---------------------------------------------------------------- options

/// The keyword options every constructor takes (`**options`).
const OPTION_NAMES: &str = "framing, max_frame_size, request_timeout, flush_timeout, \
     outgoing_queue, incoming_queue, trace, events, require_auth, session_model, fs, terminals";

/// Largest queue size accepted (far below what tokio's semaphores allow).
const MAX_QUEUE: u64 = 1 << 24;

/// How many engine events may wait for the event loop before new ones are
/// dropped (and counted in an `events_dropped` event).
const EVENT_BACKLOG: usize = 1024;

fn opt_bool(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        PyTypeError::new_err(format!("{name} must be a bool, not {}", type_name(value)))
    })
}

/// A positive integer no larger than `max`.
fn opt_count(name: &str, value: &Bound<'_, PyAny>, max: u64) -> PyResult<usize> {
    if value.cast::<PyBool>().is_ok() || value.cast::<PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            type_name(value)
        )));
    }
    value
        .extract::<u64>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            PyValueError::new_err(format!("{name} must be between 1 and {max}, not {value}"))
        })
}

/// A duration in seconds (int or float): finite, not negative, and not
/// zero unless `zero_ok`.
fn opt_seconds(name: &str, value: &Bound<'_, PyAny>, zero_ok: bool) -> PyResult<Duration> {
    if value.cast::<PyBool>().is_ok()
        || !(value.cast::<PyInt>().is_ok() || value.cast::<PyFloat>().is_ok())
    {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a number of seconds (int or float), not {}",
            type_name(value)
        )));
    }
    let secs: f64 = value.extract()?;
    let bad = !secs.is_finite() || secs < 0.0 || (secs == 0.0 && !zero_ok);
    if bad {
        let wanted = if zero_ok { "0 or more" } else { "more than 0" };
        return Err(PyValueError::new_err(format!(
            "{name} must be a finite number of seconds, {wanted}, not {value}"
        )));
    }
    Duration::try_from_secs_f64(secs)
        .map_err(|_| PyValueError::new_err(format!("{name}: {value} seconds is too long")))
}

fn opt_callable(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if value.is_callable() {
        Ok(value.clone().unbind())
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must be callable, not {}",
            type_name(value)
        )))
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Agent => "agent",
    }
}

/// An option that only one role uses, set on the other: refused rather
/// than silently ignored.
fn check_role(name: &str, wanted: Role, role: Role) -> PyResult<()> {
    if wanted == role {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{name} applies to the {} side; this connection is the {}",
            role_name(wanted),
            role_name(role)
        )))
    }
}

/// The core's options from a constructor's `**options` (None values keep
/// the default). Unknown names raise `TypeError`, values of the wrong type
/// `TypeError`, values out of range `ValueError`.
fn acp_options(role: Role, options: Option<&Bound<'_, PyDict>>) -> PyResult<AcpOptions> {
    let mut connection = ConnectionOptions::default();
    let mut acp = AcpOptions::default();
    let mut services = ClientServices::default();
    let Some(options) = options else {
        acp.connection = connection;
        return Ok(acp);
    };
    for (key, value) in options.iter() {
        let name: String = key.extract()?;
        if value.is_none() {
            if !OPTION_NAMES.split(", ").any(|n| n == name) {
                return Err(unknown_option(&name));
            }
            continue;
        }
        let name = name.as_str();
        match name {
            "framing" => {
                let framing = value.extract::<String>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "framing must be a str, not {}",
                        type_name(&value)
                    ))
                })?;
                connection.framing = match framing.as_str() {
                    "ndjson" => Framing::Ndjson,
                    "content-length" => Framing::ContentLength,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "framing must be \"ndjson\" or \"content-length\", not {other:?}"
                        )));
                    }
                };
            }
            "max_frame_size" => connection.max_frame_size = opt_count(name, &value, u64::MAX)?,
            "outgoing_queue" => connection.outgoing_queue = opt_count(name, &value, MAX_QUEUE)?,
            "incoming_queue" => connection.incoming_queue = opt_count(name, &value, MAX_QUEUE)?,
            "request_timeout" => {
                connection.request_timeout = Some(opt_seconds(name, &value, false)?);
            }
            "flush_timeout" => connection.flush_timeout = opt_seconds(name, &value, true)?,
            "trace" => connection.trace = Some(trace_hook(opt_callable(name, &value)?)),
            "events" => connection.events = Some(events_hook(opt_callable(name, &value)?)),
            "require_auth" => {
                acp.require_auth = opt_bool(name, &value)?;
                if acp.require_auth {
                    check_role(name, Role::Agent, role)?;
                }
            }
            "session_model" | "fs" | "terminals" => {
                if opt_bool(name, &value)? {
                    check_role(name, Role::Client, role)?;
                    match name {
                        "session_model" => services.sessions = Some(Arc::new(SessionStore::new())),
                        "fs" => services.fs = Some(Arc::new(SandboxedFs::new())),
                        _ => services.terminals = Some(Arc::new(TerminalManager::new())),
                    }
                }
            }
            other => return Err(unknown_option(other)),
        }
    }
    acp.connection = connection;
    acp.services = services;
    Ok(acp)
}

fn unknown_option(name: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "unexpected option {name:?} (the options are: {OPTION_NAMES})"
    ))
}

/// `trace(direction, frame)` on the engine's threads.
fn trace_hook(trace: Py<PyAny>) -> libacp_core::TraceHook {
    Arc::new(move |direction, frame: &[u8]| {
        let dir = match direction {
            Direction::Incoming => "in",
            Direction::Outgoing => "out",
        };
        let text = String::from_utf8_lossy(frame);
        attach_alive(|py| {
            if let Err(e) = trace.call1(py, (dir, text.as_ref())) {
                report(py, &e);
            }
        });
    })
}

/// One engine event as `(kind, message, details)`.
type EventParts = (&'static str, String, Value);

fn rpc_error_json(e: &RpcError) -> Value {
    serde_json::json!({ "code": e.code, "message": e.message, "data": e.data })
}

fn event_parts(event: &Event) -> EventParts {
    use serde_json::json;
    let id_of = |id: Option<&RequestId>| id.map_or(Value::Null, id_to_json);
    match event {
        Event::OversizedFrame { size, id, answered } => (
            "oversized_frame",
            format!("skipped a frame of {size} bytes (over max_frame_size)"),
            json!({ "size": size, "id": id_of(id.as_ref()), "answered": answered }),
        ),
        Event::InvalidFrame { error, answered } => (
            "invalid_frame",
            format!("invalid frame: {error}"),
            json!({ "error": rpc_error_json(error), "answered": answered }),
        ),
        Event::BadHeader(detail) => (
            "bad_header",
            format!("bad Content-Length header: {detail}"),
            json!({ "detail": detail }),
        ),
        Event::UnmatchedResponse { id, result } => {
            let id = id_of(id.as_ref());
            let details = match result {
                Ok(raw) => json!({
                    "id": id,
                    "result": serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null),
                }),
                Err(e) => json!({ "id": id, "error": rpc_error_json(e) }),
            };
            (
                "unmatched_response",
                format!("a response for no pending request (id {id})"),
                details,
            )
        }
        Event::DuplicateRequestId { id } => (
            "duplicate_request_id",
            format!("the peer reused the id {id} of a request in flight (answered -32600)"),
            json!({ "id": id_to_json(id) }),
        ),
        Event::CancelForUnknownRequest { id } => (
            "cancel_for_unknown_request",
            format!("$/cancel_request for {id}, which is not in flight (ignored)"),
            json!({ "id": id_to_json(id) }),
        ),
        Event::InvalidCancel { params } => (
            "invalid_cancel",
            "$/cancel_request whose params name no request (ignored)".to_owned(),
            json!({ "params": params }),
        ),
        Event::Ignored(reason) => ("ignored", reason.clone(), json!({})),
        Event::HandlerPanicked { message } => (
            "handler_panicked",
            format!("a handler panicked: {message}"),
            json!({ "panic": message }),
        ),
        Event::Closed(reason) => (
            "closed",
            format!("the connection closed: {reason}"),
            json!({ "reason": reason.to_string() }),
        ),
        other => ("other", format!("{other:?}"), json!({})),
    }
}

/// Engine events to `callback(kind, message, details)`. The core's hook
/// only queues them (it may run under the engine's locks); one task calls
/// Python, in order. A full backlog drops events and reports how many.
fn events_hook(callback: Py<PyAny>) -> EventHook {
    let (tx, mut rx) = mpsc::channel::<EventParts>(EVENT_BACKLOG);
    let dropped = Arc::new(AtomicU64::new(0));
    let lost = Arc::clone(&dropped);
    runtime().spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while batch.len() < EVENT_BACKLOG
                && let Ok(more) = rx.try_recv()
            {
                batch.push(more);
            }
            let missed = lost.swap(0, Ordering::SeqCst);
            if missed > 0 {
                batch.push((
                    "events_dropped",
                    format!("{missed} events were dropped (the event loop fell behind)"),
                    serde_json::json!({ "count": missed }),
                ));
            }
            attach_alive(|py| {
                for (kind, message, details) in batch {
                    let called =
                        to_py(py, &details).and_then(|d| callback.call1(py, (kind, message, d)));
                    if let Err(e) = called {
                        report(py, &e);
                    }
                }
            });
        }
    });
    Arc::new(move |event: &Event| {
        if tx.try_send(event_parts(event)).is_err() {
            dropped.fetch_add(1, Ordering::SeqCst);
        }
    })
}

fn role_of(role: &str) -> PyResult<Role> {
    match role {
        "client" => Ok(Role::Client),
        "agent" => Ok(Role::Agent),
        other => Err(PyValueError::new_err(format!(
            "role must be \"client\" or \"agent\", not {other:?}"
        ))),
    }
}

fn wrap(conn: AcpConnection) -> NativeConnection {
    NativeConnection {
        peer: conn.acp_peer(),
        owner: Mutex::new(Some(conn)),
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// `shutdown_grace`: seconds for both rungs of the ladder, or a pair
/// `(after_stdin_close, after_sigterm)`.
fn shutdown_grace(value: &Bound<'_, PyAny>) -> PyResult<ShutdownGrace> {
    const NAME: &str = "shutdown_grace";
    if value.cast::<PyTuple>().is_ok() || value.cast::<PyList>().is_ok() {
        let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
        let [stdin, term] = items.as_slice() else {
            return Err(PyValueError::new_err(format!(
                "{NAME} must be seconds or a pair (after_stdin_close, after_sigterm), \
                 not {} items",
                items.len()
            )));
        };
        return Ok(ShutdownGrace {
            after_stdin_close: opt_seconds("shutdown_grace[0]", stdin, true)?,
            after_sigterm: opt_seconds("shutdown_grace[1]", term, true)?,
        });
    }
    let both = opt_seconds(NAME, value, true)?;
    Ok(ShutdownGrace {
        after_stdin_close: both,
        after_sigterm: both,
    })
}

/// Client side: spawns `argv` and connects to its stdio.
#[pyfunction]
#[pyo3(signature = (argv, dispatcher, *, cwd=None, env=None, clear_env=None, stderr=None, shutdown_grace=None, **options))]
#[allow(clippy::too_many_arguments)]
fn spawn_agent(
    py: Python<'_>,
    argv: Vec<String>,
    dispatcher: Py<PyAny>,
    cwd: Option<std::path::PathBuf>,
    env: Option<Vec<(String, String)>>,
    clear_env: Option<&Bound<'_, PyAny>>,
    stderr: Option<&Bound<'_, PyAny>>,
    shutdown_grace: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let Some((program, args)) = argv.split_first() else {
        return Err(PyValueError::new_err("argv must name a program"));
    };
    if program.is_empty() {
        return Err(PyValueError::new_err("argv[0] (the program) is empty"));
    }
    let options = acp_options(Role::Client, options)?;
    let mut command = AgentCommand::new(program).args(args);
    if let Some(cwd) = cwd {
        command = command.cwd(cwd);
    }
    for (k, v) in env.unwrap_or_default() {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            return Err(PyValueError::new_err(format!(
                "env: {k:?} is not a valid environment variable name (or its value holds NUL)"
            )));
        }
        command = command.env(k, v);
    }
    if let Some(clear) = clear_env.filter(|v| !v.is_none()) {
        command.clear_env = opt_bool("clear_env", clear)?;
    }
    if let Some(grace) = shutdown_grace.filter(|v| !v.is_none()) {
        command = command.grace(self::shutdown_grace(grace)?);
    }
    if let Some(hook) = stderr.filter(|v| !v.is_none()) {
        let hook = opt_callable("stderr", hook)?;
        command = command.stderr(move |line| {
            attach_alive(|py| {
                if let Err(e) = hook.call1(py, (line,)) {
                    report(py, &e);
                }
            });
        });
    }
    let handler = PyHandler { dispatcher };
    let result = py.detach(|| {
        let _guard = runtime().enter();
        AcpConnection::spawn_agent(&command, handler, options)
    });
    result.map(wrap).map_err(|e| connection_error(py, &e))
}

/// Agent side: serves on this process's stdin and stdout.
#[pyfunction]
#[pyo3(signature = (dispatcher, **options))]
fn serve_stdio(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let options = acp_options(Role::Agent, options)?;
    let handler = PyHandler { dispatcher };
    let conn = py.detach(|| {
        AcpConnection::start_on(
            runtime().handle(),
            Role::Agent,
            Transport::stdio(),
            handler,
            options,
        )
    });
    Ok(wrap(conn))
}

/// Either role over file descriptors this call takes ownership of: one
/// connected socket (`read_fd == write_fd`), or a read and a write end
/// (pipes, sockets or files). Nothing is taken over when it raises
/// `ValueError` or `TypeError` (bad arguments).
#[pyfunction]
#[pyo3(signature = (role, read_fd, write_fd, dispatcher, **options))]
fn from_fds(
    py: Python<'_>,
    role: &str,
    read_fd: i32,
    write_fd: i32,
    dispatcher: Py<PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let role = role_of(role)?;
    if read_fd < 0 || write_fd < 0 {
        return Err(PyValueError::new_err("file descriptors must be >= 0"));
    }
    let options = acp_options(role, options)?;
    let handler = PyHandler { dispatcher };
    let rt = runtime();
    let _guard = rt.enter();
    let transport = if read_fd == write_fd {
        // SAFETY: the caller gives up an open descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(read_fd) };
        let std = std::os::unix::net::UnixStream::from(fd);
        std.set_nonblocking(true)
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let stream =
            tokio::net::UnixStream::from_std(std).map_err(|e| PyOSError::new_err(e.to_string()))?;
        Transport::from_stream(stream)
    } else {
        // SAFETY: the caller gives up two open descriptors.
        let (r, w) = unsafe {
            (
                OwnedFd::from_raw_fd(read_fd),
                OwnedFd::from_raw_fd(write_fd),
            )
        };
        let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(r)
            .map_err(|e| PyOSError::new_err(format!("read_fd: {e}")))?;
        let writer = tokio::net::unix::pipe::Sender::from_owned_fd(w)
            .map_err(|e| PyOSError::new_err(format!("write_fd: {e}")))?;
        Transport::new(reader, writer)
    };
    let conn =
        py.detach(|| AcpConnection::start_on(rt.handle(), role, transport, handler, options));
    Ok(wrap(conn))
}

/// `(code, message, data)` of the core's `-32601` for `method`.
#[pyfunction]
fn method_not_found(py: Python<'_>, method: &str) -> PyResult<(i64, String, Py<PyAny>)> {
    let error = RpcError::method_not_found(method);
    let data = to_py(py, &error.data.unwrap_or(Value::Null))?.unbind();
    Ok((error.code, error.message, data))
}

/// The native module.
/// Set once the interpreter starts shutting down (from an `atexit` hook).
/// libacp's engine threads outlive `asyncio.run`; one of them attaching to
/// the interpreter while it finalizes crashes the process, so from then on
/// they never touch Python again.
static FINALIZING: std::sync::RwLock<bool> = std::sync::RwLock::new(false);

/// `Python::attach` for libacp's own threads: during interpreter shutdown
/// the calling thread is parked for good instead (the process is exiting;
/// nothing waits for it). The read lock is held across the attach so the
/// `atexit` hook cannot mark shutdown while a thread is inside Python.
fn attach_alive<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    let guard = FINALIZING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if *guard {
        drop(guard);
        loop {
            std::thread::park();
        }
    }
    let result = Python::attach(f);
    drop(guard);
    result
}

/// Registered with `atexit`: marks shutdown, letting threads already inside
/// Python finish first (the GIL is released while waiting for them).
#[pyfunction]
fn _mark_finalizing(py: Python<'_>) {
    py.detach(|| {
        *FINALIZING
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
    });
}

#[pymodule]
fn _libacp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_mark_finalizing, m)?)?;
    let atexit = m.py().import("atexit")?;
    atexit.call_method1("register", (m.getattr("_mark_finalizing")?,))?;
    m.add_class::<NativeConnection>()?;
    m.add_class::<RequestResponder>()?;
    m.add_class::<NotificationDone>()?;
    m.add_function(wrap_pyfunction!(spawn_agent, m)?)?;
    m.add_function(wrap_pyfunction!(serve_stdio, m)?)?;
    m.add_function(wrap_pyfunction!(from_fds, m)?)?;
    m.add_function(wrap_pyfunction!(method_not_found, m)?)?;
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
