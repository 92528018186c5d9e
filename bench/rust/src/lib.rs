//! Shared pieces of the Rust bench programs (see `bench/README.md`):
//! the prompt vocabulary, the payloads every implementation reproduces byte
//! for byte, the command line, the client-side checks, the workload driver
//! and the result line.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};

/// Bytes of text in each streamed chunk.
pub const CHUNK_LEN: usize = 100;
/// Bytes of content in each `fs/read_text_file` answer.
pub const READ_LEN: usize = 1024;
/// The cwd every client gives `session/new`.
pub const SESSION_CWD: &str = "/tmp";
/// The uri of the embedded resource of W3.
pub const RESOURCE_URI: &str = "file:///bench/resource.txt";

/// The 6-byte unit the payloads repeat: a quote pair and a backslash, so
/// every frame carrying them exercises JSON escaping.
const UNIT: &str = "\"q\" \\ ";

/// One 64-byte line: `UNIT` repeated, cut to 63 bytes, then `\n`.
pub fn line64() -> String {
    let mut line = UNIT.repeat(11);
    line.truncate(63);
    line.push('\n');
    line
}

/// `len` bytes of 64-byte lines (the last one cut): the content of
/// `write B`, of the W3 resource and (1024 bytes) of every read.
pub fn text_of(len: usize) -> String {
    let line = line64();
    let mut text = line.repeat(len / 64 + 1);
    text.truncate(len);
    text
}

/// The text of chunk `i`: the index in 10 digits, a space, 89 bytes of
/// `UNIT`s (100 bytes).
pub fn chunk_text(i: u64) -> String {
    let mut pad = UNIT.repeat(15);
    pad.truncate(89);
    format!("{i:010} {pad}")
}

/// The index of a chunk text, if it is one.
pub fn chunk_index(text: &str) -> Option<u64> {
    if text.len() != CHUNK_LEN {
        return None;
    }
    text.get(..10)?.parse().ok()
}

/// The path of the `i`-th read of `read M`.
pub fn read_path(i: u64) -> String {
    format!("/bench/read/{i}")
}

/// The index of a read path.
pub fn read_index(path: &str) -> Option<u64> {
    path.strip_prefix("/bench/read/")?.parse().ok()
}

/// What a prompt's first text block asks the agent to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `stream N`: N `agent_message_chunk`s of `chunk_text(i)`.
    Stream(u64),
    /// `read M`: M sequential `fs/read_text_file` of `read_path(i)`.
    Read(u64),
    /// `write B`: one `fs/write_text_file` of `text_of(B)` to `/bench/write.txt`.
    Write(usize),
    /// `echo`: `end_turn` at once.
    Echo,
}

/// Parses a prompt's first text block.
pub fn parse_command(text: &str) -> Option<Command> {
    let mut words = text.split_whitespace();
    let command = words.next()?;
    let arg = words.next();
    match (command, arg) {
        ("stream", Some(n)) => n.parse().ok().map(Command::Stream),
        ("read", Some(n)) => n.parse().ok().map(Command::Read),
        ("write", Some(n)) => n.parse().ok().map(Command::Write),
        ("echo", _) => Some(Command::Echo),
        _ => None,
    }
}

/// The path `write B` writes to.
pub const WRITE_PATH: &str = "/bench/write.txt";

/// A client's workload, from its command line.
#[derive(Debug, Clone, Copy)]
pub enum Workload {
    /// One prompt `stream N`: N `session/update` chunks.
    W1 {
        /// How many chunks.
        n: u64,
    },
    /// One prompt `read M`: M sequential `fs/read_text_file` round trips.
    W2 {
        /// How many round trips.
        m: u64,
    },
    /// Large payloads: `write B`, and a prompt with a B-byte resource.
    W3 {
        /// The payload's size.
        bytes: usize,
        /// How many times each is timed.
        reps: usize,
    },
    /// Many sessions, each `session/new` and a prompt `stream K`.
    W4 {
        /// How many sessions.
        sessions: usize,
        /// Chunks per prompt (K).
        chunks: u64,
        /// At most this many sessions in flight.
        inflight: usize,
    },
    /// Every workload, tiny, on one connection (the cross-check).
    Smoke,
}

impl Workload {
    /// Its name on the command line and in the results (`w1`...).
    pub fn name(&self) -> &'static str {
        match self {
            Workload::W1 { .. } => "w1",
            Workload::W2 { .. } => "w2",
            Workload::W3 { .. } => "w3",
            Workload::W4 { .. } => "w4",
            Workload::Smoke => "smoke",
        }
    }
}

/// `CLIENT WORKLOAD [ARGS] -- AGENT_COMMAND...`, parsed.
#[derive(Debug)]
pub struct Invocation {
    /// What to run.
    pub workload: Workload,
    /// The agent's command line.
    pub agent: Vec<String>,
}

/// The clients' usage line.
pub const USAGE: &str = "usage: CLIENT (w1 [N] | w2 [M] | w3 [BYTES [REPS]] | w4 [SESSIONS [CHUNKS [INFLIGHT]]] | smoke) -- AGENT_COMMAND...";

/// Parses the process's arguments.
pub fn invocation() -> Result<Invocation, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").ok_or(USAGE)?;
    let (mine, agent) = (&args[..split], &args[split + 1..]);
    if agent.is_empty() || mine.is_empty() {
        return Err(USAGE.into());
    }
    let num = |i: usize, default: u64| -> Result<u64, String> {
        mine.get(i).map_or(Ok(default), |s| {
            s.parse().map_err(|_| format!("bad number {s:?}"))
        })
    };
    let workload = match mine[0].as_str() {
        "w1" => Workload::W1 {
            n: num(1, 100_000)?,
        },
        "w2" => Workload::W2 { m: num(1, 20_000)? },
        "w3" => Workload::W3 {
            bytes: num(1, 8 << 20)? as usize,
            reps: num(2, 5)? as usize,
        },
        "w4" => Workload::W4 {
            sessions: num(1, 1000)? as usize,
            chunks: num(2, 10)?,
            inflight: num(3, 64)?.max(1) as usize,
        },
        "smoke" => Workload::Smoke,
        other => return Err(format!("unknown workload {other:?}; {USAGE}")),
    };
    Ok(Invocation {
        workload,
        agent: agent.to_vec(),
    })
}

/// This process's peak RSS (KiB) and CPU time (user + system, seconds).
pub fn usage() -> (i64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (ru.ru_maxrss, secs(ru.ru_utime) + secs(ru.ru_stime))
}

/// Prints the result line.
pub fn emit(implementation: &str, workload: &str, result: Value) {
    let (rss, cpu) = usage();
    println!(
        "{}",
        json!({
            "impl": implementation,
            "workload": workload,
            "result": result,
            "usage": {"client_rss_kb": rss, "client_cpu_s": cpu},
        })
    );
}

/// Prints an error line and returns the failure exit code.
pub fn fail(implementation: &str, workload: &str, error: &str) -> std::process::ExitCode {
    let (rss, cpu) = usage();
    println!(
        "{}",
        json!({
            "impl": implementation,
            "workload": workload,
            "error": error,
            "usage": {"client_rss_kb": rss, "client_cpu_s": cpu},
        })
    );
    std::process::ExitCode::FAILURE
}

/// The median of some samples (0 if none).
pub fn median(samples: &[f64]) -> f64 {
    percentile(samples, 50.0)
}

/// The `p`-th percentile (nearest rank) of some samples (0 if none).
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a client saw, checked as it arrives.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Chunks seen per session, in order.
    chunks: Mutex<HashMap<String, u64>>,
    /// Arrival time of every read request (since the tracker was made).
    read_times: Mutex<Vec<Instant>>,
    next_read: AtomicU64,
    /// The content `write` must carry.
    expected_write: Mutex<Option<Arc<String>>>,
    writes: AtomicU64,
    errors: Mutex<Vec<String>>,
}

impl Tracker {
    fn error(&self, e: String) {
        let mut errors = lock(&self.errors);
        if errors.len() < 10 {
            errors.push(e);
        }
    }

    /// An `agent_message_chunk` text for `session`.
    pub fn chunk(&self, session: &str, text: &str) {
        let mut chunks = lock(&self.chunks);
        let seen = chunks.entry(session.to_owned()).or_insert(0);
        if chunk_index(text) != Some(*seen) {
            let expected = *seen;
            drop(chunks);
            self.error(format!("session {session}: chunk {expected} was {text:?}"));
            return;
        }
        *seen += 1;
    }

    /// Chunks seen for `session`, and forgets it.
    pub fn take_chunks(&self, session: &str) -> u64 {
        lock(&self.chunks).remove(session).unwrap_or(0)
    }

    /// An `fs/read_text_file` of `path`; the content to answer.
    pub fn read(&self, path: &str) -> Result<String, String> {
        lock(&self.read_times).push(Instant::now());
        let expected = self.next_read.fetch_add(1, Ordering::Relaxed);
        if read_index(path) != Some(expected) {
            let e = format!("read {expected} was of {path:?}");
            self.error(e.clone());
            return Err(e);
        }
        Ok(text_of(READ_LEN))
    }

    /// Resets the read counter and returns the arrival times so far.
    pub fn take_reads(&self) -> Vec<Instant> {
        self.next_read.store(0, Ordering::Relaxed);
        std::mem::take(&mut *lock(&self.read_times))
    }

    /// Sets what the next writes must carry.
    pub fn expect_write(&self, content: Arc<String>) {
        *lock(&self.expected_write) = Some(content);
    }

    /// An `fs/write_text_file`.
    pub fn write(&self, path: &str, content: &str) -> Result<(), String> {
        let ok = path == WRITE_PATH
            && lock(&self.expected_write)
                .as_deref()
                .is_some_and(|e| e.as_str() == content);
        if !ok {
            let e = format!(
                "write of {} bytes to {path:?} is not the expected content",
                content.len()
            );
            self.error(e.clone());
            return Err(e);
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// How many writes were seen since the last call (and resets it).
    pub fn take_writes(&self) -> u64 {
        self.writes.swap(0, Ordering::Relaxed)
    }

    /// The first errors seen, if any.
    pub fn check(&self) -> Result<(), String> {
        let errors = lock(&self.errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

/// What a client implementation gives the shared driver.
pub trait BenchPeer: Clone + Send + Sync + 'static {
    /// `session/new` with cwd `SESSION_CWD`; the session id.
    fn new_session(&self) -> impl Future<Output = Result<String, String>> + Send;
    /// A prompt of one text block (and a text resource of `resource`, when
    /// given); the stop reason.
    fn prompt(
        &self,
        session: &str,
        text: &str,
        resource: Option<Arc<String>>,
    ) -> impl Future<Output = Result<String, String>> + Send;
}

fn end_turn(label: &str, stop: &str) -> Result<(), String> {
    if stop == "end_turn" {
        Ok(())
    } else {
        Err(format!("{label}: stopReason {stop:?}"))
    }
}

async fn stream<P: BenchPeer>(
    peer: &P,
    tracker: &Tracker,
    session: &str,
    n: u64,
) -> Result<f64, String> {
    let start = Instant::now();
    let stop = peer.prompt(session, &format!("stream {n}"), None).await?;
    let took = start.elapsed().as_secs_f64();
    end_turn("stream", &stop)?;
    tracker.check()?;
    let got = tracker.take_chunks(session);
    if got != n {
        return Err(format!("stream {n}: got {got} chunks before the response"));
    }
    Ok(took)
}

async fn reads<P: BenchPeer>(
    peer: &P,
    tracker: &Tracker,
    session: &str,
    m: u64,
) -> Result<(f64, Vec<f64>), String> {
    tracker.take_reads();
    let start = Instant::now();
    let stop = peer.prompt(session, &format!("read {m}"), None).await?;
    let took = start.elapsed().as_secs_f64();
    end_turn("read", &stop)?;
    tracker.check()?;
    let times = tracker.take_reads();
    if times.len() as u64 != m {
        return Err(format!("read {m}: got {} reads", times.len()));
    }
    let gaps = times
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1e6)
        .collect();
    Ok((took, gaps))
}

async fn write<P: BenchPeer>(
    peer: &P,
    tracker: &Tracker,
    session: &str,
    bytes: usize,
) -> Result<f64, String> {
    tracker.expect_write(Arc::new(text_of(bytes)));
    let start = Instant::now();
    let stop = peer
        .prompt(session, &format!("write {bytes}"), None)
        .await?;
    let took = start.elapsed().as_secs_f64();
    end_turn("write", &stop)?;
    tracker.check()?;
    if tracker.take_writes() != 1 {
        return Err("write: not exactly one write".into());
    }
    Ok(took)
}

async fn resource<P: BenchPeer>(
    peer: &P,
    session: &str,
    text: &Arc<String>,
) -> Result<f64, String> {
    let start = Instant::now();
    let stop = peer.prompt(session, "echo", Some(Arc::clone(text))).await?;
    let took = start.elapsed().as_secs_f64();
    end_turn("echo", &stop)?;
    Ok(took)
}

async fn sessions<P: BenchPeer>(
    peer: &P,
    tracker: &Arc<Tracker>,
    count: usize,
    chunks: u64,
    inflight: usize,
) -> Result<f64, String> {
    let gate = Arc::new(tokio::sync::Semaphore::new(inflight));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..count {
        let permit = Arc::clone(&gate)
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let (peer, tracker) = (peer.clone(), Arc::clone(tracker));
        tasks.spawn(async move {
            let session = peer.new_session().await?;
            let stop = peer
                .prompt(&session, &format!("stream {chunks}"), None)
                .await?;
            drop(permit);
            end_turn("w4 stream", &stop)?;
            let got = tracker.take_chunks(&session);
            if got != chunks {
                return Err(format!("w4: session {session} got {got} chunks"));
            }
            Ok::<(), String>(())
        });
        while let Some(done) = tasks.try_join_next() {
            done.map_err(|e| e.to_string())??;
        }
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    let took = start.elapsed().as_secs_f64();
    tracker.check()?;
    Ok(took)
}

/// Runs `workload` after `initialize`; the result object.
pub async fn drive<P: BenchPeer>(
    peer: P,
    tracker: Arc<Tracker>,
    workload: Workload,
) -> Result<Value, String> {
    let session = peer.new_session().await?;
    Ok(match workload {
        Workload::W1 { n } => {
            let s = stream(&peer, &tracker, &session, n).await?;
            json!({"n": n, "seconds": s, "per_s": n as f64 / s})
        }
        Workload::W2 { m } => {
            let (s, gaps) = reads(&peer, &tracker, &session, m).await?;
            json!({"m": m, "seconds": s, "per_s": m as f64 / s,
                   "p50_us": percentile(&gaps, 50.0), "p99_us": percentile(&gaps, 99.0)})
        }
        Workload::W3 { bytes, reps } => {
            let mut writes = Vec::new();
            for _ in 0..reps {
                writes.push(write(&peer, &tracker, &session, bytes).await?);
            }
            let text = Arc::new(text_of(bytes));
            let mut resources = Vec::new();
            for _ in 0..reps {
                resources.push(resource(&peer, &session, &text).await?);
            }
            json!({"bytes": bytes, "reps": reps, "write_s": median(&writes),
                   "resource_s": median(&resources), "write_samples": writes,
                   "resource_samples": resources})
        }
        Workload::W4 {
            sessions: count,
            chunks,
            inflight,
        } => {
            let s = sessions(&peer, &tracker, count, chunks, inflight).await?;
            json!({"sessions": count, "chunks": chunks, "inflight": inflight, "seconds": s})
        }
        Workload::Smoke => {
            stream(&peer, &tracker, &session, 50).await?;
            reads(&peer, &tracker, &session, 20).await?;
            write(&peer, &tracker, &session, 10_000).await?;
            resource(&peer, &session, &Arc::new(text_of(10_000))).await?;
            sessions(&peer, &tracker, 8, 5, 4).await?;
            json!({"ok": true})
        }
    })
}

/// The ACP v1 messages both typed implementations (libacp and the official
/// SDK, which share the official schema crate) build.
pub mod msg {
    use std::sync::Arc;

    use libacp_core::v1;

    /// `initialize` with the fs capabilities the workloads need.
    pub fn initialize() -> v1::InitializeRequest {
        v1::InitializeRequest::new(v1::ProtocolVersion::V1).client_capabilities(
            v1::ClientCapabilities::new().fs(v1::FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true)),
        )
    }

    /// The agents' `initialize` answer: embedded context accepted.
    pub fn initialized() -> v1::InitializeResponse {
        v1::InitializeResponse::new(v1::ProtocolVersion::V1).agent_capabilities(
            v1::AgentCapabilities::new()
                .prompt_capabilities(v1::PromptCapabilities::new().embedded_context(true)),
        )
    }

    /// `session/new` in the bench's working directory.
    pub fn new_session() -> v1::NewSessionRequest {
        v1::NewSessionRequest::new(super::SESSION_CWD)
    }

    /// A prompt of `text`, with `resource` as an embedded text resource.
    pub fn prompt(session: &str, text: &str, resource: Option<Arc<String>>) -> v1::PromptRequest {
        let mut blocks = vec![v1::ContentBlock::Text(v1::TextContent::new(text))];
        if let Some(resource) = resource {
            let contents = v1::TextResourceContents::new(resource.as_str(), super::RESOURCE_URI);
            blocks.push(v1::ContentBlock::Resource(v1::EmbeddedResource::new(
                v1::EmbeddedResourceResource::TextResourceContents(contents),
            )));
        }
        v1::PromptRequest::new(session.to_owned(), blocks)
    }

    /// The stop reason as on the wire.
    pub fn stop_reason(response: &v1::PromptResponse) -> String {
        serde_json::to_value(response.stop_reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The first text block of a prompt.
    pub fn first_text(request: &v1::PromptRequest) -> &str {
        request
            .prompt
            .iter()
            .find_map(|b| match b {
                v1::ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Bytes of embedded text resources in a prompt.
    pub fn resource_bytes(request: &v1::PromptRequest) -> usize {
        request
            .prompt
            .iter()
            .map(|b| match b {
                v1::ContentBlock::Resource(r) => match &r.resource {
                    v1::EmbeddedResourceResource::TextResourceContents(t) => t.text.len(),
                    _ => 0,
                },
                _ => 0,
            })
            .sum()
    }

    /// Chunk `i` of a stream.
    pub fn chunk(session: &v1::SessionId, i: u64) -> v1::SessionNotification {
        v1::SessionNotification::new(
            session.clone(),
            v1::SessionUpdate::AgentMessageChunk(v1::ContentChunk::new(v1::ContentBlock::Text(
                v1::TextContent::new(super::chunk_text(i)),
            ))),
        )
    }

    /// The text of an `agent_message_chunk`, if it is one.
    pub fn chunk_text(n: &v1::SessionNotification) -> Option<&str> {
        match &n.update {
            v1::SessionUpdate::AgentMessageChunk(c) => match &c.content {
                v1::ContentBlock::Text(t) => Some(&t.text),
                _ => None,
            },
            _ => None,
        }
    }
}
