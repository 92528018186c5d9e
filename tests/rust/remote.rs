//! Remote ACP (`libacp_core::remote`): a libacp client and a libacp server
//! over WebSocket, Streamable HTTP/1.1 and h2c on loopback, and over TLS
//! with a CA the test makes. The engine's contracts hold remotely (a whole
//! turn with a nested permission request, `load` returning after its
//! replay, pending calls failing at once when the server goes away, the
//! turn cancelled when the client goes away), and the server's checks
//! answer with the RFD's statuses before any agent code runs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::remote::{
    self, ClientOptions, Incoming, RemoteErrorKind, RemoteKind, Server, ServerOptions,
};
use libacp_core::{
    AcpConnection, AcpOptions, CallError, CloseReason, ConnectionError, FnHandler, Role,
};
use libacp_tests::{init_params, scripted_agent, within};
use serde_json::{Value, json};

/// Each way a client reaches the server.
#[derive(Debug, Clone, Copy)]
enum Way {
    WebSocket,
    Http1,
    H2c,
}

const WAYS: [Way; 3] = [Way::WebSocket, Way::Http1, Way::H2c];

impl Way {
    fn url(self, server: &Server) -> String {
        match self {
            Way::WebSocket => server.url(RemoteKind::WebSocket),
            Way::Http1 | Way::H2c => server.url(RemoteKind::StreamableHttp),
        }
    }

    fn options(self) -> ClientOptions {
        ClientOptions {
            http2_prior_knowledge: matches!(self, Way::H2c),
            ..ClientOptions::default()
        }
    }
}

/// A server whose agents are `scripted_agent`s; counts the agents started.
async fn serve(options: ServerOptions) -> (Server, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&started);
    let server = Server::bind("127.0.0.1:0", options, move |incoming: Incoming| {
        count.fetch_add(1, Ordering::SeqCst);
        let agent = scripted_agent(json!({"loadSession": true}));
        AcpConnection::start(
            Role::Agent,
            incoming.transport,
            agent,
            AcpOptions::default(),
        )
    })
    .await
    .expect("bind a loopback port");
    (server, started)
}

/// What a client saw: the text of each `session/update`, in order.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn texts(&self) -> Vec<String> {
        self.0.lock().expect("lock").clone()
    }
}

/// A client handler that allows every permission request and records
/// updates.
fn client_handler(seen: &Seen) -> FnHandler {
    let seen = seen.clone();
    FnHandler::new()
        .on_request(|req| async move {
            match req.method.as_str() {
                "session/request_permission" => {
                    Ok(json!({"outcome": {"outcome": "selected", "optionId": "allow"}}))
                }
                other => Err(libacp_core::RpcError::method_not_found(other)),
            }
        })
        .on_notification(move |n| {
            let seen = seen.clone();
            async move {
                let params: Value = n.params_as().unwrap_or(Value::Null);
                if let Some(text) = params["update"]["content"]["text"].as_str() {
                    seen.0.lock().expect("lock").push(text.to_owned());
                }
            }
        })
}

async fn connect(way: Way, server: &Server, seen: &Seen) -> AcpConnection {
    let transport = within("connect", remote::connect(&way.url(server), &way.options()))
        .await
        .unwrap_or_else(|e| panic!("{way:?}: connect: {e}"));
    AcpConnection::start(
        Role::Client,
        transport,
        client_handler(seen),
        AcpOptions::default(),
    )
}

async fn open_session(client: &AcpConnection) -> String {
    within(
        "initialize",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("initialize");
    let session: Value = within(
        "session/new",
        client
            .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
            .decode(),
    )
    .await
    .expect("session/new");
    session["sessionId"].as_str().expect("sessionId").to_owned()
}

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_with_a_permission_request_crosses_every_transport() {
    let (server, _) = serve(ServerOptions::default()).await;
    for way in WAYS {
        let seen = Seen::default();
        let client = connect(way, &server, &seen).await;
        let session = open_session(&client).await;
        let done: Value = within(
            "prompt",
            client
                .request_json("session/prompt", &prompt(&session, "permission"))
                .decode(),
        )
        .await
        .unwrap_or_else(|e| panic!("{way:?}: prompt: {e}"));
        assert_eq!(done["stopReason"], "end_turn", "{way:?}");
        assert_eq!(
            done["_meta"]["outcome"]["outcome"]["optionId"], "allow",
            "{way:?}"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_returns_after_its_replay_on_every_transport() {
    let (server, _) = serve(ServerOptions::default()).await;
    for way in WAYS {
        let seen = Seen::default();
        let client = connect(way, &server, &seen).await;
        let session = open_session(&client).await;
        within(
            "session/load",
            client.request_json(
                "session/load",
                &json!({"sessionId": session, "cwd": "/tmp", "mcpServers": []}),
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{way:?}: load: {e}"));
        assert_eq!(
            seen.texts(),
            ["earlier question", "earlier answer"],
            "{way:?}: the replay is delivered before load returns"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_calls_fail_at_once_when_the_server_goes_away() {
    for way in WAYS {
        let (server, _) = serve(ServerOptions::default()).await;
        let seen = Seen::default();
        let client = connect(way, &server, &seen).await;
        let session = open_session(&client).await;
        let turn = client.request_json("session/prompt", &prompt(&session, "wait"));
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(server);
        let failed = within("the pending prompt", turn).await;
        match failed {
            Err(CallError::Connection(ConnectionError::Closed(reason))) => {
                assert!(
                    matches!(reason, CloseReason::Remote(_) | CloseReason::PeerClosed),
                    "{way:?}: {reason}"
                );
            }
            other => panic!("{way:?}: the prompt should fail with the close, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_going_away_cancels_the_turn_and_frees_the_agent() {
    for way in WAYS {
        let cancelled = Arc::new(tokio::sync::Notify::new());
        let seen_cancel = Arc::clone(&cancelled);
        let server = Server::bind(
            "127.0.0.1:0",
            ServerOptions::default(),
            move |incoming: Incoming| {
                let seen_cancel = Arc::clone(&seen_cancel);
                let agent = FnHandler::new().on_request(move |req| {
                    let seen_cancel = Arc::clone(&seen_cancel);
                    async move {
                        match req.method.as_str() {
                            "initialize" => {
                                Ok(json!({"protocolVersion": 1, "agentCapabilities": {}}))
                            }
                            "session/new" => Ok(json!({"sessionId": "s1"})),
                            "session/prompt" => {
                                req.cancellation.cancelled().await;
                                seen_cancel.notify_one();
                                Ok(json!({"stopReason": "cancelled"}))
                            }
                            _ => Ok(json!({})),
                        }
                    }
                });
                AcpConnection::start(
                    Role::Agent,
                    incoming.transport,
                    agent,
                    AcpOptions::default(),
                )
            },
        )
        .await
        .expect("bind");
        let seen = Seen::default();
        let client = connect(way, &server, &seen).await;
        let session = open_session(&client).await;
        let _turn = client.request_json("session/prompt", &prompt(&session, "wait"));
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.close().await;
        within("the agent's turn is cancelled", cancelled.notified()).await;
        within("the server forgets the connection", async {
            while server.connections() != 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }
}

// ---------------------------------------------------------------------------
// The endpoint's refusals, seen on the wire (one HTTP/1.1 request each).

/// Sends `request` (head and body) and returns the status code.
fn status_of(server: &Server, request: &str) -> u16 {
    let mut stream = TcpStream::connect(server.local_addr()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("write");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("a status line");
    let line = String::from_utf8_lossy(&head);
    line[9..12]
        .parse()
        .unwrap_or_else(|_| panic!("no status in {line:?}"))
}

fn post(headers: &str, body: &str) -> String {
    format!(
        "POST /acp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

const INITIALIZE: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_refuses_what_the_rfd_refuses_before_any_agent_runs() {
    let options = ServerOptions {
        max_message_size: 1024,
        ..ServerOptions::default()
    };
    let (server, started) = serve(options).await;
    let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s0","prompt":[]}}"#;
    let cases = [
        ("an unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_owned(), 404),
        ("no Acp-Connection-Id", post("", prompt), 400),
        ("an unknown Acp-Connection-Id", post("Acp-Connection-Id: nope\r\n", prompt), 404),
        (
            "not JSON's content type",
            format!(
                "POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
                INITIALIZE.len()
            ),
            415,
        ),
        ("a body over the limit", post("", &format!("{{\"x\":\"{}\"}}", "a".repeat(2000))), 413),
        ("a batch", post("", &format!("[{INITIALIZE}]")), 501),
        (
            "an event stream without Accept",
            "GET /acp HTTP/1.1\r\nHost: x\r\nAcp-Connection-Id: nope\r\nConnection: close\r\n\r\n".to_owned(),
            406,
        ),
        (
            "an event stream of an unknown connection",
            "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: nope\r\nConnection: close\r\n\r\n".to_owned(),
            404,
        ),
        ("a browser's Origin", post("Origin: https://evil.example\r\n", INITIALIZE), 403),
        ("an unknown Acp-Protocol-Version", post("Acp-Protocol-Version: 99\r\n", INITIALIZE), 400),
        (
            "DELETE without Acp-Connection-Id",
            "DELETE /acp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_owned(),
            400,
        ),
    ];
    for (what, request, want) in cases {
        let server = &server;
        let got = tokio::task::block_in_place(|| status_of(server, &request));
        assert_eq!(got, want, "{what}");
    }
    assert_eq!(started.load(Ordering::SeqCst), 0, "no agent was started");
    // The server goes on serving.
    let seen = Seen::default();
    let client = connect(Way::Http1, &server, &seen).await;
    open_session(&client).await;
    assert_eq!(started.load(Ordering::SeqCst), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_scoped_post_needs_its_session_header_and_a_stream_is_read_once() {
    let (server, _) = serve(ServerOptions::default()).await;
    let init = tokio::task::block_in_place(|| {
        let mut stream = TcpStream::connect(server.local_addr()).expect("connect");
        stream
            .write_all(post("", INITIALIZE).as_bytes())
            .expect("write");
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        text
    });
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    let id = init
        .lines()
        .find_map(|l| l.strip_prefix("acp-connection-id: "))
        .expect("Acp-Connection-Id in the answer")
        .trim()
        .to_owned();
    let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s0","prompt":[]}}"#;
    let missing = post(&format!("Acp-Connection-Id: {id}\r\n"), prompt);
    let mismatched = post(
        &format!("Acp-Connection-Id: {id}\r\nAcp-Session-Id: s9\r\n"),
        prompt,
    );
    let server_ref = &server;
    assert_eq!(
        tokio::task::block_in_place(|| status_of(server_ref, &missing)),
        400
    );
    assert_eq!(
        tokio::task::block_in_place(|| status_of(server_ref, &mismatched)),
        400
    );
    // An answer without the header is routed by its id (what the Rust
    // crate's client sends): accepted.
    let answer = post(
        &format!("Acp-Connection-Id: {id}\r\n"),
        r#"{"jsonrpc":"2.0","id":"x","result":{}}"#,
    );
    assert_eq!(
        tokio::task::block_in_place(|| status_of(server_ref, &answer)),
        202
    );
    // The connection stream, read by one GET, refuses a second.
    let stream_request = format!(
        "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\n\r\n"
    );
    let first = tokio::task::block_in_place(|| {
        let mut s = TcpStream::connect(server_ref.local_addr()).expect("connect");
        s.write_all(stream_request.as_bytes()).expect("write");
        let mut head = [0u8; 12];
        s.read_exact(&mut head).expect("status");
        (s, String::from_utf8_lossy(&head).into_owned())
    });
    assert!(first.1.ends_with("200"), "{}", first.1);
    assert_eq!(
        tokio::task::block_in_place(|| status_of(server_ref, &stream_request)),
        409
    );
    drop(first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_refused_before_any_agent_code_runs() {
    let options = ServerOptions {
        bearer_tokens: vec!["s3cret".into()],
        ..ServerOptions::default()
    };
    let (server, started) = serve(options).await;
    // WebSocket: the connect fails, typed.
    let e = remote::connect(
        &server.url(RemoteKind::WebSocket),
        &ClientOptions::default(),
    )
    .await
    .expect_err("no token");
    assert_eq!(
        (e.kind, e.status),
        (RemoteErrorKind::Unauthorized, Some(401)),
        "{e}"
    );
    // Streamable HTTP: `initialize` fails with the same typed reason.
    let transport = remote::connect(
        &server.url(RemoteKind::StreamableHttp),
        &ClientOptions {
            headers: vec![("Authorization".into(), "Bearer wrong".into())],
            ..ClientOptions::default()
        },
    )
    .await
    .expect("the TCP connection is made");
    let client = AcpConnection::start(
        Role::Client,
        transport,
        FnHandler::new(),
        AcpOptions::default(),
    );
    let failed = within(
        "initialize",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await;
    match failed {
        Err(CallError::Connection(ConnectionError::Closed(CloseReason::Remote(e)))) => {
            assert_eq!(e.kind, RemoteErrorKind::Unauthorized, "{e}");
        }
        other => panic!("initialize should fail as unauthorized, got {other:?}"),
    }
    assert_eq!(started.load(Ordering::SeqCst), 0, "no agent code ran");
    // The right token works.
    let options = ClientOptions {
        headers: vec![("Authorization".into(), "Bearer s3cret".into())],
        ..ClientOptions::default()
    };
    let transport = remote::connect(&server.url(RemoteKind::WebSocket), &options)
        .await
        .expect("with the token");
    let client = AcpConnection::start(
        Role::Client,
        transport,
        FnHandler::new(),
        AcpOptions::default(),
    );
    within(
        "initialize",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("initialize with the token");
    assert_eq!(started.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_failures_are_typed() {
    // A port nobody listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let e = remote::connect(
        &format!("ws://127.0.0.1:{port}/acp"),
        &ClientOptions::default(),
    )
    .await
    .expect_err("refused");
    assert_eq!(e.kind, RemoteErrorKind::Refused, "{e}");
    let e = remote::connect("ftp://127.0.0.1/acp", &ClientOptions::default())
        .await
        .expect_err("not a remote scheme");
    assert_eq!(e.kind, RemoteErrorKind::InvalidUrl, "{e}");
    let (server, _) = serve(ServerOptions::default()).await;
    let wrong_path = format!("ws://{}/elsewhere", server.local_addr());
    let e = remote::connect(&wrong_path, &ClientOptions::default())
        .await
        .expect_err("no endpoint there");
    assert_eq!(
        (e.kind, e.status),
        (RemoteErrorKind::NotFound, Some(404)),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_dropped_after_the_idle_timeout() {
    let options = ServerOptions {
        idle_timeout: Duration::from_millis(300),
        keepalive_interval: Duration::from_millis(100),
        ..ServerOptions::default()
    };
    let (server, started) = serve(options).await;
    // A WebSocket client that upgrades, then never reads (no pong).
    let silent_ws = tokio::task::block_in_place(|| {
        let mut s = TcpStream::connect(server.local_addr()).expect("connect");
        s.write_all(
            b"GET /acp HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .expect("write");
        s
    });
    // A Streamable HTTP client that initializes, then opens no stream.
    tokio::task::block_in_place(|| {
        let mut s = TcpStream::connect(server.local_addr()).expect("connect");
        s.write_all(post("", INITIALIZE).as_bytes()).expect("write");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
    });
    within("both connections are made", async {
        while started.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    within("both are dropped as idle", async {
        while server.connections() != 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    drop(silent_ws);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_running_turn_finish() {
    let release = Arc::new(tokio::sync::Notify::new());
    let arrived = Arc::new(tokio::sync::Notify::new());
    let (gate, seen_prompt) = (Arc::clone(&release), Arc::clone(&arrived));
    let server = Server::bind(
        "127.0.0.1:0",
        ServerOptions::default(),
        move |incoming: Incoming| {
            let (gate, seen_prompt) = (Arc::clone(&gate), Arc::clone(&seen_prompt));
            let agent = FnHandler::new().on_request(move |req| {
                let (gate, seen_prompt) = (Arc::clone(&gate), Arc::clone(&seen_prompt));
                async move {
                    match req.method.as_str() {
                        "initialize" => Ok(json!({"protocolVersion": 1, "agentCapabilities": {}})),
                        "session/new" => Ok(json!({"sessionId": "s1"})),
                        "session/prompt" => {
                            seen_prompt.notify_one();
                            gate.notified().await;
                            Ok(json!({"stopReason": "end_turn"}))
                        }
                        _ => Ok(json!({})),
                    }
                }
            });
            AcpConnection::start(
                Role::Agent,
                incoming.transport,
                agent,
                AcpOptions::default(),
            )
        },
    )
    .await
    .expect("bind");
    // A turn in flight when shutdown begins, beside an idle connection.
    let seen = Seen::default();
    let client = connect(Way::WebSocket, &server, &seen).await;
    let session = open_session(&client).await;
    let idle = connect(Way::WebSocket, &server, &seen).await;
    open_session(&idle).await;
    let turn = client.request_json("session/prompt", &prompt(&session, "go"));
    within("the prompt reaches the agent", arrived.notified()).await;
    let shutdown = server.shutdown();
    let finish = async {
        // Shutdown has begun once it closed the idle connection; the busy
        // one is kept for its turn.
        within("the idle connection is closed", async {
            while server.connections() != 1 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        release.notify_one();
        within("the turn", turn.decode::<Value>()).await
    };
    let ((), done) = within("shutdown", async { tokio::join!(shutdown, finish) }).await;
    assert_eq!(done.expect("the turn finishes")["stopReason"], "end_turn");
    assert_eq!(server.connections(), 0);
}

/// A CA, and a certificate for `localhost` and `127.0.0.1` it signed, as
/// PEM files in a fresh directory: (ca, cert, key).
fn make_ca(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key"))
        .expect("the CA");
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("params")
        .signed_by(&key, &ca)
        .expect("the certificate");
    std::fs::create_dir_all(dir).expect("dir");
    let files = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&files.0, ca.pem()).expect("write");
    std::fs::write(&files.1, cert.pem()).expect("write");
    std::fs::write(&files.2, key.serialize_pem()).expect("write");
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_ca_the_test_makes() {
    let dir = std::env::temp_dir().join(format!("libacp-remote-tls-{}", std::process::id()));
    let (ca, cert, key) = make_ca(&dir);
    let options = ServerOptions {
        tls_cert: Some(cert),
        tls_key: Some(key),
        ..ServerOptions::default()
    };
    let (server, _) = serve(options).await;
    let port = server.local_addr().port();
    let trusted = ClientOptions {
        ca_file: Some(ca),
        ..ClientOptions::default()
    };
    // wss over HTTP/1.1, https over HTTP/2 (ALPN), by name and by address.
    for url in [
        format!("wss://localhost:{port}/acp"),
        format!("https://localhost:{port}/acp"),
        format!("https://127.0.0.1:{port}/acp"),
    ] {
        let transport = within("connect", remote::connect(&url, &trusted))
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let seen = Seen::default();
        let client = AcpConnection::start(
            Role::Client,
            transport,
            client_handler(&seen),
            AcpOptions::default(),
        );
        let session = open_session(&client).await;
        let done: Value = within(
            "prompt",
            client
                .request_json("session/prompt", &prompt(&session, "permission"))
                .decode(),
        )
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(done["stopReason"], "end_turn", "{url}");
        client.close().await;
    }
    // Without the CA the handshake fails, typed.
    let e = remote::connect(
        &format!("wss://localhost:{port}/acp"),
        &ClientOptions::default(),
    )
    .await
    .expect_err("an unknown CA");
    assert_eq!(e.kind, RemoteErrorKind::Tls, "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
