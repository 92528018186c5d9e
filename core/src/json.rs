//! Helpers for raw JSON text crossing the engine.

use serde::Serialize;
use serde_json::value::RawValue;

/// Serializes `value` to raw JSON text.
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// Parses and validates JSON text handed in by a host (bindings pass JSON as
/// text). The result never holds a raw newline or carriage return, whatever
/// the text (see [`compact_if_needed`]); text without them is kept byte for
/// byte.
pub fn parse_host_json(text: &str) -> Result<Box<RawValue>, serde_json::Error> {
    let raw: Box<RawValue> = serde_json::from_str(text)?;
    Ok(compact_if_needed(raw))
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

/// Where the JSON value starting at `bytes[start]` (no leading whitespace)
/// ends: the index just past it. For text already known to be valid JSON
/// (a [`RawValue`]): nothing is validated, strings are not unescaped, and
/// strings are skipped 64 bytes at a time whatever their escapes (an 8 MiB
/// string full of `\"` and `\\` in about a millisecond, where a
/// validating parser takes 30). `None` if the text ends first or `start`
/// is not the start of a value; never panics, whatever the input.
pub(crate) fn skip_value(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => skip_string(bytes, start + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match *bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i + 1)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' => None,
        // A number or a literal: up to the next delimiter.
        _ => Some(
            bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(bytes.len(), |n| start + n),
        ),
    }
}

/// The index just past the closing quote of the string whose contents
/// start at `bytes[start]` (just after its opening quote); `None` if the
/// text ends first. See [`skip_value`].
pub(crate) fn skip_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    // Whether the first byte of the next block is escaped (the previous
    // block ended in an odd run of backslashes).
    let mut carry = 0u64;
    loop {
        let (backslashes, quotes) = match bytes.get(pos..pos + 64) {
            Some(block) => masks(block),
            None => {
                let rest = bytes.get(pos..).filter(|r| !r.is_empty())?;
                let mut block = [0u8; 64];
                block[..rest.len()].copy_from_slice(rest);
                masks(&block)
            }
        };
        let escaped = if backslashes == 0 && carry == 0 {
            0
        } else {
            escaped_bytes(backslashes, &mut carry)
        };
        let closing = quotes & !escaped;
        if closing != 0 {
            return Some(pos + closing.trailing_zeros() as usize + 1);
        }
        pos += 64;
    }
}

/// The bytes of a 64-byte block preceded by an odd run of backslashes
/// (escaped), given the block's backslashes; `carry` says whether the block
/// starts escaped and is updated for the next one. (The carry-propagation
/// method of simdjson's first stage.)
fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    const ODD: u64 = !EVEN;
    let starts = backslashes & !(backslashes << 1);
    let even_start_mask = EVEN ^ *carry;
    let even_starts = starts & even_start_mask;
    let odd_starts = starts & !even_start_mask;
    let even_carries = backslashes.wrapping_add(even_starts);
    let (odd_carries, overflow) = backslashes.overflowing_add(odd_starts);
    let odd_carries = odd_carries | *carry;
    *carry = u64::from(overflow);
    let even_carry_ends = even_carries & !backslashes;
    let odd_carry_ends = odd_carries & !backslashes;
    (even_carry_ends & ODD) | (odd_carry_ends & EVEN)
}

/// Bit `i` set where `block[i]` is a backslash, and where it is a quote.
#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8]) -> (u64, u64) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    debug_assert_eq!(block.len(), 64);
    let (mut backslashes, mut quotes) = (0u64, 0u64);
    for (k, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of x86_64; the unaligned load reads the 16
        // bytes of `lane`.
        let (b, q) = unsafe {
            let v = _mm_loadu_si128(lane.as_ptr().cast());
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8))),
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8))),
            )
        };
        // movemask sets the low 16 bits only.
        backslashes |= u64::from(b as u16) << (16 * k);
        quotes |= u64::from(q as u16) << (16 * k);
    }
    (backslashes, quotes)
}

/// Bit `i` set where `block[i]` is a backslash, and where it is a quote.
#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8]) -> (u64, u64) {
    masks_swar(block)
}

/// [`masks`] without SIMD: eight bytes at a time in a `u64`.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn masks_swar(block: &[u8]) -> (u64, u64) {
    /// Bit `i` of the result: byte `i` of `word` (little-endian) is `c`.
    fn matches(word: u64, c: u8) -> u64 {
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        let x = word ^ (0x0101_0101_0101_0101 * u64::from(c));
        // High bit of each byte set iff that byte of `x` is zero.
        let zero = !(((x & LOW7) + LOW7) | x) & !LOW7;
        // Gather the 8 high bits into the top byte, then down.
        ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
    }
    let (mut backslashes, mut quotes) = (0u64, 0u64);
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        backslashes |= matches(word, b'\\') << (8 * k);
        quotes |= matches(word, b'"') << (8 * k);
    }
    (backslashes, quotes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious byte-at-a-time reference.
    fn naive_string_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    }

    #[test]
    fn strings_end_at_the_first_unescaped_quote_whatever_the_escapes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = usize::try_from(next() % 300).expect("small");
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 5 {
                    0 | 1 => b'\\',
                    2 => b'"',
                    _ => b'a',
                })
                .collect();
            for start in [0, 1, 63, 64, 65] {
                if start <= text.len() {
                    assert_eq!(
                        skip_string(&text, start),
                        naive_string_end(&text, start),
                        "{:?} from {start}",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
        }
    }

    #[test]
    fn byte_masks_without_simd_agree() {
        let mut block = [0u8; 64];
        for round in 0..2000u32 {
            for (i, b) in block.iter_mut().enumerate() {
                let x = (round as usize * 31 + i * 17) ^ (i * i + round as usize);
                *b = match x % 7 {
                    0 => b'\\',
                    1 => b'"',
                    2 => 0x80 | (x as u8),
                    3 => 0,
                    _ => x as u8,
                };
            }
            assert_eq!(masks_swar(&block), masks(&block));
        }
    }

    #[test]
    fn values_are_skipped_whole() {
        let text = br#"{"a": [1, "x\"]", {"b": "}"}], "c": -1.5e3} , true"#;
        let end = skip_value(text, 0).expect("object");
        assert_eq!(&text[end..], b" , true");
        assert_eq!(skip_value(b"-1.5e3,", 0), Some(6));
        assert_eq!(skip_value(b"null", 0), Some(4));
        assert_eq!(skip_value(br#""\\""#, 0), Some(4));
        let big = serde_json::to_string(&"\"q\" \\".repeat(100_000)).expect("json");
        assert_eq!(skip_value(big.as_bytes(), 0), Some(big.len()));
        for bad in [&b""[..], b"[1, 2", br#""abc"#, br#"{"a": "}"#, b",", b" 1"] {
            assert_eq!(
                skip_value(bad, 0),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
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
