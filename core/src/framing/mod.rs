//! Framing: cutting a byte stream into JSON-RPC frames and back.
//!
//! Two framings, chosen per connection ([`Framing`]):
//! * **NDJSON** (default): one JSON value per line. `\r\n` is accepted, blank
//!   lines are skipped, and a final line without a newline still counts.
//! * **Content-Length**: LSP-style headers, a blank line, then exactly that
//!   many bytes of JSON.
//!
//! Frames longer than the connection's maximum are never buffered whole: the
//! reader discards them as they stream past, keeps only what
//! [`scan::IdScanner`] needs to recover the request id, and reports
//! [`Frame::Oversized`] so the engine can answer and carry on.
//!
//! Reassembly is O(n): each byte is searched for a delimiter once.
//!
//! [`FrameDecoder`] does the cutting without I/O (bytes in, frames out), so
//! the same code serves the engine's reader task ([`FrameReader`]) and a
//! host's event loop reading the descriptor itself.

pub mod scan;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use scan::IdScanner;

/// Default maximum frame size: 64 MiB.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 64 * 1024 * 1024;

/// How much the reader asks the OS for at a time.
const READ_CHUNK: usize = 64 * 1024;
/// After a line larger than this, the read buffer starts over small.
const KEEP_BUFFER: usize = 1024 * 1024;
/// Header section limit for Content-Length framing.
const MAX_HEADER_SIZE: usize = 8 * 1024;

/// How frames are delimited on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Framing {
    /// Newline-delimited JSON (what every ACP peer speaks by default).
    #[default]
    Ndjson,
    /// `Content-Length: N\r\n\r\n` followed by N bytes (LSP style).
    ContentLength,
}

/// One unit read off the wire.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete frame's bytes (without delimiter or headers).
    Message(Bytes),
    /// A frame over the size limit, discarded. `id` is the raw JSON text of
    /// its top-level id when it could be recovered; `is_request` is whether it
    /// carried a `method` (so an error answer is due).
    Oversized {
        /// Size of the discarded frame, in bytes: over the limit. With
        /// Content-Length, the declared length (even if the stream ended
        /// before all of it came); with NDJSON, the line's length.
        size: usize,
        /// The recovered top-level id, as JSON text.
        id: Option<String>,
        /// Whether the frame had a top-level `method`.
        is_request: bool,
    },
    /// A Content-Length header section that could not be understood. The
    /// reader skipped it and resynchronised on the next header section.
    BadHeader(String),
}

/// What [`FrameDecoder::next_frame`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A frame (a message, an oversized frame skipped, or a bad header).
    Frame(Frame),
    /// No complete frame yet: read more bytes into
    /// [`FrameDecoder::read_buffer`], or call [`FrameDecoder::end_of_stream`].
    NeedBytes,
    /// End of stream, and every frame before it was returned.
    End,
}

/// Where the decoder is, between calls.
#[derive(Debug)]
enum State {
    /// Looking for the next frame (NDJSON: a line; Content-Length: a header
    /// section).
    Ready,
    /// NDJSON: discarding the rest of an over-long line. `size` counts the
    /// bytes discarded so far and `scanner` has seen them, except a final
    /// `\r`, held back (`cr`) until the next byte shows whether it ends
    /// the line: the frame never depends on where a read ended. `blank` is
    /// whether all of them were blank (a blank line is skipped, whatever
    /// its length).
    SkippingLine {
        scanner: IdScanner,
        size: usize,
        cr: bool,
        blank: bool,
    },
    /// Content-Length: discarding a header section longer than
    /// `MAX_HEADER_SIZE` up to its end (then reported once).
    SkippingHeader,
    /// Content-Length: the header was read; waiting for `length` body bytes.
    Body { length: usize },
    /// Content-Length: discarding an over-long body.
    SkippingBody {
        scanner: IdScanner,
        left: usize,
        length: usize,
    },
}

/// Cuts a byte stream into frames without doing any I/O (the sans-I/O half
/// of [`FrameReader`]): the caller appends what it read to
/// [`FrameDecoder::read_buffer`], says when the stream ended, and takes
/// frames with [`FrameDecoder::next_frame`]. The state is kept between
/// calls, so the bytes may come in pieces of any size, from a task or from
/// a host's own event loop.
///
/// Memory: a frame is buffered only up to the size limit; an oversized one
/// is discarded as it streams past. After a frame over 1 MiB (kept or
/// skipped), the buffer starts small again rather than keeping the large
/// allocation for the rest of the connection.
#[derive(Debug)]
pub struct FrameDecoder {
    framing: Framing,
    max_frame: usize,
    buf: BytesMut,
    /// NDJSON and Content-Length headers: how far `buf` has been searched
    /// for a delimiter (never beyond `buf.len()`).
    searched: usize,
    state: State,
    eof: bool,
    /// Bytes examined for delimiters, for the linear-reassembly test.
    #[cfg(test)]
    examined: usize,
}

impl FrameDecoder {
    /// A decoder for `framing`; `max_frame` is the largest accepted frame.
    pub fn new(framing: Framing, max_frame: usize) -> Self {
        Self {
            framing,
            max_frame: max_frame.max(1),
            buf: BytesMut::with_capacity(READ_CHUNK),
            searched: 0,
            state: State::Ready,
            eof: false,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// The buffer to append newly read bytes to (at least 64 KiB of spare
    /// capacity, more when a Content-Length body of known size is awaited).
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        let wanted = match self.state {
            State::Body { length } => length.saturating_sub(self.buf.len()).max(READ_CHUNK),
            _ => READ_CHUNK,
        };
        self.buf.reserve(wanted);
        &mut self.buf
    }

    /// The stream ended: what is buffered is decoded as the last frames
    /// (an NDJSON line without its newline still counts).
    pub fn end_of_stream(&mut self) {
        self.eof = true;
    }

    /// Whether [`FrameDecoder::end_of_stream`] was called.
    pub fn at_end(&self) -> bool {
        self.eof
    }

    /// The next frame, if the buffered bytes hold one.
    pub fn next_frame(&mut self) -> Decoded {
        if self.buf.is_empty() && self.buf.capacity() > KEEP_BUFFER {
            // Empty after a large frame: do not keep its allocation.
            self.buf = BytesMut::with_capacity(READ_CHUNK);
            self.searched = 0;
        }
        match self.framing {
            Framing::Ndjson => self.next_line(),
            Framing::ContentLength => self.next_content_length(),
        }
    }

    fn next_line(&mut self) -> Decoded {
        loop {
            if let State::SkippingLine {
                scanner,
                size,
                cr,
                blank,
            } = &mut self.state
            {
                let end = memchr::memchr(b'\n', &self.buf);
                let part = &self.buf[..end.unwrap_or(self.buf.len())];
                *blank = *blank && is_blank(part);
                if let Some(&last) = part.last() {
                    if *cr {
                        // The `\r` held back was not the line's last byte.
                        scanner.feed(b"\r");
                        *size += 1;
                    }
                    // A final `\r` is held back until the next byte is
                    // known: before the newline it is not part of the line.
                    *cr = last == b'\r';
                    let kept = &part[..part.len() - usize::from(*cr)];
                    scanner.feed(kept);
                    *size += kept.len();
                }
                match end {
                    Some(pos) => self.buf.advance(pos + 1),
                    // All of it discarded (clear, not advance: a buffer
                    // grown large is then released by `next_frame`).
                    None => self.buf.clear(),
                }
                self.searched = 0;
                if end.is_none() && !self.eof {
                    return Decoded::NeedBytes;
                }
                // The line ended (newline or end of stream), as a line read
                // whole would: without a final `\r`.
                let (size, blank) = (*size, *blank);
                let frame = oversized(size, scanner);
                self.state = State::Ready;
                if blank {
                    continue;
                }
                return Decoded::Frame(frame);
            }
            #[cfg(test)]
            {
                self.examined += self.buf.len() - self.searched;
            }
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.searched..]) {
                let end = self.searched + pos;
                let mut line = self.buf.split_to(end + 1);
                self.searched = 0;
                if line.len() > KEEP_BUFFER && self.buf.is_empty() {
                    // The big line keeps its allocation; the decoder starts
                    // a small one rather than growing into the old one.
                    self.buf = BytesMut::with_capacity(READ_CHUNK);
                }
                line.truncate(end);
                if line.last() == Some(&b'\r') {
                    line.truncate(end - 1);
                }
                if is_blank(&line) {
                    continue;
                }
                if line.len() > self.max_frame {
                    // Can happen when one read brought the whole line at once.
                    let mut scanner = IdScanner::new();
                    scanner.feed(&line);
                    return Decoded::Frame(oversized(line.len(), &scanner));
                }
                return Decoded::Frame(Frame::Message(line.freeze()));
            }
            self.searched = self.buf.len();
            // A final `\r` may be the first half of the line's `\r\n`: it
            // does not count towards the limit yet.
            let pending = self.buf.len() - usize::from(self.buf.last() == Some(&b'\r'));
            if pending > self.max_frame {
                self.state = State::SkippingLine {
                    scanner: IdScanner::new(),
                    size: 0,
                    cr: false,
                    blank: true,
                };
                continue;
            }
            if !self.eof {
                return Decoded::NeedBytes;
            }
            self.searched = 0;
            if is_blank(&self.buf) {
                self.buf.clear();
                return Decoded::End;
            }
            // The final line without a newline still counts.
            let mut line = self.buf.split();
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            return Decoded::Frame(Frame::Message(line.freeze()));
        }
    }

    fn next_content_length(&mut self) -> Decoded {
        loop {
            match &mut self.state {
                State::Ready | State::SkippingLine { .. } => {}
                State::SkippingHeader => {
                    let end = find_header_end(&self.buf, 0);
                    match end {
                        Some((_, body_start)) => self.buf.advance(body_start),
                        // Keep what could be the start of the blank line.
                        None => self.buf.advance(self.buf.len().saturating_sub(2)),
                    }
                    self.searched = 0;
                    if end.is_none() && !self.eof {
                        return Decoded::NeedBytes;
                    }
                    if end.is_none() {
                        self.buf.clear();
                    }
                    self.state = State::Ready;
                    return Decoded::Frame(too_long_header());
                }
                State::Body { length } => {
                    let length = *length;
                    if self.buf.len() >= length {
                        self.state = State::Ready;
                        return Decoded::Frame(Frame::Message(self.buf.split_to(length).freeze()));
                    }
                    if !self.eof {
                        return Decoded::NeedBytes;
                    }
                    let got = self.buf.len();
                    self.buf.clear();
                    self.state = State::Ready;
                    return Decoded::Frame(Frame::BadHeader(format!(
                        "stream ended after {got} of {length} body bytes"
                    )));
                }
                State::SkippingBody {
                    scanner,
                    left,
                    length,
                } => {
                    let take = (*left).min(self.buf.len());
                    scanner.feed(&self.buf[..take]);
                    self.buf.advance(take);
                    *left -= take;
                    if *left == 0 || self.eof {
                        // Its declared size, even when the stream ended
                        // first: it is that size that exceeds the limit.
                        let frame = oversized(*length, scanner);
                        self.state = State::Ready;
                        return Decoded::Frame(frame);
                    }
                    return Decoded::NeedBytes;
                }
            }
            // Header section: up to and including the first "\r\n\r\n" (or "\n\n").
            let blank = self
                .buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            if blank > 0 {
                self.buf.advance(blank);
                self.searched = 0;
            }
            if let Some((header_end, body_start)) = find_header_end(&self.buf, self.searched) {
                self.searched = 0;
                let header = self.buf.split_to(body_start);
                if body_start > MAX_HEADER_SIZE {
                    // Over the limit whether it came in one read or many.
                    return Decoded::Frame(too_long_header());
                }
                match parse_content_length(&header[..header_end]) {
                    Ok(length) if length > self.max_frame => {
                        self.state = State::SkippingBody {
                            scanner: IdScanner::new(),
                            left: length,
                            length,
                        };
                    }
                    Ok(length) => self.state = State::Body { length },
                    Err(e) => return Decoded::Frame(Frame::BadHeader(e)),
                }
                continue;
            }
            self.searched = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEADER_SIZE {
                // Its end is further still: skip to it, then resynchronise.
                self.state = State::SkippingHeader;
                continue;
            }
            if !self.eof {
                return Decoded::NeedBytes;
            }
            self.searched = 0;
            if is_blank(&self.buf) {
                self.buf.clear();
                return Decoded::End;
            }
            let text = capped(&String::from_utf8_lossy(&self.buf));
            self.buf.clear();
            return Decoded::Frame(Frame::BadHeader(format!(
                "stream ended inside a header section: {text}"
            )));
        }
    }
}

/// Reads frames from an async byte stream: a [`FrameDecoder`] fed by
/// `inner`. [`FrameReader::next_frame`] is cancel-safe: dropping it between
/// polls loses nothing (the bytes read so far stay in the decoder).
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    decoder: FrameDecoder,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Wraps a stream. `max_frame` is the largest accepted frame in bytes.
    pub fn new(inner: R, framing: Framing, max_frame: usize) -> Self {
        Self {
            inner,
            decoder: FrameDecoder::new(framing, max_frame),
        }
    }

    /// The next frame, `Ok(None)` at a clean end of stream.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            match self.decoder.next_frame() {
                Decoded::Frame(frame) => return Ok(Some(frame)),
                Decoded::End => return Ok(None),
                Decoded::NeedBytes => {}
            }
            let n = self.inner.read_buf(self.decoder.read_buffer()).await?;
            if n == 0 {
                self.decoder.end_of_stream();
            }
        }
    }
}

fn oversized(size: usize, scanner: &IdScanner) -> Frame {
    Frame::Oversized {
        size,
        id: scanner.id().map(str::to_owned),
        is_request: scanner.has_method(),
    }
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Finds the end of a header section, searching from `from`. Returns the
/// header's length and where the body starts.
fn find_header_end(buf: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut at = from.min(buf.len());
    while let Some(pos) = memchr::memchr(b'\n', &buf[at..]) {
        let nl = at + pos;
        // "\n\n" or "\n\r\n" ends the header section.
        if buf.get(nl + 1) == Some(&b'\n') {
            return Some((nl, nl + 2));
        }
        if buf.get(nl + 1) == Some(&b'\r') && buf.get(nl + 2) == Some(&b'\n') {
            return Some((nl, nl + 3));
        }
        if nl + 2 >= buf.len() {
            return None;
        }
        at = nl + 1;
    }
    None
}

fn too_long_header() -> Frame {
    Frame::BadHeader(format!(
        "header section longer than {MAX_HEADER_SIZE} bytes"
    ))
}

/// A peer's header text for a report: quoted, at most its first 64 bytes.
fn capped(text: &str) -> String {
    const MAX: usize = 64;
    if text.len() <= MAX {
        return format!("{text:?}");
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &text[..end], text.len())
}

fn parse_content_length(header: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(header).map_err(|_| "header is not UTF-8".to_owned())?;
    let mut length = None;
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        // Leading blank lines between frames are tolerated.
        if line.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {}", capped(line)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("invalid Content-Length {}", capped(value.trim())))?,
            );
        }
    }
    length.ok_or_else(|| "missing Content-Length header".to_owned())
}

/// Appends one encoded frame for `message` (compact JSON) to `out`.
///
/// For NDJSON the message must not contain a raw newline: serde_json's compact
/// output never does, and [`crate::json::compact_if_needed`] normalises host
/// JSON before it gets here.
pub fn encode_into(framing: Framing, message: &[u8], out: &mut Vec<u8>) {
    encode_prefix(framing, message.len(), out);
    out.extend_from_slice(message);
    encode_suffix(framing, out);
}

/// Appends what goes before a message of `len` bytes (the Content-Length
/// header; nothing for NDJSON).
pub fn encode_prefix(framing: Framing, len: usize, out: &mut Vec<u8>) {
    if framing == Framing::ContentLength {
        out.extend_from_slice(format!("Content-Length: {len}\r\n\r\n").as_bytes());
    }
}

/// Appends what goes after a message (the newline of NDJSON).
pub fn encode_suffix(framing: Framing, out: &mut Vec<u8>) {
    if framing == Framing::Ndjson {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests;
