//! The protocol state machine (`AcpConnection`, either role) against a
//! scripted raw peer that writes a sequence of frames: the fuzz input is a
//! flags byte and then the frames, one per line (seeded with the `send`
//! steps of tests/scenarios/*.json by fuzz/seed.py). The host's handler
//! answers every request at once with a fixed valid result (or an error);
//! on the client side the host also calls initialize, session/new and
//! session/prompt. Invariants: no panic; every request libacp read gets
//! exactly one answer (counted by id in what libacp writes; with repeated
//! ids, at least one and at most as many as were sent); libacp writes only
//! valid JSON-RPC messages; the connection closes and ends its output when
//! the input ends, within a bounded (virtual) time.
//!
//! Flags (first byte): bit 0 the role libacp plays (0 agent, 1 client);
//! bit 1 the host answers every other request with an error; bit 2
//! Content-Length framing; bit 3 the peer's request ids are made unique
//! (then "exactly one answer" is checked strictly); bit 4 agent side:
//! `require_auth`; bit 5 a 300-byte frame limit; bit 6 client side: the
//! host cancels its prompt turn; bit 7 agent side: the host sends a
//! `session/update` and calls `fs/read_text_file` during a prompt turn.
#![no_main]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use libacp_core::framing::{Decoded, Frame, FrameDecoder, encode_into};
use libacp_core::message::{self, Message, RequestId};
use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, CloseReason, ConnectionOptions, Direction, FnHandler,
    Framing, RawValue, Role, RpcError, Transport,
};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            // Virtual time: waits cost nothing, and a hang shows as the
            // iteration's (virtual) deadline passing.
            .start_paused(true)
            .build()
            .expect("a runtime")
    })
}

const SESSION_IDS: &[&str] = &["s1", "sess-A", "s2", "s3", "a", "b", "c", "old-1"];

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("fixed JSON")
}

/// The fixed valid result for `method`.
fn result_for(method: &str, sessions: &AtomicUsize) -> Box<RawValue> {
    match method {
        "initialize" => raw(
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},"sessionCapabilities":{"list":{},"resume":{}}},"authMethods":[{"id":"api-key","name":"API key"}]}"#,
        ),
        "session/new" => {
            let n = sessions.fetch_add(1, Ordering::Relaxed);
            raw(&format!(
                r#"{{"sessionId":"{}"}}"#,
                SESSION_IDS[n % SESSION_IDS.len()]
            ))
        }
        "session/list" => raw(r#"{"sessions":[]}"#),
        "session/prompt" => raw(r#"{"stopReason":"end_turn"}"#),
        "session/set_config_option" => raw(r#"{"configOptions":[]}"#),
        "session/request_permission" => {
            raw(r#"{"outcome":{"outcome":"selected","optionId":"allow"}}"#)
        }
        "fs/read_text_file" => raw(r#"{"content":"hello\n"}"#),
        "terminal/create" => raw(r#"{"terminalId":"t1"}"#),
        "terminal/output" => raw(r#"{"output":"","truncated":false}"#),
        "terminal/wait_for_exit" => raw(r#"{"exitCode":0}"#),
        _ => raw("{}"),
    }
}

/// What libacp wrote, decoded as it arrives.
#[derive(Default)]
struct Written {
    /// Answers by id (`None`: `"id": null`).
    answers: HashMap<Option<RequestId>, usize>,
    /// Ids of the requests libacp sent.
    requests: Vec<RequestId>,
}

/// Reads the frames libacp wrote until it ends its output.
async fn read_output(
    mut from: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    framing: Framing,
    written: Arc<Mutex<Written>>,
) {
    let mut decoder = FrameDecoder::new(framing, usize::MAX / 2);
    loop {
        match decoder.next_frame() {
            Decoded::Frame(Frame::Message(bytes)) => {
                let msg = match message::decode(&bytes) {
                    Ok(msg) => msg,
                    Err(e) => panic!(
                        "libacp wrote an invalid message {:?}: {e:?}",
                        String::from_utf8_lossy(&bytes)
                    ),
                };
                let mut w = written.lock().expect("lock");
                match msg {
                    Message::Response { id, .. } => *w.answers.entry(id).or_default() += 1,
                    Message::Request { id, .. } => w.requests.push(id),
                    Message::Notification { .. } => {}
                }
            }
            Decoded::Frame(other) => panic!("libacp wrote a bad frame: {other:?}"),
            Decoded::End => return,
            Decoded::NeedBytes => {
                let n = from.read_buf(decoder.read_buffer()).await.expect("read");
                if n == 0 {
                    decoder.end_of_stream();
                }
            }
        }
    }
}

/// The request ids a peer's frame obliges libacp to answer (the frame
/// decoded the way libacp decodes it).
fn owed(frames: &[Frame]) -> HashMap<RequestId, usize> {
    let mut owed = HashMap::new();
    for frame in frames {
        let id = match frame {
            Frame::Message(bytes) => match message::decode(bytes) {
                Ok(Message::Request { id, .. }) => Some(id),
                Err(e) if e.answerable => e.id,
                _ => None,
            },
            Frame::Oversized {
                id: Some(id),
                is_request: true,
                ..
            } => serde_json::from_str::<RequestId>(id).ok(),
            _ => None,
        };
        if let Some(id) = id.filter(|id| *id != RequestId::Null) {
            *owed.entry(id).or_default() += 1;
        }
    }
    owed
}

/// Gives each request line a unique id (lines that are JSON objects with
/// `method` and `id`).
fn renumber(line: &[u8], n: usize) -> Vec<u8> {
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(mut map))
            if map.contains_key("method") && map.contains_key("id") =>
        {
            map.insert("id".into(), format!("fuzz-{n}").into());
            serde_json::to_vec(&map).expect("a map serializes")
        }
        _ => line.to_vec(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, script)) = data.split_first() else {
        return;
    };
    let role = if flags & 1 == 0 {
        Role::Agent
    } else {
        Role::Client
    };
    let errors = flags & 2 != 0;
    let framing = if flags & 4 == 0 {
        Framing::Ndjson
    } else {
        Framing::ContentLength
    };
    let unique = flags & 8 != 0;
    let max_frame = if flags & 32 != 0 { 300 } else { 1 << 20 };

    let lines: Vec<Vec<u8>> = script
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .enumerate()
        .map(|(n, l)| if unique { renumber(l, n) } else { l.to_vec() })
        .collect();
    let mut wire = Vec::new();
    for line in &lines {
        match framing {
            Framing::Ndjson => {
                wire.extend_from_slice(line);
                wire.push(b'\n');
            }
            Framing::ContentLength => encode_into(framing, line, &mut wire),
        }
    }
    // What libacp will read: the same bytes through the same decoder.
    let mut decoder = FrameDecoder::new(framing, max_frame);
    decoder.read_buffer().extend_from_slice(&wire);
    decoder.end_of_stream();
    let mut frames = Vec::new();
    while let Decoded::Frame(f) = decoder.next_frame() {
        frames.push(f);
    }
    let owed = owed(&frames);

    runtime().block_on(async move {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (peer_read, mut peer_write) = tokio::io::split(theirs);
        let written = Arc::new(Mutex::new(Written::default()));
        let read_in = Arc::new(AtomicUsize::new(0));

        let sessions = Arc::new(AtomicUsize::new(0));
        let answered = Arc::new(AtomicUsize::new(0));
        let handler = FnHandler::new().on_request(move |req| {
            let n = answered.fetch_add(1, Ordering::Relaxed);
            let result = if errors && n % 2 == 1 {
                Err(RpcError::new(-32000, "fuzz host error"))
            } else {
                Ok(result_for(&req.method, &sessions))
            };
            // The agent's host streams an update and reads a file during a
            // prompt turn, as agents do (the peer may answer, or not).
            let turn = (req.method == "session/prompt" && flags & 128 != 0)
                .then(|| {
                    let sid = req.params_as::<serde_json::Value>().ok()?["sessionId"].clone();
                    Some((AcpPeer::of(&req.peer)?, sid))
                })
                .flatten();
            async move {
                if let Some((peer, sid)) = turn {
                    let update = serde_json::json!({"sessionId": sid, "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "working"}}});
                    let _ = peer.notify_json("session/update", &update).await;
                    let read = serde_json::json!({"sessionId": sid, "path": "/work/notes.txt"});
                    let _ = peer.request_json("fs/read_text_file", &read).await;
                }
                result
            }
        });
        let trace_count = Arc::clone(&read_in);
        let options = AcpOptions {
            connection: ConnectionOptions {
                framing,
                max_frame_size: max_frame,
                trace: Some(Arc::new(move |dir, _frame: &[u8]| {
                    if dir == Direction::Incoming {
                        trace_count.fetch_add(1, Ordering::Relaxed);
                    }
                })),
                ..ConnectionOptions::default()
            },
            require_auth: role == Role::Agent && flags & 16 != 0,
            ..AcpOptions::default()
        };
        let conn = AcpConnection::start(role, Transport::from_stream(ours), handler, options);

        let output = tokio::spawn(read_output(peer_read, framing, Arc::clone(&written)));

        // The client side's host drives a session.
        let driver = (role == Role::Client).then(|| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let init = conn.request(
                    "initialize",
                    Some(raw(
                        r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}"#,
                    )),
                );
                if init.await.is_err() {
                    return;
                }
                let Ok(new) = conn
                    .request("session/new", Some(raw(r#"{"cwd":"/work","mcpServers":[]}"#)))
                    .await
                else {
                    return;
                };
                let Some(sid) = serde_json::from_str::<serde_json::Value>(new.get())
                    .ok()
                    .and_then(|v| v.get("sessionId").and_then(|s| s.as_str()).map(str::to_owned))
                else {
                    return;
                };
                let prompt = conn.request(
                    "session/prompt",
                    Some(raw(&format!(
                        r#"{{"sessionId":{},"prompt":[{{"type":"text","text":"hi"}}]}}"#,
                        serde_json::Value::from(sid.as_str())
                    ))),
                );
                if flags & 64 != 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    let _ = conn.cancel_session(&sid).await;
                }
                let _ = prompt.await;
            })
        });

        // The scripted peer: a response waits (briefly) for the request it
        // answers, as a real peer would.
        let mut answered_by_peer = 0usize;
        for (line, frame) in lines.iter().zip(wire_frames(&lines, framing)) {
            if role == Role::Client
                && matches!(message::decode(line), Ok(Message::Response { .. }))
            {
                answered_by_peer += 1;
                for _ in 0..20 {
                    if written.lock().expect("lock").requests.len() >= answered_by_peer {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            if peer_write.write_all(&frame).await.is_err() {
                break; // libacp closed its end
            }
            tokio::task::yield_now().await;
        }
        let _ = peer_write.shutdown().await;

        let reason = tokio::time::timeout(Duration::from_secs(60), conn.closed())
            .await
            .expect("the connection did not close after the input ended");
        tokio::time::timeout(Duration::from_secs(60), output)
            .await
            .expect("libacp did not end its output after closing")
            .expect("the output reader");
        if let Some(driver) = driver {
            tokio::time::timeout(Duration::from_secs(60), driver)
                .await
                .expect("a host call did not end after the connection closed")
                .expect("the host driver");
        }
        drop(conn);

        let written = written.lock().expect("lock");
        let all_read = matches!(reason, CloseReason::PeerClosed);
        if std::env::var_os("PROTOCOL_FUZZ_DEBUG").is_some() {
            eprintln!(
                "{role:?}: {} frames, {} read, owed {owed:?}, answered {:?}, libacp's requests {:?}, {reason}",
                frames.len(),
                read_in.load(Ordering::Relaxed),
                written.answers,
                written.requests
            );
        }
        if all_read {
            let messages = frames.iter().filter(|f| matches!(f, Frame::Message(_))).count();
            assert_eq!(
                read_in.load(Ordering::Relaxed),
                messages,
                "libacp closed on end of input without reading every frame"
            );
        }
        for (id, &sent) in &owed {
            let got = written.answers.get(&Some(id.clone())).copied().unwrap_or(0);
            assert!(got <= sent, "request {id} sent {sent} times was answered {got} times");
            if all_read {
                assert!(got >= 1, "request {id} was never answered ({reason})");
                if sent == 1 {
                    assert_eq!(got, 1, "request {id} was answered {got} times");
                }
            }
        }
        for (id, &got) in &written.answers {
            if let Some(id) = id.as_ref().filter(|id| **id != RequestId::Null) {
                assert!(
                    owed.contains_key(id),
                    "libacp answered {id}, which the peer never sent as a request ({got} answers)"
                );
            }
        }
    });
});

/// Each line as the peer writes it.
fn wire_frames(lines: &[Vec<u8>], framing: Framing) -> Vec<Vec<u8>> {
    lines
        .iter()
        .map(|line| {
            let mut out = Vec::new();
            match framing {
                Framing::Ndjson => {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
                Framing::ContentLength => encode_into(framing, line, &mut out),
            }
            out
        })
        .collect()
}
