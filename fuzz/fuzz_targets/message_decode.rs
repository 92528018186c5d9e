//! `message::decode` on arbitrary bytes. Invariants: no panic; a decoded
//! message re-encodes (with the engine's own encoders) and decodes to the
//! same message; errors are -32700 (not JSON) or -32600 (not a valid
//! message), a parse error has no id, and errors echo little of the frame.
#![no_main]

use libacp_core::codes;
use libacp_core::message::{self, Message, RequestId};
use libfuzzer_sys::fuzz_target;

fn encode(msg: &Message) -> Vec<u8> {
    match msg {
        Message::Request { id, method, params } => {
            message::encode_request(id, method, params.as_deref())
        }
        Message::Notification { method, params } => {
            message::encode_notification(method, params.as_deref())
        }
        Message::Response { id, result } => {
            message::encode_response(id.as_ref(), result.as_ref().map(|r| &**r))
        }
    }
}

fn raw(p: &Option<Box<libacp_core::RawValue>>) -> Option<&str> {
    p.as_deref().map(libacp_core::RawValue::get)
}

/// `a` and `b` are the same message (error data compared as its JSON
/// text: floats may move by one unit in the last place through a parse).
fn same(a: &Message, b: &Message) -> bool {
    match (a, b) {
        (
            Message::Request { id, method, params },
            Message::Request {
                id: id2,
                method: m2,
                params: p2,
            },
        ) => id == id2 && method == m2 && raw(params) == raw(p2),
        (
            Message::Notification { method, params },
            Message::Notification {
                method: m2,
                params: p2,
            },
        ) => method == m2 && raw(params) == raw(p2),
        (
            Message::Response { id, result },
            Message::Response {
                id: id2,
                result: r2,
            },
        ) => {
            id == id2
                && match (result, r2) {
                    (Ok(x), Ok(y)) => x.get() == y.get(),
                    (Err(x), Err(y)) => {
                        x.code == y.code
                            && x.message == y.message
                            && x.data.is_some() == y.data.is_some()
                    }
                    _ => false,
                }
        }
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    match message::decode(data) {
        Ok(msg) => {
            // What decodes is a JSON object.
            assert!(
                std::str::from_utf8(data)
                    .is_ok_and(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()),
                "a frame that is not JSON decoded"
            );
            let first = data
                .iter()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
            assert_eq!(first, Some(&b'{'), "a non-object decoded");
            let wire = encode(&msg);
            let again = match message::decode(&wire) {
                Ok(again) => again,
                Err(e) => panic!(
                    "{msg:?} re-encoded as {:?} does not decode: {e:?}",
                    String::from_utf8_lossy(&wire)
                ),
            };
            assert!(
                same(&msg, &again),
                "{msg:?} re-encoded decodes as {again:?}"
            );
            // And the second encoding is stable.
            assert_eq!(wire, encode(&again), "the encoding is not stable");
            if let Message::Response { id: Some(id), .. } = &msg {
                assert_ne!(*id, RequestId::Null, "a null id is read as absent");
            }
        }
        Err(e) => {
            let code = e.error.code;
            assert!(
                code == codes::PARSE_ERROR || code == codes::INVALID_REQUEST,
                "decode error code {code}"
            );
            if code == codes::PARSE_ERROR {
                assert!(e.id.is_none() && e.answerable, "a parse error: {e:?}");
                // JSON text is UTF-8 (serde's IgnoredAny alone skips the
                // bytes of strings unchecked).
                let valid_json = std::str::from_utf8(data)
                    .is_ok_and(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok());
                assert!(!valid_json, "valid JSON got -32700: {e:?}");
            }
            let echoed = serde_json::to_string(&e.error).expect("an error serializes");
            assert!(
                echoed.len() <= 1024,
                "an error of {} bytes for a frame of {}: {echoed}",
                echoed.len(),
                data.len()
            );
            // The answer the engine would write is one valid JSON-RPC
            // message.
            let answer = message::encode_response(e.id.as_ref(), Err(&e.error));
            assert!(
                matches!(
                    message::decode(&answer),
                    Ok(Message::Response { result: Err(_), .. })
                ),
                "the error answer does not decode: {}",
                String::from_utf8_lossy(&answer)
            );
        }
    }
});
