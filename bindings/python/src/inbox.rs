//! The ordered inbox: what the peer sends, handed to the event loop in
//! batches, in the order the core dispatched it.
//!
//! The core's dispatcher delivers notifications, requests and the results
//! of `request()` in one order (its ordering barrier: a result comes after
//! every notification received before it). Crossing into Python one message
//! at a time would cost a thread hand-off per message (the engine thread
//! waiting for the loop to run each handler), which is most of the time a
//! stream of `session/update`s takes. Instead the engine threads push
//! [`Item`]s here (no GIL), the first push of a batch wakes the loop once
//! (`dispatcher._wake()`), and the loop's pump (`_Dispatcher._drain`) takes
//! everything queued (`take()`) and handles it strictly in order: it awaits
//! each notification handler before the next item, starts each request's
//! task, and completes each result's future. So the barrier the core
//! guarantees holds on the loop, with one wake-up per batch.
//!
//! Back-pressure: the core's notification handler resolves at once while
//! fewer than [`HIGH_WATER`] items wait, and otherwise waits until the pump
//! takes them; the core then stops reading, and the peer's writes block.
//!
//! Threads: `push`/`room` run on engine threads without the GIL (they lock
//! the state briefly and attach only to wake the loop, never while holding
//! the lock); `take`/`close` run on the loop's thread with the GIL.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::value::RawValue;
use tokio::sync::Notify;

use libacp_core::CallError;

use crate::convert::raw_to_py;
use crate::errors::{call_error, report};
use crate::handler::{RequestResponder, lock};
use crate::interpreter::attach_alive;

/// Items waiting beyond which the core's notification handler waits.
pub(crate) const HIGH_WATER: usize = 256;

/// One thing for the loop, in dispatch order.
pub(crate) enum Item {
    /// A notification: `(0, method, params)` for the pump.
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    /// A request: `(1, method, params, responder)`; the pump starts its task.
    Request {
        params: Option<Box<RawValue>>,
        responder: RequestResponder,
    },
    /// The outcome of an ordered `request()`: `(2, future, ok, value)`.
    Result {
        future: Py<PyAny>,
        outcome: Result<Box<RawValue>, CallError>,
    },
}

#[derive(Default)]
struct State {
    items: VecDeque<Item>,
    /// A wake-up is pending or the pump is draining: no new wake-up needed.
    scheduled: bool,
    /// Nothing will take items any more (the loop is closed).
    closed: bool,
}

/// The queue shared by the connection's handler (engine threads), its
/// `request()` completions and the pump on the loop.
pub(crate) struct InboxCore {
    state: Mutex<State>,
    /// Signalled whenever the pump takes a batch.
    drained: Notify,
    /// `weakref.ref(dispatcher)`: woken with `dispatcher._wake()`. Weak, so
    /// the dispatcher (which holds the `Inbox`) is not kept alive by it.
    dispatcher: Py<PyAny>,
}

impl InboxCore {
    /// Queues `item`; wakes the loop if no batch is pending. Returns false
    /// (dropping the item: a request is then answered `-32603`) once closed.
    pub(crate) fn push(&self, item: Item) -> bool {
        let wake = {
            let mut state = lock(&self.state);
            if state.closed {
                drop(state);
                drop(item);
                return false;
            }
            state.items.push_back(item);
            !std::mem::replace(&mut state.scheduled, true)
        };
        if wake {
            self.wake();
        }
        true
    }

    /// Waits until fewer than [`HIGH_WATER`] items are queued (or closed).
    pub(crate) async fn room(&self) {
        loop {
            let taken = self.drained.notified();
            {
                let state = lock(&self.state);
                if state.closed || state.items.len() < HIGH_WATER {
                    return;
                }
            }
            taken.await;
        }
    }

    fn wake(&self) {
        let woken = attach_alive(|py| -> PyResult<bool> {
            let dispatcher = self.dispatcher.call0(py)?;
            if dispatcher.is_none(py) {
                return Ok(false);
            }
            dispatcher.call_method0(py, "_wake")?;
            Ok(true)
        });
        match woken {
            Ok(true) => {}
            Ok(false) => self.close(),
            Err(e) => {
                attach_alive(|py| report(py, &e));
                self.close();
            }
        }
    }

    /// Stops taking items and drops those queued (their requests are
    /// answered `-32603` by the core; nothing awaits their results any more).
    fn close(&self) {
        let dropped = {
            let mut state = lock(&self.state);
            state.closed = true;
            std::mem::take(&mut state.items)
        };
        self.drained.notify_waiters();
        drop(dropped);
    }
}

/// The Python handle of the inbox (the dispatcher's `inbox` attribute).
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct Inbox {
    pub(crate) core: Arc<InboxCore>,
}

impl Inbox {
    /// An inbox waking `dispatcher` (which gets it as `dispatcher.inbox`).
    pub(crate) fn attach(py: Python<'_>, dispatcher: &Py<PyAny>) -> PyResult<Arc<InboxCore>> {
        let weak = py
            .import("weakref")?
            .getattr("ref")?
            .call1((dispatcher.bind(py),))?;
        let core = Arc::new(InboxCore {
            state: Mutex::new(State::default()),
            drained: Notify::new(),
            dispatcher: weak.unbind(),
        });
        let inbox = Py::new(
            py,
            Inbox {
                core: Arc::clone(&core),
            },
        )?;
        dispatcher.setattr(py, "inbox", inbox)?;
        Ok(core)
    }
}

fn convert<'py>(py: Python<'py>, item: Item) -> PyResult<Bound<'py, PyTuple>> {
    Ok(match item {
        Item::Notification { method, params } => {
            (0, method, raw_to_py(py, params.as_deref())?).into_pyobject(py)?
        }
        Item::Request { params, responder } => {
            let params = raw_to_py(py, params.as_deref())?;
            let method = responder.method().to_owned();
            (1, method, params, Py::new(py, responder)?).into_pyobject(py)?
        }
        Item::Result { future, outcome } => {
            let (ok, value) = match outcome {
                Ok(raw) => match raw_to_py(py, Some(&raw)) {
                    Ok(v) => (true, v),
                    Err(e) => (false, e.into_value(py).into_bound(py).into_any()),
                },
                Err(e) => (
                    false,
                    call_error(py, &e).into_value(py).into_bound(py).into_any(),
                ),
            };
            (2, future, ok, value).into_pyobject(py)?
        }
    })
}

#[pymethods]
impl Inbox {
    /// Everything queued, in order, as tuples (see [`Item`]); an empty list
    /// ends the batch (the next push wakes the loop again). Called by the
    /// pump on the loop's thread.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let items: Vec<Item> = {
            let mut state = lock(&self.core.state);
            if state.items.is_empty() {
                state.scheduled = false;
                return Ok(Vec::new());
            }
            state.items.drain(..).collect()
        };
        self.core.drained.notify_waiters();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match convert(py, item) {
                Ok(t) => out.push(t),
                // A value Python cannot hold (nesting too deep): reported; a
                // request's responder was dropped with it (-32603).
                Err(e) => report(py, &e),
            }
        }
        Ok(out)
    }

    /// Closes the inbox: the loop will not take items any more (it is
    /// closed); queued requests are answered `-32603`.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.core.close());
    }

    /// Items waiting (for tests and diagnostics).
    fn __len__(&self) -> usize {
        lock(&self.core.state).items.len()
    }
}
