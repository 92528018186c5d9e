//! The inbox's deliveries as the JSON text JavaScript parses, one batch at
//! a time (one `JSON.parse` for a whole batch is far cheaper than building
//! each object through Node-API calls).
//!
//! A batch is a JSON array of items:
//! * `[0, method, params]`: a notification (params `null` when absent);
//! * `[1, method, params, key, id]`: a request; `key` names it in
//!   `respond*`/`arm` and in its signals, `id` is the peer's id;
//! * `[2, tag, true, result]` / `[2, tag, false, error]`: the outcome of the
//!   operation JavaScript started with `tag` (a call, a close, a wait);
//! * `[3, key, cancelled]`: a request's signal (`false`: superseded);
//! * `[4, reason]`: the connection closed (always last);
//! * `[5, line]`: a line of the spawned agent's stderr;
//! * `[6, direction, frame]`: a traced frame (`"in"`/`"out"`, its text);
//! * `[7, kind, message, details]`: an engine event (`details` an object).
//!
//! The last two come in the lane of the `orderedHooks` option: the ordered
//! one by default, in wire order with the messages (before the answer that
//! follows them), or the urgent one.
//!
//! Params and results are the peer's JSON text, inserted as they are (the
//! core keeps them compact and valid). Errors are objects with a `kind`
//! (`rpc`, `closed`, `spawn`, `cancelled`, `timeout`, `invalid_params`,
//! `invalid_result`, `refused`), a `message`, and the kind's fields.

use std::collections::HashMap;

use serde_json::{Value, json};

use libacp_core::host::{Delivery, HostRequest};
use libacp_core::{CallError, CloseReason, ConnectionError, Direction, Signal};

/// The error object JavaScript turns into its error classes.
pub(crate) fn call_error(e: &CallError) -> Value {
    let message = e.to_string();
    match e {
        CallError::Rpc(rpc) => {
            let mut v = json!({"kind": "rpc", "message": rpc.message, "code": rpc.code});
            if let (Some(data), Some(obj)) = (&rpc.data, v.as_object_mut()) {
                obj.insert("data".into(), data.clone());
            }
            v
        }
        CallError::Connection(c) => connection_error(c),
        CallError::Cancelled => json!({"kind": "cancelled", "message": message}),
        CallError::Timeout => json!({"kind": "timeout", "message": message}),
        CallError::InvalidParams(d) => {
            json!({"kind": "invalid_params", "message": message, "detail": d})
        }
        CallError::InvalidResult(d) => {
            json!({"kind": "invalid_result", "message": message, "detail": d})
        }
        CallError::Refused(r) => {
            json!({"kind": "refused", "message": message, "refusal": r.to_json()})
        }
        // A kind the core adds later: JavaScript makes it a plain AcpError.
        _ => json!({"kind": "other", "message": message}),
    }
}

pub(crate) fn connection_error(e: &ConnectionError) -> Value {
    match e {
        ConnectionError::Closed(reason) => {
            let mut v =
                json!({"kind": "closed", "message": e.to_string(), "reason": reason.to_string()});
            if let (CloseReason::Remote(remote), Some(obj)) = (reason, v.as_object_mut()) {
                obj.insert("remote".into(), crate::remote::remote_error(remote));
            }
            v
        }
        ConnectionError::Remote(remote) => crate::remote::remote_error(remote),
        ConnectionError::Spawn { program, error } => json!({
            "kind": "spawn", "message": e.to_string(), "program": program, "error": error
        }),
        _ => json!({"kind": "other", "message": e.to_string()}),
    }
}

/// Appends `text` as a JSON string.
fn push_str(out: &mut String, text: &str) {
    // Serializing a &str cannot fail.
    out.push_str(&serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into()));
}

/// Appends one delivery to the batch `out` (which ends with `[` or an item);
/// requests are kept in `requests` under their key until answered.
pub(crate) fn append(
    out: &mut String,
    delivery: Delivery<u32>,
    requests: &mut HashMap<u64, HostRequest>,
) {
    let start = out.len();
    if !out.ends_with('[') {
        out.push(',');
    }
    match delivery {
        Delivery::Notification { method, params } => {
            out.push_str("[0,");
            push_str(out, &method);
            out.push(',');
            out.push_str(params.as_deref().map_or("null", |p| p.get()));
            out.push(']');
        }
        Delivery::Request(request) => {
            out.push_str("[1,");
            push_str(out, &request.method);
            out.push(',');
            out.push_str(request.params.as_deref().map_or("null", |p| p.get()));
            out.push_str(&format!(",{},", request.key()));
            out.push_str(&serde_json::to_string(&request.id).unwrap_or_else(|_| "null".into()));
            out.push(']');
            requests.insert(request.key(), request);
        }
        Delivery::Result { tag, outcome } => match outcome {
            Ok(raw) => {
                out.push_str(&format!("[2,{tag},true,"));
                out.push_str(raw.get());
                out.push(']');
            }
            Err(e) => {
                out.push_str(&format!("[2,{tag},false,{}]", call_error(&e)));
            }
        },
        Delivery::Signal { key, signal, .. } => {
            out.push_str(&format!(
                "[3,{key},{}]",
                if signal == Signal::Cancelled {
                    "true"
                } else {
                    "false"
                }
            ));
        }
        Delivery::Closed(reason) => {
            out.push_str("[4,");
            push_str(out, &reason.to_string());
            out.push(']');
        }
        Delivery::Log(line) => {
            out.push_str("[5,");
            push_str(out, &line);
            out.push(']');
        }
        Delivery::Trace { direction, frame } => {
            out.push_str(match direction {
                Direction::Incoming => "[6,\"in\",",
                Direction::Outgoing => "[6,\"out\",",
            });
            push_str(out, &frame);
            out.push(']');
        }
        Delivery::Engine {
            kind,
            message,
            details,
        } => {
            out.push_str("[7,");
            push_str(out, kind);
            out.push(',');
            push_str(out, &message);
            out.push(',');
            out.push_str(&details.to_string());
            out.push(']');
        }
        _ => out.truncate(start),
    }
}
