//! The main demo end to end: `demo-client` spawns `demo-agent` and runs
//! whole prompt turns through real processes and pipes, in a temporary
//! directory (the agent's session history goes there too, via `TMPDIR`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libacp_examples::script;

const CLIENT: &str = env!("CARGO_BIN_EXE_demo-client");
const AGENT: &str = env!("CARGO_BIN_EXE_demo-agent");
const LIMIT: Duration = Duration::from_secs(60);

/// A directory of its own for one test, removed when the test passes.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("libacp-demo-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).expect("create the test directory");
        std::fs::create_dir_all(dir.join("tmp")).expect("create the test directory");
        Self(dir)
    }

    /// The session's working directory.
    fn work(&self) -> PathBuf {
        self.0.join("work")
    }

    fn hello(&self) -> PathBuf {
        self.work().join(script::HELLO_FILE)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `demo-client` with `args` (killed after [`LIMIT`]), stdin empty.
fn client(dir: &TestDir, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_client(dir, args, env, false)
}

/// Runs `demo-client`; `hold_stdin`: stdin is a pipe kept open and silent
/// (a user who never answers).
fn run_client(dir: &TestDir, args: &[&str], env: &[(&str, &str)], hold_stdin: bool) -> Run {
    let mut cmd = Command::new(CLIENT);
    cmd.args(args)
        .env("TMPDIR", dir.0.join("tmp"))
        .env("NO_COLOR", "1")
        .stdin(if hold_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn demo-client");
    let _stdin = child.stdin.take();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for demo-client") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("demo-client {args:?} did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

#[test]
fn yes_runs_a_full_turn_writes_the_file_and_shows_the_terminal() {
    let dir = TestDir::new("yes");
    let work = dir.work();
    let run = client(
        &dir,
        &["--yes", "--mode", "code", "--cwd", path_arg(&work)],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    // Connected, session opened, mode switched.
    assert!(out.contains("connected to libacp-demo-agent"), "{run}");
    assert!(out.contains("modes: ask*, code"), "{run}");
    assert!(out.contains("mode → code"), "{run}");
    // Streamed reply, plan, the edit with its diff, the permission.
    assert!(
        out.contains("agent › Hello! I am the libacp demo agent, in code mode."),
        "{run}"
    );
    assert!(out.contains("plan:\n  [ ] Write hello.txt"), "{run}");
    assert!(out.contains("plan [x] Sum up"), "{run}");
    assert!(out.contains("▸ [edit] Write hello.txt · pending"), "{run}");
    assert!(
        out.contains("    +Hello from the libacp demo agent!"),
        "{run}"
    );
    assert!(out.contains("→ Allow once (--yes)"), "{run}");
    assert!(out.contains("Write hello.txt: ✓ completed"), "{run}");
    // The terminal: command, output, exit status, execute tool call.
    assert!(out.contains("▸ [execute] Run `sh -c"), "{run}");
    assert!(
        out.contains(&format!("    │ {}", script::TERMINAL_GREETING)),
        "{run}"
    );
    assert!(out.contains("    └ exit code 0"), "{run}");
    assert!(out.contains("■ stop reason: end_turn"), "{run}");
    // The file is really there, with the agent's text.
    let written = std::fs::read_to_string(dir.hello()).expect("hello.txt written");
    assert_eq!(written, script::HELLO_CONTENT);
    // The agent logged to stderr only, forwarded by the client.
    assert!(
        run.stderr.contains("agent stderr │ demo-agent: initialize"),
        "{run}"
    );

    // The session can be loaded again: its history is replayed.
    let id = out
        .split("demo-client --load ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the session id is printed");
    let load = client(&dir, &["--load", id, "--cwd", path_arg(&work)], &[]);
    assert_eq!(load.code, Some(0), "{load}");
    assert!(
        load.stdout
            .contains(&format!("you › {}", script::DEFAULT_PROMPT)),
        "{load}"
    );
    assert!(
        load.stdout
            .contains("agent › Hello! I am the libacp demo agent"),
        "{load}"
    );
    assert!(
        load.stdout.contains("All done: hello.txt is written"),
        "{load}"
    );
    assert!(
        !load.stdout.contains("stop reason"),
        "no prompt after a load: {load}"
    );
}

#[test]
fn no_refuses_the_edit_and_leaves_no_file() {
    let dir = TestDir::new("no");
    let work = dir.work();
    let run = client(&dir, &["--no", "--cwd", path_arg(&work)], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert!(out.contains("→ Reject (--no)"), "{run}");
    assert!(out.contains("Write hello.txt: ✗ failed"), "{run}");
    assert!(out.contains("Refused by the user"), "{run}");
    assert!(out.contains("permission refused"), "{run}");
    let write = format!("fs/write_text_file {}", dir.hello().display());
    assert!(!out.contains(&write), "{run}");
    // The rest of the turn still runs.
    assert!(
        out.contains(&format!("    │ {}", script::TERMINAL_GREETING)),
        "{run}"
    );
    assert!(out.contains("■ stop reason: end_turn"), "{run}");
    assert!(!dir.hello().exists(), "hello.txt must not be written");
}

#[test]
fn a_cancelled_turn_stops_at_once_with_stop_reason_cancelled() {
    let dir = TestDir::new("cancel");
    let work = dir.work();
    // Slow streaming (200 ms a chunk: the reply alone takes seconds) and a
    // cancel 300 ms into the turn: it lands while the reply streams.
    let run = client(
        &dir,
        &[
            "--yes",
            "--cancel-after-ms",
            "300",
            "--prompt",
            "first",
            "--prompt",
            "second",
            "--cwd",
            path_arg(&work),
        ],
        &[(script::DELAY_ENV, "200")],
    );
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert_eq!(
        out.matches("cancelling the turn after 300 ms").count(),
        2,
        "each turn is cancelled: {run}"
    );
    assert_eq!(out.matches("■ stop reason: cancelled").count(), 2, "{run}");
    assert!(!out.contains("end_turn"), "{run}");
    assert!(!out.contains("? permission"), "{run}");
    assert!(run.stderr.contains("prompt 1: cancelled"), "{run}");
    assert!(run.stderr.contains("prompt 2: cancelled"), "{run}");
    assert!(!dir.hello().exists(), "the turn stopped before the edit");
}

#[test]
fn cancelling_while_the_user_decides_answers_the_permission_request_cancelled() {
    let dir = TestDir::new("cancel-permission");
    let work = dir.work();
    // --ask with nobody typing: the permission request waits until the
    // cancel, which the core answers `cancelled` on the client's behalf.
    let run = run_client(
        &dir,
        &[
            "--ask",
            "--cancel-after-ms",
            "3000",
            "--cwd",
            path_arg(&work),
        ],
        &[(script::DELAY_ENV, "10")],
        true,
    );
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert!(out.contains("? permission: Write hello.txt"), "{run}");
    assert!(out.contains("choose 1-2 >"), "{run}");
    assert!(out.contains("Write hello.txt: cancelled"), "{run}");
    assert!(out.contains("■ stop reason: cancelled"), "{run}");
    assert!(run.stderr.contains("prompt 1: cancelled"), "{run}");
    assert!(!dir.hello().exists(), "nothing was allowed");
}

#[test]
fn an_explicit_agent_command_and_spawn_errors() {
    let dir = TestDir::new("command");
    let work = dir.work();
    let run = client(&dir, &["--yes", "--cwd", path_arg(&work), "--", AGENT], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("■ stop reason: end_turn"), "{run}");

    let missing = dir.0.join("no-such-agent");
    let run = client(&dir, &["--yes", "--", path_arg(&missing)], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("could not start"), "{run}");

    let run = client(&dir, &["--yes", "--", "false"], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("failed to initialize"), "{run}");
}
