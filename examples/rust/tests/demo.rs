//! The main demo end to end: `demo-client` spawns `demo-agent` and runs
//! whole prompt turns through real processes and pipes, in a temporary
//! directory (the agent's session history goes there too, via `TMPDIR`).

use std::io::{Read, Write};
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

    /// Another directory of the test (created).
    fn dir(&self, name: &str) -> PathBuf {
        let dir = self.0.join(name);
        std::fs::create_dir_all(&dir).expect("create a test directory");
        dir
    }

    /// Where the agent keeps a session (`$TMPDIR/libacp-demo-agent/`).
    fn stored(&self, session_id: &str) -> PathBuf {
        self.0
            .join("tmp")
            .join("libacp-demo-agent")
            .join(format!("{session_id}.json"))
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

/// What `demo-client` reads on stdin.
enum Input<'a> {
    /// Nothing (end of input at once).
    Empty,
    /// A pipe kept open and silent (a user who never answers).
    Held,
    /// These lines typed, then the end of input.
    Typed(&'a str),
}

/// Runs `demo-client` with `args` (killed after [`LIMIT`]), stdin empty.
fn client(dir: &TestDir, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_client(dir, args, env, &Input::Empty)
}

/// Runs `demo-client` with `input` on its stdin.
fn run_client(dir: &TestDir, args: &[&str], env: &[(&str, &str)], input: &Input<'_>) -> Run {
    let mut cmd = Command::new(CLIENT);
    cmd.args(args)
        .env("TMPDIR", dir.0.join("tmp"))
        .env("NO_COLOR", "1")
        .stdin(match input {
            Input::Empty => Stdio::null(),
            Input::Held | Input::Typed(_) => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn demo-client");
    let mut stdin = child.stdin.take();
    if let (Input::Typed(text), Some(pipe)) = (input, &mut stdin) {
        pipe.write_all(text.as_bytes()).expect("type on stdin");
    }
    let _stdin = match input {
        Input::Typed(_) => None, // closed: the end of input
        _ => stdin,
    };
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

/// The session id in the "to load this session again" line.
fn printed_session_id(run: &Run) -> String {
    run.stdout
        .split("demo-client --load ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session id printed: {run}"))
        .to_owned()
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
    let id = printed_session_id(&run);
    let load = client(&dir, &["--load", &id, "--cwd", path_arg(&work)], &[]);
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
        &Input::Held,
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

#[test]
fn the_startup_summary_shows_every_capability_and_the_auth_method() {
    let dir = TestDir::new("summary");
    let run = client(&dir, &["--list"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert!(
        out.contains(
            "offers: loadSession · prompts with image, audio, embeddedContext · \
             session/list, resume, close, delete · additionalDirectories · logout"
        ),
        "{run}"
    );
    assert!(
        out.contains("auth methods: demo-token (Demo token: ")
            && out.contains("log in with --auth METHOD_ID"),
        "{run}"
    );
    // --list alone: no session, no prompt.
    assert!(out.contains("no sessions"), "{run}");
    assert!(!out.contains("you ›"), "{run}");
    assert!(!run.stderr.contains("session/new"), "{run}");
}

#[test]
fn an_agent_that_requires_auth_works_with_auth_and_refuses_without() {
    let dir = TestDir::new("auth");
    let work = dir.work();
    let require = [(script::REQUIRE_AUTH_ENV, "1")];
    // Without --auth: session/new is refused, and the client says how to log in.
    let run = client(&dir, &["--yes", "--cwd", path_arg(&work)], &require);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stdout.contains("auth methods: demo-token"), "{run}");
    assert!(
        run.stderr.contains(
            "session/new: the agent requires authentication: \
             run again with --auth METHOD_ID (one of: demo-token)"
        ),
        "{run}"
    );
    assert!(!dir.hello().exists(), "no turn ran");

    // With it: the whole turn, then logout.
    let run = client(
        &dir,
        &[
            "--yes",
            "--auth",
            script::AUTH_METHOD,
            "--logout",
            "--cwd",
            path_arg(&work),
            "--prompt",
            "hello",
        ],
        &require,
    );
    assert_eq!(run.code, Some(0), "{run}");
    assert!(
        run.stdout.contains("authenticated (method demo-token)"),
        "{run}"
    );
    assert!(run.stdout.contains("■ stop reason: end_turn"), "{run}");
    assert!(run.stdout.contains("logged out"), "{run}");
    assert!(run.stderr.contains("authenticate: demo-token"), "{run}");
    assert!(run.stderr.contains("logout: goodbye"), "{run}");
    assert!(dir.hello().exists(), "the turn ran");

    // The agent's own flag does the same as the environment variable.
    let run = client(
        &dir,
        &[
            "--yes",
            "--cwd",
            path_arg(&work),
            "--",
            AGENT,
            "--require-auth",
        ],
        &[],
    );
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("requires authentication"), "{run}");

    // A method the agent does not offer is refused before anything is sent.
    let run = client(&dir, &["--auth", "password", "--list"], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(
        run.stderr
            .contains("--auth password: the agent offers no such method (it offers: demo-token)"),
        "{run}"
    );
}

#[test]
fn sessions_are_listed_resumed_closed_and_deleted() {
    let dir = TestDir::new("sessions");
    let (work, other) = (dir.work(), dir.dir("other"));
    let first = client(
        &dir,
        &[
            "--yes",
            "--cwd",
            path_arg(&work),
            "--prompt",
            "first",
            "--close",
        ],
        &[],
    );
    assert_eq!(first.code, Some(0), "{first}");
    let a = printed_session_id(&first);
    assert!(
        first
            .stdout
            .contains(&format!("closed session {a} (session/close)")),
        "{first}"
    );
    assert!(
        first
            .stderr
            .contains(&format!("session/close {a}: forgotten here")),
        "{first}"
    );
    let second = client(
        &dir,
        &["--yes", "--cwd", path_arg(&other), "--prompt", "second"],
        &[],
    );
    assert_eq!(second.code, Some(0), "{second}");
    let b = printed_session_id(&second);

    // Both listed, one page at a time (the client follows nextCursor).
    let list = client(&dir, &["--list"], &[(script::PAGE_SIZE_ENV, "1")]);
    assert_eq!(list.code, Some(0), "{list}");
    assert!(list.stdout.contains("sessions (2, 2 pages):"), "{list}");
    assert!(list.stdout.contains(&format!("  {a}  first")), "{list}");
    assert!(list.stdout.contains(&format!("  {b}  second")), "{list}");
    assert!(
        list.stdout
            .contains(&format!("in {} · updated ", work.display())),
        "{list}"
    );
    assert!(list.stderr.contains("more follow"), "{list}");
    // Filtered by directory.
    let list = client(&dir, &["--list", "--cwd", path_arg(&work)], &[]);
    assert!(
        list.stdout
            .contains(&format!("sessions in {} (1):", work.display())),
        "{list}"
    );
    assert!(
        list.stdout.contains(&a) && !list.stdout.contains(&b),
        "{list}"
    );

    // Resumed without a replay, in its own directory (found by session/list).
    let resume = client(&dir, &["--yes", "--resume", &a, "--prompt", "again"], &[]);
    assert_eq!(resume.code, Some(0), "{resume}");
    assert!(
        resume.stdout.contains(&format!("resumed session {a}")),
        "{resume}"
    );
    assert!(
        resume
            .stdout
            .contains(&format!("session {a} in {}", work.display())),
        "{resume}"
    );
    assert!(
        !resume.stdout.contains("you › first"),
        "no replay: {resume}"
    );
    assert!(
        resume.stdout.contains("■ stop reason: end_turn"),
        "{resume}"
    );
    assert!(resume.stderr.contains("none replayed"), "{resume}");
    // ... and the conversation goes on: a load replays both turns.
    let load = client(&dir, &["--load", &a, "--cwd", path_arg(&work)], &[]);
    assert!(
        load.stdout.contains("you › first") && load.stdout.contains("you › again"),
        "{load}"
    );

    // Deleted: gone from the disk and from the list; a second delete
    // succeeds too (the spec's SHOULD, acp-tck ACP-DELETE-002): nothing is
    // left to delete.
    assert!(dir.stored(&a).exists());
    let delete = client(&dir, &["--delete", &a, "--list"], &[]);
    assert_eq!(delete.code, Some(0), "{delete}");
    assert!(
        delete.stdout.contains(&format!("deleted session {a}")),
        "{delete}"
    );
    assert!(delete.stdout.contains("sessions (1):"), "{delete}");
    assert!(!delete.stdout.contains(&format!("  {a}  ")), "{delete}");
    assert!(!dir.stored(&a).exists(), "the session file is removed");
    assert!(dir.stored(&b).exists(), "the other session is kept");
    let again = client(&dir, &["--delete", &a], &[]);
    assert_eq!(again.code, Some(0), "{again}");
    assert!(!dir.stored(&a).exists());
}

#[test]
fn the_model_config_options_and_additional_directories_reach_the_agent() {
    let dir = TestDir::new("config");
    let (work, extra) = (dir.work(), dir.dir("extra"));
    let run = client(
        &dir,
        &[
            "--yes",
            "--cwd",
            path_arg(&work),
            "--add-dir",
            path_arg(&extra),
            "--model",
            "Demo Large",
            "--config",
            "thinking=off",
            "--prompt",
            "hi",
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert!(
        out.contains("config: Model: demo-small*, demo-large, demo-reasoner; Thinking: on"),
        "{run}"
    );
    assert!(
        out.contains(&format!("additional directories: {}", extra.display())),
        "{run}"
    );
    assert!(out.contains("Model → Demo Large"), "{run}");
    assert!(out.contains("Thinking → off"), "{run}");
    assert!(
        out.contains("in ask mode, answering as model demo-large."),
        "{run}"
    );
    assert!(!out.contains("thinking ›"), "thinking is off: {run}");
    assert!(
        out.contains(&format!(
            "Additional directories of this session: {}.",
            extra.display()
        )),
        "{run}"
    );
    // The agent keeps both: the list reports the directory, a resume the model.
    let id = printed_session_id(&run);
    let list = client(&dir, &["--list"], &[]);
    assert!(
        list.stdout.contains(&format!("also {}", extra.display())),
        "{list}"
    );
    let resume = client(&dir, &["--resume", &id, "--list"], &[]);
    assert!(
        resume
            .stdout
            .contains("config: Model: demo-small, demo-large*, demo-reasoner; Thinking: off"),
        "{resume}"
    );

    // A model the agent does not have: said, and the turn still runs.
    let run = client(&dir, &["--yes", "--model", "gpt-9", "--prompt", "hi"], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(
        run.stdout.contains(
            "--model gpt-9: Model: `gpt-9` is not a choice (demo-small, demo-large, demo-reasoner)"
        ),
        "{run}"
    );
    assert!(run.stdout.contains("in ask mode. I will write"), "{run}");
}

#[test]
fn image_and_audio_prompts_are_acknowledged_with_their_size() {
    let dir = TestDir::new("media");
    let image = dir.0.join("pixel.png");
    let audio = dir.0.join("beep.WAV");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n0123456789").expect("write the image");
    std::fs::write(&audio, b"RIFF\0\0\0\0WAVEfmt ").expect("write the audio");
    let run = client(
        &dir,
        &[
            "--yes",
            "--image",
            path_arg(&image),
            "--audio",
            path_arg(&audio),
            "--prompt",
            "look and listen",
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run}");
    let out = &run.stdout;
    assert!(
        out.contains("+ image pixel.png (image/png, 18 bytes)"),
        "{run}"
    );
    assert!(
        out.contains("+ audio beep.WAV (audio/wav, 16 bytes)"),
        "{run}"
    );
    assert!(
        out.contains(
            "I received an image (image/png, 18 bytes) and an audio clip (audio/wav, 16 bytes)."
        ),
        "{run}"
    );
    assert!(out.contains("■ stop reason: end_turn"), "{run}");

    let text = dir.0.join("notes.txt");
    std::fs::write(&text, "not an image").expect("write the file");
    let run = client(&dir, &["--image", path_arg(&text)], &[]);
    assert_eq!(run.code, Some(1), "{run}");
    assert!(run.stderr.contains("unknown file type"), "{run}");
}

#[test]
fn the_agents_question_is_answered_by_defaults_on_the_terminal_or_declined() {
    let dir = TestDir::new("elicitation");
    let work = dir.work();
    let prompt = "Please ask me my name";
    // --yes: the form's defaults.
    let run = client(&dir, &["--yes", "--prompt", prompt], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(
        run.stdout
            .contains("? question: You asked me to ask you something: what should I call you?"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("name: Your name (What the agent should call you) [default: friend]"),
        "{run}"
    );
    assert!(
        run.stdout.contains("→ answered name = friend (--yes)"),
        "{run}"
    );
    assert!(run.stdout.contains("agent › Hello, friend!"), "{run}");

    // --ask: typed on the terminal (the name, then the permission).
    let run = run_client(
        &dir,
        &["--ask", "--prompt", prompt, "--cwd", path_arg(&work)],
        &[],
        &Input::Typed("Ada\n1\n"),
    );
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("Your name [friend] > Ada"), "{run}");
    assert!(run.stdout.contains("→ answered name = Ada"), "{run}");
    assert!(run.stdout.contains("agent › Hello, Ada!"), "{run}");
    assert!(run.stderr.contains("elicitation answered: Ada"), "{run}");
    assert!(dir.hello().exists(), "the permission was given too");

    // --no: declined, and the agent goes on without a name.
    let run = client(&dir, &["--no", "--prompt", prompt], &[]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("→ declined (--no)"), "{run}");
    assert!(
        run.stdout
            .contains("You would rather not tell me your name: fine."),
        "{run}"
    );
    assert!(run.stdout.contains("agent › Hello! I am"), "{run}");
}

/// The demo agent offers its boolean config option (`thinking`) only to a
/// client that advertised `session.configOptions.boolean` (acp-tck
/// ACP-CONFIG-003): here a bare client, speaking raw JSON over the agent's
/// stdio, gets the model option alone.
#[test]
fn a_client_without_boolean_config_options_is_not_offered_one() {
    let dir = TestDir::new("no-booleans");
    let mut agent = Command::new(AGENT)
        .env("TMPDIR", dir.0.join("tmp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn demo-agent");
    let mut stdin = agent.stdin.take().expect("stdin");
    let stdout = agent.stdout.take().expect("stdout");
    let frames = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
            "params": {"cwd": dir.work(), "mcpServers": []}}),
    ];
    for frame in &frames {
        writeln!(stdin, "{frame}").expect("write");
    }
    // Read until the answer to session/new, within the limit.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if v["id"] == 2 {
                let _ = tx.send(v);
                return;
            }
        }
    });
    let answer = rx.recv_timeout(LIMIT).expect("session/new answered");
    drop(stdin);
    let _ = agent.kill();
    let _ = agent.wait();
    let options = answer["result"]["configOptions"]
        .as_array()
        .expect("configOptions");
    let ids: Vec<&str> = options.iter().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(ids, [script::MODEL_OPTION], "{answer}");
    assert!(options.iter().all(|o| o["type"] != "boolean"), "{answer}");
}

#[test]
fn notices_and_compactions_are_shown() {
    let dir = TestDir::new("compaction");
    let run = client(
        &dir,
        &[
            "--yes",
            "--cwd",
            path_arg(&dir.work()),
            "--prompt",
            "hello",
            "--prompt",
            "compact please",
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run}");
    let notice = format!("notice: {}", script::NOTICE_TITLE);
    assert_eq!(run.stdout.matches(&notice).count(), 1, "{run}");
    let compacting = run
        .stdout
        .find("compacting the context")
        .expect("compacting");
    let second = run
        .stdout
        .find("you › compact please")
        .expect("second prompt");
    assert!(compacting > second, "{run}");
    assert!(
        run.stdout.contains(
            "context compacted: Summary of 2 earlier messages: the user asked \"hello\"; \
             each turn wrote hello.txt and ran a command."
        ),
        "{run}"
    );
    // The history was replaced by the summary.
    let id = printed_session_id(&run);
    let stored = std::fs::read_to_string(dir.stored(&id)).expect("stored session");
    let stored: serde_json::Value = serde_json::from_str(&stored).expect("json");
    assert_eq!(stored["compactions"], 1, "{stored}");
    assert_eq!(
        stored["history"].as_array().map(Vec::len),
        Some(3),
        "{stored}"
    );
    // Without --unstable: no usage, no subagent, nothing unstable offered.
    assert!(!run.stdout.contains("tokens this turn"), "{run}");
    assert!(!run.stdout.contains("subagent"), "{run}");
    assert!(!run.stdout.contains("fork"), "{run}");
}

#[test]
fn the_unstable_extensions_fork_archive_title_status_usage_and_subagents() {
    let dir = TestDir::new("unstable");
    let run = client(
        &dir,
        &[
            "--yes",
            "--unstable",
            "--auth-status",
            "--cwd",
            path_arg(&dir.work()),
            "--prompt",
            "hi there",
            "--title",
            "  Tests   run ",
            "--status",
            "--fork",
            "--archive",
        ],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run}");
    for line in [
        "fork, archive, unarchive, status, set_title",
        "auth/status",
        "authentication state: not_required",
        "subagent Command runner: running",
        "subagent Command runner: idle",
        "tokens this turn: 2 in, ",
        "session title → Tests run",
        "session status: open",
        "(session/fork; status open)",
        "archived session",
    ] {
        assert!(run.stdout.contains(line), "{line:?} missing: {run}");
    }
    let id = printed_session_id(&run);
    let fork = run
        .stdout
        .split("forked into ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("fork id")
        .to_owned();
    assert_ne!(fork, id);
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.stored(&id)).expect("stored"))
            .expect("json");
    assert_eq!(stored["archived"], true, "{stored}");
    assert_eq!(stored["title"], "Tests run", "{stored}");
    let forked: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.stored(&fork)).expect("stored fork"))
            .expect("json");
    assert_eq!(forked["archived"], false, "{forked}");
    assert_eq!(forked["history"], stored["history"], "{forked}");
    // The archived session has left session/list; the fork is listed.
    let list = client(&dir, &["--unstable", "--list"], &[]);
    assert_eq!(list.code, Some(0), "{list}");
    assert!(list.stdout.contains(&fork), "{list}");
    assert!(!list.stdout.contains(&id), "{list}");
    // Unarchived, it is listed again.
    let back = client(&dir, &["--unstable", "--unarchive", &id, "--list"], &[]);
    assert_eq!(back.code, Some(0), "{back}");
    assert!(back.stdout.contains("unarchived session"), "{back}");
    assert!(back.stdout.contains(&id), "{back}");
}

#[test]
fn unstable_calls_need_unstable() {
    let dir = TestDir::new("needs-unstable");
    let run = client(&dir, &["--fork"], &[]);
    assert_eq!(run.code, Some(2), "{run}");
    assert!(
        run.stderr
            .contains("--fork is an unstable extension: add --unstable"),
        "{run}"
    );
}
