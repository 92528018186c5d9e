//! Fault injection against spawned agents (the shared fault agents of
//! `tests/faults/`, which every binding's fault test runs too): spawn
//! failures of every kind are clear errors at once; an agent killed in the
//! middle of a permission request, of a write or while its terminal runs,
//! one that closes its stdout while it runs, one that stops reading and one
//! flooding its stderr never leave a call pending, the host's request alive
//! or a process running; and none of it leaks descriptors, threads or
//! children: after a round of every fault, the process holds what it held
//! before.
//!
//! One test, run in order: the leak check compares the whole process before
//! and after, so nothing else may run beside it (this file is its own test
//! binary).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpConnection, AcpOptions, AgentCommand, CallError, ClientServices, ConnectionError,
    ConnectionOptions, Direction, Handler, IncomingRequest, Responder, ShutdownGrace,
};
use libacp_tests::within;
use serde_json::json;

/// What this process holds: open descriptors, threads, child processes.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Held {
    fds: usize,
    threads: usize,
    children: usize,
}

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).map_or(0, Iterator::count)
}

fn children() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                        // pid (comm) state ppid ...
                        stat.rsplit_once(')').is_some_and(|(_, rest)| {
                            rest.split_whitespace().nth(1) == Some(me.as_str())
                        })
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

fn held() -> Held {
    Held {
        fds: count("/proc/self/fd"),
        threads: count("/proc/self/task"),
        children: children(),
    }
}

/// Waits until the process holds no more than `baseline` (threads and
/// descriptors are released asynchronously as tasks end).
async fn settles_back_to(baseline: Held) {
    let settled = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let now = held();
            if now.fds <= baseline.fds
                && now.threads <= baseline.threads
                && now.children <= baseline.children
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        settled.is_ok(),
        "leaked: before {baseline:?}, after {:?}",
        held()
    );
}

/// A client host that parks permission requests (a dialog left open).
#[derive(Clone, Default)]
struct Dialog(Arc<Mutex<Vec<(IncomingRequest, Responder)>>>);

impl Handler for Dialog {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        self.0.lock().expect("dialog").push((request, responder));
    }
}

impl Dialog {
    async fn opened(&self) -> (IncomingRequest, Responder) {
        within("the permission dialog", async {
            loop {
                if let Some(r) = self.0.lock().expect("dialog").pop() {
                    return r;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
    }
}

/// A fault agent of `tests/faults/` (see its README), with short
/// shutdown grace.
fn agent(name: &str) -> AgentCommand {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("faults")
        .join(name);
    AgentCommand::new(path).grace(ShutdownGrace {
        after_stdin_close: Duration::from_millis(200),
        after_sigterm: Duration::from_millis(200),
    })
}

async fn client(name: &str, host: Dialog) -> AcpConnection {
    client_of(&agent(name), host).await
}

/// Spawns `cmd` as the agent, then `initialize` and `session/new`.
async fn client_of(cmd: &AgentCommand, host: Dialog) -> AcpConnection {
    client_with(cmd, host, AcpOptions::default()).await
}

async fn client_with(cmd: &AgentCommand, host: Dialog, options: AcpOptions) -> AcpConnection {
    let conn = AcpConnection::spawn_agent(cmd, host, options).expect("spawn");
    within(
        "initialize",
        conn.request_json("initialize", &json!({"protocolVersion": 1})),
    )
    .await
    .expect("initialize");
    within(
        "session/new",
        conn.request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []})),
    )
    .await
    .expect("session/new");
    conn
}

/// Runs the fault agent `name`: the prompt fails with the close of the
/// connection, and the agent is gone afterwards.
async fn the_prompt_fails_with_the_close(name: &str) {
    let conn = client(name, Dialog::default()).await;
    let err = within(
        "the prompt fails",
        conn.request_json("session/prompt", &prompt()),
    )
    .await
    .expect_err("the agent went away");
    assert!(closed(&err), "{err:?}");
    within("terminated", conn.terminated()).await;
}

fn prompt() -> serde_json::Value {
    json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]})
}

fn closed(err: &CallError) -> bool {
    matches!(err, CallError::Connection(ConnectionError::Closed(_)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_fail_pending_calls_promptly_and_leak_nothing() {
    // Warm up what is created once (the runtime's threads, lazy statics).
    spawn_failures_are_clear_errors_at_once().await;
    let baseline = held();
    for _ in 0..2 {
        spawn_failures_are_clear_errors_at_once().await;
        killed_while_the_host_holds_a_permission_request().await;
        killed_in_the_middle_of_writing_a_frame().await;
        stdout_closed_while_the_agent_runs().await;
        a_stderr_flood_does_not_stop_the_connection().await;
        killed_while_its_terminal_runs().await;
        a_peer_that_stops_reading_cannot_hang_the_close().await;
    }
    settles_back_to(baseline).await;
}

async fn spawn_failures_are_clear_errors_at_once() {
    let cases = [
        (AgentCommand::new("/nonexistent/acp-agent"), "No such file"),
        (agent("not_executable.sh"), "ermission denied"),
        (
            agent("stops_reading.sh").cwd("/nonexistent/missing-dir"),
            "No such file",
        ),
    ];
    for (cmd, says) in cases {
        match AcpConnection::spawn_agent(&cmd, Dialog::default(), AcpOptions::default()) {
            Err(ConnectionError::Spawn { error, .. }) => {
                assert!(error.contains(says), "{error}");
            }
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("spawned {cmd:?}"),
        }
    }
}

/// The agent asks permission during a prompt, then is killed (SIGKILL)
/// while the dialog is open: the prompt fails with the close, and the
/// host's request is cancelled (its dialog can close); a late click goes
/// nowhere and harms nothing.
async fn killed_while_the_host_holds_a_permission_request() {
    static ROUND: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let round = ROUND.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("libacp-faults-{}-{round}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let dialog = Dialog::default();
    let cmd = agent("killed_mid_permission.sh").args([&dir]);
    let conn = client_of(&cmd, dialog.clone()).await;
    let turn = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request_json("session/prompt", &prompt()).await }
    });
    let (request, responder) = dialog.opened().await;
    assert_eq!(request.method, "session/request_permission");
    std::fs::write(dir.join("go"), "").expect("go");
    let err = within("the prompt fails", turn)
        .await
        .expect("task")
        .expect_err("killed");
    assert!(closed(&err), "{err:?}");
    within("the dialog is told", request.cancellation.cancelled()).await;
    let _ = responder.respond(Ok(libacp_tests::raw(json!({}))));
    within("terminated", conn.terminated()).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The agent dies halfway through a frame: what was cut off is not
/// delivered, the pending call fails.
async fn killed_in_the_middle_of_writing_a_frame() {
    the_prompt_fails_with_the_close("killed_mid_frame.sh").await;
}

/// The agent closes its stdout but keeps running (reading its stdin): end
/// of stream closes the connection, pending calls fail, and the shutdown
/// ladder ends the process.
async fn stdout_closed_while_the_agent_runs() {
    the_prompt_fails_with_the_close("stdout_closed.sh").await;
}

/// The agent writes 20 MB to stderr while it answers: the answer still
/// arrives (stderr is drained as it comes, never into the protocol).
async fn a_stderr_flood_does_not_stop_the_connection() {
    let lines = Arc::new(Mutex::new(0usize));
    let sink = Arc::clone(&lines);
    let cmd = agent("stderr_flood.sh").stderr(move |_| *sink.lock().expect("lines") += 1);
    let conn = client_of(&cmd, Dialog::default()).await;
    let answer = within(
        "the answer after the flood",
        conn.request_json("session/prompt", &prompt())
            .decode::<serde_json::Value>(),
    )
    .await
    .expect("answered");
    assert_eq!(answer["stopReason"], "end_turn");
    within("every stderr line", async {
        while *lines.lock().expect("lines") < 20_000 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(*lines.lock().expect("lines"), 20_000);
    within("close", conn.close()).await;
    within("terminated", conn.terminated()).await;
}

/// The agent starts a terminal (`sleep 300`, run by the core's terminal
/// service) and is killed while it runs: the prompt fails with the close
/// and the terminal's process is stopped and reaped at once, while the
/// host still holds the connection (not when it drops it).
async fn killed_while_its_terminal_runs() {
    let before = children();
    let terminals = TerminalManager::new().with_kill_grace(Duration::from_millis(100));
    let options = AcpOptions {
        services: ClientServices {
            terminals: Some(Arc::new(terminals)),
            ..ClientServices::default()
        },
        ..AcpOptions::default()
    };
    let conn = client_with(&agent("killed_mid_terminal.sh"), Dialog::default(), options).await;
    let err = within(
        "the prompt fails",
        conn.request_json("session/prompt", &prompt()),
    )
    .await
    .expect_err("killed");
    assert!(closed(&err), "{err:?}");
    within("terminated", conn.terminated()).await;
    let exit = conn.process().and_then(|p| p.try_exit());
    assert_eq!(
        exit.and_then(|e| e.signal),
        Some(9),
        "the agent is killed after its terminal started ({exit:?}; code 3: no terminalId)"
    );
    within("the terminal's process is reaped", async {
        while children() > before {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    drop(conn);
}

/// The agent stops reading (it sleeps, its stdin left open) while the host
/// writes a 16 MiB prompt that can never be written whole: `close` does
/// not wait for the write, the prompt fails with the close, and the
/// shutdown ladder (stdin closed, SIGTERM) ends the agent.
async fn a_peer_that_stops_reading_cannot_hang_the_close() {
    // The trace hook runs when the writer takes a frame, before writing it:
    // once the prompt is traced, its write has begun (and cannot finish).
    let writing = Arc::new(tokio::sync::Notify::new());
    let traced = Arc::clone(&writing);
    let options = AcpOptions {
        connection: ConnectionOptions {
            trace: Some(Arc::new(move |direction, frame: &[u8]| {
                if direction == Direction::Outgoing && frame.len() > 1 << 20 {
                    traced.notify_one();
                }
            })),
            ..ConnectionOptions::default()
        },
        ..AcpOptions::default()
    };
    let conn = client_with(&agent("stops_reading.sh"), Dialog::default(), options).await;
    let text = "x".repeat(16 << 20);
    let turn = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request_json(
                "session/prompt",
                &json!({"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}),
            )
            .await
        }
    });
    within("the prompt's write begins", writing.notified()).await;
    within("close", conn.close()).await;
    let err = within("the prompt fails", turn)
        .await
        .expect("task")
        .expect_err("never answered");
    assert!(closed(&err), "{err:?}");
    within("terminated", conn.terminated()).await;
}
