//! Helpers for raw JSON text crossing the engine.

pub(crate) mod check;
pub(crate) mod scan;

pub use check::is_valid;

use serde::Serialize;
use serde_json::value::RawValue;

use scan::skip_string;

/// Serializes `value` to raw JSON text.
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// Parses and validates JSON text handed in by a host (bindings pass JSON as
/// text). The result never holds a raw newline or carriage return, whatever
/// the text (see [`compact_if_needed`]); text without them is kept byte for
/// byte.
pub fn parse_host_json(text: &str) -> Result<Box<RawValue>, serde_json::Error> {
    Ok(compact_if_needed(raw_from_string(text.to_owned())?))
}

/// [`RawValue::from_string`], checked by [`is_valid`] instead of a
/// `serde_json` pass (several times faster on escape-dense strings; see
/// `json/check.rs`): the same value for the same text, and `serde_json`'s
/// own error for text that is not JSON. Leading or trailing whitespace is
/// dropped, as `RawValue` does.
pub fn raw_from_string(text: String) -> Result<Box<RawValue>, serde_json::Error> {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let bytes = text.as_bytes();
    let trimmed =
        bytes.first().is_some_and(|b| !space(b)) && bytes.last().is_some_and(|b| !space(b));
    if trimmed && is_valid(&text) {
        return Ok(valid_raw(text));
    }
    RawValue::from_string(text)
}

/// `text`, known to be one JSON value without whitespace around it, as a
/// [`RawValue`], without a copy.
fn valid_raw(text: String) -> Box<RawValue> {
    // SAFETY: `RawValue` is `#[repr(transparent)]` over `str` (serde_json
    // 1.0.154, pinned in the workspace; its own `RawValue::from_owned` is
    // this same transmute), so `Box<str>` and `Box<RawValue>` have the same
    // layout and metadata; the text is valid JSON (every caller's
    // contract), which is all `RawValue` requires of its contents.
    #[allow(unsafe_code)]
    unsafe {
        std::mem::transmute::<Box<str>, Box<RawValue>>(text.into_boxed_str())
    }
}

/// [`valid_raw`] for borrowed text: a frame's member that [`is_valid`]
/// checked as part of the whole frame.
pub(crate) fn valid_raw_ref(text: &str) -> &RawValue {
    debug_assert!(serde_json::from_str::<&RawValue>(text).is_ok_and(|raw| raw.get() == text));
    // SAFETY: as in `valid_raw`: `&str` and `&RawValue` have the same
    // layout and metadata (serde_json's own `RawValue::from_borrowed` is
    // this cast), and the text is one valid JSON value.
    #[allow(unsafe_code)]
    unsafe {
        std::mem::transmute::<&str, &RawValue>(text)
    }
}

/// JSON text from a host serializer that only ever writes valid, compact
/// JSON (V8's `JSON.stringify`: no raw newline, every string escaped),
/// taken as it is, without parsing it only to validate it: the engine's
/// checks then read just the members the ACP rules need (the sparse tree,
/// `protocol/validate.rs`), in one pass. Measured on W2 (Node): the full
/// validation pass was 8 % of the client's CPU.
///
/// The caller guarantees the text is valid JSON; text that is not would
/// reach the peer as it is. Debug builds check it (`debug_assert!`: the
/// Rust tests; the Node suite runs a release build, so it does not).
pub fn trusted_host_json(text: String) -> Box<RawValue> {
    debug_assert!(
        serde_json::from_str::<&RawValue>(&text).is_ok()
            && memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_none(),
        "trusted_host_json: not valid compact JSON: {text:.200}"
    );
    valid_raw(text)
}

/// Removes the raw newlines and carriage returns of `raw`, which NDJSON
/// framing cannot carry inside a frame. In valid JSON they can only be
/// insignificant whitespace (strings escape them), so all whitespace
/// between tokens is dropped and everything else is kept byte for byte:
/// numbers keep their text (`1e999`, `1.50`), strings their escapes, and
/// no value is parsed, so nothing (depth, range) can make it fail. Text
/// without a newline or carriage return is returned untouched.
pub fn compact_if_needed(raw: Box<RawValue>) -> Box<RawValue> {
    let text = raw.get().as_bytes();
    if memchr::memchr2(b'\n', b'\r', text).is_none() {
        return raw;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                // A RawValue's strings are terminated; `None` cannot happen,
                // but would only mean "copy the rest as it is".
                let end = skip_string(text, i + 1).unwrap_or(text.len());
                out.extend_from_slice(&text[i..end]);
                i = end;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Only ASCII whitespace outside strings was removed from valid UTF-8
    // JSON: the result is valid UTF-8 and the same JSON value.
    match String::from_utf8(out).map(RawValue::from_string) {
        Ok(Ok(compact)) => compact,
        _ => raw,
    }
}

/// How deep serde_json reads nested arrays and objects (its recursion
/// limit); a typed decode of anything deeper fails.
pub const DECODE_DEPTH_LIMIT: usize = 128;

/// Whether `text` (JSON) nests arrays and objects deeper than `limit`,
/// strings skipped. Reads bytes only, stopping at the first level past
/// `limit`; nothing is parsed, so any depth is safe to ask about.
pub fn nests_deeper_than(text: &str, limit: usize) -> bool {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = skip_string(bytes, i + 1).unwrap_or(bytes.len());
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_host_json_is_the_text_as_it_is() {
        for text in [
            r#"{"a":[1,2.50,"x\ny"],"b":null}"#,
            r#""\ud800""#,
            "1e999",
            "[]",
        ] {
            let raw = trusted_host_json(text.to_owned());
            assert_eq!(raw.get(), text);
            let back: Box<RawValue> = serde_json::from_str(raw.get()).expect("valid");
            assert_eq!(back.get(), text);
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not valid compact JSON")]
    fn trusted_host_json_checks_in_debug_builds() {
        let _ = trusted_host_json("{\"a\":".to_owned());
    }

    #[test]
    fn nesting_depth_counts_arrays_and_objects_not_strings() {
        let deep = format!("{}1{}", "[".repeat(129), "]".repeat(129));
        assert!(nests_deeper_than(&deep, DECODE_DEPTH_LIMIT));
        let ok = format!("{}1{}", "{\"a\":".repeat(128), "}".repeat(128));
        assert!(!nests_deeper_than(&ok, DECODE_DEPTH_LIMIT));
        let quoted = format!("{{\"s\":\"{}\\\"\"}}", "[{".repeat(200));
        assert!(!nests_deeper_than(&quoted, DECODE_DEPTH_LIMIT));
    }

    #[test]
    fn host_json_with_newlines_is_compacted() {
        let raw = parse_host_json("{\n  \"a\": [1,\r\n 2],\n  \"s\": \"x\\ny\"\n}").expect("json");
        assert_eq!(raw.get(), r#"{"a":[1,2],"s":"x\ny"}"#);
    }

    #[test]
    fn host_json_without_newlines_is_kept_verbatim() {
        let raw = parse_host_json(r#"{ "b": 1.50, "a": 2 }"#).expect("json");
        assert_eq!(raw.get(), r#"{ "b": 1.50, "a": 2 }"#);
    }

    #[test]
    fn host_json_that_serde_cannot_build_a_value_of_is_still_compacted() {
        // Out of f64 range, and deeper than serde_json's recursion limit:
        // the text must lose its newlines all the same, keeping its numbers.
        let raw =
            parse_host_json("{\"protocolVersion\": 1,\n \"clientCapabilities\": {}, \"x\": 1e999}")
                .expect("json");
        assert_eq!(
            raw.get(),
            r#"{"protocolVersion":1,"clientCapabilities":{},"x":1e999}"#
        );
        let deep = format!("{}\n1{}", "[".repeat(100), "]".repeat(100));
        let raw = compact_if_needed(RawValue::from_string(deep).expect("json"));
        assert_eq!(
            raw.get(),
            format!("{}1{}", "[".repeat(100), "]".repeat(100))
        );
    }

    #[test]
    fn compaction_keeps_strings_and_escapes_byte_for_byte() {
        let text = "{ \"a b\" :\r\n [ \"x\\\" \\n\\\\\" , 1.50 , -0 ]\n}";
        let raw = compact_if_needed(RawValue::from_string(text.into()).expect("json"));
        assert_eq!(raw.get(), r#"{"a b":["x\" \n\\",1.50,-0]}"#);
        let v: serde_json::Value = serde_json::from_str(raw.get()).expect("still json");
        let w: serde_json::Value = serde_json::from_str(text).expect("json");
        assert_eq!(v, w);
    }

    #[test]
    fn invalid_host_json_is_an_error() {
        assert!(parse_host_json("{").is_err());
    }
}
