//! Spawned agent processes: spawn errors are immediate and clear; args, env
//! and cwd reach the child; stderr arrives line by line; exit status is
//! reported; shutdown closes stdin, then SIGTERMs, then SIGKILLs the whole
//! process group, grandchildren included.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libacp_core::{
    AgentCommand, CallError, CloseReason, Connection, ConnectionError, ConnectionOptions,
    FnHandler, ShutdownGrace,
};
use libacp_tests::{value, within};
use serde_json::json;

fn sh(script: &str) -> AgentCommand {
    AgentCommand::new("sh").args(["-c", script])
}

fn short_grace() -> ShutdownGrace {
    ShutdownGrace {
        after_stdin_close: Duration::from_millis(200),
        after_sigterm: Duration::from_millis(200),
    }
}

fn collect_stderr(cmd: AgentCommand) -> (AgentCommand, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    (
        cmd.stderr(move |line| sink.lock().expect("lines").push(line.to_owned())),
        lines,
    )
}

/// Waits for the first stderr line and parses it as a pid.
async fn first_line_pid(lines: &Mutex<Vec<String>>) -> u32 {
    within("a pid on stderr", async {
        loop {
            if let Some(line) = lines.lock().expect("lines").first() {
                return line.parse().expect("pid");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}

/// Whether a process is gone (or a zombie no one has reaped yet).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error_at_once() {
    let err = Connection::spawn(
        &AgentCommand::new("/nonexistent/acp-agent"),
        FnHandler::new(),
        ConnectionOptions::default(),
    )
    .expect_err("cannot spawn");
    match err {
        ConnectionError::Spawn { program, error } => {
            assert_eq!(program, "/nonexistent/acp-agent");
            assert!(error.contains("No such file"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn requests_round_trip_over_the_childs_stdio() {
    let cmd = sh(
        r#"read line; echo '{"jsonrpc":"2.0","id":0,"result":{"hello":"from sh"}}'; read rest; true"#,
    );
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let result = within("answer", conn.request("initialize", &json!({})))
        .await
        .expect("ok");
    assert_eq!(value(&result), json!({"hello": "from sh"}));
    within("close", conn.close()).await;
    let exit = conn.process().expect("process").try_exit().expect("exited");
    assert!(exit.success(), "{exit}");
}

#[tokio::test]
async fn args_env_and_cwd_reach_the_child_and_stderr_comes_line_by_line() {
    let (cmd, lines) = collect_stderr(
        sh(r#"echo "$LIBACP_T:$(pwd):$0:$1" >&2; printf 'two\r\nthree' >&2"#)
            .args(["arg-one"])
            .env("LIBACP_T", "value")
            .cwd("/tmp"),
    );
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    within("exit", conn.process().expect("process").wait()).await;
    within("closed", conn.closed()).await;
    within("stderr drained", async {
        while lines.lock().expect("lines").len() < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(
        *lines.lock().expect("lines"),
        vec!["value:/tmp:arg-one:", "two", "three"]
    );
}

#[tokio::test]
async fn exit_status_is_reported_and_pending_calls_fail_when_the_agent_dies() {
    let cmd = sh("read line; exit 3");
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let err = within("call fails", conn.request("initialize", &json!({})))
        .await
        .expect_err("agent died");
    assert_eq!(
        err,
        CallError::Connection(ConnectionError::Closed(CloseReason::PeerClosed))
    );
    let exit = within("exit", conn.process().expect("process").wait()).await;
    assert_eq!(exit.code, Some(3));
}

#[tokio::test]
async fn a_well_behaved_agent_exits_when_its_stdin_closes() {
    let conn = Connection::spawn(
        &sh("cat >/dev/null"),
        FnHandler::new(),
        ConnectionOptions::default(),
    )
    .expect("spawn");
    within("close", conn.close()).await;
    let exit = conn.process().expect("process").try_exit().expect("exited");
    assert_eq!((exit.code, exit.signal), (Some(0), None));
}

#[tokio::test]
async fn sigterm_follows_when_stdin_close_is_ignored() {
    let cmd = sh("trap 'exit 7' TERM; while :; do sleep 0.02; done").grace(short_grace());
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    within("close", conn.close()).await;
    let exit = conn.process().expect("process").try_exit().expect("exited");
    assert_eq!(exit.code, Some(7), "{exit}");
}

#[tokio::test]
async fn sigkill_ends_a_child_that_ignores_sigterm() {
    let cmd = sh("trap '' TERM; while :; do sleep 0.02; done").grace(short_grace());
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let start = Instant::now();
    within("close", conn.close()).await;
    let exit = conn.process().expect("process").try_exit().expect("exited");
    assert_eq!(exit.signal, Some(9), "{exit}");
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "both rungs waited"
    );
}

#[tokio::test]
async fn the_whole_process_group_is_killed_including_grandchildren() {
    // The child starts a grandchild that ignores SIGTERM, reports its pid,
    // and itself ignores stdin.
    let (cmd, lines) = collect_stderr(
        sh("(trap '' TERM; exec sleep 1000) & echo $! >&2; exec sleep 1000").grace(short_grace()),
    );
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let grandchild: u32 = first_line_pid(&lines).await;
    assert!(!process_gone(grandchild));
    within("close", conn.close()).await;
    within("grandchild gone", async {
        while !process_gone(grandchild) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn dropping_the_connection_kills_the_agent() {
    let (cmd, lines) = collect_stderr(sh("echo $$ >&2; trap '' TERM; exec sleep 1000"));
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let status = conn.process().expect("process").clone();
    let pid: u32 = first_line_pid(&lines).await;
    assert_eq!(pid, status.pid());
    drop(conn);
    // Default grace: 2 s after stdin close, 2 s after SIGTERM, then SIGKILL.
    let exit = within("killed", status.wait()).await;
    assert_eq!(exit.signal, Some(9));
}
