//! `acp-gateway` end to end, as the README shows it: `serve` makes
//! `demo-agent` remote, and `demo-client` runs a whole turn through
//! `connect`, over WebSocket, Streamable HTTP/1.1 and h2c. Every agent
//! process the gateway started is gone once its connection ends, and a
//! wrong token is refused without starting one.
//!
//! `demo-agent` and `demo-client` are the workspace's (examples/rust):
//! `cargo test --workspace` builds them beside `acp-gateway`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Hang detector for each step (far above the expected second or two).
const LIMIT: Duration = Duration::from_secs(120);

fn bin(name: &str) -> PathBuf {
    let gateway = PathBuf::from(env!("CARGO_BIN_EXE_acp-gateway"));
    let path = gateway.with_file_name(name);
    assert!(
        path.exists(),
        "{} is missing: build the workspace first (cargo build --workspace)",
        path.display()
    );
    path
}

/// A running `acp-gateway serve`, killed when dropped.
struct Gateway {
    child: Child,
    port: u16,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str]) -> Gateway {
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-gateway"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .arg("--")
        .arg(bin("demo-agent"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start acp-gateway serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let port = first
        .rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no port in `{first}`"));
    // Keep draining stderr so the gateway never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Gateway { child, port }
}

/// The demo agents the gateway `pid` has running.
fn agents_of(pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...
            let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
            let ppid = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            ppid == Some(pid) && stat.contains("(demo-agent)")
        })
        .count()
}

/// Runs demo-client through `acp-gateway connect URL ARGS`; returns its
/// output.
fn run_client(url: &str, connect_args: &[&str]) -> (bool, String) {
    // One directory per run: the tests run in parallel, and each run
    // removes its directory when it ends.
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "libacp-gateway-demo-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a session directory");
    let mut child = Command::new(bin("demo-client"))
        .arg("--yes")
        .arg("--cwd")
        .arg(&dir)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_acp-gateway"))
        .args(["connect", url])
        .args(connect_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start demo-client");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("demo-client through {url} did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    (status.success(), text)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn demo_client_runs_a_whole_turn_through_the_gateway_on_every_transport() {
    let gateway = serve(&[]);
    let pid = gateway.child.id();
    for (url, args) in [
        (format!("ws://127.0.0.1:{}/acp", gateway.port), vec![]),
        (format!("http://127.0.0.1:{}/acp", gateway.port), vec![]),
        (
            format!("http://127.0.0.1:{}/acp", gateway.port),
            vec!["--http2"],
        ),
    ] {
        let (ok, output) = run_client(&url, &args);
        assert!(ok, "demo-client through {url} {args:?} failed:\n{output}");
        assert!(
            output.contains("stop reason: end_turn"),
            "{url} {args:?}: no whole turn:\n{output}"
        );
        wait_until("the agent process is reaped", || agents_of(pid) == 0);
    }
}

#[test]
fn a_wrong_token_starts_no_agent() {
    let dir = std::env::temp_dir().join(format!("libacp-gateway-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let token = dir.join("token");
    std::fs::write(&token, "s3cret\n").expect("write the token");
    let gateway = serve(&["--token-file", token.to_str().expect("utf-8 path")]);
    let url = format!("ws://127.0.0.1:{}/acp", gateway.port);
    let (ok, output) = run_client(&url, &["--header", "Authorization: Bearer wrong"]);
    assert!(!ok, "a wrong token must fail:\n{output}");
    assert!(
        output.contains("unauthorized"),
        "the failure names it:\n{output}"
    );
    assert_eq!(agents_of(gateway.child.id()), 0, "no agent was started");
    let (ok, output) = run_client(&url, &["--header", "Authorization: Bearer s3cret"]);
    assert!(ok, "the right token works:\n{output}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn connect_says_why_and_exits_when_the_server_dies() {
    let mut gateway = serve(&[]);
    let url = format!("ws://127.0.0.1:{}/acp", gateway.port);
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_acp-gateway"))
        .args(["connect", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start acp-gateway connect");
    // The bridge is connected once its agent process exists.
    let pid = gateway.child.id();
    wait_until("the remote connection is made", || agents_of(pid) == 1);
    let _ = gateway.child.kill();
    let _ = gateway.child.wait();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = bridge.try_wait().expect("wait") {
            break status;
        }
        assert!(
            start.elapsed() < LIMIT,
            "connect did not exit after the server died"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut bridge.stderr.take().expect("stderr"), &mut stderr);
    assert!(!status.success(), "a dead server is a failure: {stderr}");
    assert!(
        stderr.contains("[io]"),
        "the reason is said, with its kind: {stderr}"
    );
}
