//! The C ABI's text entry points with arbitrary bytes (non-UTF-8, invalid
//! JSON, NUL-containing, huge, NULL pointers): `acp_str_from_cstr`,
//! `acp_connection_request`/`_notify`/`_cancel_session`/`_session_snapshot`
//! on a client and an agent connection over socketpairs (each past
//! `initialize` and `session/new`, with a raw peer at the other end),
//! `acp_request_respond`/`_respond_error` on requests the raw peer sends,
//! `acp_call_cancel`, and the option setters. Called through the Rust
//! functions of the `libacp-ffi` crate, as C would call them.
//!
//! Invariants: no panic or abort (and never `ACP_ERR_PANIC`); every status
//! is one of the enum's; on `ACP_OK` the error out-param is untouched and a
//! required out-param is written, on failure the out-param is untouched
//! and the error is written, carries the same status and valid UTF-8, and
//! is freed.
#![no_main]

use std::cell::RefCell;
use std::ffi::c_char;
use std::io::{Read, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use acp::call::{acp_call, acp_call_cancel, acp_call_free};
use acp::connection::*;
use acp::error::*;
use acp::events::*;
use acp::options::*;
use acp::request::*;
use acp::status::acp_status;
use acp::string::{acp_str, acp_str_from_cstr};
use libfuzzer_sys::fuzz_target;

/// An out-param value no successful call would write.
fn sentinel<T>() -> *mut T {
    std::ptr::dangling_mut::<T>()
}

fn s(text: &str) -> acp_str {
    acp_str {
        ptr: text.as_ptr().cast(),
        len: text.len(),
    }
}

/// Checks a status and its error out-param, then frees the error.
fn check(what: &str, status: acp_status, error: *mut acp_error) -> acp_status {
    assert!(
        acp_status::from_i32(status as i32).is_some(),
        "{what}: status {}",
        status as i32
    );
    assert_ne!(
        status,
        acp_status::ACP_ERR_PANIC,
        "{what}: a panic was caught: {}",
        message(error)
    );
    if status == acp_status::ACP_OK {
        assert!(error.is_null(), "{what}: ACP_OK with an error written");
        return status;
    }
    assert!(!error.is_null(), "{what}: {status:?} without an error");
    // SAFETY: a live error from libacp.
    unsafe {
        assert_eq!(
            acp_error_status(error),
            status,
            "{what}: the error's status differs"
        );
        let _ = message(error);
        let mut ptr: *const c_char = sentinel();
        let mut len = usize::MAX;
        assert_eq!(
            acp_error_data(error, &mut ptr, &mut len),
            acp_status::ACP_OK
        );
        if !ptr.is_null() {
            let data = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
            serde_json::from_slice::<serde::de::IgnoredAny>(data)
                .unwrap_or_else(|e| panic!("{what}: error data is not JSON: {e}"));
        }
        acp_error_free(error);
    }
    status
}

fn message(error: *const acp_error) -> String {
    if error.is_null() {
        return String::new();
    }
    let mut ptr: *const c_char = sentinel();
    let mut len = usize::MAX;
    // SAFETY: a live error; valid out-params.
    unsafe {
        assert_eq!(
            acp_error_message(error, &mut ptr, &mut len),
            acp_status::ACP_OK
        );
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        std::str::from_utf8(bytes)
            .expect("an error message is UTF-8")
            .to_owned()
    }
}

/// What the raw peer needs of a frame libacp wrote: its `id` and `method`,
/// and whether it has a `result` or an `error` (`true`). The frame must be
/// a valid JSON-RPC message; its members are not read as values (the
/// host's JSON may hold numbers no f64 can carry, such as `1e848`).
fn summary(frame: &[u8]) -> serde_json::Value {
    if let Err(e) = libacp_core::message::decode(frame) {
        panic!(
            "libacp wrote an invalid message {:?}: {e:?}",
            String::from_utf8_lossy(frame)
        );
    }
    let members: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_slice(frame).expect("libacp writes a JSON object");
    let mut out = serde_json::Map::new();
    for key in ["id", "method"] {
        if let Some(raw) = members.get(key) {
            let value = serde_json::from_str(raw.get()).expect("ids and methods are plain");
            out.insert(key.into(), value);
        }
    }
    for key in ["result", "error"] {
        if members.contains_key(key) {
            out.insert(key.into(), true.into());
        }
    }
    out.into()
}

/// A raw peer end: reads NDJSON frames libacp writes.
struct RawPeer {
    sock: UnixStream,
    buf: Vec<u8>,
}

impl RawPeer {
    /// Frames available now (without waiting), or within `wait`.
    fn frames(&mut self, wait: Option<Duration>) -> Vec<serde_json::Value> {
        let deadline = wait.map(|w| Instant::now() + w);
        let mut out = Vec::new();
        loop {
            let mut chunk = [0u8; 65536];
            match self.sock.read(&mut chunk) {
                Ok(0) => {}
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("raw peer read: {e}"),
            }
            while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=nl).collect();
                out.push(summary(&line[..nl]));
            }
            match deadline {
                Some(d) if out.is_empty() && Instant::now() < d => {
                    std::thread::sleep(Duration::from_micros(100));
                }
                _ => return out,
            }
        }
    }

    fn send(&mut self, frame: &serde_json::Value) {
        let mut bytes = serde_json::to_vec(frame).expect("json");
        bytes.push(b'\n');
        let mut at = 0;
        while at < bytes.len() {
            match self.sock.write(&bytes[at..]) {
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Err(e) => panic!("raw peer write: {e}"),
            }
        }
    }

    /// Answers the requests among `frames`: `session/prompt` with a stop
    /// reason, anything else with an error.
    fn answer(&mut self, frames: &[serde_json::Value]) {
        for f in frames {
            if let (Some(id), Some(method)) =
                (f.get("id"), f.get("method").and_then(|m| m.as_str()))
            {
                let answer = if method == "session/prompt" {
                    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "end_turn"}})
                } else {
                    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
                };
                self.send(&answer);
            }
        }
    }
}

struct Conn {
    conn: *mut acp_connection,
    peer: RawPeer,
}

impl Conn {
    fn open(role: acp_role, session_model: bool) -> Conn {
        let (ours, theirs) = UnixStream::pair().expect("socketpair");
        theirs.set_nonblocking(true).expect("nonblocking");
        let mut options = std::ptr::null_mut();
        let mut conn = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        // SAFETY: valid out-params; the descriptor is given up.
        unsafe {
            assert_eq!(acp_options_new(&mut options), acp_status::ACP_OK);
            assert_eq!(
                acp_options_set_session_model(options, session_model),
                acp_status::ACP_OK
            );
            let fd = ours.into_raw_fd();
            let status =
                acp_connection_from_fds(options, role as i32, fd, fd, &mut conn, &mut error);
            assert_eq!(check("from_fds", status, error), acp_status::ACP_OK);
            acp_options_free(options);
        }
        Conn {
            conn,
            peer: RawPeer {
                sock: theirs,
                buf: Vec::new(),
            },
        }
    }

    /// The next event within a second (events are freed by the caller).
    fn event(&self, wait: Duration) -> Option<*mut acp_event> {
        let deadline = Instant::now() + wait;
        loop {
            let mut event = std::ptr::null_mut();
            // SAFETY: a live connection; a valid out-param.
            match unsafe { acp_connection_next_event(self.conn, &mut event) } {
                acp_status::ACP_OK => return Some(event),
                acp_status::ACP_ERR_EMPTY if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                _ => return None,
            }
        }
    }

    /// Frees every waiting event (requests among them are answered -32603
    /// by libacp) and answers what libacp asked the raw peer.
    fn drain(&mut self) {
        while let Some(event) = self.event(Duration::ZERO) {
            // SAFETY: an event from libacp, freed once.
            unsafe { acp_event_free(event) };
        }
        let frames = self.peer.frames(None);
        self.peer.answer(&frames);
    }

    /// Waits for the request event of `method` and takes its request;
    /// `None` if libacp answered request `id` itself (a refusal) first.
    fn take_request(&mut self, method: &str, id: &serde_json::Value) -> Option<*mut acp_request> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let frames = self.peer.frames(None);
            if frames
                .iter()
                .any(|f| f.get("id") == Some(id) && f.get("method").is_none())
            {
                return None;
            }
            self.peer.answer(&frames);
            let Some(event) = self.event(Duration::from_millis(1)) else {
                continue;
            };
            // SAFETY: a live event, freed once; valid out-params.
            unsafe {
                if acp_event_get_kind(event) == acp_event_kind::ACP_EVENT_REQUEST as i32 {
                    let (mut ptr, mut len) = (std::ptr::null(), 0);
                    assert_eq!(
                        acp_event_method(event, &mut ptr, &mut len),
                        acp_status::ACP_OK
                    );
                    if std::slice::from_raw_parts(ptr.cast::<u8>(), len) == method.as_bytes() {
                        let mut request = std::ptr::null_mut();
                        assert_eq!(
                            acp_event_take_request(event, &mut request),
                            acp_status::ACP_OK
                        );
                        acp_event_free(event);
                        return Some(request);
                    }
                }
                acp_event_free(event);
            }
        }
        panic!("no {method} request event and no answer from libacp");
    }

    fn request(&self, method: &str, params: &str) -> acp_status {
        let mut error = std::ptr::null_mut();
        // SAFETY: a live connection; valid strings and out-params.
        let status = unsafe {
            acp_connection_request(
                self.conn,
                s(method),
                s(params),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut error,
            )
        };
        check(method, status, error)
    }
}

struct World {
    client: Conn,
    agent: Conn,
    next_id: u64,
}

fn world() -> World {
    // Client: initialize and session/new answered by the raw peer.
    let mut client = Conn::open(acp_role::ACP_ROLE_CLIENT, true);
    for (method, params, result) in [
        (
            "initialize",
            r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}"#,
            serde_json::json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true, "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true}}}),
        ),
        (
            "session/new",
            r#"{"cwd":"/work","mcpServers":[]}"#,
            serde_json::json!({"sessionId": "s1"}),
        ),
    ] {
        assert_eq!(client.request(method, params), acp_status::ACP_OK);
        let frames = client.peer.frames(Some(Duration::from_secs(5)));
        let id = frames[0]["id"].clone();
        client
            .peer
            .send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}));
        let event = client
            .event(Duration::from_secs(5))
            .expect("a result event");
        // SAFETY: a live event, freed once.
        unsafe {
            assert_eq!(
                acp_event_get_kind(event),
                acp_event_kind::ACP_EVENT_RESULT as i32
            );
            assert_eq!(
                acp_event_result_status(event),
                acp_status::ACP_OK,
                "{method}"
            );
            acp_event_free(event);
        }
    }
    // Agent: the raw peer sends initialize and session/new; the host
    // answers them.
    let mut agent = Conn::open(acp_role::ACP_ROLE_AGENT, false);
    for (id, method, params, result) in [
        (
            "h1",
            "initialize",
            serde_json::json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}}),
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#,
        ),
        (
            "h2",
            "session/new",
            serde_json::json!({"cwd": "/work", "mcpServers": []}),
            r#"{"sessionId":"s1"}"#,
        ),
    ] {
        agent.peer.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        let request = agent
            .take_request(method, &serde_json::json!(id))
            .expect("the handshake reaches the host");
        let mut error = std::ptr::null_mut();
        // SAFETY: a live request, freed once; valid strings.
        unsafe {
            let status = acp_request_respond(request, s(result), &mut error);
            assert_eq!(check("respond", status, error), acp_status::ACP_OK);
            acp_request_free(request);
        }
        let frames = agent.peer.frames(Some(Duration::from_secs(5)));
        assert!(frames[0].get("result").is_some(), "{method}: {frames:?}");
    }
    World {
        client,
        agent,
        next_id: 0,
    }
}

/// Reads length-prefixed fields from the input.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }

    fn int(&mut self) -> u64 {
        (0..8).fold(0u64, |n, _| (n << 8) | u64::from(self.byte()))
    }

    /// A field: a length byte pair then the bytes (a length past the end
    /// takes the rest).
    fn bytes(&mut self) -> &'a [u8] {
        let len = (usize::from(self.byte()) << 8) | usize::from(self.byte());
        let len = len.min(self.0.len());
        let (field, rest) = self.0.split_at(len);
        self.0 = rest;
        field
    }
}

/// A text argument made from a field; the shape byte picks NULL/0, NULL
/// with a length (an error, never read), or a huge repetition.
fn text_arg(input: &mut Input<'_>, storage: &mut Vec<u8>) -> acp_str {
    let shape = input.byte();
    let field = input.bytes();
    match shape % 16 {
        0 => acp_str {
            ptr: std::ptr::null(),
            len: 0,
        },
        1 => acp_str {
            ptr: std::ptr::null(),
            len: field.len().max(1),
        },
        2 if !field.is_empty() => {
            // A large argument: the field repeated up to 1 MiB.
            let times = (1 << 20) / field.len();
            *storage = field.repeat(times.min(usize::from(input.byte()) * 64 + 1));
            acp_str {
                ptr: storage.as_ptr().cast(),
                len: storage.len(),
            }
        }
        _ => {
            *storage = field.to_vec();
            acp_str {
                ptr: storage.as_ptr().cast(),
                len: storage.len(),
            }
        }
    }
}

const PEER_REQUESTS: &[(&str, &str)] = &[
    (
        "session/prompt",
        r#"{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}"#,
    ),
    ("session/set_mode", r#"{"sessionId":"s1","modeId":"ask"}"#),
    ("session/new", r#"{"cwd":"/work","mcpServers":[]}"#),
    ("session/list", r#"{}"#),
    (
        "session/load",
        r#"{"sessionId":"s1","cwd":"/work","mcpServers":[]}"#,
    ),
    ("_fuzz/ext", r#"{"x":1}"#),
];

fn step(world: &mut World, input: &mut Input<'_>) {
    let op = input.byte();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut error = std::ptr::null_mut();
    let conn = if op & 0x80 == 0 {
        world.client.conn
    } else {
        world.agent.conn
    };
    // SAFETY: live connections, requests and options; every acp_str
    // points to `len` readable bytes or is NULL; valid out-params.
    unsafe {
        match op % 8 {
            0 => {
                let mut field = input.bytes().to_vec();
                let nul = field.iter().position(|&b| b == 0);
                field.push(0);
                let got = acp_str_from_cstr(field.as_ptr().cast());
                assert_eq!(got.ptr, field.as_ptr().cast());
                assert_eq!(got.len, nul.unwrap_or(field.len() - 1));
                let got = acp_str_from_cstr(std::ptr::null());
                assert!(got.ptr.is_null() && got.len == 0);
            }
            1 => {
                let (method, params) = (text_arg(input, &mut a), text_arg(input, &mut b));
                let mode = i32::from(input.byte() % 4) - 1;
                let want_call = input.byte() & 1 == 0;
                let mut call: *mut acp_call = sentinel();
                let out = if want_call {
                    &raw mut call
                } else {
                    std::ptr::null_mut()
                };
                let status = acp_connection_request(
                    conn,
                    method,
                    params,
                    std::ptr::null_mut(),
                    out,
                    &mut error,
                );
                let status = check("request", status, error);
                if want_call {
                    if status == acp_status::ACP_OK {
                        assert_ne!(call, sentinel(), "request: ACP_OK without the call written");
                        let cancelled = acp_call_cancel(call, mode);
                        assert!(acp_status::from_i32(cancelled as i32).is_some());
                        assert_ne!(cancelled, acp_status::ACP_ERR_PANIC);
                        acp_call_free(call);
                    } else {
                        assert_eq!(call, sentinel(), "request: a failure wrote the call");
                    }
                }
            }
            2 => {
                let (method, params) = (text_arg(input, &mut a), text_arg(input, &mut b));
                let status = acp_connection_notify(conn, method, params, &mut error);
                check("notify", status, error);
            }
            3 => {
                let id = text_arg(input, &mut a);
                let status = acp_connection_cancel_session(conn, id, &mut error);
                check("cancel_session", status, error);
            }
            4 => {
                let id = text_arg(input, &mut a);
                let mut out: *mut acp::string::acp_string = sentinel();
                let status = acp_connection_session_snapshot(conn, id, &mut out, &mut error);
                if check("session_snapshot", status, error) == acp_status::ACP_OK {
                    assert_ne!(out, sentinel());
                    let text = std::slice::from_raw_parts(
                        acp::string::acp_string_ptr(out).cast::<u8>(),
                        acp::string::acp_string_len(out),
                    );
                    serde_json::from_slice::<serde::de::IgnoredAny>(text)
                        .expect("a snapshot is JSON");
                    acp::string::acp_string_free(out);
                } else {
                    assert_eq!(out, sentinel(), "session_snapshot: a failure wrote out");
                }
            }
            5 | 6 => {
                // The raw peer asks the agent something; the host answers
                // with the fuzz text.
                let (method, params) =
                    PEER_REQUESTS[usize::from(input.byte()) % PEER_REQUESTS.len()];
                world.next_id += 1;
                let agent = &mut world.agent;
                agent.peer.send(&serde_json::json!({
                    "jsonrpc": "2.0", "id": world.next_id, "method": method,
                    "params": serde_json::from_str::<serde_json::Value>(params).expect("json"),
                }));
                let Some(request) = agent.take_request(method, &serde_json::json!(world.next_id))
                else {
                    return; // refused by libacp (as it should be: the rules hold)
                };
                let status = if op % 8 == 5 {
                    let result = text_arg(input, &mut a);
                    acp_request_respond(request, result, &mut error)
                } else {
                    let code = input.int() as i64;
                    let (message, data) = (text_arg(input, &mut a), text_arg(input, &mut b));
                    acp_request_respond_error(request, code, message, data, &mut error)
                };
                let first = check("respond", status, error);
                let mut error = std::ptr::null_mut();
                let again = acp_request_respond(request, s("{}"), &mut error);
                let again = check("respond again", again, error);
                if first == acp_status::ACP_OK {
                    assert_eq!(again, acp_status::ACP_ERR_ALREADY_ANSWERED);
                }
                acp_request_free(request);
                // Exactly one answer reaches the peer, and it is valid.
                let mut answers = Vec::new();
                let deadline = Instant::now() + Duration::from_secs(5);
                while answers.is_empty() && Instant::now() < deadline {
                    let frames = agent.peer.frames(Some(Duration::from_millis(100)));
                    agent.peer.answer(&frames);
                    for f in frames {
                        if f.get("id") == Some(&serde_json::json!(world.next_id))
                            && f.get("method").is_none()
                        {
                            answers.push(f);
                        }
                    }
                }
                assert_eq!(answers.len(), 1, "answers to {method}: {answers:?}");
            }
            _ => {
                let mut options = std::ptr::null_mut();
                assert_eq!(acp_options_new(&mut options), acp_status::ACP_OK);
                let n = input.int();
                for status in [
                    acp_options_set_framing(options, n as i32),
                    acp_options_set_max_frame_size(options, n as usize),
                    acp_options_set_request_timeout_ms(options, n),
                    acp_options_set_shutdown_grace_ms(options, n, n >> 1),
                    acp_options_set_event_queue_capacity(options, n as usize),
                    acp_options_set_framing(std::ptr::null_mut(), 0),
                ] {
                    assert!(acp_status::from_i32(status as i32).is_some());
                    assert_ne!(status, acp_status::ACP_ERR_PANIC);
                }
                acp_options_free(options);
            }
        }
    }
}

thread_local! {
    static WORLD: RefCell<Option<World>> = const { RefCell::new(None) };
}

fuzz_target!(|data: &[u8]| {
    WORLD.with(|w| {
        let mut w = w.borrow_mut();
        let world = w.get_or_insert_with(world);
        let mut input = Input(data);
        for _ in 0..8 {
            if input.0.is_empty() {
                break;
            }
            step(world, &mut input);
        }
        world.client.drain();
        world.agent.drain();
    });
});
