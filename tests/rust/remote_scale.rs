//! 1,000 concurrent idle WebSocket connections on one libacp server process
//! (`libacp-interop-agent --listen`): each made and initialized, all held
//! open at once, then closed. The server's memory per idle connection is
//! printed and bounded, and once they are closed the server holds no more
//! descriptors or threads than before.
//!
//! The bound is a leak and bloat detector for a debug build, not the
//! benchmark's target (`bench/README.md` measures release builds against
//! the official crate's server). Loopback only.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use libacp_core::remote::{self, ClientOptions};
use libacp_core::{AcpConnection, AcpOptions, FnHandler, Role};
use libacp_tests::{init_params, within};
use serde_json::json;

const CONNECTIONS: usize = 1000;

/// Server memory allowed per idle connection (an agent connection, its
/// WebSocket and its tasks), in KiB. Measured about 40 KiB in a debug build.
const KIB_PER_CONNECTION: u64 = 128;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_libacp-interop-agent"))
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start libacp-interop-agent --listen");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let _ = stderr.read_line(&mut line);
    std::thread::spawn(move || {
        let mut sink = String::new();
        while matches!(stderr.read_line(&mut sink), Ok(1..)) {
            sink.clear();
        }
    });
    let port = line
        .trim()
        .strip_prefix("listening on 127.0.0.1:")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("not `listening on 127.0.0.1:PORT`: {line:?}"));
    Server { child, port }
}

/// A line of `/proc/PID/status`, in its unit (kB for memory).
fn status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(Iterator::count)
        .unwrap_or(0)
}

/// Opens `n` initialized WebSocket connections.
async fn open(url: &str, n: usize) -> Vec<AcpConnection> {
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        let transport = remote::connect(url, &ClientOptions::default())
            .await
            .expect("connect");
        let conn = AcpConnection::start(
            Role::Client,
            transport,
            FnHandler::new(),
            AcpOptions::default(),
        );
        conn.request_json("initialize", &init_params(json!({})))
            .await
            .expect("initialize");
        all.push(conn);
    }
    all
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    within(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_websocket_connections_cost_little_and_leave_nothing() {
    // Two descriptors per connection in this process and one in the
    // server's: lift the soft limit to the hard one (the child inherits it).
    // SAFETY: getrlimit/setrlimit on a valid struct.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
    let server = start_server();
    let pid = server.child.id();
    let url = format!("ws://127.0.0.1:{}/acp", server.port);
    // Warm up (allocator arenas, runtime threads), then measure.
    let warm = open(&url, 20).await;
    for c in &warm {
        c.close().await;
    }
    drop(warm);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (fds_before, threads_before) = (descriptors(pid), status(pid, "Threads:"));
    let rss_before = status(pid, "VmRSS:");
    let started = Instant::now();
    let all = open(&url, CONNECTIONS).await;
    let opened_in = started.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_after = status(pid, "VmRSS:");
    let fds_open = descriptors(pid);
    let per = rss_after.saturating_sub(rss_before) * 1024 / CONNECTIONS as u64;
    eprintln!(
        "{CONNECTIONS} idle WebSocket connections: server RSS {rss_before} -> {rss_after} kB \
         ({per} bytes each), {fds_before} -> {fds_open} descriptors, opened in {opened_in:?}"
    );
    assert!(
        fds_open >= fds_before + CONNECTIONS,
        "every connection is open at once"
    );
    assert!(
        per <= KIB_PER_CONNECTION * 1024,
        "{per} bytes of server memory per idle connection (bound {KIB_PER_CONNECTION} KiB)"
    );
    for c in &all {
        c.close().await;
    }
    drop(all);
    wait_until("the server closes every connection", || {
        descriptors(pid) <= fds_before
    })
    .await;
    wait_until("the server's threads are back", || {
        status(pid, "Threads:") <= threads_before
    })
    .await;
}
