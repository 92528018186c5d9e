//! `NativeConnection`: the handle Python's `libacp.Connection` holds.
//!
//! It owns the core's `HostConnection` (until `release()`, which lets it
//! close) and an `AcpPeer` to call through. Its methods are called with the
//! GIL on the host's thread: the synchronous ones answer from the core's
//! state; `request` returns an asyncio future the dispatcher completes from
//! the inbox (`awaitable::call_future`); the others return futures whose
//! work runs on libacp's runtime (`awaitable::awaitable`).

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde_json::value::RawValue;

use libacp_core::host::HostConnection;
use libacp_core::{AcpPeer, CallOptions, CallTimeout, ExitInfo, TryNotify};

use crate::awaitable::{awaitable, call_future, failed_future};
use crate::convert::{to_py, to_raw, type_name};
use crate::errors::{call_error, invalid_params};
use crate::handler::lock;
use crate::inbox::PyInbox;
use crate::interpreter::attach_alive;
use crate::options::{call_timeout, role_name};

/// An ACP connection in one role (the dynamic API of the core).
#[pyclass(module = "libacp._libacp")]
pub(crate) struct NativeConnection {
    /// Keeps the connection open; `None` after `release()`.
    owner: Mutex<Option<HostConnection<Py<PyAny>>>>,
    peer: AcpPeer,
    /// Where calls' outcomes go (`inbox.rs`).
    inbox: Arc<PyInbox>,
    /// The Python dispatcher, kept alive while this handle lives (the
    /// inbox's wake only holds it weakly). Shown to Python's garbage
    /// collector (`__traverse__`/`__clear__`): the dispatcher reaches the
    /// host's handler, which usually holds the connection back, and a
    /// cycle through a reference the collector cannot see is never freed.
    dispatcher: Option<Py<PyAny>>,
}

/// The handle owning a freshly started connection.
pub(crate) fn wrap(conn: HostConnection<Py<PyAny>>, dispatcher: Py<PyAny>) -> NativeConnection {
    NativeConnection {
        peer: conn.acp_peer(),
        inbox: Arc::clone(conn.inbox()),
        owner: Mutex::new(Some(conn)),
        dispatcher: Some(dispatcher),
    }
}

/// Params for an outgoing message: `None` or a JSON object/array.
fn params_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Box<RawValue>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if !(obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>())
    {
        return Err(invalid_params(
            obj.py(),
            &format!("params must be a dict or a list, not {}", type_name(obj)),
        ));
    }
    to_raw(obj, "params")
        .map(Some)
        .map_err(|e| invalid_params(obj.py(), &e))
}

#[pymethods]
impl NativeConnection {
    /// The Python references this handle holds, for the garbage collector.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(dispatcher) = &self.dispatcher {
            visit.call(dispatcher)?;
        }
        Ok(())
    }

    /// Drops them when the collector breaks a cycle of unreachable objects.
    fn __clear__(&mut self) {
        self.dispatcher = None;
    }

    /// `"client"` or `"agent"`.
    #[getter]
    fn role(&self) -> &'static str {
        role_name(self.peer.role())
    }

    /// Sends a request (queued for the peer now); returns an asyncio
    /// future of the result (a JSON value), completed by the dispatcher
    /// from the inbox. `ordered` (the default): after every notification
    /// received before the answer was handled. Calls made from inside a
    /// notification handler pass `ordered=False` (the handler would
    /// otherwise wait for its own turn to end). Refusals raise at once.
    #[pyo3(signature = (method, params=None, timeout=None, ordered=true))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<&Bound<'py, PyAny>>,
        ordered: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let prepared = params_of(params).and_then(|params| {
            let timeout = timeout
                .filter(|t| !t.is_none())
                .map(call_timeout)
                .transpose()?;
            Ok((params, timeout))
        });
        let (params, timeout) = match prepared {
            Ok(prepared) => prepared,
            // Like a refusal: a future that has already failed.
            Err(e) => return failed_future(py, e),
        };
        let options = CallOptions {
            timeout: timeout.map_or(CallTimeout::Default, CallTimeout::After),
            skip_barrier: !ordered,
        };
        call_future(py, &self.peer, &self.inbox, method, params, options)
    }

    /// Sends a notification. Queued at once when the outgoing queue has
    /// room (returns None: nothing to await); otherwise returns an
    /// awaitable that resolves once it is queued. Refusals raise at once.
    #[pyo3(signature = (method, params=None))]
    fn notify<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let params = params_of(params)?;
        let params = match self.peer.try_notify(&method, params) {
            Ok(TryNotify::Sent) => return Ok(None),
            Ok(TryNotify::Full(params)) => params,
            Err(e) => return Err(call_error(py, &e)),
        };
        let peer = self.peer.clone();
        awaitable(py, async move {
            let result = peer.notify(&method, params).await;
            attach_alive(|py| match result {
                Ok(()) => Ok(py.None()),
                Err(e) => Err(call_error(py, &e)),
            })
        })
        .map(Some)
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
