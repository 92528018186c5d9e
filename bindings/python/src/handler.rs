//! The core's `Handler` for Python connections, and the responder Python
//! answers requests with.
//!
//! `PyHandler` is owned by the core's connection and called on its tokio
//! threads, without the GIL: it queues each notification and request in the
//! connection's ordered inbox (`inbox.rs`), which the loop's pump drains in
//! order. Per request:
//!
//! * a `RequestResponder` travels with it to Python, which from then on
//!   owns it: its methods answer (from any Python thread; the core's
//!   `Responder` sits behind a mutex, so only the first answer counts), and
//!   dropping it unanswered makes the core answer `-32603`;
//! * a runtime task watches the request's cancellation until it is
//!   answered and tells the Python `Request` (`_native_cancel_requested`,
//!   `_native_superseded`) once the pump has made it and bound it
//!   (`RequestResponder._bind`, which also reports what happened before).

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use serde_json::value::RawValue;

use libacp_core::rpc::{BoxFuture, IncomingNotification, IncomingRequest, Responder};
use libacp_core::{CancellationToken, Handler, RequestId, RpcError};

use crate::convert::{id_to_py, to_json, to_raw};
use crate::errors::{invalid_params, report};
use crate::inbox::{InboxCore, Item};
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
    /// The peer cancelled the request.
    cancellation: CancellationToken,
    /// The answer is no longer the handler's to give.
    superseded: CancellationToken,
    /// The Python `Request` the watcher tells about cancellation, once the
    /// pump made it (`_bind`).
    bound: Arc<Mutex<Option<Py<PyAny>>>>,
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

    /// Forgets the bound Python `Request` (it holds this responder: the
    /// pair would otherwise keep each other alive). Takes the GIL token so
    /// the reference is released at once.
    fn unbind(&self, _py: Python<'_>) {
        drop(lock(&self.bound).take());
    }

    fn send_error(&self, py: Python<'_>, error: RpcError) -> bool {
        self.unbind(py);
        py.detach(|| self.send(Err(error)))
    }
}

#[pymethods]
impl RequestResponder {
    /// Answers with `result` (any JSON value). A value that is not JSON is
    /// answered `-32603` and raises `InvalidParams`. Returns whether the
    /// answer was sent (False: already answered, cancelled, or closed).
    fn respond(&self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<bool> {
        match to_raw(result, "result") {
            Ok(raw) => {
                self.unbind(py);
                Ok(py.detach(|| self.send(Ok(raw))))
            }
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
            match to_json(data, "data") {
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
    pub(crate) fn method(&self) -> &str {
        &self.method
    }

    /// Registers the Python `Request` to tell about cancellation from now
    /// on; returns `(cancel_requested, superseded)` as they stand (what
    /// happened before it was registered). Answering (or `_unbind`) forgets
    /// it again.
    fn _unbind(&self, py: Python<'_>) {
        self.unbind(py);
    }

    fn _bind(&self, request: Py<PyAny>) -> (bool, bool) {
        let mut bound = lock(&self.bound);
        *bound = Some(request);
        (
            self.cancellation.is_cancelled(),
            self.superseded.is_cancelled(),
        )
    }
}

/// The core's `Handler`: queues what the peer sends in the ordered inbox.
pub(crate) struct PyHandler {
    /// Keeps the Python dispatcher alive while the connection runs (the
    /// inbox only holds it weakly).
    pub(crate) _dispatcher: Py<PyAny>,
    pub(crate) inbox: Arc<InboxCore>,
}

/// Tells the bound Python `Request` (if the pump made it already) about a
/// cancellation; otherwise `_bind` reports it when it is made.
fn tell(bound: &Mutex<Option<Py<PyAny>>>, name: &str) {
    attach_alive(|py| {
        let request = lock(bound).as_ref().map(|r| r.clone_ref(py));
        if let Some(request) = request
            && let Err(e) = request.call_method0(py, name)
        {
            report(py, &e);
        }
    });
}

impl Handler for PyHandler {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let done = CancellationToken::new();
        let cancellation = request.cancellation.clone();
        let superseded = responder.superseded().clone();
        let bound = Arc::new(Mutex::new(None));
        let handle = RequestResponder {
            responder: Mutex::new(Some(responder)),
            done: done.clone(),
            method: request.method,
            id: request.id,
            cancellation: cancellation.clone(),
            superseded: superseded.clone(),
            bound: Arc::clone(&bound),
        };
        if !self.inbox.push(Item::Request {
            params: request.params,
            responder: handle,
        }) {
            return; // the loop is closed: the dropped responder answered -32603
        }
        tokio::spawn(async move {
            tokio::select! {
                biased;
                () = done.cancelled() => return,
                () = superseded.cancelled() => {
                    tell(&bound, "_native_superseded");
                    return;
                }
                () = cancellation.cancelled() => tell(&bound, "_native_cancel_requested"),
            }
            tokio::select! {
                biased;
                () = done.cancelled() => {}
                () = superseded.cancelled() => tell(&bound, "_native_superseded"),
            }
        });
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        self.inbox.push(Item::Notification {
            method: notification.method,
            params: notification.params,
        });
        let inbox = Arc::clone(&self.inbox);
        // Resolves at once unless the loop is HIGH_WATER items behind.
        Box::pin(async move { inbox.room().await })
    }
}
