//! Whether text is valid JSON, checked 64 bytes at a time inside strings:
//! the check of every frame a peer sends ([`crate::message::decode`]) and
//! of the JSON text a host hands over ([`super::parse_host_json`]).
//!
//! It accepts exactly what `serde_json::from_str::<&RawValue>` accepts
//! (RFC 8259 text: escapes checked, `\u` followed by four hex digits but
//! lone surrogates allowed, no control character in a string, no depth
//! limit), so a caller can take text it accepts as a `RawValue` without a
//! second pass; callers go back to `serde_json` for the message of text it
//! refuses. The differential tests (`check/tests.rs`) and the fuzz target
//! `json_check` hold it to that.
//!
//! Why it exists: `serde_json` checks a string a byte at a time past each
//! escape; on W3's escape-dense 8 MiB payloads its pass over each received
//! frame was about as long as the host's own typed parse of it (`perf`, the
//! Rust pair: 350 samples against 370 per process), a pass the official
//! SDKs do not make. Structure, numbers and literals are checked by plain
//! code: they are short in real frames.

use super::scan::escaped_bytes;

/// Whether `text` is one JSON value, with whitespace around it allowed.
pub fn is_valid(text: &str) -> bool {
    check(text.as_bytes()).is_some()
}

/// `Some` when `bytes` is one JSON value (see [`is_valid`]). Iterative:
/// nesting takes one byte of the heap per level, never stack.
fn check(bytes: &[u8]) -> Option<()> {
    // The open containers, innermost last: `{` or `[`.
    let mut open: Vec<u8> = Vec::new();
    let mut i = whitespace(bytes, 0);
    loop {
        // A value starts at `i`.
        match *bytes.get(i)? {
            b'"' => i = string(bytes, i + 1)?,
            b'{' => {
                i = whitespace(bytes, i + 1);
                if bytes.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    open.push(b'{');
                    i = member_name(bytes, i)?;
                    continue;
                }
            }
            b'[' => {
                i = whitespace(bytes, i + 1);
                if bytes.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(b'[');
                    continue;
                }
            }
            b't' => i = literal(bytes, i, b"true")?,
            b'f' => i = literal(bytes, i, b"false")?,
            b'n' => i = literal(bytes, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number(bytes, i)?,
            _ => return None,
        }
        // After a value: close containers until a comma or the end.
        loop {
            i = whitespace(bytes, i);
            let Some(&container) = open.last() else {
                return (i == bytes.len()).then_some(());
            };
            match (*bytes.get(i)?, container) {
                (b',', b'{') => {
                    i = member_name(bytes, whitespace(bytes, i + 1))?;
                    break;
                }
                (b',', _) => {
                    i = whitespace(bytes, i + 1);
                    break;
                }
                (b'}', b'{') | (b']', b'[') => {
                    open.pop();
                    i += 1;
                }
                _ => return None,
            }
        }
    }
}

/// Past the whitespace (as JSON defines it) from `i`.
fn whitespace(bytes: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(i) {
        i += 1;
    }
    i
}

/// A member's name and its colon from `i`: where its value starts.
fn member_name(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes.get(i) != Some(&b'"') {
        return None;
    }
    let i = whitespace(bytes, string(bytes, i + 1)?);
    (bytes.get(i) == Some(&b':')).then(|| whitespace(bytes, i + 1))
}

fn literal(bytes: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    let end = i + word.len();
    (bytes.get(i..end)? == word).then_some(end)
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` from `i`: its end.
fn number(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digits = |i: usize| {
        let n = bytes.get(i..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        });
        (n > 0).then_some(i + n)
    };
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match bytes.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

/// A string whose contents start at `start` (just past its opening quote):
/// the index just past its closing quote, `None` if it is not valid.
fn string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    // Whether the first byte of the next block is escaped.
    let mut carry = 0u64;
    loop {
        let mut padded = [0u8; 64];
        let block = match bytes.get(pos..pos + 64) {
            Some(block) => block,
            None => {
                // The last block, padded with zeros: a zero is a control
                // character, so the padding can never pass for contents
                // (only bits before the closing quote are looked at, and
                // without one the string is unterminated).
                let rest = bytes.get(pos..).filter(|r| !r.is_empty())?;
                padded[..rest.len()].copy_from_slice(rest);
                &padded
            }
        };
        let m = masks(block);
        let escaped = if m.backslashes == 0 && carry == 0 {
            0
        } else {
            escaped_bytes(m.backslashes, &mut carry)
        };
        let closing = m.quotes & !escaped;
        let within = if closing == 0 {
            u64::MAX
        } else {
            (1u64 << closing.trailing_zeros()) - 1
        };
        if m.controls & within != 0 {
            return None;
        }
        let escaped = escaped & within;
        if escaped != 0 && !escapes_valid(bytes, pos, block, escaped) {
            return None;
        }
        if closing != 0 {
            return Some(pos + closing.trailing_zeros() as usize + 1);
        }
        pos += 64;
    }
}

/// Whether each escaped byte of the block at `pos` (bits of `escaped`)
/// begins a valid escape: `"\/bfnrt`, or `u` and four hex digits (which
/// may run into the next block).
fn escapes_valid(bytes: &[u8], pos: usize, block: &[u8], escaped: u64) -> bool {
    let simple = simple_escapes(block);
    let mut units = escaped & !simple;
    while units != 0 {
        let at = units.trailing_zeros() as usize;
        units &= units - 1;
        if block[at] != b'u' {
            return false;
        }
        let hex = pos + at + 1;
        match bytes.get(hex..hex + 4) {
            Some(digits) if digits.iter().all(u8::is_ascii_hexdigit) => {}
            _ => return false,
        }
    }
    true
}

/// What a 64-byte block holds, a bit per byte.
struct Masks {
    backslashes: u64,
    quotes: u64,
    /// Bytes below 0x20, which a string must escape.
    controls: u64,
}

/// The escape letters that stand alone: `"\/bfnrt`.
const SIMPLE: [u8; 8] = *b"\"\\/bfnrt";

#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8]) -> Masks {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };
    debug_assert_eq!(block.len(), 64);
    let mut m = Masks {
        backslashes: 0,
        quotes: 0,
        controls: 0,
    };
    for (k, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of x86_64; the unaligned load reads the 16
        // bytes of `lane`.
        let (b, q, c) = unsafe {
            let v = _mm_loadu_si128(lane.as_ptr().cast());
            let low = _mm_set1_epi8(0x1f);
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8))),
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8))),
                // max(v, 0x1f) == 0x1f exactly when v <= 0x1f (unsigned).
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, low), low)),
            )
        };
        // movemask sets the low 16 bits only.
        m.backslashes |= u64::from(b as u16) << (16 * k);
        m.quotes |= u64::from(q as u16) << (16 * k);
        m.controls |= u64::from(c as u16) << (16 * k);
    }
    m
}

/// Bit `i` set where `block[i]` is one of [`SIMPLE`].
#[cfg(target_arch = "x86_64")]
fn simple_escapes(block: &[u8]) -> u64 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    let mut mask = 0u64;
    for (k, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: as in `masks`.
        let hits = unsafe {
            let v = _mm_loadu_si128(lane.as_ptr().cast());
            let mut any = _mm_setzero_si128();
            for c in SIMPLE {
                any = _mm_or_si128(any, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
            }
            _mm_movemask_epi8(any)
        };
        mask |= u64::from(hits as u16) << (16 * k);
    }
    mask
}

#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8]) -> Masks {
    masks_portable(block)
}

#[cfg(not(target_arch = "x86_64"))]
fn simple_escapes(block: &[u8]) -> u64 {
    simple_escapes_portable(block)
}

/// [`masks`] a byte at a time (other architectures, and the tests' oracle
/// for the SIMD one).
#[cfg(any(test, not(target_arch = "x86_64")))]
fn masks_portable(block: &[u8]) -> Masks {
    let bits = |f: &dyn Fn(u8) -> bool| {
        block
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &b)| acc | (u64::from(f(b)) << i))
    };
    Masks {
        backslashes: bits(&|b| b == b'\\'),
        quotes: bits(&|b| b == b'"'),
        controls: bits(&|b| b < 0x20),
    }
}

/// [`simple_escapes`] a byte at a time.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn simple_escapes_portable(block: &[u8]) -> u64 {
    block.iter().enumerate().fold(0u64, |acc, (i, b)| {
        acc | (u64::from(SIMPLE.contains(b)) << i)
    })
}

#[cfg(test)]
mod tests;
