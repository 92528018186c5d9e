//! The Python face of the core's inbox (`libacp_core::host::Inbox`) and of
//! the host-driven reader: what the loop's dispatcher (`_Dispatcher` in
//! `python/libacp/__init__.py`) takes, converted to Python values.
//!
//! The inbox, its order, back-pressure, wake-ups and signals are the
//! core's; this module converts deliveries into tuples and calls the
//! dispatcher's `_wake()` (from any thread: it schedules `_on_wake` on the
//! loop with `call_soon_threadsafe`). When the loop supports `add_reader`,
//! the dispatcher also watches the transport's descriptor and calls
//! `pump()` on the loop's thread: a request is then read, handed to its
//! handler and answered without leaving that thread.
//!
//! Deliveries as tuples (`take_urgent`, `take_ordered`):
//! * `(0, method, params)`: a notification;
//! * `(1, method, params, responder)`: a request (`RequestResponder`);
//! * `(2, future, ok, value)`: a call's outcome (result or exception);
//! * `(3, key, cancelled)`: a request's signal (`cancelled` False means
//!   superseded);
//! * `(4, reason)`: the connection closed (last);
//! * `(6, direction, frame)`: a traced frame (`"in"`/`"out"`, its text);
//! * `(7, kind, message, details)`: an engine event.
//!
//! The last two come in the lane `ordered_hooks` chose (the ordered one by
//! default: in wire order with the messages, before the answer that
//! follows them); the dispatcher calls the `trace`/`events` callables it
//! keeps.
//!
//! A value Python cannot hold (a number beyond a double's range, nesting
//! deeper than the converter's limit) never stalls the inbox: a request is
//! answered `-32602` saying why, a notification is dropped and reported on
//! the `libacp` logger, a call fails with `InvalidResult`.
//!
//! Threads: `take_*`, `pump`, `release_reader` run on the loop's thread
//! with the GIL; the wake is called from any thread.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use libacp_core::host::{Delivery, Inbox};
use libacp_core::{Direction, HostReader, PumpState, RpcError, Signal};

use crate::convert::{raw_to_py, to_py};
use crate::errors::{call_error, invalid_result, report};
use crate::handler::{RequestResponder, lock};
use crate::interpreter::attach_alive;

/// Items waiting in the ordered lane beyond which notifications wait.
pub(crate) const HIGH_WATER: usize = 256;

/// The inbox type of Python connections: a call's tag is its asyncio future.
pub(crate) type PyInbox = Inbox<Py<PyAny>>;

/// An inbox waking `dispatcher` (held weakly: `weakref.ref(dispatcher)`,
/// so the dispatcher, which holds the `NativeInbox`, is not kept alive by
/// it); a dispatcher that is gone, or whose loop is closed, closes it.
pub(crate) fn new_inbox(py: Python<'_>, dispatcher: &Py<PyAny>) -> PyResult<Arc<PyInbox>> {
    let weak = py
        .import("weakref")?
        .getattr("ref")?
        .call1((dispatcher.bind(py),))?
        .unbind();
    Ok(Inbox::new(
        HIGH_WATER,
        Arc::new(move || {
            attach_alive(|py| {
                let woken = weak.call0(py).and_then(|d| {
                    if d.is_none(py) {
                        return Ok(());
                    }
                    d.call_method0(py, "_wake").map(drop)
                });
                if let Err(e) = woken {
                    report(py, &e);
                }
            });
        }),
    ))
}

/// The dispatcher's handle (its `inbox` attribute).
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct NativeInbox {
    pub(crate) inbox: Arc<PyInbox>,
    /// The reader the loop drives, until it is finished and released.
    reader: Mutex<Option<HostReader>>,
}

impl NativeInbox {
    /// The handle, set as `dispatcher.inbox`.
    pub(crate) fn attach(
        py: Python<'_>,
        dispatcher: &Py<PyAny>,
        inbox: Arc<PyInbox>,
        reader: Option<HostReader>,
    ) -> PyResult<()> {
        let handle = Py::new(
            py,
            NativeInbox {
                inbox,
                reader: Mutex::new(reader),
            },
        )?;
        dispatcher.setattr(py, "inbox", handle)
    }
}

/// One delivery as the tuple the dispatcher takes (see the module docs);
/// `None` for what Python hosts do not see (stderr lines go to the
/// `stderr` hook instead) and for a notification Python cannot hold.
fn convert<'py>(py: Python<'py>, delivery: Delivery<Py<PyAny>>) -> Option<Bound<'py, PyTuple>> {
    let tuple = match delivery {
        Delivery::Notification { method, params } => match raw_to_py(py, params.as_deref()) {
            Ok(params) => (0, method, params).into_pyobject(py),
            Err(e) => {
                log_dropped(py, &method, &e);
                return None;
            }
        },
        Delivery::Request(request) => match raw_to_py(py, request.params.as_deref()) {
            Ok(params) => {
                let method = request.method.clone();
                let responder = Py::new(py, RequestResponder::new(request)).ok()?;
                (1, method, params, responder).into_pyobject(py)
            }
            Err(e) => {
                let _ = request.respond(Err(RpcError::invalid_params(format!(
                    "the params hold a value Python cannot represent: {e}"
                ))));
                return None;
            }
        },
        Delivery::Result { tag, outcome } => {
            let (ok, value) = match outcome {
                Ok(raw) => match raw_to_py(py, Some(&raw)) {
                    Ok(v) => (true, v),
                    Err(e) => (
                        false,
                        invalid_result(py, &e.to_string())
                            .into_value(py)
                            .into_bound(py)
                            .into_any(),
                    ),
                },
                Err(e) => (
                    false,
                    call_error(py, &e).into_value(py).into_bound(py).into_any(),
                ),
            };
            (2, tag, ok, value).into_pyobject(py)
        }
        Delivery::Signal { key, signal, .. } => {
            (3, key, signal == Signal::Cancelled).into_pyobject(py)
        }
        Delivery::Closed(reason) => (4, reason.to_string()).into_pyobject(py),
        Delivery::Trace { direction, frame } => {
            let direction = match direction {
                Direction::Incoming => "in",
                Direction::Outgoing => "out",
            };
            (6, direction, frame).into_pyobject(py)
        }
        Delivery::Engine {
            kind,
            message,
            details,
        } => {
            // Details are the engine's own JSON: always convertible; an
            // event is never worth stalling the inbox for.
            let details = to_py(py, &details).ok()?;
            (7, kind, message, details).into_pyobject(py)
        }
        _ => return None,
    };
    tuple.ok()
}

/// A notification Python cannot hold: dropped, and said on the logger.
fn log_dropped(py: Python<'_>, method: &str, e: &PyErr) {
    let logged = py.import("logging").and_then(|logging| {
        logging.call_method1("getLogger", ("libacp",))?.call_method1(
            "warning",
            (
                "libacp: notification %s dropped: its params hold a value Python cannot represent: %s",
                method,
                e.to_string(),
            ),
        )
    });
    if let Err(e) = logged {
        report(py, &e);
    }
}

fn tuples<'py>(py: Python<'py>, batch: Vec<Delivery<Py<PyAny>>>) -> Vec<Bound<'py, PyTuple>> {
    batch.into_iter().filter_map(|d| convert(py, d)).collect()
}

#[pymethods]
impl NativeInbox {
    /// Everything in the urgent lane, as tuples (see the module docs).
    fn take_urgent<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyTuple>> {
        let mut batch = Vec::new();
        self.inbox.take_urgent(&mut batch);
        tuples(py, batch)
    }

    /// Up to `max` ordered items as tuples, or None when the lane is empty
    /// (the next push wakes the loop again). A list may be empty when
    /// every item in it was one Python cannot hold: keep taking.
    #[pyo3(signature = (max=64))]
    fn take_ordered<'py>(&self, py: Python<'py>, max: usize) -> Option<Vec<Bound<'py, PyTuple>>> {
        let mut batch = Vec::new();
        if !self.inbox.take_ordered(&mut batch, max) {
            return None;
        }
        Some(tuples(py, batch))
    }

    /// The descriptor the loop watches (`add_reader`), or None when the
    /// engine reads by itself (or the reader was released).
    fn reader_fd(&self) -> Option<i32> {
        lock(&self.reader).as_ref().map(HostReader::fd)
    }

    /// Whether a pump was asked for since the last one (and clears it).
    fn take_pump_request(&self) -> bool {
        lock(&self.reader)
            .as_ref()
            .is_some_and(HostReader::take_pump_request)
    }

    /// Reads what is available and dispatches it into the inbox, on the
    /// loop's thread: `(state, urgent, ordered)`, where `state` is 0
    /// (reading: watch the descriptor), 1 (again: call soon), 2 (waiting:
    /// stop watching until woken), 3 (finished: stop watching and
    /// `release_reader()`), and `urgent`/`ordered` say which lanes now need
    /// the loop.
    fn pump(&self) -> (u8, bool, bool) {
        let reader = lock(&self.reader);
        let Some(reader) = reader.as_ref() else {
            return (3, false, false);
        };
        self.inbox.hold_wakes();
        let state = reader.pump();
        let pending = self.inbox.release_wakes();
        let code = match state {
            PumpState::Reading => 0,
            PumpState::Again => 1,
            PumpState::Waiting => 2,
            _ => 3,
        };
        (code, pending.urgent, pending.ordered)
    }

    /// Drops the reader (closing its descriptor): after the loop stopped
    /// watching it.
    fn release_reader(&self) {
        let reader = lock(&self.reader).take();
        drop(reader);
    }

    /// Items waiting (for tests and diagnostics).
    fn __len__(&self) -> usize {
        self.inbox.len()
    }
}
