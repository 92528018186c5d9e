//! Interop of libacp's remote transports (`libacp_core::remote`) with the
//! official implementations: the TypeScript SDK 2.4.0's experimental server
//! and clients, and the Rust crate `agent-client-protocol-http` 5.0.0.
//!
//! Each test starts one remote agent on `127.0.0.1:0` (its first stderr line
//! names the port, see `tests/interop/README.md`, "Remote"), runs one client
//! against it through the whole check sequence of the README, and asserts the
//! client printed `OK`. The agent is killed when the test ends.
//!
//! * libacp's client against the TypeScript, Rust and libacp servers, over
//!   WebSocket and Streamable HTTP (and h2c against libacp's own);
//! * the TypeScript and Rust clients against libacp's server, over both.
//!
//! The official clients against the official servers are run too and their
//! outcome printed, but they do not fail the suite: they test neither side of
//! libacp (`official_pairs_are_reported`).
//!
//! Loopback only. Every wait is bounded far above the expected time: a limit
//! here detects a hang, it does not measure speed.
//!
//! Needs `scripts/setup-interop.sh` to have run (the TypeScript SDK and `ws`
//! are not vendored).

use libacp_tests::ts_peer;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long a server may take to say where it listens (a hang detector).
const LISTENING_WITHIN: Duration = Duration::from_secs(60);
/// How long a client may run; the clients themselves give up after 30 s
/// (libacp's after 60 s), so this only catches a client that hangs anyway.
const CLIENT_WITHIN: Duration = Duration::from_secs(120);

fn ts(script: &str) -> Vec<String> {
    ts_peer(script, &["ws"])
}

fn libacp_agent() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_libacp-interop-agent").into()]
}

fn libacp_client() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_libacp-interop-client").into()]
}

fn rust_sdk_agent() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_official-rust-agent").into()]
}

fn rust_sdk_client() -> Vec<String> {
    vec![env!("CARGO_BIN_EXE_official-rust-client").into()]
}

/// Text a reader thread keeps adding to.
type Collected = Arc<Mutex<String>>;

fn collect(reader: impl Read + Send + 'static) -> Collected {
    let text = Collected::default();
    let into = Arc::clone(&text);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(reader);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(1..)) {
            into.lock().expect("collected").push_str(&line);
            line.clear();
        }
    });
    text
}

/// A remote agent serving on a loopback port; killed when dropped.
struct RemoteAgent {
    name: String,
    child: Child,
    port: u16,
    /// Its stderr after the `listening on` line.
    stderr: Collected,
}

impl RemoteAgent {
    /// Starts `command --listen 127.0.0.1:0` and waits for its
    /// `listening on 127.0.0.1:PORT` line.
    fn start(name: &str, command: Vec<String>) -> Self {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .args(["--listen", "127.0.0.1:0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name} server {command:?}: {e}"));
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let (first, first_rx) = mpsc::channel();
        let rest = Collected::default();
        let into = Arc::clone(&rest);
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = stderr.read_line(&mut line);
            let _ = first.send(line);
            let mut line = String::new();
            while matches!(stderr.read_line(&mut line), Ok(1..)) {
                into.lock().expect("collected").push_str(&line);
                line.clear();
            }
        });
        // Dropped (so killed) if the line is wrong or late.
        let mut agent = Self {
            name: name.to_owned(),
            child,
            port: 0,
            stderr: rest,
        };
        let line = first_rx.recv_timeout(LISTENING_WITHIN).unwrap_or_else(|_| {
            panic!("the {name} server said nothing within {LISTENING_WITHIN:?}")
        });
        agent.port = line
            .trim()
            .strip_prefix("listening on 127.0.0.1:")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| {
                panic!("the {name} server's first stderr line is {line:?}, not `listening on 127.0.0.1:PORT`")
            });
        agent
    }

    /// The endpoint's URL for `scheme` (`ws` or `http`).
    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}/acp", self.port)
    }
}

impl Drop for RemoteAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a client run ended with.
struct Outcome {
    ok: bool,
    /// The client's result line, or why there is none.
    summary: String,
    stdout: String,
    stderr: String,
}

/// Runs `client ARGS...` to its end (killed after [`CLIENT_WITHIN`]).
fn run_client(client: &[String], args: &[&str]) -> Outcome {
    // libacp's client checks the whole replay (see libacp_interop_client.rs).
    let mut child = Command::new(&client[0])
        .env("LIBACP_INTEROP_STRICT_LOAD", "1")
        .args(&client[1..])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the client {client:?}: {e}"));
    let stdout = collect(child.stdout.take().expect("piped stdout"));
    let stderr = collect(child.stderr.take().expect("piped stderr"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the client") {
            break Some(status);
        }
        if started.elapsed() > CLIENT_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The readers end with the pipes; give them a moment to catch up.
    let read_until = Instant::now() + Duration::from_secs(5);
    while (Arc::strong_count(&stdout) > 1 || Arc::strong_count(&stderr) > 1)
        && Instant::now() < read_until
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stdout = stdout.lock().expect("collected").clone();
    let stderr = stderr.lock().expect("collected").clone();
    let line = stdout.lines().last().unwrap_or_default().to_owned();
    let (ok, summary) = match status {
        None => (
            false,
            format!("no result within {CLIENT_WITHIN:?} (killed)"),
        ),
        Some(status) => (
            status.success() && stdout.lines().any(|l| l == "OK"),
            if line.is_empty() {
                format!("no result line ({status})")
            } else {
                line
            },
        ),
    };
    Outcome {
        ok,
        summary,
        stdout,
        stderr,
    }
}

/// Runs `client ARGS...` against `agent` and asserts it printed `OK`.
fn check(client: &[String], args: &[&str], agent: &RemoteAgent) {
    let outcome = run_client(client, args);
    assert!(
        outcome.ok,
        "{client:?} {args:?} against the {} server: {}\nclient stdout:\n{}\nclient stderr:\n{}\nserver stderr:\n{}",
        agent.name,
        outcome.summary,
        outcome.stdout,
        outcome.stderr,
        agent.stderr.lock().expect("collected")
    );
}

/// Starts one kind of remote agent.
type StartServer = fn() -> RemoteAgent;

fn ts_server() -> RemoteAgent {
    RemoteAgent::start("TypeScript", ts("remote-agent.mjs"))
}

fn rust_sdk_server() -> RemoteAgent {
    RemoteAgent::start("Rust SDK", rust_sdk_agent())
}

fn libacp_server() -> RemoteAgent {
    RemoteAgent::start("libacp", libacp_agent())
}

// libacp's client against each server.

#[test]
fn libacp_client_drives_the_typescript_server_over_websocket() {
    let agent = ts_server();
    check(&libacp_client(), &["--url", &agent.url("ws")], &agent);
}

/// The TypeScript server sends the `session/load` answer on the connection
/// stream and the replay on the session's stream; the client's check that
/// the whole replay was handled before `load` returned is the point here
/// (libacp's HTTP client holds the answer behind a `_libacp/barrier` probe).
/// It also needs HTTP/1.1 requests in origin form, which the SDK's Node
/// adapter requires (both found by this cell, fixed in
/// `core/src/remote/http_client.rs`).
#[test]
fn libacp_client_drives_the_typescript_server_over_http() {
    let agent = ts_server();
    check(&libacp_client(), &["--url", &agent.url("http")], &agent);
}

#[test]
fn libacp_client_drives_the_rust_sdk_server_over_websocket() {
    let agent = rust_sdk_server();
    check(&libacp_client(), &["--url", &agent.url("ws")], &agent);
}

#[test]
fn libacp_client_drives_the_rust_sdk_server_over_http() {
    let agent = rust_sdk_server();
    check(&libacp_client(), &["--url", &agent.url("http")], &agent);
}

#[test]
fn libacp_client_drives_the_libacp_server_over_websocket() {
    let agent = libacp_server();
    check(&libacp_client(), &["--url", &agent.url("ws")], &agent);
}

#[test]
fn libacp_client_drives_the_libacp_server_over_http() {
    let agent = libacp_server();
    check(&libacp_client(), &["--url", &agent.url("http")], &agent);
}

/// Streamable HTTP over HTTP/2 without TLS (prior knowledge): only libacp's
/// server speaks HTTP/2.
#[test]
fn libacp_client_drives_the_libacp_server_over_h2c() {
    let agent = libacp_server();
    check(
        &libacp_client(),
        &["--url", &agent.url("http"), "--http2"],
        &agent,
    );
}

// The official clients against libacp's server.

#[test]
fn the_typescript_client_drives_the_libacp_server_over_websocket() {
    let agent = libacp_server();
    check(&ts("client.mjs"), &["--url", &agent.url("ws")], &agent);
}

#[test]
fn the_typescript_client_drives_the_libacp_server_over_http() {
    let agent = libacp_server();
    check(&ts("client.mjs"), &["--url", &agent.url("http")], &agent);
}

#[test]
fn the_rust_sdk_client_drives_the_libacp_server_over_websocket() {
    let agent = libacp_server();
    check(&rust_sdk_client(), &["--url", &agent.url("ws")], &agent);
}

/// The Rust crate's client answers the agent's requests (the permission
/// request, fs, terminals) without `Acp-Session-Id`: libacp's server routes
/// such an answer by its id.
#[test]
fn the_rust_sdk_client_drives_the_libacp_server_over_http() {
    let agent = libacp_server();
    check(&rust_sdk_client(), &["--url", &agent.url("http")], &agent);
}

// The official implementations among themselves.

/// Every official client against every official server, over both
/// transports: run and printed (`cargo test -- --nocapture` shows the table),
/// never failed, since neither side is libacp's. Known: the Rust client
/// against the TypeScript server over HTTP fails at the first answer to the
/// agent (`session/request_permission`), which the Rust client posts without
/// `Acp-Session-Id` and the TypeScript server refuses with 400.
#[test]
fn official_pairs_are_reported() {
    let clients = [
        ("TypeScript client", ts("client.mjs")),
        ("Rust SDK client", rust_sdk_client()),
    ];
    let servers: [(&str, StartServer); 2] =
        [("TypeScript", ts_server), ("Rust SDK", rust_sdk_server)];
    let mut report = Vec::new();
    for (server_name, start) in servers {
        let agent = start();
        for (client_name, client) in &clients {
            for scheme in ["ws", "http"] {
                let outcome = run_client(client, &["--url", &agent.url(scheme)]);
                report.push(format!(
                    "{:<4} {client_name} -> {server_name} server over {scheme}: {}",
                    if outcome.ok { "OK" } else { "FAIL" },
                    outcome.summary
                ));
            }
        }
    }
    println!("official pairs (not asserted):");
    for line in &report {
        println!("  {line}");
    }
}
