//! What the remote transports read of untrusted bytes before the engine
//! does: the Streamable HTTP router's `peek` (kind, id, method, session of
//! a POST body or SSE event), `is_batch`, `engine_response_id` (the id of
//! an answer the engine wrote, read without parsing) and `one_line` (a
//! WebSocket frame or HTTP body as one NDJSON line). Invariants: no panic;
//! `peek` reports only what a full parse finds; `one_line` is one line that
//! parses exactly when the input does, to the same value (a message can
//! neither be split in two nor smuggle a second one); the id read from an
//! engine answer is the id it was written with, and `peek` agrees.
#![no_main]

use libacp_core::message::{self, RequestId};
use libacp_core::remote::fuzzing::{self, Kind};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn check_peek(data: &[u8], full: Option<&Value>) {
    let _ = fuzzing::is_batch(data);
    let Some(p) = fuzzing::peek(data) else {
        return;
    };
    // A full parse can refuse what peek need not read (a number beyond
    // f64 in a member peek skips): nothing to compare then.
    let Some(full) = full else {
        return;
    };
    let obj = full
        .as_object()
        .expect("peek accepted what is not a JSON object");
    assert_eq!(
        p.method.as_deref(),
        obj.get("method").and_then(Value::as_str)
    );
    let id = obj.get("id").filter(|id| !id.is_null());
    assert_eq!(p.id.is_some(), id.is_some(), "{p:?}");
    match p.kind {
        Kind::Request => assert!(p.method.is_some() && p.id.is_some()),
        Kind::Notification => assert!(p.method.is_some() && p.id.is_none()),
        Kind::Response => assert!(p.method.is_none()),
    }
    if let Some(session) = &p.session {
        let inner = if p.kind == Kind::Response {
            "result"
        } else {
            "params"
        };
        assert_eq!(
            obj.get(inner)
                .and_then(|v| v.get("sessionId"))
                .and_then(Value::as_str),
            Some(session.as_str())
        );
    }
}

fn check_one_line(data: &[u8], full: Option<&Value>) {
    let line = fuzzing::one_line(data);
    let (last, body) = line.split_last().expect("a line");
    assert_eq!(*last, b'\n');
    assert!(!body.iter().any(|b| *b == b'\n' || *b == b'\r'));
    let folded: Option<Value> = serde_json::from_slice(body).ok();
    assert_eq!(full, folded.as_ref(), "folding changed the message");
}

fn check_engine_id(data: &[u8]) {
    let id = match data.first() {
        Some(b) if b % 2 == 0 => {
            let mut n = [0u8; 8];
            for (i, b) in data.iter().skip(1).take(8).enumerate() {
                n[i] = *b;
            }
            RequestId::Number(i64::from_le_bytes(n))
        }
        _ => RequestId::Str(String::from_utf8_lossy(data).into_owned()),
    };
    let result = serde_json::value::RawValue::from_string("{}".into()).expect("raw");
    let encoded = message::encode_response(Some(&id), Ok(&result));
    let text = serde_json::to_string(&id).expect("id");
    assert_eq!(fuzzing::engine_response_id(&encoded), Some(text.as_str()));
    let peeked = fuzzing::peek(&encoded).expect("an engine answer peeks");
    assert_eq!(peeked.id.as_deref(), Some(text.as_str()));
    assert_eq!(peeked.kind, Kind::Response);
}

fuzz_target!(|data: &[u8]| {
    let full: Option<Value> = serde_json::from_slice(data).ok();
    check_peek(data, full.as_ref());
    check_one_line(data, full.as_ref());
    check_engine_id(data);
});
