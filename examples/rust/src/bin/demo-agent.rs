//! A scripted ACP agent on stdio, built on libacp-core's typed API. No
//! model, no API key: every prompt runs the same script, which exercises
//! most of ACP v1:
//!
//! 1. a thought and a plan of three entries, updated as the steps complete;
//! 2. a reply streamed as several `agent_message_chunk`s;
//! 3. an `edit` tool call with a diff for `hello.txt` in the session's
//!    directory, a `session/request_permission`, then (if allowed, and the
//!    client offers `fs`) `fs/read_text_file` and `fs/write_text_file`;
//! 4. an `execute` tool call running a command through `terminal/create`,
//!    `terminal/wait_for_exit`, `terminal/output` and `terminal/release`
//!    (if the client offers `terminal`);
//! 5. `stopReason: "end_turn"`, or `"cancelled"` as soon as the client sends
//!    `session/cancel`, whatever step the turn is at.
//!
//! Sessions have two modes (`ask`, `code`) and can be loaded again
//! (`session/load` replays the conversation): their history is kept in
//! `$TMPDIR/libacp-demo-agent/`, so a later `demo-client --load ID` works
//! across runs. Logs go to stderr; stdout carries only frames.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use libacp_core::{
    AcpOptions, Agent, AgentConnection, CallError, CancellationToken, RequestContext, RpcError,
    codes, v1,
};
use libacp_examples::script;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[tokio::main]
async fn main() {
    let delay = std::env::var(script::DELAY_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(script::DEFAULT_DELAY_MS);
    let agent = DemoAgent {
        client: Mutex::new(v1::ClientCapabilities::new()),
        sessions: Mutex::new(HashMap::new()),
        turns: AtomicU64::new(0),
        delay: Duration::from_millis(delay),
    };
    let conn = AgentConnection::serve_stdio(agent, AcpOptions::default());
    let reason = conn.acp().closed().await;
    conn.acp().terminated().await; // what was answered is written before exiting
    log(&format!("connection closed ({reason}), exiting"));
}

fn log(line: &str) {
    eprintln!("demo-agent: {line}");
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One message of a session's history.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Message {
    /// `user` or `agent`.
    role: String,
    text: String,
}

/// What the agent remembers of a session (also on disk, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Session {
    cwd: PathBuf,
    mode: String,
    history: Vec<Message>,
}

struct DemoAgent {
    /// What the client advertised in `initialize`.
    client: Mutex<v1::ClientCapabilities>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Numbers the turns, for tool call ids.
    turns: AtomicU64,
    /// Pause between streamed chunks.
    delay: Duration,
}

fn store_dir() -> PathBuf {
    std::env::temp_dir().join("libacp-demo-agent")
}

/// Session ids double as file names: only a safe alphabet is accepted.
fn store_path(session_id: &str) -> Option<PathBuf> {
    let safe = !session_id.is_empty()
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    safe.then(|| store_dir().join(format!("{session_id}.json")))
}

fn save(session_id: &str, session: &Session) {
    let Some(path) = store_path(session_id) else {
        return;
    };
    let written = std::fs::create_dir_all(store_dir()).and_then(|()| {
        let json = serde_json::to_vec_pretty(session).map_err(std::io::Error::other)?;
        std::fs::write(&path, json)
    });
    if let Err(e) = written {
        log(&format!("could not save session {session_id}: {e}"));
    }
}

fn restore(session_id: &str) -> Option<Session> {
    let bytes = std::fs::read(store_path(session_id)?).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn modes(current: &str) -> v1::SessionModeState {
    v1::SessionModeState::new(
        current.to_owned(),
        script::MODES
            .iter()
            .map(|(id, name, description)| {
                v1::SessionMode::new(*id, *name).description(description.to_string())
            })
            .collect(),
    )
}

fn new_session_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "demo-{:x}-{:x}",
        std::process::id(),
        nanos & 0xffff_ffff_ffff
    )
}

fn text_chunk(text: &str) -> v1::ContentChunk {
    v1::ContentChunk::new(v1::ContentBlock::from(text))
}

impl Agent for DemoAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        let caps = &args.client_capabilities;
        log(&format!(
            "initialize from {} (fs read {}, fs write {}, terminal {})",
            args.client_info
                .as_ref()
                .map_or("an unnamed client", |i| i.name.as_str()),
            caps.fs.read_text_file,
            caps.fs.write_text_file,
            caps.terminal
        ));
        *lock(&self.client) = args.client_capabilities;
        Ok(v1::InitializeResponse::new(v1::ProtocolVersion::V1)
            .agent_capabilities(
                v1::AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(v1::PromptCapabilities::new().embedded_context(true)),
            )
            .agent_info(
                v1::Implementation::new("libacp-demo-agent", env!("CARGO_PKG_VERSION"))
                    .title("libacp demo agent (scripted, no model)".to_owned()),
            ))
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        let id = new_session_id();
        let session = Session {
            cwd: args.cwd,
            mode: script::MODES[0].0.to_owned(),
            history: Vec::new(),
        };
        log(&format!("session/new {id} in {}", session.cwd.display()));
        save(&id, &session);
        let modes = modes(&session.mode);
        lock(&self.sessions).insert(id.clone(), session);
        Ok(v1::NewSessionResponse::new(id).modes(modes))
    }

    async fn load_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::LoadSessionRequest,
    ) -> Result<v1::LoadSessionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let known = lock(&self.sessions).get(&id).cloned();
        let Some(mut session) = known.or_else(|| restore(&id)) else {
            return Err(RpcError::new(
                codes::RESOURCE_NOT_FOUND,
                "Resource not found: unknown session",
            )
            .with_data(json!({ "sessionId": id })));
        };
        log(&format!(
            "session/load {id}: replaying {} messages",
            session.history.len()
        ));
        for message in &session.history {
            let chunk = text_chunk(&message.text);
            let update = if message.role == "user" {
                v1::SessionUpdate::UserMessageChunk(chunk)
            } else {
                v1::SessionUpdate::AgentMessageChunk(chunk)
            };
            cx.connection
                .session_update(&v1::SessionNotification::new(
                    args.session_id.clone(),
                    update,
                ))
                .await
                .map_err(|e| RpcError::internal_error(e.to_string()))?;
        }
        session.cwd = args.cwd;
        let modes = modes(&session.mode);
        lock(&self.sessions).insert(id, session);
        Ok(v1::LoadSessionResponse::new().modes(modes))
    }

    async fn set_session_mode(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetSessionModeRequest,
    ) -> Result<v1::SetSessionModeResponse, RpcError> {
        let mode = args.mode_id.0.to_string();
        if !script::MODES.iter().any(|(id, _, _)| *id == mode) {
            return Err(RpcError::invalid_params(format!(
                "unknown mode `{mode}` (this agent has: ask, code)"
            )));
        }
        let id = args.session_id.0.to_string();
        {
            let mut sessions = lock(&self.sessions);
            let Some(session) = sessions.get_mut(&id) else {
                return Err(RpcError::new(codes::RESOURCE_NOT_FOUND, "unknown session")
                    .with_data(json!({ "sessionId": id })));
            };
            session.mode.clone_from(&mode);
            save(&id, session);
        }
        log(&format!("session {id}: mode {mode}"));
        cx.connection
            .session_update(&v1::SessionNotification::new(
                args.session_id,
                v1::SessionUpdate::CurrentModeUpdate(v1::CurrentModeUpdate::new(mode)),
            ))
            .await
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(v1::SetSessionModeResponse::new())
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let Some(session) = lock(&self.sessions).get(&id).cloned() else {
            return Err(RpcError::new(codes::RESOURCE_NOT_FOUND, "unknown session")
                .with_data(json!({ "sessionId": id })));
        };
        let user_text = prompt_text(&args.prompt);
        let n = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        log(&format!("session {id}: prompt {n}: {user_text:?}"));
        let mut turn = Turn {
            conn: cx.connection.clone(),
            session_id: args.session_id.clone(),
            cancel: cx.cancellation.clone(),
            delay: self.delay,
            client: lock(&self.client).clone(),
            reply: String::new(),
            plan: Vec::new(),
            n,
        };
        let outcome = turn.run(&session, &user_text).await;
        // Keep the conversation, whatever happened, for session/load.
        {
            let mut sessions = lock(&self.sessions);
            if let Some(s) = sessions.get_mut(&id) {
                s.history.push(Message {
                    role: "user".into(),
                    text: user_text,
                });
                if !turn.reply.is_empty() {
                    s.history.push(Message {
                        role: "agent".into(),
                        text: std::mem::take(&mut turn.reply),
                    });
                }
                save(&id, s);
            }
        }
        match outcome {
            Ok(()) => {
                log(&format!("session {id}: prompt {n}: end_turn"));
                Ok(v1::PromptResponse::new(v1::StopReason::EndTurn))
            }
            Err(Halt::Cancelled) => {
                log(&format!("session {id}: prompt {n}: cancelled"));
                Ok(v1::PromptResponse::new(v1::StopReason::Cancelled))
            }
            Err(Halt::Failed(e)) => {
                log(&format!("session {id}: prompt {n}: failed: {e}"));
                Err(e)
            }
        }
    }

    async fn cancel(&self, _connection: AgentConnection, args: v1::CancelNotification) {
        log(&format!("session/cancel for {}", args.session_id.0));
    }
}

/// The prompt as text: text blocks as they are, other blocks named.
fn prompt_text(blocks: &[v1::ContentBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            v1::ContentBlock::Text(t) => t.text.clone(),
            v1::ContentBlock::ResourceLink(l) => format!("[link {}]", l.uri),
            v1::ContentBlock::Resource(_) => "[embedded resource]".to_owned(),
            v1::ContentBlock::Image(_) => "[image]".to_owned(),
            _ => "[content]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a turn stopped early.
enum Halt {
    /// `session/cancel` arrived (or the client answered a permission request
    /// `cancelled`).
    Cancelled,
    /// A call to the client failed in a way the turn cannot go on from.
    Failed(RpcError),
}

impl From<CallError> for Halt {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Rpc(e) => Halt::Failed(e),
            other => Halt::Failed(RpcError::internal_error(other.to_string())),
        }
    }
}

/// One prompt turn in progress.
struct Turn {
    conn: AgentConnection,
    session_id: v1::SessionId,
    cancel: CancellationToken,
    delay: Duration,
    client: v1::ClientCapabilities,
    /// Everything said so far (kept in the history).
    reply: String,
    plan: Vec<v1::PlanEntry>,
    n: u64,
}

impl Turn {
    async fn run(&mut self, session: &Session, user_text: &str) -> Result<(), Halt> {
        self.check()?;
        self.think(&format!(
            "The user said {user_text:?}. No model here: I follow my script (write a file, \
             run a command)."
        ))
        .await?;
        self.plan = vec![
            v1::PlanEntry::new(
                format!("Write {} in the session folder", script::HELLO_FILE),
                v1::PlanEntryPriority::High,
                v1::PlanEntryStatus::Pending,
            ),
            v1::PlanEntry::new(
                "Ask the terminal for the system name",
                v1::PlanEntryPriority::Medium,
                v1::PlanEntryStatus::Pending,
            ),
            v1::PlanEntry::new(
                "Sum up",
                v1::PlanEntryPriority::Low,
                v1::PlanEntryStatus::Pending,
            ),
        ];
        self.send_plan().await?;
        self.say(&format!(
            "Hello! I am the libacp demo agent, in {} mode. I will write {} in {} and then \
             ask your terminal which system this is.\n",
            session.mode,
            script::HELLO_FILE,
            session.cwd.display()
        ))
        .await?;

        self.plan_status(0, v1::PlanEntryStatus::InProgress).await?;
        let wrote = if self.client.fs.write_text_file {
            self.edit_step(&session.cwd).await?
        } else {
            self.say("Your client does not offer fs/write_text_file, so I skip the file step.\n")
                .await?;
            false
        };
        self.plan_status(0, v1::PlanEntryStatus::Completed).await?;

        self.plan_status(1, v1::PlanEntryStatus::InProgress).await?;
        let system = if self.client.terminal {
            self.terminal_step(&session.cwd).await?
        } else {
            self.say("Your client does not offer terminal/*, so I skip the command.\n")
                .await?;
            None
        };
        self.plan_status(1, v1::PlanEntryStatus::Completed).await?;

        self.plan_status(2, v1::PlanEntryStatus::InProgress).await?;
        let file = if wrote {
            format!("{} is written", script::HELLO_FILE)
        } else {
            format!("{} is unchanged", script::HELLO_FILE)
        };
        let sys = system.map_or_else(
            || "I could not ask for the system name".to_owned(),
            |s| format!("this system is {s}"),
        );
        self.say(&format!("All done: {file}, and {sys}.\n")).await?;
        self.plan_status(2, v1::PlanEntryStatus::Completed).await?;
        Ok(())
    }

    /// `Err(Cancelled)` once the turn is cancelled.
    fn check(&self) -> Result<(), Halt> {
        if self.cancel.is_cancelled() {
            Err(Halt::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Awaits `f` unless the turn is cancelled first.
    async fn unless_cancelled<F: Future>(&self, f: F) -> Result<F::Output, Halt> {
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(Halt::Cancelled),
            out = f => Ok(out),
        }
    }

    async fn pause(&self) -> Result<(), Halt> {
        self.unless_cancelled(tokio::time::sleep(self.delay)).await
    }

    async fn send(&self, update: v1::SessionUpdate) -> Result<(), Halt> {
        self.check()?;
        self.conn
            .session_update(&v1::SessionNotification::new(
                self.session_id.clone(),
                update,
            ))
            .await?;
        Ok(())
    }

    /// Streams `text` a few words at a time.
    async fn say(&mut self, text: &str) -> Result<(), Halt> {
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        for piece in words.chunks(3) {
            let piece = piece.concat();
            self.send(v1::SessionUpdate::AgentMessageChunk(text_chunk(&piece)))
                .await?;
            self.reply.push_str(&piece);
            self.pause().await?;
        }
        Ok(())
    }

    async fn think(&self, text: &str) -> Result<(), Halt> {
        self.send(v1::SessionUpdate::AgentThoughtChunk(text_chunk(text)))
            .await?;
        self.pause().await
    }

    async fn send_plan(&self) -> Result<(), Halt> {
        self.send(v1::SessionUpdate::Plan(v1::Plan::new(self.plan.clone())))
            .await
    }

    async fn plan_status(&mut self, i: usize, status: v1::PlanEntryStatus) -> Result<(), Halt> {
        if let Some(entry) = self.plan.get_mut(i) {
            entry.status = status;
        }
        self.send_plan().await
    }

    async fn tool_update(&self, id: &str, fields: v1::ToolCallUpdateFields) -> Result<(), Halt> {
        self.send(v1::SessionUpdate::ToolCallUpdate(v1::ToolCallUpdate::new(
            id.to_owned(),
            fields,
        )))
        .await
    }

    async fn tool_failed(&self, id: &str, why: &str) -> Result<(), Halt> {
        self.tool_update(
            id,
            v1::ToolCallUpdateFields::new()
                .status(v1::ToolCallStatus::Failed)
                .content(vec![v1::ToolCallContent::from(why)]),
        )
        .await
    }

    /// The `edit` tool call. `Ok(true)` when the file was written.
    async fn edit_step(&mut self, cwd: &Path) -> Result<bool, Halt> {
        let id = format!("edit-{}", self.n);
        let path = cwd.join(script::HELLO_FILE);
        let title = format!("Write {}", script::HELLO_FILE);
        self.send(v1::SessionUpdate::ToolCall(
            v1::ToolCall::new(id.clone(), title.clone())
                .kind(v1::ToolKind::Edit)
                .status(v1::ToolCallStatus::Pending)
                .content(vec![
                    v1::Diff::new(path.clone(), script::HELLO_CONTENT).into(),
                ])
                .locations(vec![v1::ToolCallLocation::new(path.clone()).line(1)])
                .raw_input(json!({ "path": path, "content": script::HELLO_CONTENT })),
        ))
        .await?;
        self.pause().await?;

        let request = v1::RequestPermissionRequest::new(
            self.session_id.clone(),
            v1::ToolCallUpdate::new(
                id.clone(),
                v1::ToolCallUpdateFields::new()
                    .title(title.clone())
                    .kind(v1::ToolKind::Edit),
            ),
            vec![
                v1::PermissionOption::new(
                    "allow",
                    "Allow once",
                    v1::PermissionOptionKind::AllowOnce,
                ),
                v1::PermissionOption::new("reject", "Reject", v1::PermissionOptionKind::RejectOnce),
            ],
        );
        let answer = self
            .unless_cancelled(self.conn.request_permission(&request))
            .await??;
        let allowed = match answer.outcome {
            v1::RequestPermissionOutcome::Selected(s) => &*s.option_id.0 == "allow",
            // The client cancelled the turn while we were asking.
            _ => return Err(Halt::Cancelled),
        };
        if !allowed {
            self.tool_failed(&id, "Refused by the user: the file was not written.")
                .await?;
            self.say(&format!(
                "Understood: permission refused, I leave {} alone.\n",
                script::HELLO_FILE
            ))
            .await?;
            return Ok(false);
        }

        self.tool_update(
            &id,
            v1::ToolCallUpdateFields::new().status(v1::ToolCallStatus::InProgress),
        )
        .await?;
        let old = if self.client.fs.read_text_file {
            let read = self
                .unless_cancelled(self.conn.read_text_file(&v1::ReadTextFileRequest::new(
                    self.session_id.clone(),
                    path.clone(),
                )))
                .await?;
            match read {
                Ok(r) => Some(r.content),
                Err(e) if is_not_found(&e) => None,
                Err(e) => {
                    self.tool_failed(&id, &format!("Could not read the file: {e}"))
                        .await?;
                    self.say(&format!("I could not read {}.\n", script::HELLO_FILE))
                        .await?;
                    return Ok(false);
                }
            }
        } else {
            None
        };
        if let Some(old) = &old {
            // The file exists: show the real diff.
            self.tool_update(
                &id,
                v1::ToolCallUpdateFields::new().content(vec![
                    v1::Diff::new(path.clone(), script::HELLO_CONTENT)
                        .old_text(old.clone())
                        .into(),
                ]),
            )
            .await?;
        }
        self.pause().await?;
        let written = self
            .unless_cancelled(self.conn.write_text_file(&v1::WriteTextFileRequest::new(
                self.session_id.clone(),
                path.clone(),
                script::HELLO_CONTENT,
            )))
            .await?;
        if let Err(e) = written {
            self.tool_failed(&id, &format!("Could not write the file: {e}"))
                .await?;
            self.say(&format!("I could not write {}.\n", script::HELLO_FILE))
                .await?;
            return Ok(false);
        }
        self.tool_update(
            &id,
            v1::ToolCallUpdateFields::new()
                .status(v1::ToolCallStatus::Completed)
                .raw_output(json!({ "bytesWritten": script::HELLO_CONTENT.len() })),
        )
        .await?;
        let note = if old.is_some() { "updated" } else { "created" };
        self.say(&format!("I {note} {}.\n", script::HELLO_FILE))
            .await?;
        Ok(true)
    }

    /// The `execute` tool call. Returns the system name the command printed.
    async fn terminal_step(&mut self, cwd: &Path) -> Result<Option<String>, Halt> {
        let id = format!("run-{}", self.n);
        let shown = format!(
            "{} {} '{}'",
            script::TERMINAL_PROGRAM,
            script::TERMINAL_ARGS[0],
            script::TERMINAL_ARGS[1]
        );
        self.send(v1::SessionUpdate::ToolCall(
            v1::ToolCall::new(id.clone(), format!("Run `{shown}`"))
                .kind(v1::ToolKind::Execute)
                .status(v1::ToolCallStatus::Pending)
                .raw_input(json!({
                    "command": script::TERMINAL_PROGRAM,
                    "args": script::TERMINAL_ARGS,
                })),
        ))
        .await?;
        let created = self
            .unless_cancelled(
                self.conn.create_terminal(
                    &v1::CreateTerminalRequest::new(
                        self.session_id.clone(),
                        script::TERMINAL_PROGRAM,
                    )
                    .args(
                        script::TERMINAL_ARGS
                            .iter()
                            .map(|a| a.to_string())
                            .collect(),
                    )
                    .cwd(cwd.to_path_buf())
                    .output_byte_limit(64 * 1024),
                ),
            )
            .await?;
        let terminal_id = match created {
            Ok(t) => t.terminal_id,
            Err(e) => {
                self.tool_failed(&id, &format!("Could not start the command: {e}"))
                    .await?;
                self.say("The terminal would not start the command.\n")
                    .await?;
                return Ok(None);
            }
        };
        self.tool_update(
            &id,
            v1::ToolCallUpdateFields::new()
                .status(v1::ToolCallStatus::InProgress)
                .content(vec![v1::ToolCallContent::Terminal(v1::Terminal::new(
                    terminal_id.clone(),
                ))]),
        )
        .await?;
        let waited = self
            .unless_cancelled(self.conn.wait_for_terminal_exit(
                &v1::WaitForTerminalExitRequest::new(self.session_id.clone(), terminal_id.clone()),
            ))
            .await;
        let release = v1::ReleaseTerminalRequest::new(self.session_id.clone(), terminal_id.clone());
        let exit = match waited {
            Ok(Ok(exit)) => exit.exit_status,
            Ok(Err(e)) => {
                let _ = self.conn.release_terminal(&release).await;
                self.tool_failed(&id, &format!("Lost the command: {e}"))
                    .await?;
                return Ok(None);
            }
            Err(halt) => {
                // Cancelled: stop the command, give the terminal back.
                let _ = self
                    .conn
                    .kill_terminal(&v1::KillTerminalRequest::new(
                        self.session_id.clone(),
                        terminal_id.clone(),
                    ))
                    .await;
                let _ = self.conn.release_terminal(&release).await;
                return Err(halt);
            }
        };
        let output = self
            .conn
            .terminal_output(&v1::TerminalOutputRequest::new(
                self.session_id.clone(),
                terminal_id.clone(),
            ))
            .await
            .map(|o| o.output)
            .unwrap_or_default();
        let _ = self.conn.release_terminal(&release).await;
        let ok = exit.exit_code == Some(0);
        self.tool_update(
            &id,
            v1::ToolCallUpdateFields::new()
                .status(if ok {
                    v1::ToolCallStatus::Completed
                } else {
                    v1::ToolCallStatus::Failed
                })
                .raw_output(
                    json!({ "exitCode": exit.exit_code, "signal": exit.signal, "output": output }),
                ),
        )
        .await?;
        let system = output
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty() && *l != script::TERMINAL_GREETING)
            .map(str::to_owned);
        match &system {
            Some(s) if ok => {
                self.say(&format!("The terminal says this is {s}.\n"))
                    .await?
            }
            _ => self.say("The command did not succeed.\n").await?,
        }
        Ok(system.filter(|_| ok))
    }
}

/// Whether a failed `fs/read_text_file` means the file does not exist
/// (libacp's `SandboxedFs` answers `-32002`; other clients word it).
fn is_not_found(e: &CallError) -> bool {
    match e {
        CallError::Rpc(e) => {
            let text =
                format!("{} {}", e.message, e.data.clone().unwrap_or_default()).to_lowercase();
            e.code == codes::RESOURCE_NOT_FOUND
                || text.contains("not found")
                || text.contains("no such file")
                || text.contains("enoent")
        }
        _ => false,
    }
}
