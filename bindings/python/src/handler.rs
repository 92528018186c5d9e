//! The responder Python answers a request with: a thin wrapper over the
//! core's `HostRequest`.
//!
//! Python owns it from the moment the dispatcher takes the request: its
//! methods answer (from any Python thread; the core lets only the first
//! answer through), and dropping it unanswered makes the core answer
//! `-32603`. Its cancellation reaches Python as signals in the inbox
//! (`inbox.rs`), after `arm()`: no task watches it.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use serde_json::value::RawValue;

use libacp_core::RpcError;
use libacp_core::host::HostRequest;

use crate::convert::{id_to_py, to_json, to_raw};
use crate::errors::invalid_params;

/// Locks `m`, ignoring poisoning (the data stays consistent: every
/// critical section is a single take or read).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers one incoming request from Python. Every answer is built by the
/// core (`RpcError`'s constructors); Python only chooses which.
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct RequestResponder {
    request: HostRequest,
}

impl RequestResponder {
    pub(crate) fn new(request: HostRequest) -> Self {
        Self { request }
    }

    /// Sends `result` without the GIL (the answer may be written by this
    /// thread); whether it was sent.
    fn send(&self, py: Python<'_>, result: Result<Box<RawValue>, RpcError>) -> bool {
        py.detach(|| self.request.respond(result).is_ok())
    }
}

#[pymethods]
impl RequestResponder {
    /// Answers with `result` (any JSON value; None answers `{}` for ACP
    /// methods, `null` for extension methods). A value that is not JSON is
    /// answered `-32603` and raises `InvalidParams`. Returns whether the
    /// answer was sent (False: already answered, cancelled, or closed).
    fn respond(&self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<bool> {
        match to_raw(result, "result") {
            Ok(raw) => Ok(self.send(py, Ok(raw))),
            Err(e) => {
                self.send(
                    py,
                    Err(RpcError::internal_error(format!(
                        "the handler's result is not JSON: {e}"
                    ))),
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
            match to_json(data, "data") {
                Ok(value) => error = error.with_data(value),
                Err(e) => {
                    self.send(
                        py,
                        Err(RpcError::internal_error(format!(
                            "the handler's error data is not JSON: {e}"
                        ))),
                    );
                    return Err(invalid_params(py, &e));
                }
            }
        }
        Ok(self.send(py, Err(error)))
    }

    /// Answers the core's `-32601` (`data: {"method": ...}`).
    fn respond_method_not_found(&self, py: Python<'_>) -> bool {
        let error = RpcError::method_not_found(&self.request.method);
        self.send(py, Err(error))
    }

    /// Answers the core's `-32800` ("Request cancelled").
    fn respond_cancelled(&self, py: Python<'_>) -> bool {
        self.send(py, Err(RpcError::request_cancelled()))
    }

    /// Answers the core's `-32603` with `detail` as `data`.
    fn respond_internal_error(&self, py: Python<'_>, detail: String) -> bool {
        self.send(py, Err(RpcError::internal_error(detail)))
    }

    /// Whether this responder can still answer.
    #[getter]
    fn open(&self) -> bool {
        !self.request.is_answered()
    }

    /// The request's id, as the peer sent it (int, str or None).
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        id_to_py(py, &self.request.id)
    }

    /// The request's method.
    #[getter]
    fn method(&self) -> &str {
        &self.request.method
    }

    /// The key naming this request in the inbox's signals.
    #[getter]
    fn key(&self) -> u64 {
        self.request.key()
    }

    /// From now on, this request's cancellation signals go to the inbox
    /// (`(3, key, cancelled)`); returns them as they stand,
    /// `(cancelled, superseded)`. Call it when the handler starts.
    fn arm(&self) -> (bool, bool) {
        self.request.arm()
    }
}
