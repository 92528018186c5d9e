//! JSON-RPC 2.0 messages: decoding one frame into a request, notification or
//! response, and encoding outgoing messages.
//!
//! Params and results stay raw JSON text ([`RawValue`]): the engine never
//! parses them into a tree, so a handler that wants typed values parses once,
//! and a handler that forwards JSON forwards it untouched.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::RpcError;

/// A JSON-RPC request id. Incoming ids are echoed exactly as received.
///
/// Numbers that are not 64-bit integers (fractions, exponents, huge values)
/// are kept as their JSON text in [`RequestId::Other`] so that they too are
/// echoed unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// `null` (discouraged by JSON-RPC, but legal).
    Null,
    /// An integer id.
    Number(i64),
    /// A string id.
    Str(String),
    /// Any other JSON number, kept as its exact text.
    Other(String),
}

impl RequestId {
    fn from_raw(raw: &RawValue) -> Result<Self, String> {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => serde_json::from_str::<String>(text)
                .map(Self::Str)
                .map_err(|e| e.to_string()),
            Some(b'n') if text == "null" => Ok(Self::Null),
            Some(b'-' | b'0'..=b'9') => Ok(match text.parse::<i64>() {
                // Only when it prints back the same ("-0" stays "-0").
                Ok(n) if n.to_string() == text => Self::Number(n),
                _ => Self::Other(text.to_owned()),
            }),
            _ => Err(format!(
                "`id` must be a string, a number or null, not {}",
                capped(text)
            )),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Number(n) => write!(f, "{n}"),
            Self::Str(s) => write!(f, "{s:?}"),
            Self::Other(t) => f.write_str(t),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::Str(s.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Number(n) => s.serialize_i64(*n),
            Self::Str(v) => s.serialize_str(v),
            Self::Other(text) => match RawValue::from_string(text.clone()) {
                Ok(raw) => raw.serialize(s),
                Err(e) => Err(serde::ser::Error::custom(e)),
            },
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(d)?;
        Self::from_raw(raw).map_err(D::Error::custom)
    }
}

/// One decoded incoming frame.
#[derive(Debug)]
pub enum Message {
    /// A request: the peer expects exactly one answer with this id.
    Request {
        /// The id to echo in the answer.
        id: RequestId,
        /// The method name, untouched (extension methods start with `_`).
        method: String,
        /// The params, raw; `None` when absent.
        params: Option<Box<RawValue>>,
    },
    /// A notification: no answer.
    Notification {
        /// The method name.
        method: String,
        /// The params, raw; `None` when absent.
        params: Option<Box<RawValue>>,
    },
    /// An answer to one of our requests.
    Response {
        /// The id as the peer sent it; `None` when missing or `null`.
        id: Option<RequestId>,
        /// The result, or the peer's error.
        result: Result<Box<RawValue>, RpcError>,
    },
}

/// Why a frame could not be decoded, with what the engine answers.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The error to send back (`-32700` or `-32600`), or to report only.
    pub error: RpcError,
    /// The id to answer with, when one could be read (else `null`).
    pub id: Option<RequestId>,
    /// `false` when the frame looked like a response: never answer those,
    /// or two peers could answer each other's errors forever.
    pub answerable: bool,
}

/// The wire shape of any message, borrowed from the frame.
///
/// Every member is `Some` when it is present, **including when its value is
/// `null`**: `"result": null` is a successful answer and `"id": null` makes
/// a request, so "absent" and "null" must never be confused (serde's
/// `Option` would read `null` as absent; [`present`] does not).
#[derive(Deserialize, Default)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// The envelope of a frame [`crate::json::is_valid`] accepted, read by the
/// scanner for valid text (no second validating pass over the params, which
/// can be megabytes): what serde's reading of [`Envelope`] gives. `None`
/// where that takes serde's own reading: not an object, a member name with
/// an escape, a member of the envelope written twice (serde refuses it).
fn scan_envelope(frame: &str) -> Option<Envelope<'_>> {
    let mut env = Envelope::default();
    crate::json::scan::each_member(frame, |name, value| {
        let name = name.strip_prefix('"')?.strip_suffix('"')?;
        if name.contains('\\') {
            return None;
        }
        let slot = match name {
            "jsonrpc" => &mut env.jsonrpc,
            "id" => &mut env.id,
            "method" => &mut env.method,
            "params" => &mut env.params,
            "result" => &mut env.result,
            "error" => &mut env.error,
            // Other members are ignored, as serde's reading ignores them.
            _ => return Some(()),
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(crate::json::valid_raw_ref(value));
        Some(())
    })?;
    Some(env)
}

/// A member that is present, whatever its value (`null` included).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// Decodes one frame (one JSON value).
///
/// * `jsonrpc` must be `"2.0"` (missing or `null` is `-32600`).
/// * With `method`: a request when `id` is present (`"id": null` included:
///   it is answered with `"id": null`), else a notification. `"params":
///   null` is read as absent (JSON-RPC allows only an object or an array;
///   peers that write `null` for "no params" are tolerated).
/// * Without `method`: a response. `"result"` present, `null` included, is
///   a success; `"error"` present and not `null` is a failure. `"error":
///   null` beside a result, and `"result": null` beside an error, are read
///   as absent (peers that write both members exist); a non-null `result`
///   beside a non-null `error` is invalid (reported, never answered).
/// * Batches are not part of ACP v1 and get `-32600`.
pub fn decode(frame: &[u8]) -> Result<Message, Box<DecodeError>> {
    // JSON text is UTF-8 (RFC 8259), all of it: serde skips the bytes of
    // members it ignores unchecked, so a frame with invalid UTF-8 in an
    // unknown member would otherwise decode.
    let frame = match std::str::from_utf8(frame) {
        Ok(text) => text,
        Err(e) => {
            return Err(Box::new(DecodeError {
                error: RpcError::parse_error(format!("the frame is not UTF-8: {e}")),
                id: None,
                answerable: true,
            }));
        }
    };
    let first = frame
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if first != Some(b'{') {
        // Validate it is JSON first so that garbage gets -32700, not -32600
        // (read raw: a number too large for an f64 is still JSON).
        return Err(match serde_json::from_str::<&RawValue>(frame) {
            Ok(_) => Box::new(DecodeError {
                error: RpcError::invalid_request(if first == Some(b'[') {
                    "batch requests are not supported by ACP v1"
                } else {
                    "a JSON-RPC message must be a JSON object"
                }),
                id: None,
                answerable: true,
            }),
            Err(e) => parse_error(&e),
        });
    }
    // The fast reading first (every frame a peer sends is checked here);
    // serde's reading decides what it leaves, and names the errors.
    let scanned = if crate::json::is_valid(frame) {
        scan_envelope(frame)
    } else {
        None
    };
    let env: Envelope<'_> = match scanned.map_or_else(|| serde_json::from_str(frame), Ok) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            // An object whose members do not fit (a duplicate member).
            let detail = format!("not a valid JSON-RPC message: {}", capped(&e.to_string()));
            return Err(Box::new(DecodeError {
                error: RpcError::invalid_request(detail),
                id: None,
                answerable: true,
            }));
        }
        // Valid JSON text whose member names cannot be read as text (a
        // lone surrogate escape in a key): not a parse error either.
        Err(e) if serde_json::from_str::<&RawValue>(frame).is_ok() => {
            return Err(invalid(
                format!("not a valid JSON-RPC message: {}", capped(&e.to_string())),
                None,
                true,
            ));
        }
        Err(e) => return Err(parse_error(&e)),
    };
    let id = match env.id.map(RequestId::from_raw).transpose() {
        Ok(id) => id,
        Err(detail) => {
            return Err(invalid(
                detail,
                None,
                env.result.is_none() && env.error.is_none(),
            ));
        }
    };
    // JSON-RPC 2.0 requires the member; every ACP peer writes it.
    let version = match env.jsonrpc {
        Some(v) if v.get() == "\"2.0\"" => None,
        Some(v) => Some(format!(
            "`jsonrpc` must be \"2.0\", not {}",
            capped(v.get())
        )),
        None => Some("`jsonrpc` must be \"2.0\" (it is missing)".to_owned()),
    };
    if let Some(detail) = version {
        let looks_like_response = env.method.is_none();
        return Err(invalid(detail, id, !looks_like_response));
    }
    if let Some(method) = env.method {
        let method: String = serde_json::from_str(method.get())
            .map_err(|_| invalid("`method` must be a string".into(), id.clone(), true))?;
        let params = match env.params {
            None => None,
            Some(p) if is_null(p) => None,
            Some(p) if matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) => {
                Some(p.to_owned())
            }
            Some(_) => {
                return Err(invalid(
                    "`params` must be an object or an array".into(),
                    id,
                    true,
                ));
            }
        };
        return Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        });
    }
    // A response. `"error": null` is what some peers write beside a result.
    let error = env.error.filter(|e| !is_null(e));
    let id = id.filter(|id| *id != RequestId::Null);
    match (env.result, error) {
        (Some(result), None) => Ok(Message::Response {
            id,
            result: Ok(result.to_owned()),
        }),
        (Some(result), Some(_)) if !is_null(result) => Err(invalid(
            "a response must not carry both `result` and `error`".into(),
            id,
            false,
        )),
        (_, Some(error)) => {
            let error = serde_json::from_str::<RpcError>(error.get()).unwrap_or_else(|e| {
                RpcError::internal_error(format!("malformed error object from peer: {e}"))
                    .with_data(serde_json::json!({ "raw": error.get() }))
            });
            Ok(Message::Response {
                id,
                result: Err(error),
            })
        }
        (None, None) => Err(invalid(
            "a message needs `method` (request or notification) or `result`/`error` (response)"
                .into(),
            id,
            true,
        )),
    }
}

fn parse_error(e: &serde_json::Error) -> Box<DecodeError> {
    Box::new(DecodeError {
        error: RpcError::parse_error(e.to_string()),
        id: None,
        answerable: true,
    })
}

/// At most the first 64 bytes of a peer's text, for an error message.
fn capped(text: &str) -> std::borrow::Cow<'_, str> {
    const MAX: usize = 64;
    if text.len() <= MAX {
        return text.into();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len()).into()
}

fn invalid(detail: String, id: Option<RequestId>, answerable: bool) -> Box<DecodeError> {
    Box::new(DecodeError {
        error: RpcError::invalid_request(detail),
        id,
        answerable,
    })
}

#[derive(Serialize)]
struct OutRequest<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct OutNotification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct OutResult<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a RawValue,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    error: &'a RpcError,
}

/// Serializes `value` into a buffer sized for `payload` bytes of raw
/// params/result plus the envelope (a large message is written once, not
/// regrown by doubling).
fn to_vec<T: Serialize>(value: &T, payload: Option<&RawValue>) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.map_or(0, |p| p.get().len()) + 128);
    // Serializing these structs cannot fail: every field is a string, an id
    // or an already-validated RawValue, and RpcError's data is a Value.
    serde_json::to_writer(&mut out, value)
        .map(|()| out)
        .unwrap_or_else(|e| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"_libacp/encode_error","params":{{"error":{}}}}}"#,
                serde_json::Value::from(e.to_string())
            )
            .into_bytes()
        })
}

/// Encodes a request.
pub fn encode_request(id: &RequestId, method: &str, params: Option<&RawValue>) -> Vec<u8> {
    to_vec(
        &OutRequest {
            jsonrpc: "2.0",
            id,
            method,
            params,
        },
        params,
    )
}

/// Encodes a notification.
pub fn encode_notification(method: &str, params: Option<&RawValue>) -> Vec<u8> {
    to_vec(
        &OutNotification {
            jsonrpc: "2.0",
            method,
            params,
        },
        params,
    )
}

/// Encodes a response. `id` is `None` for errors about frames whose id could
/// not be read (JSON-RPC requires `"id": null` then).
pub fn encode_response(id: Option<&RequestId>, result: Result<&RawValue, &RpcError>) -> Vec<u8> {
    let id = id.unwrap_or(&RequestId::Null);
    match result {
        Ok(result) => to_vec(
            &OutResult {
                jsonrpc: "2.0",
                id,
                result,
            },
            Some(result),
        ),
        Err(error) => to_vec(
            &OutError {
                jsonrpc: "2.0",
                id,
                error,
            },
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(frame: &str) -> (RequestId, String, Option<String>) {
        match decode(frame.as_bytes()) {
            Ok(Message::Request { id, method, params }) => {
                (id, method, params.map(|p| p.get().to_owned()))
            }
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn decodes_request_with_numeric_and_string_ids() {
        assert_eq!(
            req(r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"a":1}}"#),
            (
                RequestId::Number(7),
                "initialize".into(),
                Some(r#"{"a":1}"#.into())
            )
        );
        assert_eq!(
            req(r#"{"jsonrpc":"2.0","id":"x-1","method":"m"}"#).0,
            RequestId::Str("x-1".into())
        );
    }

    #[test]
    fn odd_numeric_ids_are_echoed_exactly() {
        for text in ["1.5", "18446744073709551616", "1e3", "-0"] {
            let (id, _, _) = req(&format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#));
            let out = encode_response(Some(&id), Ok(&RawValue::from_string("1".into()).unwrap()));
            let out = String::from_utf8(out).unwrap();
            assert!(out.contains(&format!(r#""id":{text},"#)), "{out}");
        }
    }

    #[test]
    fn params_stay_raw_and_unknown_fields_are_ignored() {
        let (_, _, params) = req(
            r#"{"jsonrpc":"2.0","id":1,"method":"_x/y","params":{"_meta":{"k":[1, 2]}},"extra":true}"#,
        );
        assert_eq!(params.as_deref(), Some(r#"{"_meta":{"k":[1, 2]}}"#));
    }

    #[test]
    fn jsonrpc_must_be_2_0_missing_wrong_or_null() {
        for (frame, says) in [
            (r#"{"id":1,"method":"m"}"#, "(it is missing)"),
            (r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, "not \"1.0\""),
            (r#"{"jsonrpc":null,"id":1,"method":"m"}"#, "not null"),
        ] {
            let err = decode(frame.as_bytes()).unwrap_err();
            assert_eq!(err.error.code, crate::codes::INVALID_REQUEST, "{frame}");
            assert!(err.error.message.contains(says), "{}", err.error.message);
            assert_eq!(err.id, Some(RequestId::Number(1)));
            assert!(err.answerable);
        }
        // A response without it is reported, never answered.
        let err = decode(br#"{"id":1,"result":{}}"#).unwrap_err();
        assert!(!err.answerable);
        // A long wrong value is not echoed whole.
        let long = format!(r#"{{"jsonrpc":"{}","method":"m"}}"#, "x".repeat(100_000));
        let err = decode(long.as_bytes()).unwrap_err();
        assert!(err.error.message.len() < 200, "{}", err.error.message.len());
    }

    #[test]
    fn invalid_json_is_parse_error_with_null_id() {
        let err = decode(b"{not json").unwrap_err();
        assert_eq!(err.error.code, crate::codes::PARSE_ERROR);
        assert_eq!(err.id, None);
        assert!(err.answerable);
    }

    #[test]
    fn non_objects_and_batches_are_invalid_requests() {
        for frame in [
            "42",
            "\"s\"",
            "[]",
            r#"[{"jsonrpc":"2.0","method":"m"}]"#,
            "null",
        ] {
            let err = decode(frame.as_bytes()).unwrap_err();
            assert_eq!(err.error.code, crate::codes::INVALID_REQUEST, "{frame}");
        }
        assert_eq!(
            decode(b"[1,").unwrap_err().error.code,
            crate::codes::PARSE_ERROR
        );
    }

    #[test]
    fn responses_decode_and_bad_ones_are_not_answered() {
        match decode(
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":"m"}}"#,
        ) {
            Ok(Message::Response { id, result: Err(e) }) => {
                assert_eq!(id, Some(RequestId::Number(3)));
                assert_eq!(e.code, -32601);
                assert_eq!(e.data, Some(serde_json::json!("m")));
            }
            other => panic!("{other:?}"),
        }
        // An error without an id (seen from real agents) is a response with no id.
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"}}"#),
            Ok(Message::Response { id: None, .. })
        ));
        let err = decode(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1}}"#).unwrap_err();
        assert!(!err.answerable);
    }

    #[test]
    fn a_null_result_is_a_successful_answer() {
        match decode(br#"{"jsonrpc":"2.0","id":7,"result":null}"#) {
            Ok(Message::Response { id, result: Ok(r) }) => {
                assert_eq!(id, Some(RequestId::Number(7)));
                assert_eq!(r.get(), "null");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_null_id_makes_a_request_not_a_notification() {
        assert_eq!(
            req(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).0,
            RequestId::Null
        );
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"m"}"#),
            Ok(Message::Notification { .. })
        ));
    }

    #[test]
    fn a_null_member_beside_the_other_outcome_is_read_as_absent() {
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":null}"#),
            Ok(Message::Response { result: Ok(_), .. })
        ));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-1,"message":"x"}}"#),
            Ok(Message::Response { result: Err(_), .. })
        ));
        // Both members null: a successful `null` result.
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":null,"error":null}"#),
            Ok(Message::Response { result: Ok(_), .. })
        ));
    }

    #[test]
    fn a_null_jsonrpc_or_method_is_invalid_and_null_params_are_absent() {
        let err = decode(br#"{"jsonrpc":null,"id":1,"method":"m"}"#).unwrap_err();
        assert_eq!(err.error.code, crate::codes::INVALID_REQUEST);
        let err = decode(br#"{"jsonrpc":"2.0","id":1,"method":null}"#).unwrap_err();
        assert_eq!(err.error.code, crate::codes::INVALID_REQUEST);
        assert_eq!(err.id, Some(RequestId::Number(1)));
        assert_eq!(
            req(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#).2,
            None
        );
    }

    #[test]
    fn scalar_params_are_invalid() {
        let err = decode(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#).unwrap_err();
        assert_eq!(err.error.code, crate::codes::INVALID_REQUEST);
        assert_eq!(err.id, Some(RequestId::Number(1)));
    }

    #[test]
    fn encodes_compact_messages() {
        let p = RawValue::from_string(r#"{"a":1}"#.into()).unwrap();
        assert_eq!(
            encode_request(&RequestId::Number(0), "m", Some(&p)),
            br#"{"jsonrpc":"2.0","id":0,"method":"m","params":{"a":1}}"#
        );
        assert_eq!(
            encode_notification("n", None),
            br#"{"jsonrpc":"2.0","method":"n"}"#
        );
        assert_eq!(
            encode_response(None, Err(&RpcError::new(-1, "x"))),
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}"#
        );
    }

    /// Found by the `message_decode` fuzz target (issue 14): a member name
    /// with a lone surrogate escape is valid JSON text that serde cannot
    /// read as a name; it was answered -32700 (not JSON).
    #[test]
    fn a_lone_surrogate_in_a_member_name_is_an_invalid_request() {
        let frame = br#"{"jsonrpc":"2.0","errol\udfa5r":{"code":-32600,"message":"x"}}"#;
        let err = decode(frame).unwrap_err();
        assert_eq!(err.error.code, crate::codes::INVALID_REQUEST);
        assert!(
            err.error.message.contains("surrogate"),
            "{}",
            err.error.message
        );
        let frame = br#"{"jsonrpc":"2.0","id":3,"\ud800":1,"method":"m"}"#;
        assert_eq!(
            decode(frame).unwrap_err().error.code,
            crate::codes::INVALID_REQUEST
        );
    }

    /// Found by the `message_decode` fuzz target (issue 14): a frame that
    /// is a JSON number too large for an f64 is valid JSON, so not a parse
    /// error: it is not an object (-32600), like any other number.
    #[test]
    fn a_huge_number_frame_is_an_invalid_request() {
        for frame in ["0.0442e00442", "1e400", " -1e999 "] {
            let err = decode(frame.as_bytes()).unwrap_err();
            assert_eq!(err.error.code, crate::codes::INVALID_REQUEST, "{frame}");
        }
    }

    /// Found by the `message_decode` fuzz target (issue 14): bytes that
    /// are not UTF-8 inside a member libacp ignores went unchecked, so a
    /// frame that is not JSON text decoded.
    #[test]
    fn a_frame_that_is_not_utf8_is_a_parse_error_wherever_the_bytes_are() {
        for frame in [
            &b"{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"x\":{\"s\xff\":1}}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"extra\":\"\xda\xda\"}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"\xff\"}}",
        ] {
            let err = decode(frame).unwrap_err();
            assert_eq!(err.error.code, crate::codes::PARSE_ERROR, "{frame:?}");
            assert!(err.id.is_none() && err.answerable);
        }
    }

    #[test]
    fn errors_say_what_is_wrong_and_echo_little() {
        let err = decode(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).unwrap_err();
        assert_eq!(err.error.code, crate::codes::INVALID_REQUEST);
        assert!(
            err.error.message.contains("duplicate field `id`"),
            "{}",
            err.error.message
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":{}{},"method":"m"}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        let err = decode(deep.as_bytes()).unwrap_err();
        let echoed = serde_json::to_string(&err.error).expect("json");
        assert!(echoed.len() < 400, "{} bytes: {echoed}", echoed.len());
    }

    /// The scanner's reading of an envelope is serde's, member for member,
    /// wherever it gives one (it leaves escaped names and duplicates to
    /// serde).
    #[test]
    fn the_scanned_envelope_is_serdes() {
        fn members<'a>(env: &Envelope<'a>) -> [Option<&'a str>; 6] {
            [
                env.jsonrpc,
                env.id,
                env.method,
                env.params,
                env.result,
                env.error,
            ]
            .map(|m| m.map(RawValue::get))
        }
        let frames = [
            r#"{}"#,
            r#" { "jsonrpc" : "2.0" , "id" : 1 , "method" : "m" , "params" : { "a" : [ 1 , "x" ] } } "#,
            r#"{"jsonrpc":"2.0","id":"s\"1","result":null,"error":null}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m","params":null,"extra":{"id":2},"id2":3}"#,
            r#"{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"x":1,"x":2,"result":true}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":[1,2,{"\u0041":"\n"}]}"#,
            r#"{"id":1,"id":2}"#,
            r#"{"\u0069d":1}"#,
            r#"[1]"#,
        ];
        let mut scanned = 0;
        for frame in frames {
            assert!(crate::json::is_valid(frame), "{frame}");
            let by_serde = serde_json::from_str::<Envelope<'_>>(frame);
            match scan_envelope(frame) {
                Some(env) => {
                    scanned += 1;
                    let by_serde = by_serde.expect("serde reads what the scanner reads");
                    assert_eq!(members(&env), members(&by_serde), "{frame}");
                }
                None => assert!(
                    frame.starts_with('[') || frame.contains('\\') || frame.contains(r#""id":2"#),
                    "the scanner left {frame}"
                ),
            }
        }
        assert_eq!(scanned, 7);
    }
}
