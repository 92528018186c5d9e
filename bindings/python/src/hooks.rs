//! The `trace` and `events` options: the core's hooks, calling Python.
//!
//! The core calls both hooks on its engine threads, and the hooks own the
//! Python callables. `trace_hook` calls Python right away (through
//! `attach_alive`). `events_hook` may be called under the engine's locks,
//! so it only converts and queues the event; one task on the runtime calls
//! Python, in order. A callback that raises is reported (printed), not
//! propagated.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::mpsc;

use libacp_core::{Direction, Event, EventHook, RequestId, RpcError};

use crate::awaitable::runtime;
use crate::convert::{id_to_json, to_py};
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
