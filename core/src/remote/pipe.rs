//! The seam between a message transport and the engine's byte stream.
//!
//! WebSocket and Streamable HTTP carry one JSON-RPC message per unit (a
//! text frame, a POST body, an SSE event). The engine reads and writes
//! NDJSON. A [`pipe`] joins the two without a second engine: the engine gets
//! a [`Transport`] whose read half yields each inbound message as one line
//! and whose write half cuts what the engine writes back into messages.
//! Every rule of the engine (limits, validation, ordering, exactly-once
//! answers) therefore holds remotely as it does on stdio.
//!
//! **Bounds.** Both directions are bounded channels of messages: a peer that
//! floods waits in [`Inbound::send`] (its socket stops being read), an engine
//! that writes faster than the network waits in `poll_write`.
//!
//! **One message, one line.** JSON text may hold line breaks only as white
//! space between tokens (a raw one inside a string is invalid JSON), so an
//! inbound message's breaks outside strings become spaces; one inside a
//! string becomes a control byte, which keeps the message invalid and so
//! answered `-32700` by the engine, as the peer's text deserves.
//!
//! **Ends.** Dropping the [`Inbound`] ends the engine's input (end of
//! stream, as when a stdio peer exits). The engine closing its write half
//! ends [`Outbound::recv`] with `None`.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

use super::RemoteError;
use crate::transport::Transport;

/// A message transport's end: what arrived from the network goes in here.
#[derive(Debug, Clone)]
pub(crate) struct Inbound {
    tx: mpsc::Sender<Result<Bytes, io::Error>>,
}

impl Inbound {
    /// Hands one message to the engine, waiting while its queue is full.
    /// `false` once the engine stopped reading (the connection is closing).
    pub(crate) async fn send(&self, message: &[u8]) -> bool {
        self.tx.send(Ok(one_line(message))).await.is_ok()
    }

    /// Ends the engine's input with an error: the connection closes with
    /// `CloseReason::Remote(error)` (the server went away mid-turn, ...).
    /// Waits for room like a message (it comes after what came before).
    pub(crate) async fn fail(&self, error: RemoteError) {
        let _ = self.tx.send(Err(io::Error::other(error))).await;
    }
}

/// A message transport's end: what the engine writes comes out here.
#[derive(Debug)]
pub(crate) struct Outbound {
    rx: mpsc::Receiver<Bytes>,
}

impl Outbound {
    /// The next message the engine wrote (without its newline); `None` once
    /// the engine closed its write half and everything was taken.
    pub(crate) async fn recv(&mut self) -> Option<Bytes> {
        self.rx.recv().await
    }

    /// The next message if one is ready now.
    pub(crate) fn try_recv(&mut self) -> Option<Bytes> {
        self.rx.try_recv().ok()
    }
}

/// A connected pair: the engine's [`Transport`] and the message ends, each
/// direction holding at most `capacity` messages.
pub(crate) fn pipe(capacity: usize) -> (Transport, Inbound, Outbound) {
    let capacity = capacity.max(1);
    let (in_tx, in_rx) = mpsc::channel(capacity);
    let (out_tx, out_rx) = mpsc::channel(capacity);
    let reader = LineReader {
        rx: in_rx,
        current: Bytes::new(),
    };
    let writer = LineWriter {
        tx: PollSender::new(out_tx),
        partial: BytesMut::new(),
        ready: VecDeque::new(),
    };
    (
        Transport::new(reader, writer),
        Inbound { tx: in_tx },
        Outbound { rx: out_rx },
    )
}

/// The engine's read half: each message followed by `\n`.
struct LineReader {
    rx: mpsc::Receiver<Result<Bytes, io::Error>>,
    current: Bytes,
}

impl AsyncRead for LineReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.current.is_empty() {
                let n = this.current.len().min(buf.remaining());
                buf.put_slice(&this.current[..n]);
                this.current.advance(n);
                // Take whatever else is ready, without waiting.
                while buf.remaining() > 0 {
                    if this.current.is_empty() {
                        match this.rx.try_recv() {
                            Ok(Ok(next)) => this.current = next,
                            _ => break,
                        }
                    }
                    let n = this.current.len().min(buf.remaining());
                    buf.put_slice(&this.current[..n]);
                    this.current.advance(n);
                }
                return Poll::Ready(Ok(()));
            }
            match ready!(this.rx.poll_recv(cx)) {
                Some(Ok(next)) => this.current = next,
                Some(Err(e)) => return Poll::Ready(Err(e)),
                None => return Poll::Ready(Ok(())), // end of stream
            }
        }
    }
}

/// The engine's write half: cut into messages at each `\n`.
struct LineWriter {
    tx: PollSender<Bytes>,
    /// The start of a message whose newline has not been written yet.
    partial: BytesMut,
    /// Whole messages waiting for room in the channel.
    ready: VecDeque<Bytes>,
}

impl LineWriter {
    /// Moves ready messages into the channel; `Ready(Ok)` once none waits.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.ready.is_empty() {
            if ready!(self.tx.poll_reserve(cx)).is_err() {
                return Poll::Ready(Err(closed()));
            }
            let Some(message) = self.ready.pop_front() else {
                break;
            };
            if self.tx.send_item(message).is_err() {
                return Poll::Ready(Err(closed()));
            }
        }
        Poll::Ready(Ok(()))
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the remote transport is closed")
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        let mut rest = data;
        while let Some(at) = memchr::memchr(b'\n', rest) {
            let line = &rest[..at];
            let message = if this.partial.is_empty() {
                Bytes::copy_from_slice(line)
            } else {
                this.partial.extend_from_slice(line);
                this.partial.split().freeze()
            };
            if !message.is_empty() {
                this.ready.push_back(message);
            }
            rest = &rest[at + 1..];
        }
        this.partial.extend_from_slice(rest);
        // Hand on what fits now; the rest goes at the next write or flush.
        let _ = this.poll_drain(cx)?;
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_drain(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        this.tx.close();
        Poll::Ready(Ok(()))
    }
}

/// `message` as one NDJSON line, newline included (see the module docs).
pub fn one_line(message: &[u8]) -> Bytes {
    let body: Cow<'_, [u8]> = if memchr::memchr2(b'\n', b'\r', message).is_none() {
        Cow::Borrowed(message)
    } else {
        let mut out = message.to_vec();
        let (mut in_string, mut escaped) = (false, false);
        for byte in &mut out {
            match *byte {
                // A raw line break is never kept, whatever precedes it: one
                // right after a backslash would otherwise end the line, and
                // what follows it would reach the engine as a message of
                // its own (found by fuzz/fuzz_targets/remote_route.rs).
                b'\n' | b'\r' if in_string => {
                    *byte = 0x01;
                    escaped = false;
                }
                b'\n' | b'\r' => *byte = b' ',
                _ if escaped => escaped = false,
                b'\\' if in_string => escaped = true,
                b'"' => in_string = !in_string,
                _ => {}
            }
        }
        Cow::Owned(out)
    };
    let mut line = BytesMut::with_capacity(body.len() + 1);
    line.extend_from_slice(&body);
    line.extend_from_slice(b"\n");
    line.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[test]
    fn line_breaks_outside_strings_become_spaces() {
        let line = one_line(b"{\n  \"a\": \"x\\ny\"\r\n}");
        assert_eq!(&line[..], b"{   \"a\": \"x\\ny\"  }\n");
    }

    #[test]
    fn a_raw_line_break_inside_a_string_stays_invalid() {
        let line = one_line(b"{\"a\": \"x\ny\"}");
        assert_eq!(&line[..], b"{\"a\": \"x\x01y\"}\n");
        assert!(serde_json::from_slice::<serde_json::Value>(&line).is_err());
    }

    #[test]
    fn a_line_break_after_a_backslash_cannot_start_a_second_message() {
        // One frame that, split at its raw line break, would be an invalid
        // line and then a valid request of its own.
        let frame = b"{\"a\":\"\\\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}";
        let line = one_line(frame);
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        assert!(serde_json::from_slice::<serde_json::Value>(&line).is_err());
    }

    #[tokio::test]
    async fn messages_cross_as_lines_both_ways() {
        let (transport, inbound, mut outbound) = pipe(2);
        let crate::transport::ReadHalf::Stream(reader) = transport.reader else {
            panic!("a pipe is a stream transport");
        };
        let crate::transport::WriteHalf::Stream(mut writer) = transport.writer else {
            panic!("a pipe is a stream transport");
        };
        let feeder = tokio::spawn(async move {
            for i in 0..5 {
                assert!(inbound.send(format!("{{\"n\":{i}}}").as_bytes()).await);
            }
        });
        let mut lines = BufReader::new(reader).lines();
        for i in 0..5 {
            assert_eq!(
                lines.next_line().await.ok().flatten(),
                Some(format!("{{\"n\":{i}}}"))
            );
        }
        feeder.await.ok();
        assert_eq!(
            lines.next_line().await.ok().flatten(),
            None,
            "end of stream"
        );

        let writes = tokio::spawn(async move {
            writer.write_all(b"{\"a\":1}\n{\"b\"").await.ok();
            writer.write_all(b":2}\n\n{\"c\":3}\n").await.ok();
            writer.shutdown().await.ok();
        });
        let mut got = Vec::new();
        while let Some(m) = outbound.recv().await {
            got.push(String::from_utf8_lossy(&m).into_owned());
        }
        writes.await.ok();
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[tokio::test]
    async fn a_failure_ends_the_engines_input_with_its_reason() {
        let (transport, inbound, _outbound) = pipe(2);
        let crate::transport::ReadHalf::Stream(mut reader) = transport.reader else {
            panic!("a pipe is a stream transport");
        };
        let gone = RemoteError::new(super::super::RemoteErrorKind::Io, "the server went away");
        inbound.fail(gone.clone()).await;
        let mut buf = [0u8; 16];
        let err = tokio::io::AsyncReadExt::read(&mut reader, &mut buf).await;
        let reason = crate::CloseReason::from_read_error(&err.expect_err("a failure"));
        assert_eq!(reason, crate::CloseReason::Remote(gone));
    }
}
