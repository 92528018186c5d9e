//! The core's `Handler`, forwarding incoming messages to the Python
//! dispatcher.
//!
//! `PyHandler` is owned by the core's connection and called on its tokio
//! threads; it attaches (`attach_alive`) only to call the dispatcher's
//! `request` or `notification`, which must schedule the host's handler on
//! its loop and return. The dispatcher gets, and from then on owns:
//!
//! * a `RequestResponder` per request: its methods answer (from any Python
//!   thread; the core's `Responder` sits behind a mutex, so only the first
//!   answer counts), and dropping it unanswered makes the core answer
//!   `-32603`. A runtime task per request tells the dispatcher when the
//!   peer cancels it (`_native_cancel_requested`) or when it is superseded
//!   (`_native_superseded`), until it is answered;
//! * a `NotificationDone` per notification: calling (or dropping) it
//!   releases the core's ordering barrier for the next notification.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use libacp_core::rpc::{BoxFuture, IncomingNotification, IncomingRequest, Responder};
use libacp_core::{CancellationToken, Handler, RequestId, RpcError};

use crate::convert::{id_to_py, raw_to_py, to_json};
use crate::errors::{invalid_params, report};
use crate::interpreter::attach_alive;

/// Locks `m`, ignoring poisoning (the data stays consistent: every
/// critical section is a single take or read).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Answers one incoming request from Python. Dropping it unanswered makes
/// the core answer `-32603`. Every answer is built by the core (`RpcError`'s
/// constructors); Python only chooses which.
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct RequestResponder {
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
pub(crate) struct NotificationDone {
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
pub(crate) struct PyHandler {
    pub(crate) dispatcher: Py<PyAny>,
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
