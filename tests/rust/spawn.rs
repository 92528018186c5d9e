//! Spawned agent processes: spawn errors are immediate and clear; args, env
//! and cwd reach the child; stderr arrives line by line; exit status is
//! reported; shutdown closes stdin, then SIGTERMs, then SIGKILLs the whole
//! process group, grandchildren included; an agent that exits while a
//! grandchild holds its stdout open closes the connection all the same, after
//! what it wrote was delivered.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libacp_core::transport::process::AGENT_EXIT_DRAIN;
use libacp_core::{
    AgentCommand, CallError, CloseReason, Connection, ConnectionError, ConnectionOptions, ExitInfo,
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

/// Waits until `pid` is gone (the agent's process group was killed).
async fn until_gone(pid: u32) {
    within("grandchild gone", async {
        while !process_gone(pid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
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
    until_gone(grandchild).await;
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

/// The agent script's prefix: a grandchild (`sleep`) that inherits the
/// agent's stdout and keeps it open after the agent exits; its pid goes to
/// stderr.
const GRANDCHILD_HOLDS_STDOUT: &str = "sleep 1000 & echo $! >&2; ";

#[tokio::test]
async fn a_pending_call_fails_when_the_agent_exits_while_a_grandchild_holds_its_stdout() {
    // Answers the first request, reads the second and exits without
    // answering it: no end of stream comes, the grandchild holds the pipe.
    let (cmd, lines) = collect_stderr(
        sh(&format!(
            r#"{GRANDCHILD_HOLDS_STDOUT}read line; echo '{{"jsonrpc":"2.0","id":0,"result":{{}}}}'; read line; exit 5"#
        ))
        .grace(short_grace()),
    );
    let conn =
        Connection::spawn(&cmd, FnHandler::new(), ConnectionOptions::default()).expect("spawn");
    let grandchild = first_line_pid(&lines).await;
    within("answer", conn.request("initialize", &json!({})))
        .await
        .expect("ok");
    let err = within(
        "the pending call fails",
        conn.request("session/prompt", &json!({})),
    )
    .await
    .expect_err("the agent exited");
    let reason = CloseReason::AgentExited(ExitInfo {
        code: Some(5),
        signal: None,
    });
    assert_eq!(
        err,
        CallError::Connection(ConnectionError::Closed(reason.clone()))
    );
    assert_eq!(within("closed", conn.closed()).await, reason);
    assert!(reason.to_string().contains("exit code 5"), "{reason}");
    // The process group is shut down as on any close: the grandchild too.
    within("terminated", conn.terminated()).await;
    until_gone(grandchild).await;
}

#[tokio::test]
async fn what_an_agent_wrote_before_exiting_arrives_while_a_grandchild_holds_its_stdout() {
    // Notifications, then the answer, then exit at once: all of it must be
    // delivered, then the connection closes. The host is slow (each
    // notification takes half the drain, one message queued at a time), so
    // the reader is still delivering what it read long after the drain: the
    // exit must not overtake messages already read or ready to be read.
    let (cmd, lines) = collect_stderr(
        sh(&format!(
            r#"{GRANDCHILD_HOLDS_STDOUT}read line; for i in 1 2 3 4 5 6 7 8 9 10; do echo '{{"jsonrpc":"2.0","method":"note","params":{{"i":'$i'}}}}'; done; echo '{{"jsonrpc":"2.0","id":0,"result":{{"last":true}}}}'; exit 0"#
        ))
        .grace(short_grace()),
    );
    let notes = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let notes = notes.clone();
        FnHandler::new().on_notification(move |n| {
            notes
                .lock()
                .expect("notes")
                .push(value(n.params.as_deref().expect("params"))["i"].clone());
            // A slow host, not a synchronization: the outcome is the same
            // however long this takes.
            tokio::time::sleep(AGENT_EXIT_DRAIN / 2)
        })
    };
    let options = ConnectionOptions {
        incoming_queue: 1,
        ..ConnectionOptions::default()
    };
    let conn = Connection::spawn(&cmd, handler, options).expect("spawn");
    let grandchild = first_line_pid(&lines).await;
    let result = within(
        "the last answer",
        conn.request("session/prompt", &json!({})),
    )
    .await
    .expect("the answer written before the exit");
    assert_eq!(value(&result), json!({"last": true}));
    assert_eq!(
        *notes.lock().expect("notes"),
        (1..=10).map(|i| json!(i)).collect::<Vec<_>>()
    );
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::AgentExited(ExitInfo {
            code: Some(0),
            signal: None
        })
    );
    within("terminated", conn.terminated()).await;
    until_gone(grandchild).await;
}
