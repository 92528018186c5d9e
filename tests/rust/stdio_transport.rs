//! `Transport::stdio()` on what an agent's stdin and stdout really are, in a
//! child process: pipes and a socketpair are driven by the reactor (and the
//! inherited file descriptions keep their flags), a regular file, `/dev/null`
//! and a named FIFO as stdin go through the blocking pool; input written
//! and closed at once (`printf ... | agent`) is answered in full, the last
//! line even without a newline, and the child exits at end of input; a
//! closed stdout ends the connection (EPIPE), not the process.
//!
//! The child is this test binary again, running the `child_agent` test with
//! `LIBACP_STDIO_CHILD=1`: an engine-level connection on `Transport::stdio()`
//! answering `echo` (the params) and `describe` (how stdio is driven, and the
//! `O_NONBLOCK` flag of fd 0 and fd 1's file descriptions).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use libacp_core::{Connection, ConnectionOptions, FnHandler, RpcError, Transport};
use serde_json::{Value, json};

const CHILD_ENV: &str = "LIBACP_STDIO_CHILD";
/// The child gives up after this long, so a broken case fails, not hangs.
const CHILD_LIMIT: Duration = Duration::from_secs(30);

fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL has no memory-safety preconditions.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    flags >= 0 && flags & libc::O_NONBLOCK != 0
}

/// The child side (a no-op in a normal test run).
#[test]
fn child_agent() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    std::thread::spawn(|| {
        std::thread::sleep(CHILD_LIMIT);
        eprintln!("stdio child: time limit");
        std::process::exit(99);
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let handler = FnHandler::new().on_request(|request| async move {
            match request.method.as_str() {
                "echo" => Ok(request
                    .params
                    .as_deref()
                    .map(|p| serde_json::from_str(p.get()).expect("json"))
                    .unwrap_or(Value::Null)),
                "describe" => Ok(json!({
                    "modes": Transport::stdio_description(),
                    "stdinNonblocking": nonblocking(0),
                    "stdoutNonblocking": nonblocking(1),
                })),
                other => Err(RpcError::method_not_found(other)),
            }
        });
        let conn = Connection::start(Transport::stdio(), handler, ConnectionOptions::default());
        // `terminated`, not `closed`: the answers must be written first.
        conn.terminated().await;
    });
    std::process::exit(0);
}

fn spawn_child(stdin: impl Into<Stdio>, stdout: impl Into<Stdio>) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_agent",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(CHILD_ENV, "1")
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child")
}

fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .expect("json");
    line.push(b'\n');
    line
}

/// Reads answers (skipping the test harness's own lines) until end of
/// stream.
fn read_answers(out: impl Read) -> Vec<Value> {
    let mut answers = Vec::new();
    for line in BufReader::new(out).lines() {
        let line = line.expect("read the child's stdout");
        if line.starts_with('{') {
            answers.push(serde_json::from_str(&line).expect("an answer"));
        }
    }
    answers
}

/// Reads the next answer (skipping the harness's lines).
fn next_answer(out: &mut impl BufRead) -> Value {
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).expect("read") > 0,
            "the child's stdout ended"
        );
        if line.starts_with('{') {
            return serde_json::from_str(&line).expect("an answer");
        }
    }
}

fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + CHILD_LIMIT + Duration::from_secs(5);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < deadline, "the child did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The frames of a session: `describe`, small and large echoes.
fn workload() -> (Vec<u8>, Vec<Value>) {
    let big = "x\"\\y".repeat(100_000); // 400 kB (700 kB escaped): more than a pipe holds
    let mut input = request(0, "describe", &json!({}));
    let mut echoes = Vec::new();
    for id in 1..=500u64 {
        let params = if id % 100 == 0 {
            json!({"big": big, "id": id})
        } else {
            json!({"id": id})
        };
        input.extend(request(id, "echo", &params));
        echoes.push(params);
    }
    (input, echoes)
}

fn check_answers(answers: &[Value], echoes: &[Value]) -> Value {
    assert_eq!(answers.len(), echoes.len() + 1, "one answer per request");
    let mut describe = Value::Null;
    let mut seen = vec![false; echoes.len() + 1];
    for answer in answers {
        let id = answer["id"].as_u64().expect("id");
        let index = usize::try_from(id).expect("index");
        assert!(!seen[index], "answered twice: {id}");
        seen[index] = true;
        if id == 0 {
            describe = answer["result"].clone();
        } else {
            assert_eq!(answer["result"], echoes[index - 1], "echo {id}");
        }
    }
    describe
}

#[test]
fn pipes_are_driven_by_the_reactor_and_keep_their_flags() {
    let mut child = spawn_child(Stdio::piped(), Stdio::piped());
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (input, echoes) = workload();
    // Written from another thread while the answers are read: both
    // directions carry more than a pipe holds.
    let writer = std::thread::spawn(move || {
        for chunk in input.chunks(7000) {
            stdin.write_all(chunk).expect("write");
        }
        // stdin closes here: end of input.
    });
    let answers = read_answers(stdout);
    writer.join().expect("writer");
    let describe = check_answers(&answers, &echoes);
    assert_eq!(
        describe,
        json!({
            "modes": "stdin: pipe (reactor), stdout: pipe (reactor)",
            "stdinNonblocking": false,
            "stdoutNonblocking": false,
        })
    );
    assert!(wait(&mut child).success());
}

#[test]
fn input_written_and_closed_at_once_is_answered_in_full() {
    // `printf '...' | agent`: everything is in the pipe and the writer is
    // gone before the child reads; the last frame has no newline.
    let (mut input, echoes) = workload();
    input.pop();
    let (reader, mut writer) = std::io::pipe().expect("pipe");
    let feeder = std::thread::spawn(move || writer.write_all(&input).expect("write"));
    let mut child = spawn_child(reader, Stdio::piped());
    feeder.join().expect("feeder");
    let answers = read_answers(child.stdout.take().expect("stdout"));
    let describe = check_answers(&answers, &echoes);
    assert_eq!(
        describe["modes"],
        "stdin: pipe (reactor), stdout: pipe (reactor)"
    );
    assert!(wait(&mut child).success());
}

#[test]
fn a_socketpair_is_driven_by_the_reactor_and_keeps_its_flags() {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let theirs = OwnedFd::from(theirs);
    let mut child = spawn_child(
        theirs.try_clone().expect("dup"),
        theirs, // moved: the child holds the only copies of its end
    );
    let mut reader = BufReader::new(ours.try_clone().expect("dup"));
    let mut ours_w = ours;
    ours_w
        .write_all(&request(0, "describe", &json!({})))
        .expect("write");
    let describe = next_answer(&mut reader);
    assert_eq!(
        describe["result"],
        json!({
            "modes": "stdin: socket (reactor), stdout: socket (reactor)",
            "stdinNonblocking": false,
            "stdoutNonblocking": false,
        })
    );
    let (input, echoes) = workload();
    let input = input[request(0, "describe", &json!({})).len()..].to_vec();
    let writer = std::thread::spawn(move || {
        ours_w.write_all(&input).expect("write");
        // End of input for the child, our reading half stays open.
        ours_w
            .shutdown(std::net::Shutdown::Write)
            .expect("shutdown");
    });
    let mut answers = vec![describe];
    answers.extend(read_answers(reader));
    writer.join().expect("writer");
    check_answers(&answers, &echoes);
    assert!(wait(&mut child).success());
}

#[test]
fn a_regular_file_and_dev_null_as_stdin_use_the_blocking_pool() {
    let (mut input, echoes) = workload();
    input.pop(); // no final newline
    let path = std::env::temp_dir().join(format!("libacp-stdio-{}.ndjson", std::process::id()));
    std::fs::write(&path, &input).expect("write the input file");
    let file = std::fs::File::open(&path).expect("open");
    std::fs::remove_file(&path).expect("unlink");
    let mut child = spawn_child(file, Stdio::piped());
    let answers = read_answers(child.stdout.take().expect("stdout"));
    let describe = check_answers(&answers, &echoes);
    assert_eq!(
        describe["modes"],
        "stdin: blocking pool, stdout: pipe (reactor)"
    );
    assert!(wait(&mut child).success());

    // Immediate end of input.
    let mut child = spawn_child(Stdio::null(), Stdio::piped());
    assert_eq!(
        read_answers(child.stdout.take().expect("stdout")),
        Vec::<Value>::new()
    );
    assert!(wait(&mut child).success());
}

#[test]
fn a_named_fifo_as_stdin_uses_the_blocking_pool() {
    let dir = std::env::temp_dir().join(format!("libacp-stdio-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("in");
    let c_path = std::ffi::CString::new(path.to_str().expect("utf-8")).expect("path");
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    // Open both ends without waiting for each other, then make the child's
    // end blocking again.
    let read_end = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .expect("open the FIFO for reading");
    let mut write_end = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open the FIFO for writing");
    // SAFETY: F_SETFL on an open descriptor.
    assert_eq!(
        unsafe { libc::fcntl(read_end.as_raw_fd(), libc::F_SETFL, 0) },
        0
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
    let mut child = spawn_child(read_end, Stdio::piped());
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    write_end
        .write_all(&request(0, "describe", &json!({})))
        .expect("write");
    let describe = next_answer(&mut out);
    assert_eq!(
        describe["result"]["modes"],
        "stdin: blocking pool, stdout: pipe (reactor)"
    );
    write_end
        .write_all(&request(1, "echo", &json!({"last": true})))
        .expect("write");
    drop(write_end);
    let rest = read_answers(out);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0]["result"], json!({"last": true}));
    assert!(wait(&mut child).success());
}

#[test]
fn a_closed_stdout_ends_the_connection_not_the_process() {
    let mut child = spawn_child(Stdio::piped(), Stdio::piped());
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    stdin
        .write_all(&request(0, "describe", &json!({})))
        .expect("write");
    let _ = next_answer(&mut stdout);
    drop(stdout); // no reader left: the next answer fails with EPIPE
    stdin
        .write_all(&request(1, "echo", &json!({"to": "nobody"})))
        .expect("write");
    // The child closes its connection and exits normally (SIGPIPE is
    // ignored by Rust programs), while its stdin is still open.
    let status = wait(&mut child);
    assert!(status.success(), "{status:?}");
    drop(stdin);
}
