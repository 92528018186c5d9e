//! An ACP v1 client built only on the official Rust SDK (`agent-client-protocol`):
//! the same client as `tests/interop/ts/client.mjs` and
//! `tests/interop/python/client.py`.
//!
//!   official-rust-client [--unstable] -- AGENT_COMMAND [ARGS...]
//!   official-rust-client --url URL
//!
//! Spawns the agent (the SDK puts it in its own process group), or connects
//! to a remote agent at URL with the official remote transport
//! (`agent-client-protocol-http`'s `HttpClient::with_endpoint`: `ws://` is
//! WebSocket, `http://` Streamable HTTP), and runs the check sequence against
//! it, in a fresh temporary directory:
//! 1. `initialize` (protocol 1, fs read/write and terminal capabilities);
//!    the agent must answer protocol 1 and `loadSession: true`;
//! 2. `session/new` in the directory;
//! 3. prompt `stream 50`: the chunks `chunk 0` .. `chunk 49`, in order, all
//!    before the response, then `end_turn`;
//! 4. prompt `permission`: a pending `tool_call` (kind edit, title "Edit
//!    file"), `session/request_permission` about it (answered allow_once), the
//!    chunk `permission: allow_once`, a completed `tool_call_update`;
//! 5. prompt `read DIR/a.txt`: one `fs/read_text_file` (answered `hello from
//!    client`), echoed as the one chunk;
//! 6. prompt `write DIR/b.txt hi`: one `fs/write_text_file`, really written,
//!    then the chunk `wrote`;
//! 7. prompt `terminal echo hi`: `terminal/create` (`sh -c "echo hi"`, run
//!    for real), `terminal/wait_for_exit`, `terminal/output`,
//!    `terminal/release` on one terminal, then the chunk `hi\n`;
//! 8. prompt `wait`, unanswered after 100 ms; `session/cancel`; then
//!    `cancelled`;
//! 9. `session/load`: the whole history (a `user_message_chunk` per prompt
//!    and every `agent_message_chunk` seen) replayed before the response.
//!
//! Every update must reach the `session/update` handler before the response
//! it preceded on the wire (a tap on the SDK's transport records the wire
//! order; remotely, the order in which the transport hands messages up, its
//! event streams merged), and none may come after it. Finally the SDK closes
//! the agent's stdin; the agent must exit 0 by itself within the SDK's
//! one-second grace (remotely: the transport closes the connection).
//!
//! With `--unstable` it runs the unstable check sequence instead
//! (`official_rust_client/unstable.rs`, on the SDK's cargo feature
//! `unstable`): every unstable v1 method an agent handles (`session/fork`,
//! `archive`, `unarchive`, `status`, `set_title`, `auth/status`,
//! `providers/list|set|disable`), `mcp/message` served by an MCP server this
//! client declares with transport `acp`, and `auth/status_update`; then the
//! unstable payloads (`systemPrompt`, end-of-turn `usage`, plan operations,
//! subagent updates) of `tests/interop/unstable-payloads.json`, compared
//! member by member; see `tests/interop/README.md` ("Unstable methods",
//! "Unstable payloads").
//!
//! Prints exactly `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up
//! after 30 s. The agent's stderr is passed through to ours; with
//! `ACP_INTEROP_TRACE=1` every line to and from the agent is echoed there too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AuthStatusUpdateNotification, CancelNotification, ClientCapabilities, ContentBlock,
    CreateTerminalRequest, CreateTerminalResponse, FileSystemCapabilities, Implementation,
    InitializeRequest, KillTerminalRequest, KillTerminalResponse, LoadSessionRequest,
    MessageMcpRequest, MessageMcpResponse, NewSessionRequest, PermissionOptionKind, PromptRequest,
    PromptResponse, ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest,
    ReleaseTerminalResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    StopReason, TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse, TextContent,
    WaitForTerminalExitRequest, WaitForTerminalExitResponse, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    AcpAgent, Agent, Channel, Client, ConnectTo, ConnectionDriver, DynConnectTo, Error,
    JsonRpcRequest, LineDirection, TransportFrame,
};
use agent_client_protocol_http::HttpClient;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{Notify, watch};

const DEADLINE: Duration = Duration::from_secs(30);
const STREAM_COUNT: usize = 50;
const FILE_CONTENT: &str = "hello from client";
const CANCEL_AFTER: Duration = Duration::from_millis(100);
/// How long the SDK lets the agent exit on its own once its stdin is closed,
/// before it sends `SIGTERM` (and then reports success): `AcpAgent`'s shutdown
/// grace, not configurable.
const SDK_EXIT_GRACE: Duration = Duration::from_secs(1);

/// A message as it came off the agent's stdout.
enum Wire {
    Update { session_id: Value, update: Value },
    Response { id: Value },
}

/// What was seen, twice over: `wire` in wire order from the transport tap,
/// `updates` and `requests` as the SDK delivered them to our handlers.
#[derive(Default)]
struct Seen {
    wire: Vec<Wire>,
    /// `(sessionId, update)` of each `session/update`, the typed update
    /// serialized back to JSON.
    updates: Vec<(Value, Value)>,
    /// `(method, params)` of each request the agent made.
    requests: Vec<(String, Value)>,
    /// `(method, params)` of each notification other than `session/update`.
    notifications: Vec<(String, Value)>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Anything serializable, as compact JSON.
macro_rules! show {
    ($value:expr) => {
        serde_json::to_string(&$value).unwrap_or_else(|e| format!("<{e}>"))
    };
}

/// Records a request the agent made, as wire JSON.
macro_rules! record {
    ($seen:expr, $method:expr, $request:expr) => {{
        let params = serde_json::to_value(&$request).unwrap_or_else(|e| json!(format!("<{e}>")));
        lock(&$seen).requests.push(($method.to_owned(), params));
    }};
}

/// The transport tap: every line from the agent's stdout, before dispatch.
fn observe(seen: &Shared, line: &str) {
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return;
    };
    let entry = if message["method"] == "session/update" && message.get("id").is_none() {
        Wire::Update {
            session_id: message["params"]["sessionId"].clone(),
            update: message["params"]["update"].clone(),
        }
    } else if message.get("method").is_none()
        && let Some(id) = message.get("id")
    {
        Wire::Response { id: id.clone() }
    } else {
        return;
    };
    lock(seen).wire.push(entry);
}

fn describe(update: &Value) -> String {
    let kind = update["sessionUpdate"]
        .as_str()
        .unwrap_or("<no sessionUpdate>");
    match (
        update["content"]["type"].as_str(),
        update["content"]["text"].as_str(),
    ) {
        (Some("text"), Some(text)) => format!("{kind} {}", show!(text)),
        _ => kind.to_owned(),
    }
}

/// What must survive the SDK's decoding: session, kind, text, tool call id
/// and status. A `tool_call` without a status is pending (the Rust SDK
/// leaves the default out when it serializes one).
fn summary(session_id: &Value, update: &Value) -> Value {
    let status = match (update["sessionUpdate"].as_str(), update.get("status")) {
        (Some("tool_call"), None) => json!("pending"),
        (_, status) => status.cloned().unwrap_or(Value::Null),
    };
    json!([
        session_id,
        describe(update),
        update.get("toolCallId").cloned().unwrap_or(Value::Null),
        status
    ])
}

fn check(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

/// A JSON-RPC error from the agent (or the SDK), as a failure reason.
fn agent_error(label: &str, e: &Error) -> String {
    let data = e
        .data
        .as_ref()
        .map(|d| format!(" data {}", show!(d)))
        .unwrap_or_default();
    format!(
        "{label}: agent answered error {:?} {}{data}",
        e.code,
        show!(e.message)
    )
}

/// What [`call`] returns: the result, the `session/update` notifications
/// (as `(sessionId, update)`) that preceded its response on the wire, and
/// the same updates as our handler got them (the SDK's typed update
/// serialized back).
type Called<T> = (T, Vec<(Value, Value)>, Vec<Value>);

/// Sends a request and returns its result with the `session/update`
/// notifications that preceded its response on the wire, checked to have
/// reached our handler too, in the same order, and no later ones.
async fn call<Req: JsonRpcRequest>(
    cx: &ConnectionTo<Agent>,
    seen: &Shared,
    label: &str,
    request: Req,
) -> Result<Called<Req::Response>, String> {
    let (start, handled) = {
        let seen = lock(seen);
        (seen.wire.len(), seen.updates.len())
    };
    let sent = cx.send_request(request);
    let id = serde_json::to_value(sent.raw_id()).map_err(|e| e.to_string())?;
    let response = sent
        .block_task()
        .await
        .map_err(|e| agent_error(label, &e))?;
    let mut seen = lock(seen);
    let end = seen.wire[start..]
        .iter()
        .position(|w| matches!(w, Wire::Response { id: got } if *got == id))
        .ok_or_else(|| format!("{label}: response not found on the wire"))?;
    let before: Vec<(Value, Value)> = seen.wire[start..start + end]
        .iter()
        .filter_map(|w| match w {
            Wire::Update { session_id, update } => Some((session_id.clone(), update.clone())),
            Wire::Response { .. } => None,
        })
        .collect();
    // The SDK runs notification handlers inside its dispatch loop, before it
    // routes a later response: no waiting for stragglers here.
    let delivered = &seen.updates[handled..];
    let summaries = |list: &[(Value, Value)]| -> Vec<Value> {
        list.iter().map(|(sid, u)| summary(sid, u)).collect()
    };
    let n = before.len().min(delivered.len());
    check(summaries(&delivered[..n]) == summaries(&before), || {
        format!(
            "{label}: the session/update handler got {} updates, the wire carried {} before the response",
            delivered.len(),
            before.len()
        )
    })?;
    check(delivered.len() == before.len(), || {
        format!(
            "{label}: {} session/update notifications arrived after the response: {}",
            delivered.len() - before.len(),
            show!(
                &delivered[before.len()..]
                    .iter()
                    .map(|(_, u)| describe(u))
                    .collect::<Vec<_>>()
            )
        )
    })?;
    let typed = seen
        .updates
        .drain(..)
        .skip(handled)
        .map(|(_, u)| u)
        .collect();
    Ok((response, before, typed))
}

#[path = "official_rust_client/unstable.rs"]
mod unstable;
#[path = "unstable_payloads.rs"]
mod unstable_payloads;

// ---------------------------------------------------------------------------
// A minimal real terminal implementation: runs the command, collects output.

/// A terminal's output so far (raw bytes, so that a character split across
/// reads survives) and whether it was truncated.
type Output = Arc<Mutex<(Vec<u8>, bool)>>;

struct Terminal {
    output: Output,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Arc<Notify>,
}

#[derive(Clone, Default)]
struct Terminals {
    live: Arc<Mutex<HashMap<String, Terminal>>>,
    next: Arc<AtomicU64>,
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        libc::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Appends `data`, keeping at most `limit` bytes (the newest, not starting
/// inside a UTF-8 character).
fn append(output: &Output, data: &[u8], limit: Option<u64>) {
    let mut output = lock(output);
    output.0.extend_from_slice(data);
    if let Some(limit) = limit.and_then(|l| usize::try_from(l).ok())
        && output.0.len() > limit
    {
        let mut cut = output.0.len() - limit;
        while output.0.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
            cut += 1;
        }
        output.0.drain(..cut);
        output.1 = true;
    }
}

async fn pump(pipe: Option<impl AsyncRead + Unpin>, output: Output, limit: Option<u64>) {
    let Some(mut pipe) = pipe else { return };
    let mut buffer = [0u8; 8192];
    while let Ok(n @ 1..) = pipe.read(&mut buffer).await {
        append(&output, &buffer[..n], limit);
    }
}

impl Terminals {
    fn create(&self, request: &CreateTerminalRequest, work_dir: &Path) -> String {
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let output = Output::default();
        let (exit_tx, exit) = watch::channel(None);
        let kill = Arc::new(Notify::new());
        let mut command = tokio::process::Command::new(&request.command);
        command
            .args(&request.args)
            .envs(request.env.iter().map(|v| (&v.name, &v.value)))
            .current_dir(request.cwd.as_deref().unwrap_or(work_dir))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        match command.spawn() {
            Ok(mut child) => {
                let limit = request.output_byte_limit;
                let pumps = tokio::spawn({
                    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
                    let output = Arc::clone(&output);
                    async move {
                        tokio::join!(
                            pump(stdout, Arc::clone(&output), limit),
                            pump(stderr, output, limit)
                        );
                    }
                });
                let kill = Arc::clone(&kill);
                let output = Arc::clone(&output);
                tokio::spawn(async move {
                    let status = tokio::select! {
                        status = child.wait() => status,
                        () = kill.notified() => {
                            let _ = child.start_kill();
                            child.wait().await
                        }
                    };
                    // Like node's "close": the exit counts once the output is in.
                    let _ = pumps.await;
                    let status = match status {
                        Ok(status) => {
                            use std::os::unix::process::ExitStatusExt as _;
                            match (status.code(), status.signal()) {
                                (Some(code), _) => TerminalExitStatus::new()
                                    .exit_code(u32::try_from(code).unwrap_or(u32::MAX)),
                                (None, Some(signal)) => {
                                    TerminalExitStatus::new().signal(signal_name(signal))
                                }
                                (None, None) => TerminalExitStatus::new(),
                            }
                        }
                        Err(e) => {
                            append(&output, e.to_string().as_bytes(), None);
                            TerminalExitStatus::new().exit_code(127)
                        }
                    };
                    let _ = exit_tx.send(Some(status));
                });
            }
            Err(e) => {
                append(&output, e.to_string().as_bytes(), None);
                let _ = exit_tx.send(Some(TerminalExitStatus::new().exit_code(127)));
            }
        }
        lock(&self.live).insert(id.clone(), Terminal { output, exit, kill });
        id
    }

    fn get<T>(&self, id: &str, f: impl FnOnce(&Terminal) -> T) -> Result<T, Error> {
        lock(&self.live).get(id).map(f).ok_or_else(|| {
            Error::invalid_params().data(json!({ "details": format!("unknown terminal {id}") }))
        })
    }

    fn kill(&self, id: &str) -> Result<(), Error> {
        self.get(id, |t| t.kill.notify_one())
    }

    fn release(&self, id: &str) -> Result<(), Error> {
        self.kill(id)?;
        lock(&self.live).remove(id);
        Ok(())
    }

    fn kill_all(&self) {
        for terminal in lock(&self.live).values() {
            terminal.kill.notify_one();
        }
    }
}

// ---------------------------------------------------------------------------

fn text_prompt(session_id: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(
        session_id.clone(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}

/// One prompt's outcome: the response, the updates before it (as on the
/// wire, and as the SDK delivered them), the requests the agent made
/// meanwhile.
struct Turn {
    response: PromptResponse,
    seen: Vec<Value>,
    delivered: Vec<Value>,
    requests: Vec<(String, Value)>,
}

impl Turn {
    fn chunk_texts(&self) -> Vec<&str> {
        self.seen
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .map(|u| u["content"]["text"].as_str().unwrap_or("<no text>"))
            .collect()
    }

    fn described(&self) -> String {
        show!(self.seen.iter().map(describe).collect::<Vec<_>>())
    }

    fn methods(&self) -> Vec<&str> {
        self.requests.iter().map(|(m, _)| m.as_str()).collect()
    }
}

struct Driver {
    cx: ConnectionTo<Agent>,
    seen: Shared,
    session_id: SessionId,
    /// What `session/load` must replay: `(sessionUpdate, text)`.
    history: Vec<(String, String)>,
}

impl Driver {
    async fn prompt(&mut self, text: &str) -> Result<Turn, String> {
        self.history
            .push(("user_message_chunk".into(), text.to_owned()));
        let label = format!("prompt {}", show!(text));
        let (response, before, delivered) = call(
            &self.cx,
            &self.seen,
            &label,
            text_prompt(&self.session_id, text),
        )
        .await?;
        let sid = json!(self.session_id);
        let mut seen = Vec::new();
        for (session_id, update) in before {
            check(session_id == sid, || {
                format!("{label}: update for session {session_id}, expected {sid}")
            })?;
            if update["sessionUpdate"] == "agent_message_chunk"
                && update["content"]["type"] == "text"
            {
                let text = update["content"]["text"].as_str().unwrap_or_default();
                self.history
                    .push(("agent_message_chunk".into(), text.to_owned()));
            }
            seen.push(update);
        }
        let requests = std::mem::take(&mut lock(&self.seen).requests);
        Ok(Turn {
            response,
            seen,
            delivered,
            requests,
        })
    }
}

fn stop_is(label: &str, response: &PromptResponse, expected: StopReason) -> Result<(), String> {
    check(response.stop_reason == expected, || {
        format!("{label}: stopReason {}", show!(response.stop_reason))
    })
}

/// The scripted check sequence.
async fn drive(cx: ConnectionTo<Agent>, seen: Shared, work_dir: PathBuf) -> Result<(), String> {
    let init = cx
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(
                    ClientCapabilities::new()
                        .fs(FileSystemCapabilities::new()
                            .read_text_file(true)
                            .write_text_file(true))
                        .terminal(true),
                )
                .client_info(Implementation::new("official-rust-client", "0.0.0")),
        )
        .block_task()
        .await
        .map_err(|e| agent_error("initialize", &e))?;
    check(init.protocol_version == ProtocolVersion::V1, || {
        format!(
            "initialize answered protocolVersion {}",
            show!(init.protocol_version)
        )
    })?;
    check(init.agent_capabilities.load_session, || {
        format!(
            "initialize answered agentCapabilities {}; loadSession true is needed",
            show!(init.agent_capabilities)
        )
    })?;

    let new = cx
        .send_request(NewSessionRequest::new(&work_dir))
        .block_task()
        .await
        .map_err(|e| agent_error("session/new", &e))?;
    check(!new.session_id.0.is_empty(), || {
        format!("session/new answered sessionId {}", show!(new.session_id))
    })?;
    // Whatever arrived so far belongs to no prompt.
    {
        let mut seen = lock(&seen);
        seen.updates.clear();
        seen.requests.clear();
    }
    let mut driver = Driver {
        cx: cx.clone(),
        seen: Arc::clone(&seen),
        session_id: new.session_id,
        history: Vec::new(),
    };
    let sid = json!(driver.session_id);

    // 1. Streaming: every update is handled before the prompt's response.
    {
        let turn = driver.prompt(&format!("stream {STREAM_COUNT}")).await?;
        stop_is("stream", &turn.response, StopReason::EndTurn)?;
        let got: Vec<String> = turn
            .seen
            .iter()
            .map(|u| match u["content"]["text"].as_str() {
                Some(text) if u["sessionUpdate"] == "agent_message_chunk" => text.to_owned(),
                _ => describe(u),
            })
            .collect();
        let expected: Vec<String> = (0..STREAM_COUNT).map(|i| format!("chunk {i}")).collect();
        check(got == expected, || {
            format!(
                "stream: before the response saw {} updates, expected {STREAM_COUNT} chunks in order; first: {}, last: {}",
                got.len(),
                show!(got.iter().take(3).collect::<Vec<_>>()),
                show!(
                    got.iter()
                        .skip(got.len().saturating_sub(3))
                        .collect::<Vec<_>>()
                )
            )
        })?;
    }

    // 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
    {
        let turn = driver.prompt("permission").await?;
        stop_is("permission", &turn.response, StopReason::EndTurn)?;
        check(turn.methods() == ["session/request_permission"], || {
            format!(
                "permission: expected one session/request_permission, got {}",
                show!(turn.methods())
            )
        })?;
        let request = &turn.requests[0].1;
        check(request["sessionId"] == sid, || {
            format!("permission: request for session {}", request["sessionId"])
        })?;
        let options = request["options"].as_array().cloned().unwrap_or_default();
        let allow = options.iter().find(|o| o["kind"] == "allow_once");
        check(
            allow.is_some() && options.iter().any(|o| o["kind"] == "reject_once"),
            || format!("permission: options {}", show!(options)),
        )?;
        let allow_id = allow.map(|o| o["optionId"].clone()).unwrap_or_default();
        check(turn.seen.len() == 3, || {
            format!(
                "permission: expected tool_call, chunk, tool_call_update; saw {}",
                turn.described()
            )
        })?;
        let (tool_call, chunk, tool_call_update) = (&turn.seen[0], &turn.seen[1], &turn.seen[2]);
        check(
            tool_call["sessionUpdate"] == "tool_call"
                && tool_call.get("status").is_none_or(|s| s == "pending")
                && tool_call["kind"] == "edit"
                && tool_call["title"] == "Edit file",
            || format!("permission: first update {tool_call}"),
        )?;
        check(
            request["toolCall"]["toolCallId"] == tool_call["toolCallId"],
            || {
                format!(
                    "permission: request is about tool call {}, not {}",
                    request["toolCall"]["toolCallId"], tool_call["toolCallId"]
                )
            },
        )?;
        let text = chunk["content"]["text"].as_str().unwrap_or_default();
        let expected = format!("permission: {}", allow_id.as_str().unwrap_or_default());
        check(
            chunk["sessionUpdate"] == "agent_message_chunk"
                && (text == expected || text == "permission: allow_once"),
            || {
                format!(
                    "permission: expected chunk {expected:?}, saw {}",
                    describe(chunk)
                )
            },
        )?;
        check(
            tool_call_update["sessionUpdate"] == "tool_call_update"
                && tool_call_update["toolCallId"] == tool_call["toolCallId"]
                && tool_call_update["status"] == "completed",
            || format!("permission: last update {tool_call_update}"),
        )?;
    }

    // 3. fs/read_text_file served by our handler.
    {
        let path = work_dir.join("a.txt").display().to_string();
        let turn = driver.prompt(&format!("read {path}")).await?;
        stop_is("read", &turn.response, StopReason::EndTurn)?;
        check(
            turn.methods() == ["fs/read_text_file"]
                && turn.requests[0].1["path"] == path.as_str()
                && turn.requests[0].1["sessionId"] == sid,
            || {
                format!(
                    "read: expected one fs/read_text_file of {path}, got {}",
                    show!(turn.requests)
                )
            },
        )?;
        check(
            turn.chunk_texts() == [FILE_CONTENT] && turn.seen.len() == 1,
            || {
                format!(
                    "read: expected the one chunk {}, saw {}",
                    show!(FILE_CONTENT),
                    turn.described()
                )
            },
        )?;
    }

    // 4. fs/write_text_file.
    {
        let path = work_dir.join("b.txt");
        let shown = path.display().to_string();
        let turn = driver.prompt(&format!("write {shown} hi")).await?;
        stop_is("write", &turn.response, StopReason::EndTurn)?;
        check(
            turn.methods() == ["fs/write_text_file"]
                && turn.requests[0].1["path"] == shown.as_str()
                && turn.requests[0].1["content"] == "hi"
                && turn.requests[0].1["sessionId"] == sid,
            || {
                format!(
                    "write: expected one fs/write_text_file of {shown} with \"hi\", got {}",
                    show!(turn.requests)
                )
            },
        )?;
        check(
            std::fs::read_to_string(&path).ok().as_deref() == Some("hi"),
            || "write: the file does not hold what was written".into(),
        )?;
        check(
            turn.chunk_texts() == ["wrote"] && turn.seen.len() == 1,
            || {
                format!(
                    "write: expected the one chunk \"wrote\", saw {}",
                    turn.described()
                )
            },
        )?;
    }

    // 5. terminal/* really run by us.
    {
        let turn = driver.prompt("terminal echo hi").await?;
        stop_is("terminal", &turn.response, StopReason::EndTurn)?;
        check(
            turn.methods()
                == [
                    "terminal/create",
                    "terminal/wait_for_exit",
                    "terminal/output",
                    "terminal/release",
                ],
            || {
                format!(
                    "terminal: expected create, wait_for_exit, output, release; got {}",
                    show!(turn.methods())
                )
            },
        )?;
        let create = &turn.requests[0].1;
        check(
            create["command"] == "sh" && create["args"] == json!(["-c", "echo hi"]),
            || {
                format!(
                    "terminal: created {}",
                    json!({ "command": create["command"], "args": create["args"] })
                )
            },
        )?;
        let mut ids: Vec<&Value> = Vec::new();
        for id in turn
            .requests
            .iter()
            .filter_map(|(_, p)| p.get("terminalId"))
        {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        check(ids.len() == 1, || {
            format!("terminal: requests named terminals {}", show!(ids))
        })?;
        check(
            turn.chunk_texts() == ["hi\n"] && turn.seen.len() == 1,
            || {
                format!(
                    "terminal: expected the one chunk \"hi\\n\", saw {}",
                    turn.described()
                )
            },
        )?;
    }

    // 6. session/cancel during a prompt turn.
    {
        let answered = AtomicBool::new(false);
        let session_id = driver.session_id.clone();
        let waiting = async {
            let result = driver.prompt("wait").await;
            answered.store(true, Ordering::SeqCst);
            result
        };
        let cancelling = async {
            tokio::time::sleep(CANCEL_AFTER).await;
            check(!answered.load(Ordering::SeqCst), || {
                "wait: the prompt was answered before session/cancel was sent".into()
            })?;
            cx.send_notification(CancelNotification::new(session_id))
                .map_err(|e| format!("wait: cannot send session/cancel: {e}"))
        };
        let (turn, cancelled) = tokio::join!(waiting, cancelling);
        cancelled?;
        let turn = turn?;
        stop_is(
            "wait: after session/cancel,",
            &turn.response,
            StopReason::Cancelled,
        )?;
    }

    // 7. session/load replays the history before answering.
    {
        let (_, before, _) = call(
            &cx,
            &seen,
            "session/load",
            LoadSessionRequest::new(driver.session_id.clone(), &work_dir),
        )
        .await?;
        check(before.iter().all(|(s, _)| *s == sid), || {
            "load: replayed updates for another session".into()
        })?;
        let got: Vec<(String, String)> = before
            .iter()
            .map(|(_, u)| {
                (
                    u["sessionUpdate"].as_str().unwrap_or_default().to_owned(),
                    u["content"]["text"]
                        .as_str()
                        .unwrap_or("<no text>")
                        .to_owned(),
                )
            })
            .collect();
        if got != driver.history {
            let at = got
                .iter()
                .zip(&driver.history)
                .position(|(g, h)| g != h)
                .unwrap_or(got.len().min(driver.history.len()));
            return Err(format!(
                "load: before the response saw {} replayed updates, expected {}; first difference at {at}: got {}, expected {}",
                got.len(),
                driver.history.len(),
                show!(got.get(at)),
                show!(driver.history.get(at))
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The wire tap of a remote agent.

/// A transport whose incoming messages are observed (see [`observe`]) in the
/// order it hands them up, before the SDK dispatches them.
struct Tapped<C> {
    inner: C,
    seen: Shared,
}

impl<C: ConnectTo<Client>> ConnectTo<Client> for Tapped<C> {
    async fn connect_to(self, client: impl ConnectTo<Agent>) -> Result<(), Error> {
        // As `HttpClient::connect_to` does: the client runs on the channel;
        // once it is done, the transport is asked to finish what it accepted.
        let (channel, driver) = self.into_channel_and_future();
        let Some(mut driver) = driver else {
            return client.connect_to(channel).await;
        };
        match futures::future::select(
            std::pin::pin!(client.connect_to(channel)),
            std::pin::pin!(&mut driver),
        )
        .await
        {
            futures::future::Either::Left((result, _)) => {
                result?;
                let _finishing = driver.request_finish();
                driver.await
            }
            futures::future::Either::Right((result, _)) => result,
        }
    }

    fn into_channel_and_future(self) -> (Channel, Option<ConnectionDriver>) {
        let (inner, driver) = ConnectTo::<Client>::into_channel_and_future(self.inner);
        let (mut from_agent, to_agent) = inner.into_parts();
        let (tapped, tapped_rx) = futures::channel::mpsc::unbounded();
        let seen = self.seen;
        // Ends when the transport's side ends or the SDK's side is dropped.
        tokio::spawn(async move {
            while let Some(frame) = from_agent.next().await {
                if let TransportFrame::Single(message) = &frame
                    && let Ok(line) = serde_json::to_string(message)
                {
                    if std::env::var_os("ACP_INTEROP_TRACE").is_some() {
                        eprintln!("official-rust-client <- {line}");
                    }
                    observe(&seen, &line);
                }
                if tapped.unbounded_send(frame).is_err() {
                    break;
                }
            }
        });
        (Channel::new(tapped_rx, to_agent), driver)
    }
}

/// Where the agent is.
enum Target {
    /// A command to spawn, spoken to over its stdin/stdout.
    Spawn(Vec<String>),
    /// A remote agent's endpoint URL.
    Url(String),
}

/// The transport to `target`, tapped.
fn connect(target: &Target, seen: &Shared) -> Result<DynConnectTo<Client>, String> {
    let tap = Arc::clone(seen);
    match target {
        Target::Url(url) => {
            let inner = HttpClient::with_endpoint(url).map_err(|e| format!("--url {url}: {e}"))?;
            Ok(DynConnectTo::new(Tapped { inner, seen: tap }))
        }
        Target::Spawn(agent_args) => {
            let trace = std::env::var_os("ACP_INTEROP_TRACE").is_some();
            let agent = AcpAgent::from_args(agent_args)
                .map_err(|e| format!("cannot start agent {}: {e}", show!(agent_args)))?
                .with_debug(move |line, direction| match direction {
                    LineDirection::Stdout => {
                        if trace {
                            eprintln!("official-rust-client <- {line}");
                        }
                        observe(&tap, line);
                    }
                    LineDirection::Stdin => {
                        if trace {
                            eprintln!("official-rust-client -> {line}");
                        }
                    }
                    // The agent's stderr, passed through.
                    LineDirection::Stderr => eprintln!("{line}"),
                });
            Ok(DynConnectTo::new(agent))
        }
    }
}

async fn run(target: Target, work_dir: PathBuf, unstable: bool) -> Result<(), String> {
    let seen: Shared = Arc::default();
    let terminals = Terminals::default();
    let agent = connect(&target, &seen)?;

    let (on_update, on_permission, on_read, on_write) = (
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&seen),
    );
    let (on_create, on_output, on_wait, on_kill, on_release) = (
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&seen),
        Arc::clone(&seen),
    );
    let (t_create, t_output, t_wait, t_kill, t_release) = (
        terminals.clone(),
        terminals.clone(),
        terminals.clone(),
        terminals.clone(),
        terminals.clone(),
    );
    let (on_mcp, on_auth) = (Arc::clone(&seen), Arc::clone(&seen));
    let terminal_dir = work_dir.clone();
    let exit_timer: Arc<Mutex<Option<Instant>>> = Arc::default();
    let drive_ended = Arc::clone(&exit_timer);

    let result = Client
        .v1()
        .name("official-rust-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx: ConnectionTo<Agent>| {
                let update = serde_json::to_value(&notification.update)
                    .unwrap_or_else(|e| json!({ "sessionUpdate": format!("<{e}>") }));
                lock(&on_update)
                    .updates
                    .push((json!(notification.session_id), update));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_permission, "session/request_permission", &request);
                let option = request
                    .options
                    .iter()
                    .find(|o| o.kind == PermissionOptionKind::AllowOnce)
                    .or_else(|| {
                        request
                            .options
                            .iter()
                            .find(|o| &*o.option_id.0 == "allow_once")
                    });
                let outcome = match option {
                    Some(option) => RequestPermissionOutcome::Selected(
                        SelectedPermissionOutcome::new(option.option_id.clone()),
                    ),
                    None => RequestPermissionOutcome::Cancelled,
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest,
                        responder: Responder<ReadTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_read, "fs/read_text_file", &request);
                responder.respond(ReadTextFileResponse::new(FILE_CONTENT))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest,
                        responder: Responder<WriteTextFileResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_write, "fs/write_text_file", &request);
                match std::fs::write(&request.path, &request.content) {
                    Ok(()) => responder.respond(WriteTextFileResponse::new()),
                    Err(e) => responder.respond_with_error(Error::into_internal_error(e)),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CreateTerminalRequest,
                        responder: Responder<CreateTerminalResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_create, "terminal/create", &request);
                let id = t_create.create(&request, &terminal_dir);
                responder.respond(CreateTerminalResponse::new(id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: TerminalOutputRequest,
                        responder: Responder<TerminalOutputResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_output, "terminal/output", &request);
                let answer = t_output.get(&request.terminal_id.0, |t| {
                    let (output, truncated) = &*lock(&t.output);
                    TerminalOutputResponse::new(String::from_utf8_lossy(output), *truncated)
                        .exit_status(t.exit.borrow().clone())
                });
                responder.respond_with_result(answer)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WaitForTerminalExitRequest,
                        responder: Responder<WaitForTerminalExitResponse>,
                        cx: ConnectionTo<Agent>| {
                record!(on_wait, "terminal/wait_for_exit", &request);
                let mut exit = match t_wait.get(&request.terminal_id.0, |t| t.exit.clone()) {
                    Ok(exit) => exit,
                    Err(e) => return responder.respond_with_error(e),
                };
                // The command may take a while: not inside the dispatch loop.
                cx.spawn(async move {
                    let status = exit
                        .wait_for(Option::is_some)
                        .await
                        .map(|status| status.clone().unwrap_or_default())
                        .map_err(|_| Error::internal_error().data("the terminal went away"));
                    responder.respond_with_result(status.map(WaitForTerminalExitResponse::new))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: KillTerminalRequest,
                        responder: Responder<KillTerminalResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_kill, "terminal/kill", &request);
                responder.respond_with_result(
                    t_kill
                        .kill(&request.terminal_id.0)
                        .map(|()| KillTerminalResponse::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReleaseTerminalRequest,
                        responder: Responder<ReleaseTerminalResponse>,
                        _cx: ConnectionTo<Agent>| {
                record!(on_release, "terminal/release", &request);
                responder.respond_with_result(
                    t_release
                        .release(&request.terminal_id.0)
                        .map(|()| ReleaseTerminalResponse::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: MessageMcpRequest,
                        responder: Responder<MessageMcpResponse>,
                        cx: ConnectionTo<Agent>| {
                record!(on_mcp, "mcp/message", &request);
                responder.respond_with_result(unstable::serve_mcp(&cx, &request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: AuthStatusUpdateNotification, _cx: ConnectionTo<Agent>| {
                let params =
                    serde_json::to_value(&notification).unwrap_or_else(|e| json!(format!("<{e}>")));
                lock(&on_auth)
                    .notifications
                    .push(("auth/status_update".to_owned(), params));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(agent, async move |cx: ConnectionTo<Agent>| {
            let result = if unstable {
                unstable::drive(cx, seen, work_dir).await
            } else {
                drive(cx, seen, work_dir).await
            };
            *lock(&drive_ended) = Some(Instant::now());
            Ok(result)
        })
        .await;
    terminals.kill_all();
    // The SDK closes the agent's stdin once `drive` is done and reports a
    // non-zero exit; an agent still running after its grace is sent SIGTERM
    // and that is not reported, so time it.
    let shutdown = lock(&exit_timer).map(|ended| ended.elapsed());
    let spawned = matches!(target, Target::Spawn(_));
    match result {
        Ok(Ok(())) => match shutdown {
            Some(took) if spawned && took >= SDK_EXIT_GRACE => Err(format!(
                "agent still running {SDK_EXIT_GRACE:?} after its stdin was closed (shutdown took {took:?})"
            )),
            _ => Ok(()),
        },
        Ok(Err(reason)) => Err(reason),
        Err(e) => Err(format!("connection failed: {e}")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let unstable = args.first().is_some_and(|a| a == "--unstable");
    if unstable {
        args.remove(0);
    }
    let target = match args.as_slice() {
        [flag, url] if flag == "--url" => Target::Url(url.clone()),
        _ => {
            if args.first().map(String::as_str) == Some("--") {
                args.remove(0);
            }
            if args.is_empty() || args[0].starts_with("--") {
                println!(
                    "FAIL: usage: official-rust-client [--unstable] -- AGENT_COMMAND [ARGS...] | --url URL"
                );
                return ExitCode::FAILURE;
            }
            Target::Spawn(args)
        }
    };
    let work_dir = std::env::temp_dir().join(format!(
        "acp-interop-rust-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    let outcome = match std::fs::create_dir(&work_dir).and_then(|()| work_dir.canonicalize()) {
        Ok(dir) => match tokio::time::timeout(DEADLINE, run(target, dir, unstable)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no result within {} s", DEADLINE.as_secs())),
        },
        Err(e) => Err(format!("cannot create {}: {e}", work_dir.display())),
    };
    let _ = std::fs::remove_dir_all(&work_dir);
    match outcome {
        Ok(()) => {
            println!("OK");
            ExitCode::SUCCESS
        }
        Err(reason) => {
            let reason: Vec<&str> = reason.split_whitespace().collect();
            println!("FAIL: {}", reason.join(" "));
            ExitCode::FAILURE
        }
    }
}
