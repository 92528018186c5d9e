//! An ACP v1 agent built only on the official Rust SDK (`agent-client-protocol`),
//! serving on its stdin/stdout: the same agent as `tests/interop/ts/agent.mjs`
//! and `tests/interop/python/agent.py`, for libacp's clients and the official
//! clients to drive.
//!
//! * `initialize`: protocol version 1, `loadSession: true`, image and
//!   embedded-context prompts, no auth methods.
//! * `session/new`: a fresh session (`rust-N`) remembering its cwd.
//! * `session/load`: replays the session's history (a `user_message_chunk` per
//!   prompt text and every `agent_message_chunk` sent) before answering.
//! * `session/cancel`: marks the session cancelled and wakes a `wait`.
//! * `session/prompt`, by the first word of its first text block:
//!   * `stream N`: N `agent_message_chunk`s `chunk 0` .. `chunk N-1`;
//!   * `permission`: a pending `tool_call`, `session/request_permission`
//!     (allow_once / reject_once), the chunk `permission: <option or
//!     outcome>`, then a `tool_call_update` (completed if allowed, else failed);
//!   * `read PATH`: `fs/read_text_file`, the content as one chunk;
//!   * `write PATH TEXT`: `fs/write_text_file`, then the chunk `wrote`;
//!   * `terminal CMD...`: `terminal/create` of `sh -c CMD` in the session's
//!     cwd, `terminal/wait_for_exit`, `terminal/output` (sent as one chunk),
//!     and always `terminal/release`;
//!   * `wait`: answers `cancelled` once `session/cancel` arrives;
//!   * `mcp TEXT`, `auth STATE`, `system`, `usage`, `plan`, `subagent`: see
//!     `--unstable` below.
//!
//!   The turn ends with `end_turn`, or `cancelled` when `session/cancel` came
//!   during it. A `$/cancel_request` of the prompt is forwarded to the nested
//!   client requests (and ends a `wait` with `-32800`).
//!
//! Request handlers run inside the SDK's dispatch loop, and awaiting a nested
//! client request there deadlocks (the loop must route its answer), so each
//! prompt turn runs on a task started with `ConnectionTo::spawn`.
//!
//! ```text
//! official-rust-agent                     serve one client on stdin/stdout
//! official-rust-agent --listen HOST:PORT  serve remote clients
//! official-rust-agent --unstable          also advertise the unstable methods
//! ```
//!
//! The unstable v1 methods (the SDK's cargo feature `unstable`, in
//! `official_rust_agent/unstable.rs`) are always served; `--unstable` makes
//! `initialize` advertise them (`sessionCapabilities.fork/archive/status/
//! title`, `auth.status`, `providers`, `mcpCapabilities.acp`):
//! `session/fork` (a new open session with the source's history),
//! `session/archive` (closes the session: prompts get `-32002` until a
//! `session/load`), `session/unarchive`, `session/status` (`open` or
//! `saved`), `session/set_title` (trimmed), `auth/status`,
//! `providers/list|set|disable`. Two prompt commands use the client:
//! `mcp TEXT` calls the tool `echo` over `mcp/message` on the session's first
//! MCP server of transport `acp`, and `auth STATE` sends
//! `auth/status_update`. The unstable payloads
//! (`tests/interop/unstable-payloads.json`): `--unstable` also advertises
//! `sessionCapabilities.systemPrompt` with its `override` mode; a session
//! keeps the `systemPrompt` it was created, loaded or forked with (an
//! unsupported mode is refused with `-32602`), and the prompt `system` says
//! it back (`system: <JSON>`); `usage` answers with the payloads' `usage`;
//! `plan` and `subagent` send the payloads' plan operation and subagent
//! session updates when the client advertised `plan` / `subagents`.
//! `tests/interop/README.md` ("Unstable methods", "Unstable payloads") has
//! the details.
//!
//! On stdio it exits 0 once its stdin closes; with `ACP_INTEROP_TRACE=1`
//! every line in and out is echoed to stderr.
//!
//! With `--listen` the official remote transport serves it
//! (`agent-client-protocol-http`'s `AcpHttpServer` under `axum::serve`):
//! Streamable HTTP and WebSocket on one port, endpoint `/acp`, HTTP/1.1
//! only, a fresh agent (fresh sessions) per remote connection. The crate's
//! default CORS policy refuses any request with an `Origin`, which no
//! non-browser client sends. The contract, the same for every remote interop
//! agent (`tests/interop/README.md`, "Remote"):
//! * the first line on stderr is `listening on HOST:PORT`, with the port
//!   actually bound (`--listen 127.0.0.1:0` picks a free one);
//! * it serves until its stdin closes, then exits 0 (or until it is killed);
//! * stdout stays empty.
//!
//! Diagnostics go to stderr only.

#[path = "official_rust_agent/unstable.rs"]
mod unstable;
#[path = "unstable_payloads.rs"]
mod unstable_payloads;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ArchiveSessionRequest, ArchiveSessionResponse, AuthState, AuthStatusRequest,
    AuthStatusResponse, AuthStatusUpdateNotification, CancelNotification, ContentBlock,
    ContentChunk, CreateTerminalRequest, DisableProviderRequest, DisableProviderResponse,
    ForkSessionRequest, ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListProvidersRequest, ListProvidersResponse, LoadSessionRequest, LoadSessionResponse,
    MessageMcpNotification, MessageMcpRequest, MessageMcpResponse, NewSessionRequest,
    NewSessionResponse, PermissionOption, PermissionOptionKind, PromptCapabilities, PromptRequest,
    PromptResponse, ReadTextFileRequest, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionStatusRequest,
    SessionStatusResponse, SessionUpdate, SetProviderRequest, SetProviderResponse,
    SetSessionTitleRequest, SetSessionTitleResponse, StopReason, SystemPrompt,
    TerminalOutputRequest, TextContent, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, UnarchiveSessionRequest, UnarchiveSessionResponse,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, ConnectTo, Error, LineDirection, RequestCancellation, Stdio,
};
use agent_client_protocol_http::AcpHttpServer;
use serde_json::json;
use tokio::io::AsyncReadExt as _;
use tokio::sync::oneshot;

struct Session {
    cwd: PathBuf,
    /// What `session/load` replays: user and agent message chunks.
    history: Vec<SessionUpdate>,
    /// Whether `session/cancel` arrived during the current turn.
    cancelled: bool,
    /// `wait` turns to wake on `session/cancel`.
    cancel_waiters: Vec<oneshot::Sender<()>>,
    /// In memory: created, forked or loaded, and not archived since.
    open: bool,
    archived: bool,
    /// Set by `session/set_title`.
    title: Option<String>,
    /// The `serverId`s of its MCP servers of transport `acp`.
    acp_servers: Vec<String>,
    /// The `systemPrompt` it was created, loaded or forked with.
    system_prompt: Option<SystemPrompt>,
}

impl Session {
    fn new(cwd: PathBuf, acp_servers: Vec<String>) -> Self {
        Self {
            cwd,
            history: Vec::new(),
            cancelled: false,
            cancel_waiters: Vec::new(),
            open: true,
            archived: false,
            title: None,
            acp_servers,
            system_prompt: None,
        }
    }
}

#[derive(Clone, Default)]
struct State {
    sessions: Arc<Mutex<HashMap<SessionId, Session>>>,
    next_session: Arc<AtomicU64>,
    next_tool_call: Arc<AtomicU64>,
    unstable: Arc<Mutex<unstable::Unstable>>,
    /// `--unstable`: `initialize` advertises the unstable methods.
    advertise_unstable: bool,
}

impl State {
    fn sessions(&self) -> MutexGuard<'_, HashMap<SessionId, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn unstable(&self) -> MutexGuard<'_, unstable::Unstable> {
        self.unstable.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn new_session_id(&self) -> SessionId {
        let n = self.next_session.fetch_add(1, Ordering::Relaxed) + 1;
        SessionId::new(format!("rust-{n}"))
    }

    /// Runs `f` on the session, or fails with ACP's session-not-found error.
    fn with_session<T>(
        &self,
        session_id: &SessionId,
        f: impl FnOnce(&mut Session) -> T,
    ) -> Result<T, Error> {
        self.sessions()
            .get_mut(session_id)
            .map(f)
            .ok_or_else(|| session_not_found(session_id))
    }
}

fn session_not_found(session_id: &SessionId) -> Error {
    agent_client_protocol::v1::schema::Error::session_not_found(session_id.clone()).into()
}

fn text_chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

fn first_text(request: &PromptRequest) -> String {
    request
        .prompt
        .iter()
        .find_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn invalid_prompt(text: &str, details: String) -> Error {
    Error::invalid_params().data(json!({ "prompt": text, "details": details }))
}

/// One prompt turn, on its own task.
struct Turn {
    state: State,
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    /// Set when the client sends `$/cancel_request` for the prompt.
    cancellation: RequestCancellation,
}

impl Turn {
    fn update(&self, update: SessionUpdate) -> Result<(), Error> {
        self.cx
            .send_notification(SessionNotification::new(self.session_id.clone(), update))
    }

    /// Sends an agent message chunk and records it in the history.
    fn say(&self, message: impl Into<String>) -> Result<(), Error> {
        let chunk = SessionUpdate::AgentMessageChunk(text_chunk(message));
        self.state
            .with_session(&self.session_id, |s| s.history.push(chunk.clone()))?;
        self.update(chunk)
    }

    /// `end_turn`, or `cancelled` if `session/cancel` came during the turn.
    fn done(&self) -> Result<PromptResponse, Error> {
        let cancelled = self.state.with_session(&self.session_id, |s| s.cancelled)?;
        Ok(PromptResponse::new(if cancelled {
            StopReason::Cancelled
        } else {
            StopReason::EndTurn
        }))
    }

    /// A nested request to the client, cancelled with the prompt.
    async fn ask<Req: agent_client_protocol::JsonRpcRequest>(
        &self,
        request: Req,
    ) -> Result<Req::Response, Error> {
        self.cx
            .send_request(request)
            .forward_cancellation_from(self.cancellation.clone())
            .block_task()
            .await
    }

    async fn run(&self, text: &str) -> Result<PromptResponse, Error> {
        let trimmed = text.trim();
        let command = trimmed.split_whitespace().next().unwrap_or_default();
        let arg_text = trimmed[command.len()..].trim();
        match command {
            "stream" => {
                let n: u64 = arg_text
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| invalid_prompt(text, "stream needs a count".into()))?;
                for i in 0..n {
                    self.say(format!("chunk {i}"))?;
                }
                self.done()
            }
            "permission" => self.permission().await,
            "read" => {
                let file = self
                    .ask(ReadTextFileRequest::new(self.session_id.clone(), arg_text))
                    .await?;
                self.say(file.content)?;
                self.done()
            }
            "write" => {
                let path = arg_text.split_whitespace().next().unwrap_or_default();
                let content = arg_text[path.len()..].trim_start();
                self.ask(WriteTextFileRequest::new(
                    self.session_id.clone(),
                    path,
                    content,
                ))
                .await?;
                self.say("wrote")?;
                self.done()
            }
            "terminal" => {
                self.terminal(arg_text).await?;
                self.done()
            }
            "wait" => self.wait().await,
            "mcp" => {
                let text = self.mcp(arg_text).await?;
                self.say(text)?;
                self.done()
            }
            "system" => {
                let prompt = self
                    .state
                    .with_session(&self.session_id, |s| s.system_prompt.clone())?;
                self.say(format!("system: {}", json!(prompt)))?;
                self.done()
            }
            "usage" => Ok(self.done()?.usage(unstable::usage()?)),
            "plan" | "subagent" => {
                match unstable::updates(&self.state, command)? {
                    Some(updates) => {
                        let n = updates.len();
                        for update in updates {
                            self.update(update)?;
                        }
                        self.say(format!("{command}: {n} updates"))?;
                    }
                    None => self.say(format!("{command}: not advertised"))?,
                }
                self.done()
            }
            "auth" => {
                let state: AuthState = serde_json::from_value(json!(arg_text))
                    .map_err(|e| invalid_prompt(text, e.to_string()))?;
                self.state.unstable().auth = state.clone();
                let accounts = unstable::accounts(&state);
                self.cx.send_notification(
                    AuthStatusUpdateNotification::new(state).accounts(accounts),
                )?;
                self.say(format!("auth: {arg_text}"))?;
                self.done()
            }
            _ => Err(invalid_prompt(
                text,
                format!("unknown prompt command {command:?}"),
            )),
        }
    }

    async fn permission(&self) -> Result<PromptResponse, Error> {
        let n = self.state.next_tool_call.fetch_add(1, Ordering::Relaxed) + 1;
        let tool_call_id = format!("call-{n}");
        self.update(SessionUpdate::ToolCall(
            ToolCall::new(tool_call_id.clone(), "Edit file")
                .kind(ToolKind::Edit)
                .status(ToolCallStatus::Pending),
        ))?;
        let response = self
            .ask(RequestPermissionRequest::new(
                self.session_id.clone(),
                ToolCallUpdate::new(
                    tool_call_id.clone(),
                    ToolCallUpdateFields::new()
                        .title("Edit file")
                        .kind(ToolKind::Edit)
                        .status(ToolCallStatus::Pending),
                ),
                vec![
                    PermissionOption::new(
                        "allow_once",
                        "Allow once",
                        PermissionOptionKind::AllowOnce,
                    ),
                    PermissionOption::new(
                        "reject_once",
                        "Reject once",
                        PermissionOptionKind::RejectOnce,
                    ),
                ],
            ))
            .await?;
        let (label, allowed) = match &response.outcome {
            RequestPermissionOutcome::Selected(selected) => (
                selected.option_id.to_string(),
                selected.option_id.0.starts_with("allow"),
            ),
            RequestPermissionOutcome::Cancelled => ("cancelled".to_owned(), false),
            // The enum is non-exhaustive: an outcome this agent does not know.
            other => (format!("{other:?}"), false),
        };
        self.say(format!("permission: {label}"))?;
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            tool_call_id,
            ToolCallUpdateFields::new().status(if allowed {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            }),
        )))?;
        if matches!(response.outcome, RequestPermissionOutcome::Cancelled) {
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        self.done()
    }

    /// `sh -c COMMAND` in a client terminal; its output becomes one chunk.
    async fn terminal(&self, command: &str) -> Result<(), Error> {
        let cwd = self
            .state
            .with_session(&self.session_id, |s| s.cwd.clone())?;
        let terminal = self
            .ask(
                CreateTerminalRequest::new(self.session_id.clone(), "sh")
                    .args(vec!["-c".to_owned(), command.to_owned()])
                    .cwd(cwd),
            )
            .await?;
        let id = terminal.terminal_id;
        let result = async {
            self.ask(WaitForTerminalExitRequest::new(
                self.session_id.clone(),
                id.clone(),
            ))
            .await?;
            let output = self
                .ask(TerminalOutputRequest::new(
                    self.session_id.clone(),
                    id.clone(),
                ))
                .await?;
            self.say(output.output)
        }
        .await;
        // Released whatever happened, like the TypeScript agent's `finally`.
        let released = self
            .ask(ReleaseTerminalRequest::new(self.session_id.clone(), id))
            .await;
        result?;
        released.map(drop)
    }

    /// `mcp TEXT`: `tools/call` of `echo` on the session's first MCP server
    /// of transport `acp`, over `mcp/message`; the chunk says what came
    /// back and which `mcp/message` notifications the client sent for it.
    async fn mcp(&self, text: &str) -> Result<String, Error> {
        let server = self
            .state
            .with_session(&self.session_id, |s| s.acp_servers.first().cloned())?
            .ok_or_else(|| {
                invalid_prompt(
                    text,
                    "the session has no MCP server of transport acp".into(),
                )
            })?;
        let request_id = {
            let mut unstable = self.state.unstable();
            unstable.mcp_requests += 1;
            format!("rust-mcp-{}", unstable.mcp_requests)
        };
        let response = self
            .ask(
                MessageMcpRequest::new(server.clone(), request_id.clone(), "tools/call")
                    .params(unstable::echo_params(&request_id, text)),
            )
            .await?;
        let outcome = match response {
            MessageMcpResponse::Result { result, .. } => result["content"][0]["text"]
                .as_str()
                .map_or_else(|| format!("result {result}"), str::to_owned),
            MessageMcpResponse::Error { error, .. } => {
                format!("error {} {}", error.code, error.message)
            }
            // The enum is non-exhaustive: an outcome this agent does not know.
            other => format!("outcome {}", json!(other)),
        };
        // The SDK runs notification handlers before it routes a later
        // response: the client's notifications are in.
        let notes = unstable::take_mcp_notifications(&self.state, &server, &request_id);
        Ok(format!("mcp: {outcome} [{}]", notes.join(", ")))
    }

    /// Until `session/cancel` for the session (or `$/cancel_request` of the
    /// prompt, answered `-32800`).
    async fn wait(&self) -> Result<PromptResponse, Error> {
        let (wake, woken) = oneshot::channel();
        let already = self.state.with_session(&self.session_id, |s| {
            if s.cancelled {
                true
            } else {
                s.cancel_waiters.push(wake);
                false
            }
        })?;
        if !already {
            tokio::select! {
                _ = woken => {}
                () = self.cancellation.cancelled() => return Err(Error::request_cancelled()),
            }
        }
        Ok(PromptResponse::new(StopReason::Cancelled))
    }
}

/// The agent, with its own state: one for stdio, one per remote connection.
fn agent(state: State) -> impl ConnectTo<Client> {
    let on_new = state.clone();
    let on_load = state.clone();
    let on_cancel = state.clone();
    let on_prompt = state.clone();
    let on_initialize = state.clone();
    let advertise_unstable = state.advertise_unstable;
    let (on_fork, on_status, on_archive, on_unarchive, on_title) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
    );
    let (on_auth, on_list, on_set, on_disable, on_mcp) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state,
    );
    Agent
        .v1()
        .name("official-rust-agent")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                on_initialize.unstable().client = request.client_capabilities.clone();
                if request.protocol_version != ProtocolVersion::V1 {
                    eprintln!(
                        "official-rust-agent: client asked for protocol {:?}; answering 1",
                        request.protocol_version
                    );
                }
                let capabilities = AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(
                        PromptCapabilities::new()
                            .image(true)
                            .audio(false)
                            .embedded_context(true),
                    );
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(if advertise_unstable {
                            unstable::capabilities(capabilities)
                        } else {
                            capabilities
                        })
                        .auth_methods(Vec::new())
                        .agent_info(Implementation::new("official-rust-agent", "0.0.0")),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                let system_prompt = match unstable::system_prompt(request.system_prompt) {
                    Ok(system_prompt) => system_prompt,
                    Err(e) => return responder.respond_with_error(e),
                };
                let session_id = on_new.new_session_id();
                let mut session =
                    Session::new(request.cwd, unstable::acp_servers(&request.mcp_servers));
                session.system_prompt = system_prompt;
                on_new.sessions().insert(session_id.clone(), session);
                responder.respond(NewSessionResponse::new(session_id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let system_prompt = match unstable::system_prompt(request.system_prompt) {
                    Ok(system_prompt) => system_prompt,
                    Err(e) => return responder.respond_with_error(e),
                };
                let history = on_load.with_session(&request.session_id, |s| {
                    s.system_prompt = system_prompt;
                    s.cwd.clone_from(&request.cwd);
                    s.open = true;
                    s.acp_servers = unstable::acp_servers(&request.mcp_servers);
                    s.history.clone()
                });
                let history = match history {
                    Ok(history) => history,
                    Err(e) => return responder.respond_with_error(e),
                };
                // Notifications and the response leave in the order they are
                // sent, so the whole replay precedes the answer.
                for update in history {
                    cx.send_notification(SessionNotification::new(
                        request.session_id.clone(),
                        update,
                    ))?;
                }
                responder.respond(LoadSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                let waiters = on_cancel.with_session(&notification.session_id, |s| {
                    s.cancelled = true;
                    std::mem::take(&mut s.cancel_waiters)
                });
                match waiters {
                    Ok(waiters) => {
                        for wake in waiters {
                            let _ = wake.send(());
                        }
                    }
                    Err(_) => eprintln!(
                        "official-rust-agent: session/cancel for unknown session {}",
                        notification.session_id
                    ),
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let text = first_text(&request);
                let session_id = request.session_id;
                let started = on_prompt.with_session(&session_id, |s| {
                    if !s.open {
                        // Archived and not loaded since: not active.
                        return Err(session_not_found(&session_id));
                    }
                    s.cancelled = false;
                    s.history
                        .push(SessionUpdate::UserMessageChunk(text_chunk(text.clone())));
                    Ok(())
                });
                if let Err(e) = started.and_then(|started| started) {
                    return responder.respond_with_error(e);
                }
                let turn = Turn {
                    state: on_prompt.clone(),
                    cx: cx.clone(),
                    session_id,
                    cancellation: responder.cancellation(),
                };
                cx.spawn(async move {
                    let result = turn.run(&text).await;
                    responder.respond_with_result(result)
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        // The unstable methods (`unstable.rs`).
        .on_receive_request(
            async move |request: ForkSessionRequest,
                        responder: Responder<ForkSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(unstable::fork(&on_fork, request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SessionStatusRequest,
                        responder: Responder<SessionStatusResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(
                    unstable::status(&on_status, &request.session_id)
                        .map(SessionStatusResponse::new),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ArchiveSessionRequest,
                        responder: Responder<ArchiveSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(
                    unstable::archive(&on_archive, &request.session_id)
                        .map(|()| ArchiveSessionResponse::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: UnarchiveSessionRequest,
                        responder: Responder<UnarchiveSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(
                    unstable::unarchive(&on_unarchive, &request.session_id)
                        .map(|()| UnarchiveSessionResponse::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionTitleRequest,
                        responder: Responder<SetSessionTitleResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(unstable::set_title(&on_title, request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthStatusRequest,
                        responder: Responder<AuthStatusResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(unstable::auth_status(&on_auth))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: ListProvidersRequest,
                        responder: Responder<ListProvidersResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(unstable::list_providers(&on_list))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetProviderRequest,
                        responder: Responder<SetProviderResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(unstable::set_provider(&on_set, request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: DisableProviderRequest,
                        responder: Responder<DisableProviderResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond_with_result(unstable::disable_provider(&on_disable, request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: MessageMcpNotification, _cx: ConnectionTo<Client>| {
                unstable::mcp_notification(&on_mcp, notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// Serves a fresh agent per remote connection on `listen` until stdin
/// closes.
async fn serve_remote(
    listen: &str,
    state: impl Fn() -> State + Send + Sync + 'static,
) -> Result<(), String> {
    let router = AcpHttpServer::new(move || agent(state())).into_router();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    eprintln!("listening on {address}");
    let stdin_closed = async {
        let mut stdin = tokio::io::stdin();
        let mut buffer = [0u8; 4096];
        while let Ok(1..) = stdin.read(&mut buffer).await {}
    };
    axum::serve(listener, router)
        .with_graceful_shutdown(stdin_closed)
        .await
        .map_err(|e| format!("serving failed: {e}"))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let advertise_unstable = args.first().is_some_and(|a| a == "--unstable");
    if advertise_unstable {
        args.remove(0);
    }
    let state = move || State {
        advertise_unstable,
        ..State::default()
    };
    match args.as_slice() {
        [] => {}
        [flag, listen] if flag == "--listen" => {
            return serve_remote(listen, state).await.map_err(|e| {
                eprintln!("official-rust-agent: {e}");
                Error::internal_error().data(e)
            });
        }
        _ => {
            eprintln!("usage: official-rust-agent [--unstable] [--listen HOST:PORT]");
            std::process::exit(2);
        }
    }
    let mut transport = Stdio::new();
    if std::env::var_os("ACP_INTEROP_TRACE").is_some() {
        transport = transport.with_debug(|line, direction| {
            let arrow = if direction == LineDirection::Stdin {
                "<-"
            } else {
                "->"
            };
            eprintln!("official-rust-agent {arrow} {line}");
        });
    }
    let result = agent(state()).connect_to(transport).await;
    if let Err(e) = &result {
        eprintln!("official-rust-agent: connection ended with {e}");
    }
    result
}
