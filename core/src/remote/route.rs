//! What the Streamable HTTP transport reads of a message to route it: its
//! kind, id, method and session. WebSocket needs none of this; over HTTP
//! the session decides the stream (server) and the `Acp-Session-Id` header
//! (client). Only the members named here are decoded; `params` and
//! `result` are looked into for `sessionId` alone.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// What kind of JSON-RPC message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A method and an id.
    Request,
    /// A method, no id.
    Notification,
    /// A result or an error.
    Response,
}

/// The routing facts of one message.
#[derive(Debug, Clone)]
pub struct Peeked {
    /// Request, notification or response.
    pub kind: Kind,
    /// The id's JSON text (`7`, `"a"`), for requests and responses.
    pub id: Option<String>,
    /// The method, for requests and notifications.
    pub method: Option<String>,
    /// `params.sessionId` (requests, notifications) or `result.sessionId`
    /// (responses).
    pub session: Option<String>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct WithSession {
    #[serde(rename = "sessionId", default)]
    session_id: Option<serde_json::Value>,
}

fn session_of(raw: Option<&RawValue>) -> Option<String> {
    let with: WithSession = serde_json::from_str(raw?.get()).ok()?;
    match with.session_id? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    }
}

/// Whether the text is a JSON array (a batch): the first byte that is not
/// white space is `[`.
pub fn is_batch(message: &[u8]) -> bool {
    message
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'[')
}

/// The routing facts of `message`; `None` when it is not a JSON-RPC object.
pub fn peek(message: &[u8]) -> Option<Peeked> {
    // serde's derived structs also read arrays, by position: `[1, "m"]`
    // would pass for a request (found by fuzz/fuzz_targets/remote_route.rs).
    if message.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let env: Envelope<'_> = serde_json::from_slice(message).ok()?;
    let id = env
        .id
        .map(|id| id.get().to_owned())
        .filter(|id| id != "null");
    let (kind, session) = match (&env.method, id.is_some()) {
        (Some(_), true) => (Kind::Request, session_of(env.params)),
        (Some(_), false) => (Kind::Notification, session_of(env.params)),
        (None, _) if env.result.is_some() || env.error.is_some() => {
            (Kind::Response, session_of(env.result))
        }
        (None, _) => return None,
    };
    Some(Peeked {
        kind,
        id,
        method: env.method,
        session,
    })
}

/// The id of a response the engine wrote, read from its fixed layout
/// (`{"jsonrpc":"2.0","id":ID,"result"...` or `..."error"...`) without
/// parsing the message; `None` for anything else. Only for the engine's own
/// output (`message::encode_response`), whose layout a test pins.
pub fn engine_response_id(message: &[u8]) -> Option<&str> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let rest = message.strip_prefix(HEAD)?;
    let end = if rest.first() == Some(&b'"') {
        let mut escaped = false;
        let mut end = None;
        for (i, &b) in rest.iter().enumerate().skip(1) {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    end = Some(i + 1);
                    break;
                }
                _ => {}
            }
        }
        end?
    } else {
        memchr::memchr(b',', rest)?
    };
    let (id, after) = rest.split_at(end);
    if after.starts_with(br#","result""#) || after.starts_with(br#","error""#) {
        std::str::from_utf8(id).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_is_not_a_message() {
        assert!(peek(br#"[6, "session/prompt", {"sessionId": "s1"}]"#).is_none());
        assert!(peek(br#"  {"jsonrpc":"2.0","method":"m"}"#).is_some());
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let p = peek(br#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#)
            .expect("a request");
        assert_eq!(
            (p.kind, p.id.as_deref(), p.session.as_deref()),
            (Kind::Request, Some("3"), Some("s1"))
        );
        let p = peek(br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2"}}"#)
            .expect("a notification");
        assert_eq!(
            (p.kind, p.session.as_deref()),
            (Kind::Notification, Some("s2"))
        );
        let p =
            peek(br#"{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s3"}}"#).expect("a response");
        assert_eq!(
            (p.kind, p.id.as_deref(), p.session.as_deref()),
            (Kind::Response, Some("\"a\""), Some("s3"))
        );
        let p = peek(br#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"x"}}"#)
            .expect("an error");
        assert_eq!((p.kind, p.session), (Kind::Response, None));
        assert!(peek(b"[1]").is_none());
        assert!(peek(b"{\"jsonrpc\":\"2.0\"}").is_none());
        assert!(is_batch(b"  [{}]") && !is_batch(b"{}"));
    }

    #[test]
    fn the_engines_responses_are_read_without_parsing() {
        use crate::message::{RequestId, encode_notification, encode_request, encode_response};
        let result = RawValue::from_string("{}".into()).expect("json");
        let number = RequestId::Number(7);
        let text = RequestId::Str("a\"b".into());
        assert_eq!(
            engine_response_id(&encode_response(Some(&number), Ok(&result))),
            Some("7")
        );
        let err = crate::RpcError::new(-1, "x");
        assert_eq!(
            engine_response_id(&encode_response(Some(&text), Err(&err))),
            Some(r#""a\"b""#)
        );
        assert_eq!(
            engine_response_id(&encode_request(&number, "m", None)),
            None
        );
        assert_eq!(engine_response_id(&encode_notification("m", None)), None);
        // The same id as `peek` reads from the peer's request.
        let asked = peek(br#"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#).expect("request");
        assert_eq!(asked.id.as_deref(), Some(r#""a\"b""#));
    }
}
