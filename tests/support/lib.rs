//! Shared helpers for the integration tests: a scripted raw peer that speaks
//! bytes on the other end of a connection, event collection, timeouts.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::{
    Connection, ConnectionOptions, Event, Handler, IncomingRequest, Responder, Transport,
};
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf,
    WriteHalf,
};

/// Default bound on every await in the tests: a hang detector, far above
/// what anything takes on a debug build while other work keeps both cores
/// busy (so a slow machine never fails a test; a hang still does).
pub const LIMIT: Duration = Duration::from_secs(120);

/// Awaits `f`, panicking with `what` if it takes longer than [`LIMIT`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

/// Whether `f` is still pending after `wait`.
pub async fn still_pending<F: Future>(f: F, wait: Duration) -> bool {
    tokio::time::timeout(wait, f).await.is_err()
}

/// The far end of a connection, driven by hand: write raw lines, read frames.
pub struct RawPeer<R = ReadHalf<DuplexStream>, W = WriteHalf<DuplexStream>> {
    reader: BufReader<R>,
    writer: Option<W>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> RawPeer<R, W> {
    /// Writes bytes as they are (add the newline yourself).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.writer.as_mut().expect("writer open");
        w.write_all(bytes).await.expect("write to connection");
        w.flush().await.expect("flush");
    }

    /// Writes one JSON value as an NDJSON line.
    pub async fn send(&mut self, value: Value) {
        let mut line = serde_json::to_vec(&value).expect("json");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Reads the next NDJSON line as JSON; `None` at end of stream.
    pub async fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = within("raw peer read", self.reader.read_line(&mut line))
            .await
            .expect("read");
        if n == 0 {
            return None;
        }
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")))
    }

    /// Reads the next frame, which must exist.
    pub async fn expect(&mut self) -> Value {
        self.recv().await.expect("a frame, not end of stream")
    }

    /// Closes the write half: the connection sees end of stream.
    pub async fn close_write(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let _ = w.shutdown().await;
        }
    }

    /// Splits into halves for tests that read and write concurrently.
    pub fn into_parts(self) -> (BufReader<R>, Option<W>) {
        (self.reader, self.writer)
    }
}

/// The far end of a connection over a Unix socket pair.
pub type SocketPeer = RawPeer<tokio::net::unix::OwnedReadHalf, tokio::net::unix::OwnedWriteHalf>;

impl SocketPeer {
    /// The peer over one end of a socket pair.
    pub fn from_stream(stream: tokio::net::UnixStream) -> Self {
        let (r, w) = stream.into_split();
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        }
    }
}

/// A connection with `handler` over a Unix socket pair: a descriptor
/// transport (`Transport::from_socket`), so answers and requests are
/// written directly by the sending thread when the writer is idle.
pub fn connect_socket(
    handler: impl Handler,
    options: ConnectionOptions,
) -> (Connection, SocketPeer) {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    let transport = Transport::from_socket(ours.into()).expect("socket transport");
    let conn = Connection::start(transport, handler, options);
    theirs.set_nonblocking(true).expect("nonblocking");
    let theirs = tokio::net::UnixStream::from_std(theirs).expect("tokio socket");
    let (r, w) = theirs.into_split();
    (
        conn,
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
    )
}

/// A connection with `handler` and a [`RawPeer`] on the other end of an
/// in-memory pipe of `capacity` bytes per direction.
pub fn connect_raw_with_capacity(
    handler: impl Handler,
    options: ConnectionOptions,
    capacity: usize,
) -> (Connection, RawPeer) {
    let (ours, theirs) = tokio::io::duplex(capacity);
    let conn = Connection::start(Transport::from_stream(ours), handler, options);
    let (r, w) = tokio::io::split(theirs);
    (
        conn,
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
    )
}

/// [`connect_raw_with_capacity`] with a 64 KiB pipe.
pub fn connect_raw(handler: impl Handler, options: ConnectionOptions) -> (Connection, RawPeer) {
    connect_raw_with_capacity(handler, options, 64 * 1024)
}

/// Two libacp connections talking to each other in memory.
pub fn connect_pair(
    a: impl Handler,
    a_options: ConnectionOptions,
    b: impl Handler,
    b_options: ConnectionOptions,
) -> (Connection, Connection) {
    let (ta, tb) = Transport::memory_pair();
    (
        Connection::start(ta, a, a_options),
        Connection::start(tb, b, b_options),
    )
}

/// Collects a connection's events as text, for assertions.
#[derive(Clone, Default)]
pub struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    /// Options with this collector installed as the event hook.
    pub fn options(&self) -> ConnectionOptions {
        let sink = self.0.clone();
        ConnectionOptions {
            events: Some(Arc::new(move |e: &Event| {
                sink.lock().expect("events").push(format!("{e:?}"));
            })),
            ..ConnectionOptions::default()
        }
    }

    /// The events seen so far.
    pub fn seen(&self) -> Vec<String> {
        self.0.lock().expect("events").clone()
    }

    /// Waits until an event containing `needle` was seen.
    pub async fn wait_for(&self, needle: &str) -> String {
        within(&format!("event {needle}"), async {
            loop {
                if let Some(e) = self.seen().into_iter().find(|e| e.contains(needle)) {
                    return e;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
    }
}

/// Parses a raw result into a JSON value.
pub fn value(raw: &libacp_core::RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("json")
}

/// A raw JSON value from a `serde_json::Value`.
pub fn raw(v: Value) -> Box<libacp_core::RawValue> {
    serde_json::value::to_raw_value(&v).expect("json")
}

/// A handler that parks every request with its responder, so a test can
/// answer (or not) when it chooses.
#[derive(Clone, Default)]
pub struct Parked(Arc<Mutex<Vec<(IncomingRequest, Responder)>>>);

impl Handler for Parked {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        self.0.lock().expect("parked").push((request, responder));
    }
}

impl Parked {
    /// Waits for the most recent parked request.
    pub async fn take(&self) -> (IncomingRequest, Responder) {
        within("a parked request", async {
            loop {
                if let Some(r) = self.0.lock().expect("parked").pop() {
                    return r;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
    }
}

/// A client and an agent [`libacp_core::AcpConnection`] talking in memory.
pub fn acp_pair(
    client: impl Handler,
    agent: impl Handler,
    agent_options: libacp_core::AcpOptions,
) -> (libacp_core::AcpConnection, libacp_core::AcpConnection) {
    use libacp_core::{AcpConnection, AcpOptions, Role};
    let (tc, ta) = Transport::memory_pair();
    (
        AcpConnection::start(Role::Client, tc, client, AcpOptions::default()),
        AcpConnection::start(Role::Agent, ta, agent, agent_options),
    )
}

/// An ACP agent connection with a [`RawPeer`] playing the client.
pub fn acp_agent_raw(
    agent: impl Handler,
    options: libacp_core::AcpOptions,
) -> (libacp_core::AcpConnection, RawPeer) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let conn = libacp_core::AcpConnection::start(
        libacp_core::Role::Agent,
        Transport::from_stream(ours),
        agent,
        options,
    );
    let (r, w) = tokio::io::split(theirs);
    (
        conn,
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
    )
}

/// An ACP client connection with a [`RawPeer`] playing the agent.
pub fn acp_client_raw(client: impl Handler) -> (libacp_core::AcpConnection, RawPeer) {
    acp_client_raw_with(client, libacp_core::AcpOptions::default())
}

/// [`acp_client_raw`] with options.
pub fn acp_client_raw_with(
    client: impl Handler,
    options: libacp_core::AcpOptions,
) -> (libacp_core::AcpConnection, RawPeer) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let conn = libacp_core::AcpConnection::start(
        libacp_core::Role::Client,
        Transport::from_stream(ours),
        client,
        options,
    );
    let (r, w) = tokio::io::split(theirs);
    (
        conn,
        RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
    )
}

/// A small scripted agent for protocol tests, on the dynamic API.
///
/// * `initialize` answers with `caps` as `agentCapabilities` (and
///   `authMethods: [{"id":"key","name":"Key"}]`);
/// * `session/new` answers `{"sessionId": "s<N>"}`;
/// * `session/load` replays two updates, then answers `{}`;
/// * `authenticate`, `session/close`, `session/set_mode` answer `{}`;
/// * `session/prompt`: text `wait` waits for cancellation and then answers
///   with an *error* (the core must still answer `cancelled`); `permission`
///   asks the client for permission and answers with the outcome in
///   `_meta`; anything else answers `end_turn`.
pub fn scripted_agent(caps: serde_json::Value) -> libacp_core::FnHandler {
    use libacp_core::{AcpPeer, RpcError};
    use serde_json::json;
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    libacp_core::FnHandler::new().on_request(move |req| {
        let caps = caps.clone();
        let counter = counter.clone();
        async move {
            let acp = AcpPeer::of(&req.peer).expect("an ACP connection");
            let params: Value = req.params_as().unwrap_or(Value::Null);
            match req.method.as_str() {
                "initialize" => Ok(json!({
                    "protocolVersion": 1,
                    "agentCapabilities": caps,
                    "authMethods": [{"id": "key", "name": "Key"}],
                })),
                "session/new" => {
                    let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok(json!({ "sessionId": format!("s{n}") }))
                }
                "session/load" => {
                    for text in ["earlier question", "earlier answer"] {
                        acp.notify_json(
                            "session/update",
                            &json!({"sessionId": params["sessionId"], "update": {
                                "sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": text}}}),
                        )
                        .await
                        .map_err(RpcError::from)?;
                    }
                    Ok(json!({}))
                }
                "session/prompt" => {
                    let text = params["prompt"][0]["text"].as_str().unwrap_or("").to_owned();
                    match text.as_str() {
                        "wait" => {
                            req.cancellation.cancelled().await;
                            Err(RpcError::internal_error("handler gave up"))
                        }
                        "permission" => {
                            let outcome: Value = acp
                                .request_json(
                                    "session/request_permission",
                                    &json!({"sessionId": params["sessionId"],
                                        "toolCall": {"toolCallId": "t1", "title": "Edit"},
                                        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}),
                                )
                                .decode()
                                .await?;
                            Ok(json!({"stopReason": "end_turn", "_meta": {"outcome": outcome}}))
                        }
                        _ => Ok(json!({"stopReason": "end_turn"})),
                    }
                }
                _ => Ok(json!({})),
            }
        }
    })
}

/// `initialize` params of a client advertising `caps`.
pub fn init_params(caps: Value) -> Value {
    serde_json::json!({"protocolVersion": 1, "clientCapabilities": caps})
}

/// Initializes `client` advertising `caps`, then opens a session in `/tmp`;
/// returns its id.
pub async fn initialize_and_open(client: &libacp_core::AcpConnection, caps: Value) -> String {
    within(
        "initialize",
        client.request_json("initialize", &init_params(caps)),
    )
    .await
    .expect("initialize");
    let session: Value = within(
        "session/new",
        client
            .request_json(
                "session/new",
                &serde_json::json!({"cwd": "/tmp", "mcpServers": []}),
            )
            .decode(),
    )
    .await
    .expect("session/new");
    session["sessionId"].as_str().expect("sessionId").to_owned()
}

/// Which way [`acp_remote_raw`] carries the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteLink {
    /// WebSocket.
    WebSocket,
    /// Streamable HTTP/1.1.
    Http,
    /// Streamable HTTP over HTTP/2 without TLS (h2c).
    H2c,
}

/// An ACP connection and a [`RawPeer`] whose frames cross libacp's remote
/// transport. For `Role::Agent` the connection is served by a
/// [`libacp_core::remote::Server`] and the raw peer is a client reaching it
/// through `remote::connect`; for `Role::Client` the connection connects
/// by URL and the raw peer is the agent behind the server. Either way the
/// raw peer's bytes are spliced to a remote transport
/// ([`Transport::splice`]), so it writes and reads NDJSON as on a pipe.
pub struct RemoteRaw {
    /// The connection: set once the server made it (an agent over
    /// Streamable HTTP exists only once `initialize` was posted).
    pub conn: tokio::sync::watch::Receiver<Option<libacp_core::AcpConnection>>,
    /// The far end.
    pub peer: RawPeer,
    /// The server (dropping it closes everything).
    pub server: libacp_core::remote::Server,
}

/// See [`RemoteRaw`].
pub async fn acp_remote_raw(
    role: libacp_core::Role,
    host: impl Handler,
    options: libacp_core::AcpOptions,
    link: RemoteLink,
) -> RemoteRaw {
    use libacp_core::remote::{self, ClientOptions, Incoming, RemoteKind, Server, ServerOptions};
    use libacp_core::{AcpConnection, Role};
    let (conn_tx, conn) = tokio::sync::watch::channel(None);
    let conn_tx = Arc::new(conn_tx);
    // The host and the raw peer's end are taken once, by whichever side
    // plays them; a second remote connection gets neither.
    let host = Arc::new(Mutex::new(Some(host)));
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let ours = Arc::new(Mutex::new(Some(ours)));
    let factory = {
        let (host, ours, conn_tx, options) = (
            Arc::clone(&host),
            Arc::clone(&ours),
            Arc::clone(&conn_tx),
            options.clone(),
        );
        move |incoming: Incoming| -> Option<AcpConnection> {
            if role == Role::Agent {
                let host = host.lock().expect("lock").take()?;
                let c =
                    AcpConnection::start(Role::Agent, incoming.transport, host, options.clone());
                conn_tx.send_replace(Some(c.clone()));
                Some(c)
            } else {
                let ours = ours.lock().expect("lock").take()?;
                tokio::spawn(incoming.transport.splice(Transport::from_stream(ours)));
                None
            }
        }
    };
    let server = Server::bind("127.0.0.1:0", ServerOptions::default(), factory)
        .await
        .expect("bind a loopback port");
    let (kind, http2) = match link {
        RemoteLink::WebSocket => (RemoteKind::WebSocket, false),
        RemoteLink::Http => (RemoteKind::StreamableHttp, false),
        RemoteLink::H2c => (RemoteKind::StreamableHttp, true),
    };
    let client_options = ClientOptions {
        http2_prior_knowledge: http2,
        ..ClientOptions::default()
    };
    let transport = remote::connect(&server.url(kind), &client_options)
        .await
        .expect("connect to the loopback server");
    if role == Role::Agent {
        let ours = ours.lock().expect("lock").take().expect("the raw end");
        tokio::spawn(transport.splice(Transport::from_stream(ours)));
    } else {
        let host = host.lock().expect("lock").take().expect("the host");
        let c = AcpConnection::start(Role::Client, transport, host, options);
        conn_tx.send_replace(Some(c));
    }
    let (r, w) = tokio::io::split(theirs);
    RemoteRaw {
        conn,
        peer: RawPeer {
            reader: BufReader::new(r),
            writer: Some(w),
        },
        server,
    }
}

/// The repository's root.
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// `node tests/interop/ts/SCRIPT`: a peer on the official TypeScript SDK,
/// after checking that it and `packages` (npm names) are installed by
/// `scripts/setup-interop.sh`.
pub fn ts_peer(script: &str, packages: &[&str]) -> Vec<String> {
    let dir = repo_root().join("tests/interop/ts");
    for package in ["@agentclientprotocol/sdk"].iter().chain(packages) {
        assert!(
            dir.join("node_modules").join(package).exists(),
            "{package} is not installed in tests/interop/ts: run scripts/setup-interop.sh"
        );
    }
    vec!["node".into(), dir.join(script).display().to_string()]
}
