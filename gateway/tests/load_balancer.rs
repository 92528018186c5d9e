//! A real load balancer (Debian's HAProxy) in front of two
//! `acp-gateway serve -- demo-agent` backends, with cookie affinity.
//!
//! **What it proves.** Over Streamable HTTP one ACP connection is many HTTP
//! requests: POSTs, a GET event stream for the connection and one per
//! session, a DELETE; only the backend that answered `initialize` knows its
//! `Acp-Connection-Id` (any other answers 404). HAProxy balances round
//! robin and inserts a `SRV` cookie; the libacp client keeps the cookies of
//! its connection and sends them on every request (the RFD's MUST). So:
//!
//! * `demo-client --yes -- acp-gateway connect http://LB/acp` completes a
//!   whole turn (`stop reason: end_turn`) every time: 6 runs one after the
//!   other, 3 at once, and one over h2c (`--http2`: every request a stream
//!   of one HTTP/2 connection, each routed on its own);
//! * HAProxy's own log says why: every `initialize` came without a cookie
//!   and got one inserted (`--NI`), every later request of the connection
//!   (POSTs, both GET streams, the DELETE) came with that valid cookie
//!   (`--VN`) and went to the same server, and none was answered 404;
//! * both backends served connections (round robin on `initialize`), and
//!   each backend ran exactly as many agents as HAProxy sent it
//!   connections (the agents' stderr, which the gateway passes on);
//! * a run over WebSocket (`ws://` through HAProxy: one upgraded
//!   connection, `timeout tunnel`) completes a turn too;
//! * `option http-server-close` does not break streaming (a second
//!   HAProxy with it set);
//! * the control: the same setup without the `cookie` line breaks every
//!   connection (its first GET stream goes to the other backend, 404), so
//!   the successes above are the cookie's doing;
//! * every child (HAProxy, both gateways, every agent) is gone afterwards.
//!
//! SSE through HAProxy over HTTP/1.1 needs `option http-no-delay`: without
//! it HAProxy holds each forwarded event up to about 200 ms (it sends body
//! chunks with `MSG_MORE` while it expects more), so a demo turn takes
//! about 2.6 s instead of 0.7 s. Nothing is lost; it is only slow.
//!
//! **Run it.** `scripts/setup-lb.sh` installs HAProxy (Debian's package;
//! `make test` runs it first); without HAProxy this test fails, naming that
//! script. Then `cargo build -p acp-gateway -p libacp-examples && cargo
//! test -p acp-gateway --test load_balancer`. By hand:
//!
//! ```text
//! acp-gateway serve --listen 127.0.0.1:9001 -- demo-agent &
//! acp-gateway serve --listen 127.0.0.1:9002 -- demo-agent &
//! haproxy -f lb.cfg -db &
//! demo-client --yes -- acp-gateway connect http://127.0.0.1:8080/acp
//! demo-client --yes -- acp-gateway connect ws://127.0.0.1:8080/acp
//! ```
//!
//! with this `lb.cfg` (the test writes the same, with free ports):
//!
//! ```text
//! global
//!     nbthread 1
//!     log stderr format raw local0 info
//! defaults
//!     mode http
//!     log global
//!     # method, server, status, termination and cookie state (%tsc: --NI
//!     # no cookie, one inserted; --VN valid cookie), duration in ms,
//!     # captured Acp-Connection-Id and Cookie, answered Acp-Connection-Id
//!     log-format "lb %HM %s %ST %tsc %Ta %hr %hs"
//!     option http-no-delay        # SSE events at once, not up to 200 ms late
//!     option dontlognull          # not the test's probes of the port
//!     timeout connect 5s
//!     timeout client 60s          # an event stream may be quiet this long
//!     timeout server 60s
//!     timeout tunnel 60s          # WebSocket, once upgraded
//!     timeout http-request 10s
//!     timeout http-keep-alive 10s
//! frontend acp
//!     bind 127.0.0.1:8080
//!     capture request header Acp-Connection-Id len 64
//!     capture request header Cookie len 64
//!     capture response header Acp-Connection-Id len 64
//!     default_backend gateways
//! backend gateways
//!     balance roundrobin
//!     cookie SRV insert indirect nocache
//!     server s1 127.0.0.1:9001 cookie s1
//!     server s2 127.0.0.1:9002 cookie s2
//! ```
//!
//! Loopback only; every wait is bounded by a hang detector (120 s a step)
//! far above the expected time: a turn takes about 0.7 s, the affinity
//! test about 6 s, the file about 13 s, since each of the control's failing
//! runs ends only after 5 s (`acp-gateway connect` lingers after a remote
//! failure; see CORE-BUGS.md).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Hang detector for each step (a demo turn takes under a second).
const LIMIT: Duration = Duration::from_secs(120);

/// How long a gateway may take to shut down (and reap its agents) on
/// SIGTERM before it is killed.
const SHUTDOWN: Duration = Duration::from_secs(10);

fn bin(name: &str) -> PathBuf {
    let gateway = PathBuf::from(env!("CARGO_BIN_EXE_acp-gateway"));
    let path = gateway.with_file_name(name);
    assert!(
        path.exists(),
        "{} is missing: build it first (cargo build -p libacp-examples)",
        path.display()
    );
    path
}

/// `haproxy -v`'s first line; fails the test (never skips it) when HAProxy
/// is not installed.
fn haproxy_version() -> String {
    match Command::new("haproxy").arg("-v").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
        Ok(out) => panic!(
            "`haproxy -v` failed ({}): {}\nReinstall it with scripts/setup-lb.sh",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "HAProxy is not installed (`haproxy -v`: {e}). This test needs it: \
             run scripts/setup-lb.sh (it installs Debian's haproxy package; \
             make test runs it first), then run the test again"
        ),
    }
}

fn signal(pid: u32, signal: i32) {
    let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
    // SAFETY: kill(2) only sends a signal; `pid` is a child this test
    // started and has not reaped yet (or, negative, its process group).
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Kills the process group `pid` leads.
fn kill_group(pid: u32) {
    let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
    // SAFETY: as in `signal`; `-pid` is the group of a child this test
    // started in a group of its own.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Waits for `child` at most `limit`; true if it exited (and was reaped).
fn wait_for(child: &mut Child, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if start.elapsed() > limit => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `demo-agent` processes whose parent is `pid`.
fn agents_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let child: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // pid (comm) state ppid ...
            let (head, rest) = stat.rsplit_once(')')?;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid && head.ends_with("(demo-agent")).then_some(child)
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A directory for one test's files, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "libacp-lb-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("a temporary directory");
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `acp-gateway serve --listen 127.0.0.1:0 -- demo-agent`; its
/// stderr (and its agents', which it passes on) goes to a file. Dropped:
/// SIGTERM (it shuts down and reaps its agents), then SIGKILL for it and
/// any agent left if it takes longer than [`SHUTDOWN`].
struct Gateway {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Gateway {
    fn start(dir: &Path, name: &str) -> Self {
        let log = dir.join(format!("{name}.stderr"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_acp-gateway"))
            .args(["serve", "--listen", "127.0.0.1:0", "--"])
            .arg(bin("demo-agent"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&log).expect("the gateway's log file"))
            .spawn()
            .expect("start acp-gateway serve");
        let start = Instant::now();
        let port = loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            // The address comes first, on its own line.
            if let Some(line) = text.lines().next().filter(|_| text.contains('\n')) {
                break line
                    .rsplit(':')
                    .next()
                    .and_then(|p| p.trim().parse().ok())
                    .unwrap_or_else(|| panic!("no port in `{line}`"));
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("acp-gateway serve exited ({status}):\n{text}");
            }
            if start.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("acp-gateway serve did not listen within {LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Self { child, port, log }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Agents this backend started (each says so on its stderr when its
    /// connection's `initialize` reaches it). Counted as a substring, not
    /// by line: agents running at once share the gateway's stderr, and a
    /// line's prefix and message are separate writes that interleave.
    fn agents_started(&self) -> usize {
        self.log().matches("initialize from ").count()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let pid = self.pid();
        if matches!(self.child.try_wait(), Ok(None)) {
            signal(pid, libc::SIGTERM);
            if !wait_for(&mut self.child, SHUTDOWN) {
                for agent in agents_of(pid) {
                    // Agents run in their own process groups.
                    signal(agent, libc::SIGKILL);
                }
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }
}

/// A running `haproxy -f CFG -db` (foreground), its stderr (the request
/// log) to a file; killed and reaped when dropped.
struct HaProxy {
    child: Child,
    port: u16,
    log: PathBuf,
    config: String,
}

impl HaProxy {
    /// Starts HAProxy on a free loopback port with the config `config`
    /// writes for that port (a few tries: the port is free when picked,
    /// not reserved).
    fn start(dir: &Path, config: impl Fn(u16) -> String) -> Self {
        let mut failures = String::new();
        for attempt in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let text = config(port);
            let cfg = dir.join(format!("haproxy-{attempt}.cfg"));
            std::fs::write(&cfg, &text).expect("write the HAProxy config");
            let log = dir.join(format!("haproxy-{attempt}.stderr"));
            let child = Command::new("haproxy")
                .arg("-f")
                .arg(&cfg)
                .arg("-db")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(File::create(&log).expect("HAProxy's log file"))
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start haproxy ({e}): run scripts/setup-lb.sh"));
            let mut proxy = Self {
                child,
                port,
                log,
                config: text,
            };
            let start = Instant::now();
            loop {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return proxy;
                }
                if let Ok(Some(status)) = proxy.child.try_wait() {
                    failures.push_str(&format!(
                        "haproxy exited ({status}) on port {port}:\n{}\n",
                        proxy.log()
                    ));
                    break;
                }
                assert!(
                    start.elapsed() < LIMIT,
                    "haproxy did not listen within {LIMIT:?}:\n{}",
                    proxy.log()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        panic!("haproxy did not start:\n{failures}");
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}/acp", self.port)
    }

    /// The request log, one [`Request`] per line of our `log-format`.
    fn requests(&self) -> Vec<Request> {
        self.log().lines().filter_map(Request::parse).collect()
    }
}

impl Drop for HaProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One line of HAProxy's request log (`lb %HM %s %ST %tsc %Ta %hr %hs`).
#[derive(Debug, Clone)]
struct Request {
    method: String,
    server: String,
    status: u16,
    /// Termination state and cookie status: `--NI`, `--VN`, ...
    state: String,
    /// `Acp-Connection-Id` the request carried.
    sent_id: String,
    /// `Acp-Connection-Id` the response carried.
    answered_id: String,
    line: String,
}

impl Request {
    fn parse(line: &str) -> Option<Self> {
        let mut f = line.split_whitespace();
        if f.next()? != "lb" {
            return None;
        }
        let (method, server, status, state, _ms) =
            (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        let captured = |field: &str| -> Vec<String> {
            field
                .trim_start_matches('{')
                .trim_end_matches('}')
                .split('|')
                .map(str::to_owned)
                .collect()
        };
        // A request HAProxy could not read has no captures: kept, so that
        // its status is checked.
        let sent = captured(f.next().unwrap_or(""));
        let answered = captured(f.next().unwrap_or(""));
        Some(Self {
            method: method.to_owned(),
            server: server.to_owned(),
            status: status.parse().ok()?,
            state: state.to_owned(),
            sent_id: sent.first().cloned().unwrap_or_default(),
            answered_id: answered.first().cloned().unwrap_or_default(),
            line: line.to_owned(),
        })
    }

    /// The ACP connection this request belongs to.
    fn connection(&self) -> &str {
        if self.sent_id.is_empty() {
            &self.answered_id
        } else {
            &self.sent_id
        }
    }

    /// A Streamable HTTP `initialize` (the POST that makes a connection).
    fn is_initialize(&self) -> bool {
        self.method == "POST" && self.sent_id.is_empty() && !self.answered_id.is_empty()
    }

    /// What HAProxy did with the persistence cookie: the client's cookie
    /// (`N` none, `V` valid, ...) and the server side (`I` inserted, `N`
    /// nothing).
    fn cookie(&self) -> &str {
        self.state.get(2..4).unwrap_or("")
    }
}

#[derive(Clone, Copy)]
enum Affinity {
    /// `cookie SRV insert indirect nocache`, a cookie per server.
    Cookie,
    /// No persistence at all: the control.
    None,
}

fn config(port: u16, backends: &[&Gateway], affinity: Affinity, extra: &[&str]) -> String {
    let mut text = String::from(
        "# Written by gateway/tests/load_balancer.rs\n\
         global\n    nbthread 1\n    maxconn 256\n    log stderr format raw local0 info\n\
         defaults\n    mode http\n    log global\n\
         \x20   log-format \"lb %HM %s %ST %tsc %Ta %hr %hs\"\n\
         \x20   option http-no-delay\n\
         \x20   option dontlognull\n\
         \x20   timeout connect 5s\n    timeout client 60s\n    timeout server 60s\n\
         \x20   timeout tunnel 60s\n    timeout http-request 10s\n    timeout http-keep-alive 10s\n",
    );
    for line in extra {
        text.push_str(&format!("    {line}\n"));
    }
    text.push_str(&format!(
        "frontend acp\n    bind 127.0.0.1:{port}\n\
         \x20   capture request header Acp-Connection-Id len 64\n\
         \x20   capture request header Cookie len 64\n\
         \x20   capture response header Acp-Connection-Id len 64\n\
         \x20   default_backend gateways\n\
         backend gateways\n    balance roundrobin\n"
    ));
    if matches!(affinity, Affinity::Cookie) {
        text.push_str("    cookie SRV insert indirect nocache\n");
    }
    for (i, gateway) in backends.iter().enumerate() {
        let n = i + 1;
        text.push_str(&format!("    server s{n} 127.0.0.1:{}", gateway.port));
        if matches!(affinity, Affinity::Cookie) {
            text.push_str(&format!(" cookie s{n}"));
        }
        text.push('\n');
    }
    text
}

/// Two backends behind one HAProxy, in a temporary directory. Dropped in
/// field order: HAProxy, the gateways (and their agents), the directory.
struct Rig {
    haproxy: HaProxy,
    gateways: [Gateway; 2],
    dir: TempDir,
}

impl Rig {
    fn start(what: &str, affinity: Affinity, extra: &[&str]) -> Self {
        eprintln!("{}", haproxy_version());
        let dir = TempDir::new(what);
        let gateways = [Gateway::start(&dir.0, "s1"), Gateway::start(&dir.0, "s2")];
        let haproxy = HaProxy::start(&dir.0, |port| {
            config(port, &[&gateways[0], &gateways[1]], affinity, extra)
        });
        Self {
            haproxy,
            gateways,
            dir,
        }
    }

    /// Everything worth seeing when an assertion fails.
    fn report(&self) -> String {
        format!(
            "--- haproxy config:\n{}--- haproxy log:\n{}--- s1 (port {}) stderr:\n{}--- s2 (port {}) stderr:\n{}",
            self.haproxy.config,
            self.haproxy.log(),
            self.gateways[0].port,
            self.gateways[0].log(),
            self.gateways[1].port,
            self.gateways[1].log(),
        )
    }

    /// Runs `demo-client --yes` through `acp-gateway connect URL ARGS`.
    fn run_client(&self, url: &str, connect_args: &[&str]) -> Run {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let cwd = self
            .dir
            .0
            .join(format!("session-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&cwd).expect("a session directory");
        let start = Instant::now();
        let mut child = Command::new(bin("demo-client"))
            .arg("--yes")
            .arg("--cwd")
            .arg(&cwd)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_acp-gateway"))
            .args(["connect", url])
            .args(connect_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group, so a hung run is killed with its bridge.
            .process_group(0)
            .spawn()
            .expect("start demo-client");
        // Drained by threads, so the client never blocks on a full pipe.
        let out = child.stdout.take().map(drain);
        let err = child.stderr.take().map(drain);
        let finished = wait_for(&mut child, LIMIT);
        if !finished {
            kill_group(child.id());
        }
        let status = child.wait().expect("wait for demo-client");
        let output = format!(
            "{}{}",
            out.map(|t| t.join().unwrap_or_default())
                .unwrap_or_default(),
            err.map(|t| t.join().unwrap_or_default())
                .unwrap_or_default()
        );
        assert!(
            finished,
            "demo-client through {url} {connect_args:?} did not finish within {LIMIT:?}:\n{output}\n{}",
            self.report()
        );
        Run {
            ok: status.success(),
            output,
            elapsed: start.elapsed(),
        }
    }
}

fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

struct Run {
    ok: bool,
    output: String,
    elapsed: Duration,
}

impl Run {
    fn whole_turn(&self) -> bool {
        self.ok && self.output.contains("stop reason: end_turn")
    }
}

impl Rig {
    /// Waits until HAProxy's log has `done`, then returns it (requests are
    /// logged when they end: an event stream after its connection's
    /// DELETE).
    fn log_when(&self, what: &str, done: impl Fn(&[Request]) -> bool) -> Vec<Request> {
        let start = Instant::now();
        loop {
            let requests = self.haproxy.requests();
            if done(&requests) {
                return requests;
            }
            assert!(
                start.elapsed() < LIMIT,
                "HAProxy's log: {what}: not within {LIMIT:?}\n{}",
                self.report()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until no agent is left on either backend.
    fn agents_reaped(&self) {
        for gateway in &self.gateways {
            wait_until("every agent process is reaped", || {
                agents_of(gateway.pid()).is_empty()
            });
        }
    }

    /// Stops everything (HAProxy, then each gateway, which reaps its
    /// agents) and checks that no process of the test is left.
    fn finish(self) {
        let mut pids = vec![self.haproxy.child.id()];
        for gateway in &self.gateways {
            pids.push(gateway.pid());
            pids.extend(agents_of(gateway.pid()));
        }
        drop(self);
        let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
        assert!(left.is_empty(), "processes left behind: {left:?}");
    }

    /// HAProxy's log once it has `http` Streamable HTTP connections, each
    /// with its DELETE and both event streams (the connection's and the
    /// session's), and `ws` upgraded WebSocket connections; then checks
    /// affinity in it: every request of a connection went to the server
    /// that answered its `initialize`, `initialize` got a cookie inserted
    /// and everything after it came with that cookie, nothing was refused.
    /// Returns the connections each server took.
    fn check_affinity(&self, http: usize, ws: usize) -> BTreeMap<String, usize> {
        let requests = self.log_when("every connection logged", |requests| {
            let by = by_connection(requests);
            let inits = requests.iter().filter(|r| r.is_initialize()).count();
            let upgrades = requests.iter().filter(|r| r.status == 101).count();
            inits == http
                && upgrades == ws
                && by.values().all(|rs| {
                    rs.iter().any(|r| r.status == 101)
                        || (rs.iter().any(|r| r.method == "DELETE")
                            && rs.iter().filter(|r| r.method == "GET").count() >= 2)
                })
        });
        let report = || self.report();
        for r in &requests {
            assert!(
                r.status < 400,
                "a request was refused: {}\n{}",
                r.line,
                report()
            );
        }
        let mut per_server = BTreeMap::new();
        for (id, rs) in by_connection(&requests) {
            let servers: BTreeSet<&str> = rs.iter().map(|r| r.server.as_str()).collect();
            assert_eq!(
                servers.len(),
                1,
                "connection {id} went to several backends: {servers:?}\n{}",
                report()
            );
            for r in &rs {
                let want = if r.is_initialize() || r.status == 101 {
                    "NI" // no cookie yet; HAProxy inserted one
                } else {
                    "VN" // the client sent the valid cookie back
                };
                assert_eq!(
                    r.cookie(),
                    want,
                    "connection {id}: cookie state of `{}`\n{}",
                    r.line,
                    report()
                );
            }
            let server = servers.into_iter().next().unwrap_or_default().to_owned();
            *per_server.entry(server).or_insert(0) += 1;
        }
        assert_eq!(
            per_server.values().sum::<usize>(),
            http + ws,
            "{per_server:?}\n{}",
            report()
        );
        // Each backend ran one agent per connection HAProxy sent it.
        for (i, gateway) in self.gateways.iter().enumerate() {
            let name = format!("s{}", i + 1);
            assert_eq!(
                gateway.agents_started(),
                per_server.get(&name).copied().unwrap_or(0),
                "agents {name} started vs connections HAProxy sent it\n{}",
                report()
            );
        }
        per_server
    }

    /// Asserts that every run completed a whole turn.
    fn assert_whole_turns(&self, runs: &[(String, Run)]) {
        for (what, run) in runs {
            assert!(
                run.whole_turn(),
                "{what}: no whole turn through HAProxy:\n{}\n{}",
                run.output,
                self.report()
            );
            eprintln!("{what}: end_turn in {:?}", run.elapsed);
        }
    }
}

fn by_connection(requests: &[Request]) -> BTreeMap<String, Vec<Request>> {
    let mut by: BTreeMap<String, Vec<Request>> = BTreeMap::new();
    for r in requests {
        if !r.connection().is_empty() {
            by.entry(r.connection().to_owned())
                .or_default()
                .push(r.clone());
        }
    }
    by
}

#[test]
fn haproxy_with_cookie_affinity_keeps_each_connection_on_its_backend_and_uses_both() {
    let started = Instant::now();
    let rig = Rig::start("affinity", Affinity::Cookie, &[]);
    let http = rig.haproxy.url("http");
    let mut runs = Vec::new();
    for i in 1..=6 {
        runs.push((format!("HTTP/1.1 run {i}"), rig.run_client(&http, &[])));
    }
    let at_once: Vec<Run> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..3)
            .map(|_| s.spawn(|| rig.run_client(&http, &[])))
            .collect();
        clients
            .into_iter()
            .map(|c| c.join().expect("a client thread"))
            .collect()
    });
    for (i, run) in at_once.into_iter().enumerate() {
        runs.push((format!("HTTP/1.1 run {} of 3 at once", i + 1), run));
    }
    runs.push(("h2c run".to_owned(), rig.run_client(&http, &["--http2"])));
    let ws = rig.haproxy.url("ws");
    runs.push(("WebSocket run".to_owned(), rig.run_client(&ws, &[])));
    rig.assert_whole_turns(&runs);
    rig.agents_reaped();
    let per_server = rig.check_affinity(10, 1);
    assert!(
        per_server.len() == 2 && per_server.values().all(|&n| n > 0),
        "both backends served connections: {per_server:?}\n{}",
        rig.report()
    );
    eprintln!("connections per backend: {per_server:?}");
    rig.finish();
    eprintln!("whole test: {:?}", started.elapsed());
}

#[test]
fn http_server_close_does_not_break_streaming() {
    let rig = Rig::start(
        "server-close",
        Affinity::Cookie,
        &["option http-server-close"],
    );
    let http = rig.haproxy.url("http");
    let ws = rig.haproxy.url("ws");
    let runs = vec![
        ("HTTP/1.1 run 1".to_owned(), rig.run_client(&http, &[])),
        ("HTTP/1.1 run 2".to_owned(), rig.run_client(&http, &[])),
        ("WebSocket run".to_owned(), rig.run_client(&ws, &[])),
    ];
    rig.assert_whole_turns(&runs);
    rig.agents_reaped();
    let per_server = rig.check_affinity(2, 1);
    eprintln!("connections per backend: {per_server:?}");
    rig.finish();
}

/// The control: without the cookie, round robin sends a connection's
/// event stream to the backend that does not know it (404), and the
/// connection fails. So the test above passes because of the cookie.
#[test]
fn without_the_affinity_cookie_every_connection_breaks() {
    let rig = Rig::start("no-cookie", Affinity::None, &[]);
    let http = rig.haproxy.url("http");
    for i in 1..=2 {
        let run = rig.run_client(&http, &[]);
        assert!(
            !run.whole_turn(),
            "run {i} completed a turn without affinity:\n{}\n{}",
            run.output,
            rig.report()
        );
    }
    let requests = rig.log_when("both initializes and a 404 for each", |requests| {
        let by = by_connection(requests);
        requests.iter().filter(|r| r.is_initialize()).count() == 2
            && by.values().all(|rs| rs.iter().any(|r| r.status == 404))
    });
    for (id, rs) in by_connection(&requests) {
        let init = rs
            .iter()
            .find(|r| r.is_initialize())
            .expect("its initialize");
        let refused = rs.iter().find(|r| r.status == 404).expect("its 404");
        assert_ne!(
            init.server,
            refused.server,
            "connection {id}: the 404 came from the other backend\n{}",
            rig.report()
        );
    }
    rig.finish();
}
