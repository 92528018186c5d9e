//! The `trace` and `events` options: the core's hooks, calling Python.
//!
//! The core calls both hooks on its engine threads, and the hooks own the
//! Python callables. `trace_hook` calls Python right away (through
//! `attach_alive`). `events_hook` may be called under the engine's locks,
//! so it only converts and queues the event; one task on the runtime calls
//! Python, in order. A callback that raises is reported (on the `libacp` logger), not
//! propagated.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::mpsc;

use libacp_core::{Direction, Event, EventHook};

use crate::awaitable::runtime;
use crate::convert::to_py;
use crate::errors::report;
use crate::interpreter::attach_alive;

/// How many engine events may wait for the event loop before new ones are
/// dropped (and counted in an `events_dropped` event).
const EVENT_BACKLOG: usize = 1024;

/// `trace(direction, frame)` on the engine's threads.
pub(crate) fn trace_hook(trace: Py<PyAny>) -> libacp_core::TraceHook {
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

/// One engine event as `(kind, message, details)` (the core's wording).
type EventParts = (&'static str, String, Value);

fn event_parts(event: &Event) -> EventParts {
    event.describe()
}

/// Engine events to `callback(kind, message, details)`. The core's hook
/// only queues them (it may run under the engine's locks); one task calls
/// Python, in order. A full backlog drops events and reports how many.
pub(crate) fn events_hook(callback: Py<PyAny>) -> PyResult<EventHook> {
    let (tx, mut rx) = mpsc::channel::<EventParts>(EVENT_BACKLOG);
    let dropped = Arc::new(AtomicU64::new(0));
    let lost = Arc::clone(&dropped);
    runtime()?.spawn(async move {
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
    Ok(Arc::new(move |event: &Event| {
        if tx.try_send(event_parts(event)).is_err() {
            dropped.fetch_add(1, Ordering::SeqCst);
        }
    }))
}
