//! Helpers for raw JSON text crossing the engine.

use serde::Serialize;
use serde_json::value::RawValue;

/// Serializes `value` to raw JSON text.
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// Parses and validates JSON text handed in by a host (bindings pass JSON as
/// text). The result is compact: whitespace with newlines, which would break
/// NDJSON framing, is removed; other text is kept byte for byte.
pub fn parse_host_json(text: &str) -> Result<Box<RawValue>, serde_json::Error> {
    let raw: Box<RawValue> = serde_json::from_str(text)?;
    Ok(compact_if_needed(raw))
}

/// Re-serializes `raw` compactly if it contains a raw newline (only possible
/// as insignificant whitespace, since JSON strings escape newlines).
pub fn compact_if_needed(raw: Box<RawValue>) -> Box<RawValue> {
    if memchr::memchr2(b'\n', b'\r', raw.get().as_bytes()).is_none() {
        return raw;
    }
    match serde_json::from_str::<serde_json::Value>(raw.get()).and_then(|v| to_raw(&v)) {
        Ok(compact) => compact,
        Err(_) => raw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn invalid_host_json_is_an_error() {
        assert!(parse_host_json("{").is_err());
    }
}
