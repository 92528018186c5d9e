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
//! * outgoing calls return asyncio awaitables (`pyo3-async-runtimes`);
//!   cancelling the awaiting task drops the core's call, which abandons it
//!   and sends `$/cancel_request`.

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use libacp_core::rpc::{BoxFuture, IncomingNotification, IncomingRequest, Responder};
use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, AgentCommand, CallError, CancellationToken,
    ConnectionError, ConnectionOptions, Direction, Framing, Handler, Role, RpcError, Transport,
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
/// the core answer `-32603`.
#[pyclass(module = "libacp._libacp")]
struct RequestResponder {
    responder: Mutex<Option<Responder>>,
    /// Fired once answered (or dropped): stops the cancellation watcher.
    done: CancellationToken,
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
                py.detach(|| {
                    self.send(Err(RpcError::internal_error(format!(
                        "the handler's result is not JSON: {e}"
                    ))))
                });
                Err(invalid_params(py, &e))
            }
        }
    }

    /// Answers with a JSON-RPC error.
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
            let value = to_json(data, "data", 0).map_err(|e| invalid_params(py, &e))?;
            error = error.with_data(value);
        }
        Ok(py.detach(|| self.send(Err(error))))
    }

    /// Whether this responder can still answer.
    #[getter]
    fn open(&self) -> bool {
        lock(&self.responder)
            .as_ref()
            .is_some_and(|r| !r.is_answered())
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
        match self.peer.role() {
            Role::Client => "client",
            Role::Agent => "agent",
        }
    }

    /// Sends a request; returns an awaitable of the result (a JSON value).
    #[pyo3(signature = (method, params=None, timeout=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = params_of(params)?;
        let mut call = self.peer.request(method, params);
        if let Some(t) = timeout {
            let t = Duration::try_from_secs_f64(t)
                .map_err(|e| PyValueError::new_err(format!("timeout: {e}")))?;
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

    /// Drops this handle's ownership: the connection closes (without
    /// waiting) unless another handle keeps it.
    fn release(&self) {
        lock(&self.owner).take();
    }
}

// ---------------------------------------------------------------- starting

/// Options shared by every constructor.
struct Settings {
    options: AcpOptions,
}

fn settings(
    framing: &str,
    max_frame_size: Option<usize>,
    request_timeout: Option<f64>,
    trace: Option<Py<PyAny>>,
) -> PyResult<Settings> {
    let mut connection = ConnectionOptions {
        framing: match framing {
            "ndjson" => Framing::Ndjson,
            "content-length" => Framing::ContentLength,
            other => {
                return Err(PyValueError::new_err(format!(
                    "framing must be \"ndjson\" or \"content-length\", not {other:?}"
                )));
            }
        },
        ..ConnectionOptions::default()
    };
    if let Some(size) = max_frame_size {
        connection.max_frame_size = size;
    }
    if let Some(t) = request_timeout {
        connection.request_timeout = Some(
            Duration::try_from_secs_f64(t)
                .map_err(|e| PyValueError::new_err(format!("request_timeout: {e}")))?,
        );
    }
    if let Some(trace) = trace {
        connection.trace = Some(Arc::new(move |direction, frame: &[u8]| {
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
        }));
    }
    Ok(Settings {
        options: AcpOptions {
            connection,
            ..AcpOptions::default()
        },
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

/// Client side: spawns `argv` and connects to its stdio.
#[pyfunction]
#[pyo3(signature = (argv, dispatcher, cwd=None, env=None, stderr=None, framing="ndjson", max_frame_size=None, request_timeout=None, trace=None))]
#[allow(clippy::too_many_arguments)]
fn spawn_agent(
    py: Python<'_>,
    argv: Vec<String>,
    dispatcher: Py<PyAny>,
    cwd: Option<std::path::PathBuf>,
    env: Option<Vec<(String, String)>>,
    stderr: Option<Py<PyAny>>,
    framing: &str,
    max_frame_size: Option<usize>,
    request_timeout: Option<f64>,
    trace: Option<Py<PyAny>>,
) -> PyResult<NativeConnection> {
    let Some((program, args)) = argv.split_first() else {
        return Err(PyValueError::new_err("argv must name a program"));
    };
    let settings = settings(framing, max_frame_size, request_timeout, trace)?;
    let mut command = AgentCommand::new(program).args(args);
    if let Some(cwd) = cwd {
        command = command.cwd(cwd);
    }
    for (k, v) in env.unwrap_or_default() {
        command = command.env(k, v);
    }
    if let Some(hook) = stderr {
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
        AcpConnection::spawn_agent(&command, handler, settings.options)
    });
    result.map(wrap).map_err(|e| connection_error(py, &e))
}

/// Agent side: serves on this process's stdin and stdout.
#[pyfunction]
#[pyo3(signature = (dispatcher, framing="ndjson", max_frame_size=None, request_timeout=None, trace=None))]
fn serve_stdio(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    framing: &str,
    max_frame_size: Option<usize>,
    request_timeout: Option<f64>,
    trace: Option<Py<PyAny>>,
) -> PyResult<NativeConnection> {
    let settings = settings(framing, max_frame_size, request_timeout, trace)?;
    let handler = PyHandler { dispatcher };
    let conn = py.detach(|| {
        AcpConnection::start_on(
            runtime().handle(),
            Role::Agent,
            Transport::stdio(),
            handler,
            settings.options,
        )
    });
    Ok(wrap(conn))
}

/// Either role over file descriptors this call takes ownership of: one
/// connected socket (`read_fd == write_fd`), or a read and a write end
/// (pipes, sockets or files).
#[pyfunction]
#[pyo3(signature = (role, read_fd, write_fd, dispatcher, framing="ndjson", max_frame_size=None, request_timeout=None, trace=None))]
#[allow(clippy::too_many_arguments)]
fn from_fds(
    py: Python<'_>,
    role: &str,
    read_fd: i32,
    write_fd: i32,
    dispatcher: Py<PyAny>,
    framing: &str,
    max_frame_size: Option<usize>,
    request_timeout: Option<f64>,
    trace: Option<Py<PyAny>>,
) -> PyResult<NativeConnection> {
    let role = role_of(role)?;
    if read_fd < 0 || write_fd < 0 {
        return Err(PyValueError::new_err("file descriptors must be >= 0"));
    }
    let settings = settings(framing, max_frame_size, request_timeout, trace)?;
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
    let conn = py.detach(|| {
        AcpConnection::start_on(rt.handle(), role, transport, handler, settings.options)
    });
    Ok(wrap(conn))
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
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
