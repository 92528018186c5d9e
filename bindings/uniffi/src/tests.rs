//! The binding's own machinery, driven from Rust with a recording
//! [`HostHandler`] and a scripted peer on the other end of a socket pair:
//! requests answered through [`Connection::respond`], their cancellation
//! told once and after `on_request`, and calls started with
//! [`Connection::start_call`] ending exactly once (result, error, abandon,
//! close). Kotlin and Swift run the shared scenarios over the same paths.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::options::{AcpRole, ConnectOptions, EngineEvent, WireDirection};
use crate::{AcpError, Connection, HostHandler, IncomingRequest, Notification, socket_pair};

/// A hang detector, far above any expected wait.
const PATIENCE: Duration = Duration::from_secs(60);

#[derive(Debug)]
enum Event {
    Request(IncomingRequest),
    Cancel(u64),
    Result(u64, String),
    Error(u64, AcpError),
}

/// What the trace and the engine's events handed over.
#[derive(Debug, Clone, PartialEq)]
enum Wire {
    Frame(WireDirection, String),
    Engine(EngineEvent),
}

struct Recorder {
    events: Mutex<Sender<Event>>,
    wire: Arc<Mutex<Vec<Wire>>>,
    /// When set, `on_request` waits for a message on it before returning.
    hold: Mutex<Option<Receiver<()>>>,
}

impl Recorder {
    fn send(&self, event: Event) {
        let _ = self.events.lock().expect("events").send(event);
    }
}

#[async_trait::async_trait]
impl HostHandler for Recorder {
    fn on_request(&self, request: IncomingRequest) -> Result<(), AcpError> {
        self.send(Event::Request(request));
        if let Some(hold) = self.hold.lock().expect("hold").take() {
            // This runs on a libacp runtime worker (the inbox task): held
            // there plainly, the tasks queued on that worker (its LIFO
            // slot, which the other worker cannot steal) waited with it,
            // among them this connection's reader and other tests' tasks,
            // until the hold timed out (1 run in 4 failed so). Handing the
            // worker's queue to another thread first lets them run.
            tokio::task::block_in_place(|| {
                let _ = hold.recv_timeout(PATIENCE);
            });
        }
        Ok(())
    }

    async fn on_notifications(&self, _batch: Vec<Notification>) -> Result<(), AcpError> {
        Ok(())
    }

    fn on_cancel(&self, key: u64) -> Result<(), AcpError> {
        self.send(Event::Cancel(key));
        Ok(())
    }

    fn on_call_result(&self, token: u64, result: String) -> Result<(), AcpError> {
        self.send(Event::Result(token, result));
        Ok(())
    }

    fn on_call_error(&self, token: u64, error: AcpError) -> Result<(), AcpError> {
        self.send(Event::Error(token, error));
        Ok(())
    }

    fn on_stderr(&self, _line: String) -> Result<(), AcpError> {
        Ok(())
    }

    fn on_frame(&self, direction: WireDirection, frame: String) -> Result<(), AcpError> {
        self.wire
            .lock()
            .expect("wire")
            .push(Wire::Frame(direction, frame));
        Ok(())
    }

    fn on_engine_event(&self, event: EngineEvent) -> Result<(), AcpError> {
        self.wire.lock().expect("wire").push(Wire::Engine(event));
        Ok(())
    }
}

struct Peer {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Peer {
    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.reader
            .read_line(&mut line)
            .expect("the peer reads a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    fn write(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .expect("the peer writes");
    }
}

struct Pair {
    conn: Arc<Connection>,
    wire: Arc<Mutex<Vec<Wire>>>,
    peer: Peer,
    events: Receiver<Event>,
    hold: Option<Sender<()>>,
}

impl Pair {
    /// A client connection, initialized, and its scripted agent.
    fn client(hold_first_request: bool) -> Self {
        Self::client_with(hold_first_request, ConnectOptions::default())
    }

    fn client_with(hold_first_request: bool, options: ConnectOptions) -> Self {
        let fds = socket_pair().expect("socket pair");
        let (tx, events) = channel();
        let (hold_tx, hold_rx) = channel();
        let wire = Arc::new(Mutex::new(Vec::new()));
        let recorder = Arc::new(Recorder {
            events: Mutex::new(tx),
            wire: Arc::clone(&wire),
            hold: Mutex::new(hold_first_request.then_some(hold_rx)),
        });
        let conn = Connection::from_fds(AcpRole::Client, fds[0], fds[0], recorder, options)
            .expect("connection");
        // SAFETY: the other end of the pair, ours to own.
        let stream = unsafe { UnixStream::from_raw_fd(fds[1]) };
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let peer = Peer {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        };
        let mut pair = Self {
            conn,
            wire,
            peer,
            events,
            hold: hold_first_request.then_some(hold_tx),
        };
        pair.start(1, "initialize", json!({"protocolVersion": 1}));
        let init = pair.peer.read();
        assert_eq!(init["method"], "initialize");
        pair.peer.write(&json!({"jsonrpc": "2.0", "id": init["id"],
            "result": {"protocolVersion": 1, "agentCapabilities": {}}}));
        match pair.next() {
            Event::Result(1, text) => assert!(text.contains("protocolVersion"), "{text}"),
            other => panic!("expected initialize's result, got {other:?}"),
        }
        pair
    }

    fn start(&self, token: u64, method: &str, params: Value) {
        self.conn
            .start_call(
                method.into(),
                Some(params.to_string()),
                token,
                0,
                false,
                false,
            )
            .expect("the call starts");
    }

    fn next(&self) -> Event {
        self.events.recv_timeout(PATIENCE).expect("an event")
    }

    fn request(&mut self, id: u64, method: &str) -> u64 {
        self.peer
            .write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        match self.next() {
            Event::Request(r) => {
                assert_eq!(
                    (r.id.as_str(), r.method.as_str()),
                    (&*id.to_string(), method)
                );
                r.key
            }
            other => panic!("expected the request, got {other:?}"),
        }
    }
}

#[test]
fn a_started_call_ends_once_with_its_result_or_its_error() {
    let mut pair = Pair::client(false);
    pair.start(2, "_echo", json!({"x": 1}));
    let sent = pair.peer.read();
    assert_eq!(sent["params"], json!({"x": 1}));
    pair.start(3, "_fail", json!({}));
    let failing = pair.peer.read();
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": failing["id"],
        "error": {"code": -32001, "message": "nope", "data": {"why": 1}}}));
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"y": 2}}));
    match pair.next() {
        Event::Error(3, AcpError::Rpc { code, data, .. }) => {
            assert_eq!((code, data.as_deref()), (-32001, Some(r#"{"why":1}"#)));
        }
        other => panic!("expected call 3's error, got {other:?}"),
    }
    match pair.next() {
        Event::Result(2, text) => assert_eq!(
            serde_json::from_str::<Value>(&text).ok(),
            Some(json!({"y": 2}))
        ),
        other => panic!("expected call 2's result, got {other:?}"),
    }
}

#[test]
fn a_refused_call_throws_and_is_never_told_and_a_token_in_flight_is_refused() {
    let mut pair = Pair::client(false);
    let refused = pair.conn.start_call(
        "session/prompt".into(),
        Some(json!({"sessionId": "nope", "prompt": []}).to_string()),
        2,
        0,
        false,
        false,
    );
    assert!(
        matches!(refused, Err(AcpError::Refused { .. })),
        "{refused:?}"
    );
    // The token is free again; in flight, it is refused.
    pair.start(2, "_a", json!({}));
    let again = pair.conn.start_call("_b".into(), None, 2, 0, false, false);
    assert!(
        matches!(again, Err(AcpError::InvalidArgument { .. })),
        "{again:?}"
    );
    let sent = pair.peer.read();
    assert_eq!(sent["method"], "_a");
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": null}));
    // The first event is call 2's one result: nothing for the refusals.
    match pair.next() {
        Event::Result(2, text) => assert_eq!(text, "null"),
        other => panic!("expected call 2's result, got {other:?}"),
    }
}

#[test]
fn an_abandoned_call_ends_cancelled_and_the_peer_is_told() {
    let mut pair = Pair::client(false);
    pair.start(2, "_slow", json!({}));
    let sent = pair.peer.read();
    assert!(pair.conn.abandon_call(2));
    match pair.next() {
        Event::Error(2, AcpError::Cancelled { .. }) => {}
        other => panic!("expected call 2 cancelled, got {other:?}"),
    }
    let cancel = pair.peer.read();
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], sent["id"]);
    // Ended: abandoning again does nothing, and a late answer is dropped.
    assert!(!pair.conn.abandon_call(2));
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
    pair.start(3, "_next", json!({}));
    let next = pair.peer.read();
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": next["id"], "result": 3}));
    match pair.next() {
        Event::Result(3, text) => assert_eq!(text, "3"),
        other => panic!("expected only call 3's result, got {other:?}"),
    }
}

#[test]
fn calls_in_flight_end_with_closed_when_the_peer_goes_away() {
    let mut pair = Pair::client(false);
    pair.start(2, "_a", json!({}));
    pair.start(3, "_b", json!({}));
    pair.peer.read();
    pair.peer.read();
    drop(pair.peer);
    let mut ended = Vec::new();
    for _ in 0..2 {
        match pair.events.recv_timeout(PATIENCE).expect("an event") {
            Event::Error(token, AcpError::Closed { .. }) => ended.push(token),
            other => panic!("expected Closed, got {other:?}"),
        }
    }
    ended.sort_unstable();
    assert_eq!(ended, [2, 3]);
    let late = pair.conn.start_call("_c".into(), None, 4, 0, false, false);
    assert!(matches!(late, Err(AcpError::Closed { .. })), "{late:?}");
}

#[test]
fn a_request_is_answered_once_through_respond() {
    let mut pair = Pair::client(false);
    let key = pair.request(7, "_ask");
    assert!(pair.conn.respond(key, r#"{"ok":true}"#.into()));
    let answer = pair.peer.read();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"ok": true}})
    );
    assert!(
        !pair.conn.respond(key, "{}".into()),
        "a second answer is refused"
    );
    let key = pair.request(8, "_ask");
    assert!(pair.conn.respond(key, "not json".into()));
    assert_eq!(pair.peer.read()["error"]["code"], -32603);
    // An Rpc error is the answer as it is; any other kind is a local
    // failure: -32603 with its text, never -32602 (issue 24 item 5).
    let key = pair.request(9, "_ask");
    assert!(pair.conn.respond_error(
        key,
        AcpError::Rpc {
            code: -32602,
            detail: "Invalid params".into(),
            data: Some(r#""bad""#.into()),
        }
    ));
    let error = &pair.peer.read()["error"];
    assert_eq!(
        *error,
        json!({"code": -32602, "message": "Invalid params", "data": "bad"})
    );
    let key = pair.request(10, "_ask");
    assert!(pair.conn.respond_error(
        key,
        AcpError::InvalidParams {
            detail: "bad".into()
        }
    ));
    let error = &pair.peer.read()["error"];
    assert_eq!(
        *error,
        json!({"code": -32603, "message": "Internal error", "data": "invalid params: bad"})
    );
}

#[test]
fn a_cancelled_request_is_told_once_and_its_late_answer_dropped() {
    let mut pair = Pair::client(false);
    let key = pair.request(7, "_ask");
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "method": "$/cancel_request",
        "params": {"requestId": 7}}));
    match pair.next() {
        Event::Cancel(k) => assert_eq!(k, key),
        other => panic!("expected the cancellation, got {other:?}"),
    }
    assert_eq!(pair.peer.read()["error"]["code"], -32800);
    assert!(
        !pair.conn.respond(key, "{}".into()),
        "the engine answered it"
    );
}

#[test]
fn a_cancellation_before_on_request_returned_is_told_after_it() {
    let mut pair = Pair::client(true);
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": 7, "method": "_ask", "params": {}}));
    let key = match pair.next() {
        Event::Request(r) => r.key,
        other => panic!("expected the request, got {other:?}"),
    };
    // on_request is still running: the cancellation is answered by the
    // engine meanwhile, and told once on_request returns.
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "method": "$/cancel_request",
        "params": {"requestId": 7}}));
    assert_eq!(pair.peer.read()["error"]["code"], -32800);
    pair.hold
        .take()
        .expect("held")
        .send(())
        .expect("release on_request");
    match pair.next() {
        Event::Cancel(k) => assert_eq!(k, key),
        other => panic!("expected the cancellation, got {other:?}"),
    }
    assert!(!pair.conn.respond(key, "{}".into()));
}

#[test]
fn a_started_call_times_out_with_its_own_timeout() {
    let mut pair = Pair::client(false);
    pair.conn
        .start_call("_slow".into(), None, 2, 50, false, false)
        .expect("the call starts");
    let sent = pair.peer.read();
    match pair.next() {
        Event::Error(2, AcpError::Timeout { .. }) => {}
        other => panic!("expected call 2 to time out, got {other:?}"),
    }
    let cancel = pair.peer.read();
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], sent["id"]);
    let both = pair.conn.start_call("_x".into(), None, 3, 50, true, false);
    assert!(
        matches!(both, Err(AcpError::InvalidArgument { .. })),
        "{both:?}"
    );
}

#[test]
fn the_trace_and_the_engine_events_reach_the_host_only_when_asked() {
    let mut pair = Pair::client_with(
        false,
        ConnectOptions {
            trace: Some(true),
            events: Some(true),
            ..ConnectOptions::default()
        },
    );
    // A response to no request: read (traced), then reported.
    pair.peer
        .write(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    let deadline = std::time::Instant::now() + PATIENCE;
    let wire = loop {
        let wire = pair.wire.lock().expect("wire").clone();
        if wire.iter().any(|w| matches!(w, Wire::Engine(_))) {
            break wire;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "hang: no engine event in {wire:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let frames: Vec<(WireDirection, Value)> = wire
        .iter()
        .filter_map(|w| match w {
            Wire::Frame(d, text) => Some((*d, serde_json::from_str(text).expect("a JSON frame"))),
            Wire::Engine(_) => None,
        })
        .collect();
    assert_eq!(
        frames.len(),
        3,
        "initialize, its answer, the stray answer: {frames:?}"
    );
    assert_eq!(
        (frames[0].0, &frames[0].1["method"]),
        (WireDirection::Outgoing, &json!("initialize"))
    );
    assert_eq!(frames[1].0, WireDirection::Incoming);
    assert_eq!(frames[1].1["result"]["protocolVersion"], 1);
    assert_eq!(
        (frames[2].0, &frames[2].1["id"]),
        (WireDirection::Incoming, &json!(99))
    );
    let Some(Wire::Engine(event)) = wire.iter().find(|w| matches!(w, Wire::Engine(_))) else {
        unreachable!("found above");
    };
    assert_eq!(event.kind, "unmatched_response", "{event:?}");
    let details: Value = serde_json::from_str(&event.details).expect("details are JSON");
    assert_eq!(details["id"], 99, "{event:?}");

    // Without the options, neither reaches the host.
    let mut quiet = Pair::client(false);
    quiet
        .peer
        .write(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    quiet.start(2, "_echo", json!({}));
    let sent = quiet.peer.read();
    quiet
        .peer
        .write(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
    assert!(matches!(quiet.next(), Event::Result(2, _)));
    assert!(quiet.wire.lock().expect("wire").is_empty());
}

/// Hands every remote connection to a new [`Recorder`] (events to `tx`).
struct Factory {
    tx: Mutex<Sender<Event>>,
    started: Mutex<Vec<Arc<Connection>>>,
}

impl crate::RemoteAgentFactory for Factory {
    fn on_connection(&self, incoming: Arc<crate::IncomingConnection>) -> Result<(), AcpError> {
        assert!(matches!(incoming.kind().as_str(), "websocket" | "http"));
        assert!(incoming.remote_address().starts_with("127.0.0.1:"));
        let recorder = Arc::new(Recorder {
            events: Mutex::new(self.tx.lock().expect("tx").clone()),
            wire: Arc::default(),
            hold: Mutex::new(None),
        });
        let conn = incoming.start(recorder)?;
        // Started once only.
        let again = incoming.start(Arc::new(Recorder {
            events: Mutex::new(self.tx.lock().expect("tx").clone()),
            wire: Arc::default(),
            hold: Mutex::new(None),
        }));
        assert!(matches!(again, Err(AcpError::InvalidArgument { .. })));
        self.started.lock().expect("started").push(conn);
        Ok(())
    }
}

/// Drives a UniFFI future on a plain thread (what Kotlin and Swift do with
/// their own executors).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a test executor")
        .block_on(f)
}

#[test]
fn a_remote_client_reaches_a_served_agent_over_both_transports() {
    let (tx, agent_events) = channel();
    let factory = Arc::new(Factory {
        tx: Mutex::new(tx),
        started: Mutex::default(),
    });
    let server = block_on(crate::remote_serve(
        "127.0.0.1:0".into(),
        Arc::clone(&factory) as _,
        ConnectOptions::default(),
    ))
    .expect("serves");
    for kind in ["websocket", "http"] {
        let (tx, events) = channel();
        let recorder = Arc::new(Recorder {
            events: Mutex::new(tx),
            wire: Arc::default(),
            hold: Mutex::new(None),
        });
        let url = server.url(kind.into()).expect("url");
        let client = block_on(crate::remote_connect(
            url,
            recorder,
            ConnectOptions::default(),
        ))
        .expect("connects");
        client
            .start_call(
                "initialize".into(),
                Some(json!({"protocolVersion": 1}).to_string()),
                7,
                0,
                false,
                false,
            )
            .expect("starts");
        // The agent's host gets initialize, answers through respond.
        let key = match agent_events.recv_timeout(PATIENCE).expect("a request") {
            Event::Request(r) => {
                assert_eq!(r.method, "initialize");
                r.key
            }
            other => panic!("expected initialize, got {other:?}"),
        };
        let agent = factory.started.lock().expect("started").last().cloned();
        let agent = agent.expect("an agent connection");
        assert!(agent.respond(key, json!({"protocolVersion": 1}).to_string()));
        match events.recv_timeout(PATIENCE).expect("the result") {
            Event::Result(7, text) => assert!(text.contains("protocolVersion"), "{text}"),
            other => panic!("expected the result, got {other:?}"),
        }
        assert_eq!(client.protocol_version(), Some(1));
        block_on(client.shutdown());
    }
    assert!(matches!(
        server.url("carrier-pigeon".into()),
        Err(AcpError::InvalidArgument { .. })
    ));
    block_on(server.shutdown());
    assert_eq!(server.connections(), 0);
    server.close();
}

#[test]
fn remote_options_and_failures_are_typed() {
    let recorder = || {
        Arc::new(Recorder {
            events: Mutex::new(channel().0),
            wire: Arc::default(),
            hold: Mutex::new(None),
        })
    };
    // A server option on a client: refused by the core's table, by name.
    let refused = block_on(crate::remote_connect(
        "ws://127.0.0.1:1/acp".into(),
        recorder(),
        ConnectOptions {
            bearer_tokens: Some(vec!["t".into()]),
            ..ConnectOptions::default()
        },
    ));
    match refused {
        Err(AcpError::InvalidArgument { detail }) => assert!(detail.contains("bearer_tokens")),
        other => panic!("{other:?}"),
    }
    // A value out of range.
    let zero = Connection::from_fds(
        AcpRole::Client,
        -1,
        -1,
        recorder(),
        ConnectOptions {
            max_frame_size: Some(0),
            ..ConnectOptions::default()
        },
    );
    match zero {
        Err(AcpError::InvalidArgument { detail }) => assert!(detail.contains("max_frame_size")),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // Nobody listens on port 1 of loopback.
    match block_on(crate::remote_connect(
        "ws://127.0.0.1:1/acp".into(),
        recorder(),
        ConnectOptions::default(),
    )) {
        Err(AcpError::Remote { kind, .. }) => assert_eq!(kind, "refused"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn a_listen_address_that_does_not_parse_or_is_taken_is_typed() {
    let factory = || {
        Arc::new(Factory {
            tx: Mutex::new(channel().0),
            started: Mutex::default(),
        }) as Arc<dyn crate::RemoteAgentFactory>
    };
    let unparsed = block_on(crate::remote_serve(
        "no port here".into(),
        factory(),
        ConnectOptions::default(),
    ));
    assert!(
        matches!(unparsed, Err(AcpError::InvalidArgument { .. })),
        "{:?}",
        unparsed.map(|_| ())
    );
    let taken = block_on(crate::remote_serve(
        "127.0.0.1:0".into(),
        factory(),
        ConnectOptions::default(),
    ))
    .expect("serves");
    let again = block_on(crate::remote_serve(
        format!("127.0.0.1:{}", taken.port()),
        factory(),
        ConnectOptions::default(),
    ));
    match again {
        Err(AcpError::Remote { kind, .. }) => assert_eq!(kind, "io"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    taken.close();
}

#[test]
fn protocol_methods_name_each_rows_kind_and_unstable_feature() {
    let row = |side, name: &str| -> Vec<crate::ProtocolMethod> {
        crate::protocol_methods(side)
            .into_iter()
            .filter(|m| m.name == name)
            .collect()
    };
    let prompt = row(AcpRole::Agent, "session/prompt");
    assert_eq!(prompt.len(), 1);
    assert!(!prompt[0].notification && prompt[0].feature.is_none());
    let fork = row(AcpRole::Agent, "session/fork");
    assert_eq!(fork[0].feature.as_deref(), Some("unstable_session_fork"));
    // mcp/message: a request the client handles, a notification the agent handles.
    let to_client = row(AcpRole::Client, "mcp/message");
    let to_agent = row(AcpRole::Agent, "mcp/message");
    assert_eq!((to_client.len(), to_agent.len()), (1, 1));
    assert!(!to_client[0].notification && to_agent[0].notification);
    assert_eq!(
        to_agent[0].feature.as_deref(),
        Some("unstable_mcp_over_acp")
    );
    let update = row(AcpRole::Client, "auth/status_update");
    assert!(update[0].notification);
    assert!(row(AcpRole::Client, "session/fork").is_empty());
    // The proxy chain: a proxy (agent) handles proxy/initialize and
    // proxy/successor of both kinds, a conductor (client) proxy/successor.
    let kinds = |rows: Vec<crate::ProtocolMethod>| -> Vec<(bool, Option<String>)> {
        rows.into_iter()
            .map(|m| (m.notification, m.feature))
            .collect()
    };
    let feature = || Some("unstable_proxy_chains".to_owned());
    assert_eq!(
        kinds(row(AcpRole::Agent, "proxy/initialize")),
        [(false, feature())]
    );
    assert!(row(AcpRole::Client, "proxy/initialize").is_empty());
    for side in [AcpRole::Agent, AcpRole::Client] {
        assert_eq!(
            kinds(row(side, "proxy/successor")),
            [(false, feature()), (true, feature())]
        );
    }
}
