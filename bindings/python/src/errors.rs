//! The Python exceptions built from the core's errors.
//!
//! The exception classes are defined in Python (`libacp._errors`); this
//! module only names the kind and passes the message and details to
//! `libacp._errors._from_native` (a remote failure, `ConnectionError::Remote`
//! or a close for `CloseReason::Remote`, is `libacp.RemoteError` with the
//! core's kind and HTTP status). Everything here needs the GIL and runs on
//! the thread holding it. `report` is for errors nobody awaits (a host
//! callback that raised on an engine thread): it prints them, with their
//! traceback, to `sys.stderr`. `method_not_found` gives Python the
//! core's `-32601` answer, so both sides word it the same.

use pyo3::prelude::*;
use serde_json::Value;

use libacp_core::remote::RemoteError;
use libacp_core::{CallError, CloseReason, ConnectionError, RpcError};

use crate::convert::to_py;

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

pub(crate) fn invalid_params(py: Python<'_>, detail: &str) -> PyErr {
    py_error(
        py,
        "invalid_params",
        &format!("invalid params: {detail}"),
        serde_json::json!({ "detail": detail }),
    )
}

pub(crate) fn invalid_result(py: Python<'_>, detail: &str) -> PyErr {
    py_error(
        py,
        "invalid_result",
        &format!("unexpected result from the peer: {detail}"),
        serde_json::json!({ "detail": detail }),
    )
}

/// `libacp.RemoteError` (a `ConnectionClosed`): a remote agent that could
/// not be reached (`reason` None), or a connection closed by its remote
/// transport failing (`reason`: the close reason's text). `kind` is the
/// core's stable name (`refused`, `unauthorized`, ...).
pub(crate) fn remote_error(
    py: Python<'_>,
    message: &str,
    e: &RemoteError,
    reason: Option<String>,
) -> PyErr {
    py_error(
        py,
        "remote",
        message,
        serde_json::json!({ "kind": e.kind.name(), "status": e.status, "reason": reason }),
    )
}

pub(crate) fn connection_error(py: Python<'_>, e: &ConnectionError) -> PyErr {
    match e {
        ConnectionError::Remote(remote) => remote_error(py, &e.to_string(), remote, None),
        ConnectionError::Closed(reason @ CloseReason::Remote(remote)) => {
            remote_error(py, &e.to_string(), remote, Some(reason.to_string()))
        }
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
        // A kind the core adds later: Python makes it a plain AcpError.
        _ => py_error(py, "other", &e.to_string(), Value::Null),
    }
}

pub(crate) fn call_error(py: Python<'_>, e: &CallError) -> PyErr {
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
        _ => py_error(py, "other", &message, Value::Null),
    }
}

/// Reports an exception nobody awaits (raised by a host callback on an
/// engine thread): logged with its traceback on the `libacp` logger at
/// ERROR, so the host's logging configuration decides where it goes;
/// printed only if logging itself fails.
pub(crate) fn report(py: Python<'_>, e: &PyErr) {
    let logged = py.import("logging").and_then(|logging| {
        let logger = logging.call_method1("getLogger", ("libacp",))?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("exc_info", e.value(py))?;
        logger.call_method(
            "error",
            ("libacp: a callback raised an exception",),
            Some(&kwargs),
        )
    });
    if logged.is_err() {
        e.print(py);
    }
}

/// `(code, message, data)` of the core's `-32601` for `method`.
#[pyfunction]
pub(crate) fn method_not_found(py: Python<'_>, method: &str) -> PyResult<(i64, String, Py<PyAny>)> {
    let error = RpcError::method_not_found(method);
    let data = to_py(py, &error.data.unwrap_or(Value::Null))?.unbind();
    Ok((error.code, error.message, data))
}
