//! The tests of `services/terminal.rs` (a sibling file, as `framing/tests.rs`).

use super::*;
use crate::services::test_dir::TempDir;

const LONG: Duration = Duration::from_secs(10);

/// A manager with session "s" rooted at a fresh temp dir.
fn manager(tag: &str) -> (TerminalManager, TempDir) {
    let dir = TempDir::new(tag);
    let m = TerminalManager::new();
    m.add_session("s", dir.path()).unwrap();
    (m, dir)
}

fn sh(script: &str) -> v1::CreateTerminalRequest {
    sh_in("s", script)
}

fn sh_in(session: &str, script: &str) -> v1::CreateTerminalRequest {
    v1::CreateTerminalRequest::new(session.to_owned(), "sh").args(vec!["-c".into(), script.into()])
}

async fn create(m: &TerminalManager, req: v1::CreateTerminalRequest) -> v1::TerminalId {
    m.create(req).await.unwrap().terminal_id
}

async fn output(m: &TerminalManager, id: &v1::TerminalId) -> v1::TerminalOutputResponse {
    m.output(v1::TerminalOutputRequest::new("s", id.clone()))
        .await
        .unwrap()
}

async fn wait(m: &TerminalManager, id: &v1::TerminalId) -> v1::TerminalExitStatus {
    tokio::time::timeout(
        LONG,
        m.wait_for_exit(v1::WaitForTerminalExitRequest::new("s", id.clone())),
    )
    .await
    .expect("the command did not exit in time")
    .unwrap()
    .exit_status
}

async fn kill(m: &TerminalManager, id: &v1::TerminalId) {
    tokio::time::timeout(LONG, m.kill(v1::KillTerminalRequest::new("s", id.clone())))
        .await
        .expect("kill did not return")
        .unwrap();
}

/// Polls the output until it contains `needle`.
async fn output_containing(m: &TerminalManager, id: &v1::TerminalId, needle: &str) -> String {
    let deadline = Instant::now() + LONG;
    loop {
        let out = output(m, id).await.output;
        if out.contains(needle) {
            return out;
        }
        assert!(Instant::now() < deadline, "no {needle:?} in {out:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The first line of output, parsed as a pid.
async fn printed_pid(m: &TerminalManager, id: &v1::TerminalId) -> i32 {
    let out = output_containing(m, id, "\n").await;
    out.lines().next().unwrap().trim().parse().unwrap()
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) if Path::new("/proc/self").exists() => true,
        // No procfs: ask the kernel (a zombie still counts as alive).
        // SAFETY: kill(2) with signal 0 only checks for existence.
        Err(_) => (unsafe { libc::kill(pid, 0) }) != 0,
    }
}

async fn eventually_dead(pid: i32) -> bool {
    let deadline = Instant::now() + LONG;
    while Instant::now() < deadline {
        if is_dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn assert_unknown_terminal(err: &RpcError, id: &v1::TerminalId) {
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND, "{err}");
    assert_eq!(err.data, Some(json!({ "terminalId": &*id.0 })));
}

#[tokio::test]
async fn output_captures_stdout_and_stderr_in_order_with_the_exit_code() {
    let (m, _dir) = manager("basic");
    let id = create(&m, sh("echo out; echo err >&2; echo out2; exit 3")).await;
    let status = wait(&m, &id).await;
    assert_eq!(status.exit_code, Some(3));
    assert_eq!(status.signal, None);
    let out = output(&m, &id).await;
    assert_eq!(out.output, "out\nerr\nout2\n");
    assert!(!out.truncated);
    assert_eq!(out.exit_status, Some(status));
}

#[tokio::test]
async fn output_of_a_running_command_has_no_exit_status() {
    let (m, _dir) = manager("running");
    let id = create(&m, sh("echo started; sleep 30")).await;
    output_containing(&m, &id, "started").await;
    assert_eq!(output(&m, &id).await.exit_status, None);
    m.release(v1::ReleaseTerminalRequest::new("s", id))
        .await
        .unwrap();
}

#[tokio::test]
async fn args_env_and_cwd_are_applied() {
    let (m, dir) = manager("env");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let req = v1::CreateTerminalRequest::new("s", "sh")
        .args(vec![
            "-c".into(),
            r#"printf '%s|%s|%s' "$FOO" "$1" "$(pwd -P)""#.into(),
            "sh".into(),
            "first arg".into(),
        ])
        .env(vec![v1::EnvVariable::new("FOO", "bar baz")])
        .cwd(sub.clone());
    let id = create(&m, req).await;
    wait(&m, &id).await;
    assert_eq!(
        output(&m, &id).await.output,
        format!("bar baz|first arg|{}", sub.display())
    );
}

#[tokio::test]
async fn default_cwd_is_the_sessions() {
    let (m, dir) = manager("cwd");
    let id = create(&m, sh("pwd -P")).await;
    wait(&m, &id).await;
    assert_eq!(
        output(&m, &id).await.output,
        format!("{}\n", dir.path().display())
    );
}

#[tokio::test]
async fn relative_or_missing_cwd_is_invalid_params() {
    let (m, dir) = manager("badcwd");
    let err = m
        .create(sh("true").cwd(PathBuf::from("rel")))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    assert_eq!(err.data, Some(json!({ "cwd": "rel" })));
    let missing = dir.path().join("missing");
    let err = m.create(sh("true").cwd(missing)).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    assert!(lock(&m.terminals).is_empty());
    assert_eq!(
        m.add_session("t", Path::new("rel")).unwrap_err().code,
        codes::INVALID_PARAMS
    );
}

#[tokio::test]
async fn unknown_session_is_resource_not_found() {
    let (m, _dir) = manager("nosession");
    let err = m
        .create(v1::CreateTerminalRequest::new("other", "true"))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
    assert_eq!(err.data, Some(json!({ "sessionId": "other" })));
}

#[tokio::test]
async fn bad_commands_are_refused_without_a_terminal() {
    let (m, _dir) = manager("badcmd");
    let err = m
        .create(v1::CreateTerminalRequest::new(
            "s",
            "/definitely/not/a/command",
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::INTERNAL_ERROR, "{err}");
    assert_eq!(err.data.unwrap()["command"], "/definitely/not/a/command");
    let err = m
        .create(v1::CreateTerminalRequest::new("s", ""))
        .await
        .unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    let err = m.create(sh("true\0")).await.unwrap_err();
    assert_eq!(err.code, codes::INVALID_PARAMS);
    for name in ["", "A=B", "A\0"] {
        let err = m
            .create(sh("true").env(vec![v1::EnvVariable::new(name, "x")]))
            .await
            .unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS, "{name:?}");
    }
    assert!(lock(&m.terminals).is_empty());
}

#[tokio::test]
async fn output_limit_truncates_from_the_start_at_a_character_boundary() {
    let (m, _dir) = manager("utf8");
    // 100 × "é" (2 bytes each) = 200 bytes; 11 bytes would split one.
    let script = "printf 'é%.0s' $(seq 1 100)";
    let id = create(&m, sh(script).output_byte_limit(11)).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!(out.output, "é".repeat(5));
    assert!(out.truncated);
    // The same command within its limit is not truncated.
    let id = create(&m, sh(script).output_byte_limit(200)).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!(out.output, "é".repeat(100));
    assert!(!out.truncated);
}

#[tokio::test]
async fn truncation_keeps_the_end_of_the_output() {
    let (m, _dir) = manager("tail");
    let id = create(&m, sh("seq 1 10000").output_byte_limit(12)).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!(out.output, "\n9999\n10000\n");
    assert!(out.truncated);
}

#[tokio::test]
async fn absent_limit_uses_the_default_and_large_limits_are_clamped() {
    let dir = TempDir::new("limits");
    let m = TerminalManager::new().with_output_byte_limits(4, 8);
    m.add_session("s", dir.path()).unwrap();
    let id = create(&m, sh("printf 0123456789")).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!((out.output.as_str(), out.truncated), ("6789", true));
    let id = create(&m, sh("printf 0123456789").output_byte_limit(u64::MAX)).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!((out.output.as_str(), out.truncated), ("23456789", true));
    let id = create(&m, sh("printf 0123456789").output_byte_limit(0)).await;
    wait(&m, &id).await;
    let out = output(&m, &id).await;
    assert_eq!((out.output.as_str(), out.truncated), ("", true));
}

#[tokio::test]
async fn signal_exits_report_the_signal_name() {
    let (m, _dir) = manager("signal");
    for (signal, name) in [("KILL", "SIGKILL"), ("TERM", "SIGTERM")] {
        let id = create(&m, sh(&format!("kill -{signal} $$"))).await;
        let status = wait(&m, &id).await;
        assert_eq!(status.signal.as_deref(), Some(name));
        assert_eq!(status.exit_code, None);
    }
}

#[tokio::test]
async fn kill_stops_the_whole_group_and_keeps_the_terminal() {
    let (m, _dir) = manager("kill");
    // The shell prints the pid of a background child in its group.
    let id = create(&m, sh("sleep 30 & echo $!; wait")).await;
    let grandchild = printed_pid(&m, &id).await;
    kill(&m, &id).await;
    // kill returned after the exit: the status is there at once.
    let out = output(&m, &id).await;
    assert_eq!(
        out.exit_status.and_then(|s| s.signal).as_deref(),
        Some("SIGTERM")
    );
    assert_eq!(wait(&m, &id).await.signal.as_deref(), Some("SIGTERM"));
    assert!(
        eventually_dead(grandchild).await,
        "background child survived"
    );
    // Killing again is harmless.
    kill(&m, &id).await;
    m.release(v1::ReleaseTerminalRequest::new("s", id))
        .await
        .unwrap();
}

#[tokio::test]
async fn kill_gives_the_command_a_grace_period() {
    let (m, _dir) = manager("grace");
    let id = create(
        &m,
        sh("trap 'echo bye; exit 7' TERM; echo ready; sleep 30 & wait"),
    )
    .await;
    output_containing(&m, &id, "ready").await;
    kill(&m, &id).await;
    let status = wait(&m, &id).await;
    assert_eq!(status.exit_code, Some(7));
    assert_eq!(output(&m, &id).await.output, "ready\nbye\n");
}

#[tokio::test]
async fn kill_escalates_to_sigkill_after_the_grace() {
    let dir = TempDir::new("escalate");
    let m = TerminalManager::new().with_kill_grace(Duration::from_millis(200));
    m.add_session("s", dir.path()).unwrap();
    let id = create(&m, sh("trap '' TERM; echo ready; sleep 30")).await;
    output_containing(&m, &id, "ready").await;
    let started = Instant::now();
    kill(&m, &id).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(wait(&m, &id).await.signal.as_deref(), Some("SIGKILL"));
}

#[tokio::test]
async fn wait_for_exit_resolves_when_another_request_kills() {
    let (m, _dir) = manager("waitkill");
    let m = Arc::new(m);
    let id = create(&m, sh("sleep 30")).await;
    let waiter = {
        let (m, id) = (Arc::clone(&m), id.clone());
        tokio::spawn(async move { wait(&m, &id).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished());
    kill(&m, &id).await;
    let status = waiter.await.unwrap();
    assert_eq!(status.signal.as_deref(), Some("SIGTERM"));
}

#[tokio::test]
async fn release_kills_and_forgets_the_terminal() {
    let (m, _dir) = manager("release");
    let id = create(&m, sh("echo $$; exec sleep 30")).await;
    let pid = printed_pid(&m, &id).await;
    m.release(v1::ReleaseTerminalRequest::new("s", id.clone()))
        .await
        .unwrap();
    assert!(eventually_dead(pid).await, "released command survived");
    assert_unknown_terminal(
        &m.output(v1::TerminalOutputRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
    assert_unknown_terminal(
        &m.wait_for_exit(v1::WaitForTerminalExitRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
    assert_unknown_terminal(
        &m.kill(v1::KillTerminalRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
    assert_unknown_terminal(
        &m.release(v1::ReleaseTerminalRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
}

#[tokio::test]
async fn exit_is_reported_while_a_background_process_holds_the_output() {
    let (m, _dir) = manager("background");
    // The shell exits at once; its background child keeps the pipe open.
    let id = create(&m, sh("sleep 30 & echo $!")).await;
    let status = wait(&m, &id).await;
    assert_eq!(status.exit_code, Some(0));
    let out = output(&m, &id).await;
    assert_eq!(out.exit_status, Some(status));
    let background: i32 = out.output.trim().parse().unwrap();
    assert!(!is_dead(background));
    // Releasing the exited terminal still kills what it left behind.
    m.release(v1::ReleaseTerminalRequest::new("s", id))
        .await
        .unwrap();
    assert!(
        eventually_dead(background).await,
        "background child survived"
    );
}

#[tokio::test]
async fn unknown_terminal_ids_are_resource_not_found() {
    let (m, _dir) = manager("unknown");
    let id = v1::TerminalId::new("term-nope");
    assert_unknown_terminal(
        &m.output(v1::TerminalOutputRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
    assert_unknown_terminal(
        &m.kill(v1::KillTerminalRequest::new("s", id.clone()))
            .await
            .unwrap_err(),
        &id,
    );
}

#[tokio::test]
async fn another_sessions_terminal_is_not_found() {
    let (m, dir) = manager("foreign");
    m.add_session("t", dir.path()).unwrap();
    let id = create(&m, sh("echo hi")).await;
    let err = m
        .output(v1::TerminalOutputRequest::new("t", id.clone()))
        .await
        .unwrap_err();
    assert_unknown_terminal(&err, &id);
    let err = m
        .release(v1::ReleaseTerminalRequest::new("t", id.clone()))
        .await
        .unwrap_err();
    assert_unknown_terminal(&err, &id);
    // Still there for its own session.
    wait(&m, &id).await;
    assert_eq!(output(&m, &id).await.output, "hi\n");
}

#[tokio::test]
async fn release_session_releases_only_that_sessions_terminals() {
    let (m, dir) = manager("relsession");
    m.add_session("t", dir.path()).unwrap();
    let a = create(&m, sh("echo $$; exec sleep 30")).await;
    let b = create(&m, sh("echo $$; exec sleep 30")).await;
    let other = m
        .create(sh_in("t", "echo $$; exec sleep 30"))
        .await
        .unwrap()
        .terminal_id;
    let (pa, pb) = (printed_pid(&m, &a).await, printed_pid(&m, &b).await);
    m.release_session("s");
    assert!(eventually_dead(pa).await && eventually_dead(pb).await);
    for id in [&a, &b] {
        let err = m
            .output(v1::TerminalOutputRequest::new("s", id.clone()))
            .await
            .unwrap_err();
        assert_unknown_terminal(&err, id);
    }
    // The other session's terminal still runs, and "s" can still create.
    let out = m
        .output(v1::TerminalOutputRequest::new("t", other.clone()))
        .await
        .unwrap();
    assert_eq!(out.exit_status, None);
    create(&m, sh("true")).await;
    m.remove_session("t");
    assert!(m.create(sh_in("t", "true")).await.is_err());
    assert!(
        m.output(v1::TerminalOutputRequest::new("t", other))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn dropping_the_manager_kills_running_commands() {
    let (m, _dir) = manager("drop");
    let id = create(&m, sh("sleep 30 & echo $!; wait")).await;
    let grandchild = printed_pid(&m, &id).await;
    let id2 = create(&m, sh("echo $$; exec sleep 30")).await;
    let child = printed_pid(&m, &id2).await;
    drop(m);
    assert!(eventually_dead(child).await, "command survived the manager");
    assert!(
        eventually_dead(grandchild).await,
        "background child survived"
    );
}

#[test]
fn buffer_truncation_never_splits_a_character() {
    // Mixed 1-, 2-, 3- and 4-byte characters.
    let text = "aé€😀".repeat(20);
    for limit in 0..=24 {
        for chunk in 1..=7 {
            let mut buf = OutputBuffer::new(limit);
            for piece in text.as_bytes().chunks(chunk) {
                buf.push(piece);
            }
            let kept = buf.text(true);
            assert!(
                !kept.contains('\u{FFFD}'),
                "limit {limit}, chunk {chunk}: {kept:?}"
            );
            assert!(kept.len() <= limit, "limit {limit}: {kept:?}");
            assert!(
                kept.len() + 4 > limit,
                "kept too little for {limit}: {kept:?}"
            );
            assert!(text.ends_with(&kept));
            assert!(buf.truncated);
        }
    }
}

#[test]
fn buffer_hides_an_incomplete_character_until_complete() {
    let mut buf = OutputBuffer::new(100);
    buf.push("a€".as_bytes().get(..2).unwrap());
    assert_eq!(buf.text(false), "a");
    assert_eq!(buf.text(true), "a\u{FFFD}");
    buf.push("€".as_bytes().get(1..).unwrap());
    assert_eq!(buf.text(false), "a€");
    assert!(!buf.truncated);
}

#[test]
fn signal_names() {
    assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
    assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
    assert_eq!(signal_name(1000), "1000");
}
