use super::*;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::ReadBuf;

/// A reader that hands out its data in fixed-size pieces, to exercise
/// frames split across reads.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    piece: usize,
}

impl AsyncRead for Pieces {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let end = (self.at + self.piece)
            .min(self.data.len())
            .min(self.at + buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..end]);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

async fn read_all(data: &[u8], framing: Framing, max: usize, piece: usize) -> Vec<Frame> {
    let mut r = FrameReader::new(
        Pieces {
            data: data.to_vec(),
            at: 0,
            piece,
        },
        framing,
        max,
    );
    let mut out = Vec::new();
    while let Some(f) = r.next_frame().await.expect("read") {
        out.push(f);
    }
    out
}

fn msg(s: &str) -> Frame {
    Frame::Message(Bytes::copy_from_slice(s.as_bytes()))
}

#[tokio::test]
async fn ndjson_lines_crlf_blank_and_final_line() {
    let data = b"{\"a\":1}\r\n\n  \r\n{\"b\":2}\n{\"c\":3}";
    for piece in [1, 2, 5, 1000] {
        assert_eq!(
            read_all(data, Framing::Ndjson, 1024, piece).await,
            vec![msg("{\"a\":1}"), msg("{\"b\":2}"), msg("{\"c\":3}")],
            "piece {piece}"
        );
    }
}

#[tokio::test]
async fn ndjson_trailing_whitespace_is_not_a_frame() {
    assert_eq!(
        read_all(b"{}\n \r\n", Framing::Ndjson, 1024, 3).await,
        vec![msg("{}")]
    );
}

#[tokio::test]
async fn ndjson_oversized_line_is_skipped_with_its_id() {
    let big = "y".repeat(5000);
    let data = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{{\"t\":\"{big}\"}},\"id\":\"r1\"}}\n{{\"ok\":true}}\n"
    );
    for piece in [7, 64 * 1024] {
        let frames = read_all(data.as_bytes(), Framing::Ndjson, 1000, piece).await;
        assert_eq!(frames.len(), 2);
        match &frames[0] {
            Frame::Oversized {
                size,
                id,
                is_request,
            } => {
                assert_eq!(*size, data.find('\n').expect("newline"));
                assert_eq!(id.as_deref(), Some("\"r1\""));
                assert!(is_request);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(frames[1], msg("{\"ok\":true}"));
    }
}

#[tokio::test]
async fn ndjson_frame_exactly_at_limit_is_accepted() {
    let line = format!("\"{}\"", "z".repeat(98));
    assert_eq!(line.len(), 100);
    let data = format!("{line}\n");
    assert_eq!(
        read_all(data.as_bytes(), Framing::Ndjson, 100, 9).await,
        vec![msg(&line)]
    );
    let frames = read_all(data.as_bytes(), Framing::Ndjson, 99, 9).await;
    assert!(
        matches!(frames[0], Frame::Oversized { size: 100, .. }),
        "{frames:?}"
    );
}

#[tokio::test]
async fn ndjson_oversized_reader_memory_stays_bounded() {
    // A 20 MB line against a 1 KB limit: the buffer never holds the line.
    let mut data = vec![b'{'];
    data.extend(std::iter::repeat_n(b' ', 20_000_000));
    data.extend_from_slice(b"}\n{}\n");
    let mut r = FrameReader::new(
        Pieces {
            data,
            at: 0,
            piece: 64 * 1024,
        },
        Framing::Ndjson,
        1024,
    );
    let f = r.next_frame().await.expect("read");
    assert!(matches!(f, Some(Frame::Oversized { .. })));
    assert!(
        r.buf.capacity() < 1024 * 1024,
        "capacity {}",
        r.buf.capacity()
    );
    assert_eq!(r.next_frame().await.expect("read"), Some(msg("{}")));
}

#[tokio::test]
async fn content_length_frames_split_anywhere() {
    let a = r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
    let b = "{\"t\":\"h\u{e9}llo\"}"; // multi-byte: length counts bytes
    let data = format!(
        "Content-Length: {}\r\n\r\n{a}\r\ncontent-length:{}\r\nContent-Type: application/json\r\n\r\n{b}",
        a.len(),
        b.len()
    );
    for piece in [1, 3, 4096] {
        assert_eq!(
            read_all(data.as_bytes(), Framing::ContentLength, 1024, piece).await,
            vec![msg(a), msg(b)],
            "piece {piece}"
        );
    }
}

#[tokio::test]
async fn content_length_oversized_body_is_skipped() {
    let big = format!(r#"{{"id":5,"method":"m","params":"{}"}}"#, "q".repeat(3000));
    let data = format!(
        "Content-Length: {}\r\n\r\n{big}Content-Length: 2\r\n\r\n{{}}",
        big.len()
    );
    let frames = read_all(data.as_bytes(), Framing::ContentLength, 100, 100).await;
    assert_eq!(
        frames,
        vec![
            Frame::Oversized {
                size: big.len(),
                id: Some("5".into()),
                is_request: true
            },
            msg("{}")
        ]
    );
}

#[tokio::test]
async fn content_length_bad_headers_are_reported_and_skipped() {
    let data = "Content-Length: nope\r\n\r\nX-Other: 1\r\n\r\nContent-Length: 2\r\n\r\n{}";
    let frames = read_all(data.as_bytes(), Framing::ContentLength, 100, 5).await;
    assert_eq!(frames.len(), 3, "{frames:?}");
    assert!(matches!(&frames[0], Frame::BadHeader(e) if e.contains("invalid Content-Length")));
    assert!(matches!(&frames[1], Frame::BadHeader(e) if e.contains("missing Content-Length")));
    assert_eq!(frames[2], msg("{}"));
}

#[tokio::test]
async fn content_length_truncated_body_is_reported() {
    let frames = read_all(
        b"Content-Length: 10\r\n\r\n{}",
        Framing::ContentLength,
        100,
        5,
    )
    .await;
    assert!(matches!(&frames[..], [Frame::BadHeader(e)] if e.contains("2 of 10")));
}

#[tokio::test]
async fn reassembly_is_linear_for_a_large_line_in_small_reads() {
    // 8 MiB in 4 KiB reads: a rescan per read would examine ~8 GiB.
    let mut data = vec![b'"'];
    data.extend(std::iter::repeat_n(b'a', 8 * 1024 * 1024));
    data.extend_from_slice(b"\"\n");
    let mut r = FrameReader::new(
        Pieces {
            data: data.clone(),
            at: 0,
            piece: 4096,
        },
        Framing::Ndjson,
        DEFAULT_MAX_FRAME_SIZE,
    );
    let frame = r.next_frame().await.expect("read");
    assert!(matches!(&frame, Some(Frame::Message(m)) if m.len() == data.len() - 1));
    // Each byte is examined for a newline once, not once per read.
    assert!(
        r.examined <= data.len(),
        "examined {} of {}",
        r.examined,
        data.len()
    );
}

#[test]
fn encodes_both_framings() {
    let mut out = Vec::new();
    encode_into(Framing::Ndjson, b"{}", &mut out);
    encode_into(Framing::ContentLength, b"{\"a\":1}", &mut out);
    assert_eq!(out, b"{}\nContent-Length: 7\r\n\r\n{\"a\":1}");
}
