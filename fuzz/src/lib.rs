//! Shared helpers of libacp's fuzz targets (issue 14): the framing
//! invariants, used by both framing targets.

use libacp_core::framing::{Decoded, Frame, FrameDecoder, Framing, encode_into};

/// Decodes `data` handed to the decoder in pieces of `chunks` sizes (cycled;
/// 0 means "ask for a frame without adding bytes"), checking the per-frame
/// invariants, and returns the frames.
pub fn decode_chunked(
    framing: Framing,
    max_frame: usize,
    data: &[u8],
    chunks: &[usize],
) -> Vec<Frame> {
    let mut decoder = FrameDecoder::new(framing, max_frame);
    let mut frames = Vec::new();
    let mut pos = 0;
    let mut turn = 0;
    // Each call either returns a frame, consumes input or ends: a bound on
    // the calls catches a decoder that spins.
    let mut calls = 0usize;
    let bound = 4 * data.len() + 4 * chunks.len() * (data.len() + 1) + 64;
    loop {
        calls += 1;
        assert!(
            calls <= bound,
            "the decoder made no progress after {calls} calls"
        );
        match decoder.next_frame() {
            Decoded::Frame(frame) => {
                check_frame(framing, max_frame, &frame);
                frames.push(frame);
            }
            Decoded::End => {
                assert_eq!(pos, data.len(), "End before the input was consumed");
                assert!(decoder.at_end(), "End before end_of_stream");
                break;
            }
            Decoded::NeedBytes => {
                assert!(!decoder.at_end(), "NeedBytes after end_of_stream");
                if pos == data.len() {
                    decoder.end_of_stream();
                    continue;
                }
                let size = if chunks.is_empty() {
                    data.len()
                } else {
                    chunks[turn % chunks.len()]
                };
                turn += 1;
                let n = size.min(data.len() - pos);
                decoder.read_buffer().extend_from_slice(&data[pos..pos + n]);
                pos += n;
            }
        }
    }
    frames
}

fn check_frame(framing: Framing, max_frame: usize, frame: &Frame) {
    match frame {
        Frame::Message(bytes) => {
            assert!(
                bytes.len() <= max_frame,
                "a message of {} bytes passed a limit of {max_frame}",
                bytes.len()
            );
            if framing == Framing::Ndjson {
                assert!(!bytes.contains(&b'\n'), "an NDJSON frame holds a newline");
                assert!(
                    !bytes
                        .iter()
                        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')),
                    "a blank NDJSON line was returned as a frame"
                );
            }
        }
        Frame::Oversized { size, .. } => {
            assert!(
                *size > max_frame,
                "an oversized frame of {size} bytes is within {max_frame}"
            );
        }
        Frame::BadHeader(detail) => {
            assert_eq!(framing, Framing::ContentLength, "a bad header in NDJSON");
            assert!(
                detail.len() < 1024,
                "a bad-header detail of {} bytes",
                detail.len()
            );
        }
    }
}

/// The whole framing check: layout of `data` is `[max, nchunks, chunk
/// sizes..., stream...]`. The frames must not depend on how the stream was
/// cut; Content-Length frames must survive a re-encoding.
pub fn check_framing(framing: Framing, data: &[u8]) {
    let Some((&max, rest)) = data.split_first() else {
        return;
    };
    let max_frame = 1 + usize::from(max % 128);
    let Some((&count, rest)) = rest.split_first() else {
        return;
    };
    let count = usize::from(count % 16).min(rest.len());
    let (sizes, stream) = rest.split_at(count);
    let chunks: Vec<usize> = sizes.iter().map(|&b| usize::from(b)).collect();

    // Without chunk sizes in the input: byte by byte.
    let chunks = if chunks.iter().any(|&c| c > 0) {
        chunks
    } else {
        vec![1]
    };
    let whole = decode_chunked(framing, max_frame, stream, &[]);
    let cut = decode_chunked(framing, max_frame, stream, &chunks);
    assert_eq!(whole, cut, "one read and reads of {chunks:?} disagree");

    if framing == Framing::ContentLength {
        // Messages re-encoded decode to the same messages.
        let messages: Vec<&[u8]> = whole
            .iter()
            .filter_map(|f| match f {
                Frame::Message(b) => Some(&b[..]),
                _ => None,
            })
            .collect();
        let mut wire = Vec::new();
        for m in &messages {
            encode_into(framing, m, &mut wire);
        }
        let again = decode_chunked(framing, max_frame, &wire, &[]);
        let again: Vec<&[u8]> = again
            .iter()
            .map(|f| match f {
                Frame::Message(b) => &b[..],
                other => panic!("a re-encoded message decoded as {other:?}"),
            })
            .collect();
        assert_eq!(messages, again, "re-encoded messages changed");
    }
}
