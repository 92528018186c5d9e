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

pub mod scan;

use bytes::{Bytes, BytesMut};
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
        /// Size of the discarded frame, in bytes (as far as it was read).
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

/// Reads frames from an async byte stream. Not cancel-safe across
/// [`FrameReader::next_frame`] calls that are dropped mid-way; the engine
/// drives it from one task.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    framing: Framing,
    max_frame: usize,
    buf: BytesMut,
    /// NDJSON: how far `buf` has been searched for a newline.
    searched: usize,
    eof: bool,
    /// Bytes examined for delimiters, for the linear-reassembly test.
    #[cfg(test)]
    examined: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Wraps a stream. `max_frame` is the largest accepted frame in bytes.
    pub fn new(inner: R, framing: Framing, max_frame: usize) -> Self {
        Self {
            inner,
            framing,
            max_frame: max_frame.max(1),
            buf: BytesMut::with_capacity(READ_CHUNK),
            searched: 0,
            eof: false,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Reads more bytes into `buf`. Returns `false` at end of stream.
    async fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.buf.reserve(READ_CHUNK);
        let n = self.inner.read_buf(&mut self.buf).await?;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// The next frame, `Ok(None)` at a clean end of stream.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        match self.framing {
            Framing::Ndjson => self.next_line().await,
            Framing::ContentLength => self.next_content_length().await,
        }
    }

    async fn next_line(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            #[cfg(test)]
            {
                self.examined += self.buf.len() - self.searched;
            }
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.searched..]) {
                let end = self.searched + pos;
                let mut line = self.buf.split_to(end + 1);
                self.searched = 0;
                if line.len() > KEEP_BUFFER && self.buf.is_empty() {
                    // The big line keeps its allocation; the reader starts
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
                    return Ok(Some(oversized(line.len(), &scanner)));
                }
                return Ok(Some(Frame::Message(line.freeze())));
            }
            self.searched = self.buf.len();
            if self.buf.len() > self.max_frame {
                return self.discard_line().await.map(Some);
            }
            if !self.fill().await? {
                if is_blank(&self.buf) {
                    self.buf.clear();
                    return Ok(None);
                }
                // The final line without a newline still counts.
                self.searched = 0;
                let mut line = self.buf.split();
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                return Ok(Some(Frame::Message(line.freeze())));
            }
        }
    }

    /// Discards the rest of an over-long line, scanning it for its id.
    async fn discard_line(&mut self) -> std::io::Result<Frame> {
        let mut scanner = IdScanner::new();
        let mut size = 0usize;
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf) {
                let chunk = self.buf.split_to(pos + 1);
                scanner.feed(&chunk[..pos]);
                size += pos;
                self.searched = 0;
                return Ok(oversized(size, &scanner));
            }
            scanner.feed(&self.buf);
            size += self.buf.len();
            self.buf.clear();
            self.searched = 0;
            if !self.fill().await? {
                return Ok(oversized(size, &scanner));
            }
        }
    }

    async fn next_content_length(&mut self) -> std::io::Result<Option<Frame>> {
        // Header section: up to and including the first "\r\n\r\n" (or "\n\n").
        let (header_end, body_start) = loop {
            let blank = self
                .buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            if blank > 0 {
                let _ = self.buf.split_to(blank);
                self.searched = 0;
            }
            if let Some(found) = find_header_end(&self.buf, self.searched) {
                break found;
            }
            self.searched = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEADER_SIZE {
                self.buf.clear();
                self.searched = 0;
                return Ok(Some(Frame::BadHeader(format!(
                    "header section longer than {MAX_HEADER_SIZE} bytes"
                ))));
            }
            if !self.fill().await? {
                if is_blank(&self.buf) {
                    return Ok(None);
                }
                let text = String::from_utf8_lossy(&self.buf).into_owned();
                self.buf.clear();
                return Ok(Some(Frame::BadHeader(format!(
                    "stream ended inside a header section: {text:?}"
                ))));
            }
        };
        self.searched = 0;
        let header = self.buf.split_to(body_start);
        let length = match parse_content_length(&header[..header_end]) {
            Ok(length) => length,
            Err(e) => return Ok(Some(Frame::BadHeader(e))),
        };
        if length > self.max_frame {
            return self.discard_body(length).await.map(Some);
        }
        self.buf.reserve(length.saturating_sub(self.buf.len()));
        while self.buf.len() < length {
            if !self.fill().await? {
                let got = self.buf.len();
                self.buf.clear();
                return Ok(Some(Frame::BadHeader(format!(
                    "stream ended after {got} of {length} body bytes"
                ))));
            }
        }
        Ok(Some(Frame::Message(self.buf.split_to(length).freeze())))
    }

    async fn discard_body(&mut self, length: usize) -> std::io::Result<Frame> {
        let mut scanner = IdScanner::new();
        let mut left = length;
        loop {
            let take = left.min(self.buf.len());
            let chunk = self.buf.split_to(take);
            scanner.feed(&chunk);
            left -= take;
            if left == 0 {
                return Ok(oversized(length, &scanner));
            }
            if !self.fill().await? {
                return Ok(oversized(length - left, &scanner));
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
    let mut at = from;
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
            return Err(format!("malformed header line {line:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("invalid Content-Length {:?}", value.trim()))?,
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
