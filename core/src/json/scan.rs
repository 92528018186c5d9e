//! The fast scan of JSON text already known to be valid (a [`RawValue`]):
//! skipping over a value without parsing it ([`skip_value`]), and building
//! a sparse tree of only the members a [`Select`] asks for ([`sparse`]).
//! What is skipped is never validated again, unescaped or copied.
//!
//! [`RawValue`]: serde_json::value::RawValue

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What a sparse tree keeps of a JSON value (see [`Select`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Keep<S> {
    /// All of it.
    Whole,
    /// Only its JSON type: a string, array or object is kept as an empty
    /// one, any other value whole.
    Type,
    /// An object: the members [`Select::member`] selects, the others
    /// skipped. Anything other than an object is kept whole.
    Members,
    /// An array: each item as `S` selects it. Anything other than an array
    /// is kept whole.
    Items(S),
}

/// Which parts of a JSON value a sparse tree keeps.
pub(crate) trait Select: Copy {
    /// What is kept of the value.
    fn keep(self) -> Keep<Self>;
    /// When `self` keeps [`Keep::Members`]: how the member `name` is
    /// selected; `None`: it is skipped.
    fn member(self, name: &str) -> Option<Self>;
}

/// Parses `text` (valid JSON: a [`RawValue`]'s) into the tree of what
/// `select` keeps: kept values are parsed by `serde_json` exactly as a full
/// parse would, the others are skipped with [`skip_value`]. `None` on
/// anything unexpected (text that is not valid JSON, a kept value too deep
/// for `serde_json`).
///
/// [`RawValue`]: serde_json::value::RawValue
pub(crate) fn sparse<S: Select>(text: &str, select: S) -> Option<Value> {
    let mut walker = Walker { text, pos: 0 };
    walker.value(select).filter(|_| walker.peek().is_none())
}

/// Calls `each` with the raw text of each member name (quotes included)
/// and of its value, in order, for `text` (valid JSON: a [`RawValue`]'s)
/// that is an object; `None` if it is not one or `each` says stop. Nothing
/// is unescaped or parsed.
///
/// [`RawValue`]: serde_json::value::RawValue
pub(crate) fn each_member<'a>(
    text: &'a str,
    mut each: impl FnMut(&'a str, &'a str) -> Option<()>,
) -> Option<()> {
    let mut walker = Walker { text, pos: 0 };
    let object = walker.each_in(b'{', b'}', |walker| {
        let name = walker.raw()?;
        walker.eat(b':')?;
        let value = walker.raw()?;
        each(name, value)
    })?;
    (object && walker.peek().is_none()).then_some(())
}

/// Walks the text for [`sparse`].
struct Walker<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Walker<'a> {
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(self.pos) {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// The next value's raw text, skipped.
    fn raw(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.pos;
        self.pos = skip_value(self.text.as_bytes(), start)?;
        self.text.get(start..self.pos)
    }

    /// The next value, whole.
    fn whole(&mut self) -> Option<Value> {
        serde_json::from_str(self.raw()?).ok()
    }

    /// The next value, as `select` keeps it.
    fn value<S: Select>(&mut self, select: S) -> Option<Value> {
        match select.keep() {
            Keep::Whole => self.whole(),
            Keep::Type => {
                let raw = self.raw()?;
                Some(match raw.as_bytes().first()? {
                    b'"' => Value::String(String::new()),
                    b'[' => Value::Array(Vec::new()),
                    b'{' => Value::Object(Map::new()),
                    _ => serde_json::from_str(raw).ok()?,
                })
            }
            Keep::Members => {
                let mut members = Map::new();
                let object = self.each_in(b'{', b'}', |walker| {
                    let key = key_name(walker.raw()?)?;
                    walker.eat(b':')?;
                    match select.member(&key) {
                        // Later duplicates replace earlier ones, as in a
                        // full tree.
                        Some(member) => {
                            let v = walker.value(member)?;
                            members.insert(key.into_owned(), v);
                        }
                        None => {
                            walker.raw()?;
                        }
                    }
                    Some(())
                })?;
                if !object {
                    return self.whole();
                }
                Some(Value::Object(members))
            }
            Keep::Items(item) => {
                let mut items = Vec::new();
                let array = self.each_in(b'[', b']', |walker| {
                    items.push(walker.value(item)?);
                    Some(())
                })?;
                if !array {
                    return self.whole();
                }
                Some(Value::Array(items))
            }
        }
    }

    /// Walks the object or array that comes next (opened by `open`, closed
    /// by `close`), calling `each` at each member or item; `false` (and
    /// nothing read) if what comes next is something else.
    fn each_in(
        &mut self,
        open: u8,
        close: u8,
        mut each: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<bool> {
        if self.peek()? != open {
            return Some(false);
        }
        self.pos += 1;
        if self.peek()? == close {
            self.pos += 1;
            return Some(true);
        }
        loop {
            each(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b if b == close => {
                    self.pos += 1;
                    return Some(true);
                }
                _ => return None,
            }
        }
    }
}

/// The name a raw key (a JSON string) spells, unescaped only when it has
/// escapes; `None` if it is not a string.
fn key_name(key: &str) -> Option<Cow<'_, str>> {
    let inner = key.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str(key).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Where the JSON value starting at `bytes[start]` (no leading whitespace)
/// ends: the index just past it. For text already known to be valid JSON
/// (a [`RawValue`]): nothing is validated, strings are not unescaped, and
/// strings are skipped 64 bytes at a time whatever their escapes (an 8 MiB
/// string full of `\"` and `\\` in about a millisecond, where a
/// validating parser takes 30). `None` if the text ends first or `start`
/// is not the start of a value; never panics, whatever the input.
///
/// [`RawValue`]: serde_json::value::RawValue
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

/// Whether `text` may hold a `\u` escape (an escaped backslash before a
/// `u` counts too: a yes only means maybe). For prefilters that look for
/// words in raw JSON text, which an escape could spell in disguise.
pub(crate) fn may_hold_unicode_escape(text: &[u8]) -> bool {
    /// Built once (building a searcher per call showed in `perf`).
    static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    ESCAPE.find(text).is_some()
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
pub(super) fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
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
mod tests;
