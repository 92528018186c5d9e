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
//!    `session/cancel` (or closes or deletes the session), whatever step the
//!    turn is at.
//!
//! It advertises and implements every stable v1 capability:
//!
//! * sessions are kept in memory and in `$TMPDIR/libacp-demo-agent/`:
//!   `session/load` replays the conversation, `session/resume` reattaches
//!   without a replay, `session/list` lists them (filtered by `cwd`, paged
//!   with `nextCursor`), `session/close` forgets one in memory,
//!   `session/delete` removes it from the disk too (deleting an unknown
//!   session succeeds: there is nothing left to delete);
//! * two modes (`ask`, `code`) and two config options: `model` (category
//!   `model`, three pretend models; the reply names the chosen one) and
//!   `thinking` (a boolean: whether the turn starts with a thought; offered
//!   only to clients that advertise `session.configOptions.boolean`);
//! * `additionalDirectories` on new, load and resume (named in the reply);
//! * image, audio and embedded-resource prompt blocks (acknowledged in the
//!   reply, with their type and size);
//! * `elicitation/create`: a prompt containing "ask me" makes the agent ask
//!   the user's name (if the client offers form elicitation) and use it;
//! * one auth method, `demo-token`, and `logout`. Authentication is only
//!   required with `--require-auth` (or `LIBACP_DEMO_AGENT_REQUIRE_AUTH=1`);
//!   without it the agent works unauthenticated;
//! * a notice (`session.notices` clients) at a session's first turn, and a
//!   context compaction (`session.compaction` clients: an update, the
//!   summary in chunks, the completed update) once a session's history
//!   reaches six messages or a prompt says "compact": the history is then
//!   replaced by its summary.
//!
//! With `--unstable` (or `LIBACP_DEMO_AGENT_UNSTABLE=1`) it also speaks the
//! unstable v1 extensions and advertises what an agent implements of them:
//! `session/fork` (a copy of the session, history included, under a new
//! id), `session/archive` and `session/unarchive` (archived sessions leave
//! `session/list` unless its `archived` filter asks for them),
//! `session/status`, `session/set_title`, `auth/status`, token `usage` at
//! the end of each turn, and, for clients that advertise `subagents`, the
//! terminal step run by a subagent whose state updates (running, idle)
//! arrive on the parent session.
//!
//! Logs go to stderr; stdout carries only frames.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use libacp_core::protocol::unstable::Features;
use libacp_core::{
    AcpOptions, Agent, AgentConnection, CallError, CancellationToken, RequestContext, RpcError,
    codes, v1,
};
use libacp_examples::{media, render, script};
use serde::{Deserialize, Serialize};
use serde_json::json;

const USAGE: &str = "\
usage: demo-agent [--require-auth] [--unstable]

The libacp demo agent, on stdin/stdout (run it from an ACP client such as
demo-client).

  --require-auth    sessions need `authenticate` (method demo-token) first;
                    also LIBACP_DEMO_AGENT_REQUIRE_AUTH=1
  --unstable        speak the unstable v1 extensions (fork, archive, status,
                    title, auth status, usage, subagents); also
                    LIBACP_DEMO_AGENT_UNSTABLE=1";

#[tokio::main]
async fn main() -> ExitCode {
    let mut require_auth = std::env::var(script::REQUIRE_AUTH_ENV).is_ok_and(|v| v == "1");
    let mut unstable = std::env::var(script::UNSTABLE_ENV).is_ok_and(|v| v == "1");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--require-auth" => require_auth = true,
            "--unstable" => unstable = true,
            "-h" | "--help" => {
                eprintln!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("demo-agent: unknown argument `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let env_number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    let delay = env_number(script::DELAY_ENV).unwrap_or(script::DEFAULT_DELAY_MS);
    let page_size = env_number(script::PAGE_SIZE_ENV)
        .map_or(script::DEFAULT_PAGE_SIZE, |n: u64| {
            usize::try_from(n).unwrap_or(usize::MAX).max(1)
        });
    let agent = DemoAgent {
        client: Mutex::new(v1::ClientCapabilities::new()),
        sessions: Mutex::new(HashMap::new()),
        running: Mutex::new(HashMap::new()),
        turns: AtomicU64::new(0),
        delay: Duration::from_millis(delay),
        page_size,
        unstable,
        require_auth,
        authenticated: AtomicBool::new(false),
    };
    if require_auth {
        log(&format!(
            "authentication required (method {})",
            script::AUTH_METHOD
        ));
    }
    let options = AcpOptions {
        require_auth,
        unstable: if unstable {
            Features::all()
        } else {
            Features::NONE
        },
        ..AcpOptions::default()
    };
    let conn = AgentConnection::serve_stdio(agent, options);
    let reason = conn.acp().closed().await;
    conn.acp().terminated().await; // what was answered is written before exiting
    log(&format!("connection closed ({reason}), exiting"));
    ExitCode::SUCCESS
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

fn default_model() -> String {
    script::MODELS[0].0.to_owned()
}

fn yes() -> bool {
    true
}

/// What the agent remembers of a session (also on disk, as JSON; the
/// fields added later have defaults, so older files still load).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Session {
    cwd: PathBuf,
    mode: String,
    /// The `model` config option.
    #[serde(default = "default_model")]
    model: String,
    /// The `thinking` config option.
    #[serde(default = "yes")]
    thinking: bool,
    #[serde(default)]
    additional_directories: Vec<PathBuf>,
    /// The first prompt, shortened (for `session/list`).
    #[serde(default)]
    title: Option<String>,
    /// Last activity, in milliseconds since the Unix epoch (0: unknown).
    #[serde(default)]
    updated_ms: u64,
    /// Archived (`session/archive`): listed only when asked for.
    #[serde(default)]
    archived: bool,
    /// Compactions so far (numbers their ids).
    #[serde(default)]
    compactions: u64,
    history: Vec<Message>,
}

struct DemoAgent {
    /// What the client advertised in `initialize`.
    client: Mutex<v1::ClientCapabilities>,
    /// The sessions open on this connection.
    sessions: Mutex<HashMap<String, Session>>,
    /// The running turn of each session, stopped by `session/close` and
    /// `session/delete`.
    running: Mutex<HashMap<String, CancellationToken>>,
    /// Numbers the turns, for tool call ids.
    turns: AtomicU64,
    /// Pause between streamed chunks.
    delay: Duration,
    /// Most sessions per `session/list` page.
    page_size: usize,
    /// Whether the unstable extensions are on (`--unstable`).
    unstable: bool,
    /// Whether sessions need `authenticate` (`--require-auth`).
    require_auth: bool,
    /// Whether `authenticate` succeeded (and no `logout` since).
    authenticated: AtomicBool,
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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Stamps the session's last activity and writes it to the store.
fn save(session_id: &str, session: &mut Session) {
    session.updated_ms = now_ms();
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

/// Every session in the store, with its id.
fn stored_sessions() -> Vec<(String, Session)> {
    let Ok(entries) = std::fs::read_dir(store_dir()) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?.to_owned();
            let session = restore(&id)?;
            Some((id, session))
        })
        .collect()
}

/// `ms` since the Unix epoch as ISO 8601 (UTC), e.g.
/// `2025-06-01T12:00:00.000Z`.
fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000
    )
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

/// The session's config options: `model` and `thinking`.
/// The session's config options; the boolean one (`thinking`) only for a
/// client that advertised `session.configOptions.boolean` (the spec: agents
/// may include boolean entries only then; acp-tck ACP-CONFIG-003).
fn config_options(session: &Session, booleans: bool) -> Vec<v1::SessionConfigOption> {
    let models: Vec<v1::SessionConfigSelectOption> = script::MODELS
        .iter()
        .map(|(id, name, description)| {
            v1::SessionConfigSelectOption::new(*id, *name).description(description.to_string())
        })
        .collect();
    let mut options = vec![
        v1::SessionConfigOption::select(
            script::MODEL_OPTION,
            "Model",
            session.model.clone(),
            models,
        )
        .category(v1::SessionConfigOptionCategory::Model)
        .description("Which (pretend) model answers".to_owned()),
    ];
    if booleans {
        options.push(
            v1::SessionConfigOption::boolean(script::THINKING_OPTION, "Thinking", session.thinking)
                .category(v1::SessionConfigOptionCategory::ModelConfig)
                .description("Whether the turn starts with a thought".to_owned()),
        );
    }
    options
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

/// A session update written as its JSON (for the newer variants, whose
/// typed builders are long to spell); `None` only if this crate's schema
/// cannot represent it.
fn update_of(value: serde_json::Value) -> Option<v1::SessionUpdate> {
    serde_json::from_value(value).ok()
}

fn text_chunk(text: &str) -> v1::ContentChunk {
    v1::ContentChunk::new(v1::ContentBlock::from(text))
}

fn unknown_session(id: &str) -> RpcError {
    RpcError::new(
        codes::RESOURCE_NOT_FOUND,
        "Resource not found: unknown session",
    )
    .with_data(json!({ "sessionId": id }))
}

fn internal(e: &CallError) -> RpcError {
    RpcError::internal_error(e.to_string())
}

/// A `session/list` cursor: the sort key of the last session of a page.
fn cursor_of(id: &str, session: &Session) -> String {
    format!("{}.{id}", session.updated_ms)
}

fn parse_cursor(cursor: &str) -> Option<(u64, &str)> {
    let (ms, id) = cursor.split_once('.')?;
    Some((ms.parse().ok()?, id))
}

impl DemoAgent {
    /// The session capabilities: every stable one, and the unstable ones
    /// this agent implements when `--unstable` is on.
    fn session_capabilities(&self) -> v1::SessionCapabilities {
        let caps = v1::SessionCapabilities::new()
            .list(v1::SessionListCapabilities::new())
            .resume(v1::SessionResumeCapabilities::new())
            .close(v1::SessionCloseCapabilities::new())
            .delete(v1::SessionDeleteCapabilities::new())
            .additional_directories(v1::SessionAdditionalDirectoriesCapabilities::new());
        if !self.unstable {
            return caps;
        }
        caps.fork(v1::SessionForkCapabilities::new())
            .archive(v1::SessionArchiveCapabilities::new())
            .status(v1::SessionStatusCapabilities::new())
            .title(v1::SessionTitleCapabilities::new())
    }

    fn auth_capabilities(&self) -> v1::AgentAuthCapabilities {
        let caps = v1::AgentAuthCapabilities::new().logout(v1::LogoutCapabilities::new());
        if self.unstable {
            caps.status(v1::AuthStatusCapabilities::new())
        } else {
            caps
        }
    }

    /// Whether the client advertised `capability` (a `clientCapabilities`
    /// path such as `session.notices`).
    fn client_offers(&self, pointer: &str) -> bool {
        let caps = serde_json::to_value(&*lock(&self.client)).unwrap_or_default();
        caps.pointer(pointer)
            .is_some_and(|v| !v.is_null() && *v != json!(false))
    }

    /// Whether the client advertised boolean config options
    /// (`clientCapabilities.session.configOptions.boolean`).
    fn booleans(&self) -> bool {
        lock(&self.client)
            .session
            .as_ref()
            .and_then(|s| s.config_options.as_ref())
            .is_some_and(|c| c.boolean.is_some())
    }

    /// An open session, or a stored one, reopened on this connection with
    /// the request's `cwd` and `additionalDirectories` (the complete new
    /// list, as the spec says).
    fn reopen(
        &self,
        id: &str,
        cwd: PathBuf,
        additional_directories: Vec<PathBuf>,
    ) -> Result<Session, RpcError> {
        let known = lock(&self.sessions).get(id).cloned();
        let mut session = known
            .or_else(|| restore(id))
            .ok_or_else(|| unknown_session(id))?;
        session.cwd = cwd;
        session.additional_directories = additional_directories;
        save(id, &mut session);
        lock(&self.sessions).insert(id.to_owned(), session.clone());
        Ok(session)
    }

    /// Stops the session's running turn, if any (it answers `cancelled`).
    fn stop_turn(&self, id: &str) {
        if let Some(token) = lock(&self.running).remove(id) {
            log(&format!("session {id}: stopping its turn"));
            token.cancel();
        }
    }
}

impl Agent for DemoAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        let caps = &args.client_capabilities;
        log(&format!(
            "initialize from {} (fs read {}, fs write {}, terminal {}, elicitation {})",
            args.client_info
                .as_ref()
                .map_or("an unnamed client", |i| i.name.as_str()),
            caps.fs.read_text_file,
            caps.fs.write_text_file,
            caps.terminal,
            caps.elicitation.as_ref().is_some_and(|e| e.supports_form()),
        ));
        *lock(&self.client) = args.client_capabilities;
        Ok(v1::InitializeResponse::new(v1::ProtocolVersion::V1)
            .agent_capabilities(
                v1::AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(
                        v1::PromptCapabilities::new()
                            .image(true)
                            .audio(true)
                            .embedded_context(true),
                    )
                    .session_capabilities(self.session_capabilities())
                    .auth(self.auth_capabilities()),
            )
            .auth_methods(vec![v1::AuthMethod::Agent(
                v1::AuthMethodAgent::new(script::AUTH_METHOD, "Demo token")
                    .description("no account needed, the demo agent lets anyone in".to_owned()),
            )])
            .agent_info(
                v1::Implementation::new("libacp-demo-agent", env!("CARGO_PKG_VERSION"))
                    .title("libacp demo agent (scripted, no model)".to_owned()),
            ))
    }

    async fn authenticate(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::AuthenticateRequest,
    ) -> Result<v1::AuthenticateResponse, RpcError> {
        let method = &*args.method_id.0;
        if method != script::AUTH_METHOD {
            log(&format!("authenticate: unknown method {method}"));
            return Err(RpcError::invalid_params(format!(
                "unknown auth method `{method}` (this agent offers: {})",
                script::AUTH_METHOD
            )));
        }
        log(&format!("authenticate: {method}: welcome"));
        self.authenticated.store(true, Ordering::SeqCst);
        Ok(v1::AuthenticateResponse::new())
    }

    async fn logout(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::LogoutRequest,
    ) -> Result<v1::LogoutResponse, RpcError> {
        log("logout: goodbye");
        self.authenticated.store(false, Ordering::SeqCst);
        Ok(v1::LogoutResponse::new())
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        let id = new_session_id();
        let mut session = Session {
            cwd: args.cwd,
            mode: script::MODES[0].0.to_owned(),
            model: default_model(),
            thinking: true,
            additional_directories: args.additional_directories,
            title: None,
            updated_ms: 0,
            archived: false,
            compactions: 0,
            history: Vec::new(),
        };
        log(&format!("session/new {id} in {}", session.cwd.display()));
        save(&id, &mut session);
        let response = v1::NewSessionResponse::new(id.clone())
            .modes(modes(&session.mode))
            .config_options(config_options(&session, self.booleans()));
        lock(&self.sessions).insert(id, session);
        Ok(response)
    }

    async fn load_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::LoadSessionRequest,
    ) -> Result<v1::LoadSessionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let session = self.reopen(&id, args.cwd, args.additional_directories)?;
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
                .map_err(|e| internal(&e))?;
        }
        Ok(v1::LoadSessionResponse::new()
            .modes(modes(&session.mode))
            .config_options(config_options(&session, self.booleans())))
    }

    async fn resume_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ResumeSessionRequest,
    ) -> Result<v1::ResumeSessionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let session = self.reopen(&id, args.cwd, args.additional_directories)?;
        log(&format!(
            "session/resume {id}: {} messages kept, none replayed",
            session.history.len()
        ));
        Ok(v1::ResumeSessionResponse::new()
            .modes(modes(&session.mode))
            .config_options(config_options(&session, self.booleans())))
    }

    async fn list_sessions(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ListSessionsRequest,
    ) -> Result<v1::ListSessionsResponse, RpcError> {
        // Every open session is saved on each change: the store is current.
        let mut all = stored_sessions();
        if let Some(cwd) = &args.cwd {
            all.retain(|(_, s)| &s.cwd == cwd);
        }
        // The archive filter (unstable): archived sessions are left out
        // unless asked for; without --unstable they are always listed.
        if self.unstable {
            match args.archived.unwrap_or_default() {
                v1::SessionArchiveFilter::Include => {}
                v1::SessionArchiveFilter::Only => all.retain(|(_, s)| s.archived),
                _ => all.retain(|(_, s)| !s.archived),
            }
        }
        // Newest first; the id breaks ties.
        let key = |ms: u64, id: &str| (std::cmp::Reverse(ms), id.to_owned());
        all.sort_by_key(|(id, s)| key(s.updated_ms, id));
        let start = match args.cursor.as_deref() {
            None => 0,
            Some(cursor) => {
                let (ms, after) = parse_cursor(cursor).ok_or_else(|| {
                    RpcError::invalid_params(format!("not a cursor of this agent: {cursor}"))
                })?;
                let after = key(ms, after);
                all.iter()
                    .position(|(id, s)| key(s.updated_ms, id) > after)
                    .unwrap_or(all.len())
            }
        };
        let end = all.len().min(start + self.page_size);
        let next = (end < all.len()).then(|| cursor_of(&all[end - 1].0, &all[end - 1].1));
        log(&format!(
            "session/list: {} to {} of {}{}",
            start + 1,
            end,
            all.len(),
            if next.is_some() { ", more follow" } else { "" }
        ));
        let sessions = all
            .drain(start..end)
            .map(|(id, s)| {
                v1::SessionInfo::new(id, s.cwd)
                    .additional_directories(s.additional_directories)
                    .title(s.title)
                    .updated_at((s.updated_ms > 0).then(|| iso8601(s.updated_ms)))
                    .archived(self.unstable.then_some(s.archived))
            })
            .collect();
        Ok(v1::ListSessionsResponse::new(sessions).next_cursor(next))
    }

    async fn close_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::CloseSessionRequest,
    ) -> Result<v1::CloseSessionResponse, RpcError> {
        let id = &*args.session_id.0;
        self.stop_turn(id);
        lock(&self.sessions).remove(id);
        log(&format!(
            "session/close {id}: forgotten here (still stored)"
        ));
        Ok(v1::CloseSessionResponse::new())
    }

    async fn delete_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::DeleteSessionRequest,
    ) -> Result<v1::DeleteSessionResponse, RpcError> {
        let id = &*args.session_id.0;
        self.stop_turn(id);
        let open = lock(&self.sessions).remove(id).is_some();
        let stored = store_path(id).is_some_and(|p| std::fs::remove_file(p).is_ok());
        // Deleting what is not there succeeds (the spec's SHOULD; acp-tck
        // ACP-DELETE-002): the session is gone either way.
        if open || stored {
            log(&format!("session/delete {id}: removed"));
        } else {
            log(&format!(
                "session/delete {id}: no such session (nothing to do)"
            ));
        }
        Ok(v1::DeleteSessionResponse::new())
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
            let session = sessions.get_mut(&id).ok_or_else(|| unknown_session(&id))?;
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
            .map_err(|e| internal(&e))?;
        Ok(v1::SetSessionModeResponse::new())
    }

    async fn set_session_config_option(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SetSessionConfigOptionRequest,
    ) -> Result<v1::SetSessionConfigOptionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let mut sessions = lock(&self.sessions);
        let session = sessions.get_mut(&id).ok_or_else(|| unknown_session(&id))?;
        match (&*args.config_id.0, &args.value) {
            (script::MODEL_OPTION, v1::SessionConfigOptionValue::ValueId { value }) => {
                if !script::MODELS.iter().any(|(m, _, _)| *m == &*value.0) {
                    let known: Vec<&str> = script::MODELS.iter().map(|(m, _, _)| *m).collect();
                    return Err(RpcError::invalid_params(format!(
                        "unknown model `{}` (this agent has: {})",
                        value.0,
                        known.join(", ")
                    )));
                }
                session.model = value.0.to_string();
            }
            (script::THINKING_OPTION, v1::SessionConfigOptionValue::Boolean { value }) => {
                session.thinking = *value;
            }
            (option @ (script::MODEL_OPTION | script::THINKING_OPTION), _) => {
                return Err(RpcError::invalid_params(format!(
                    "`{option}` takes a {}",
                    if option == script::MODEL_OPTION {
                        "value id"
                    } else {
                        "boolean"
                    }
                )));
            }
            (other, _) => {
                return Err(RpcError::invalid_params(format!(
                    "unknown config option `{other}` (this agent has: {}, {})",
                    script::MODEL_OPTION,
                    script::THINKING_OPTION
                )));
            }
        }
        save(&id, session);
        log(&format!(
            "session {id}: model {}, thinking {}",
            session.model, session.thinking
        ));
        Ok(v1::SetSessionConfigOptionResponse::new(config_options(
            session,
            self.booleans(),
        )))
    }

    async fn fork_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ForkSessionRequest,
    ) -> Result<v1::ForkSessionResponse, RpcError> {
        let source = args.session_id.0.to_string();
        let known = lock(&self.sessions).get(&source).cloned();
        let mut session = known
            .or_else(|| restore(&source))
            .ok_or_else(|| unknown_session(&source))?;
        let id = new_session_id();
        session.cwd = args.cwd;
        session.additional_directories = args.additional_directories;
        session.archived = false;
        session.title = session.title.map(|t| format!("{t} (fork)"));
        log(&format!(
            "session/fork {source} -> {id}: {} messages copied",
            session.history.len()
        ));
        save(&id, &mut session);
        let response = v1::ForkSessionResponse::new(id.clone())
            .modes(modes(&session.mode))
            .config_options(config_options(&session, self.booleans()));
        lock(&self.sessions).insert(id, session);
        Ok(response)
    }

    async fn archive_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ArchiveSessionRequest,
    ) -> Result<v1::ArchiveSessionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        // Archiving frees the session here, as session/close would.
        self.stop_turn(&id);
        let open = lock(&self.sessions).remove(&id);
        let mut session = open
            .or_else(|| restore(&id))
            .ok_or_else(|| unknown_session(&id))?;
        session.archived = true;
        save(&id, &mut session);
        log(&format!("session/archive {id}: archived"));
        Ok(v1::ArchiveSessionResponse::new())
    }

    async fn unarchive_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::UnarchiveSessionRequest,
    ) -> Result<v1::UnarchiveSessionResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let mut session = restore(&id).ok_or_else(|| unknown_session(&id))?;
        session.archived = false;
        save(&id, &mut session);
        log(&format!("session/unarchive {id}: listed again"));
        Ok(v1::UnarchiveSessionResponse::new())
    }

    async fn session_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SessionStatusRequest,
    ) -> Result<v1::SessionStatusResponse, RpcError> {
        let id = args.session_id.0.to_string();
        // No side effects: memory and the store are only looked at.
        let status = if lock(&self.sessions).contains_key(&id) {
            v1::SessionStatus::Open
        } else if restore(&id).is_some() {
            v1::SessionStatus::Saved
        } else {
            return Err(unknown_session(&id));
        };
        Ok(v1::SessionStatusResponse::new(status))
    }

    async fn set_session_title(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetSessionTitleRequest,
    ) -> Result<v1::SetSessionTitleResponse, RpcError> {
        let id = args.session_id.0.to_string();
        // Normalized: one line, spaces collapsed, at most 60 characters.
        let line = args.title.split_whitespace().collect::<Vec<_>>().join(" ");
        let title = title_of(&[v1::ContentBlock::from(line.as_str())]);
        if title.is_empty() {
            return Err(RpcError::invalid_params("the title is empty"));
        }
        let open = lock(&self.sessions).get(&id).cloned();
        let mut session = open
            .or_else(|| restore(&id))
            .ok_or_else(|| unknown_session(&id))?;
        session.title = Some(title.clone());
        save(&id, &mut session);
        let is_open = {
            let mut sessions = lock(&self.sessions);
            match sessions.get_mut(&id) {
                Some(s) => {
                    s.title = Some(title.clone());
                    true
                }
                None => false,
            }
        };
        log(&format!("session/set_title {id}: {title:?}"));
        if is_open {
            cx.connection
                .session_update(&v1::SessionNotification::new(
                    args.session_id,
                    v1::SessionUpdate::SessionInfoUpdate(
                        v1::SessionInfoUpdate::new().title(title.clone()),
                    ),
                ))
                .await
                .map_err(|e| internal(&e))?;
        }
        Ok(v1::SetSessionTitleResponse::new(title))
    }

    async fn auth_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::AuthStatusRequest,
    ) -> Result<v1::AuthStatusResponse, RpcError> {
        let state = if !self.require_auth {
            v1::AuthState::NotRequired
        } else if self.authenticated.load(Ordering::SeqCst) {
            v1::AuthState::Authenticated
        } else {
            v1::AuthState::Unauthenticated
        };
        Ok(v1::AuthStatusResponse::new(state))
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let id = args.session_id.0.to_string();
        let Some(session) = lock(&self.sessions).get(&id).cloned() else {
            return Err(unknown_session(&id));
        };
        let user_text = prompt_text(&args.prompt);
        let n = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        log(&format!("session {id}: prompt {n}: {user_text:?}"));
        // Fired by session/cancel (the core's token) or by close/delete.
        let stop = cx.cancellation.child_token();
        lock(&self.running).insert(id.clone(), stop.clone());
        // Read before the turn: `self.client` is locked once at a time.
        let notices = self.client_offers("/session/notices");
        let subagents = self.unstable && self.client_offers("/subagents");
        let client = lock(&self.client).clone();
        let mut turn = Turn {
            conn: cx.connection.clone(),
            session_id: args.session_id.clone(),
            cancel: stop,
            delay: self.delay,
            client,
            notices,
            subagents,
            reply: String::new(),
            plan: Vec::new(),
            n,
        };
        let wants_compaction = !session.history.is_empty()
            && (session.history.len() >= script::COMPACT_AFTER
                || user_text.to_lowercase().contains(script::COMPACT_TRIGGER));
        let compacted = if wants_compaction && self.client_offers("/session/compaction") {
            turn.compact(&session).await.map(Some)
        } else {
            Ok(None)
        };
        let first_turn = session.history.is_empty() && session.compactions == 0;
        let outcome = match compacted {
            Ok(summary) => {
                if let Some(summary) = summary {
                    let mut sessions = lock(&self.sessions);
                    if let Some(s) = sessions.get_mut(&id) {
                        s.compactions += 1;
                        s.history = vec![Message {
                            role: "agent".into(),
                            text: summary,
                        }];
                        save(&id, s);
                    }
                }
                turn.run(&session, &args.prompt, &user_text, first_turn)
                    .await
            }
            Err(halt) => Err(halt),
        };
        lock(&self.running).remove(&id);
        let output_words = words(&turn.reply);
        // Keep the conversation, whatever happened, for session/load (in
        // the store only, if session/close came meanwhile; nowhere after
        // session/delete).
        {
            let mut sessions = lock(&self.sessions);
            let mut closed = if sessions.contains_key(&id) {
                None
            } else {
                restore(&id)
            };
            let kept = sessions.get_mut(&id).or(closed.as_mut());
            if let Some(s) = kept {
                if s.title.is_none() {
                    s.title = Some(title_of(&args.prompt));
                }
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
        // End-of-turn token usage (unstable): pretend tokens, one a word.
        let usage = self.unstable.then(|| {
            let input = words(&prompt_text(&args.prompt));
            let output = output_words;
            v1::Usage::new(input + output, input, output)
        });
        let answer = |stop| match &usage {
            Some(u) => v1::PromptResponse::new(stop).usage(u.clone()),
            None => v1::PromptResponse::new(stop),
        };
        match outcome {
            Ok(()) => {
                log(&format!("session {id}: prompt {n}: end_turn"));
                Ok(answer(v1::StopReason::EndTurn))
            }
            Err(Halt::Cancelled) => {
                log(&format!("session {id}: prompt {n}: cancelled"));
                Ok(answer(v1::StopReason::Cancelled))
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

/// Words in `text`: the demo's pretend tokens.
fn words(text: &str) -> u64 {
    u64::try_from(text.split_whitespace().count()).unwrap_or(u64::MAX)
}

/// A session title from its first prompt: the first line of its text, at
/// most 60 characters.
fn title_of(prompt: &[v1::ContentBlock]) -> String {
    let text = prompt.iter().find_map(|b| match b {
        v1::ContentBlock::Text(t) => Some(t.text.as_str()),
        _ => None,
    });
    let line = text
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .trim();
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
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
            v1::ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
            v1::ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
            _ => "[content]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the prompt carried besides text, as the reply acknowledges it,
/// e.g. "an image (image/png, 68 bytes)".
fn attachments(blocks: &[v1::ContentBlock]) -> Vec<String> {
    let size = |data: &str| match media::base64_decoded_len(data) {
        Some(n) => format!("{n} bytes"),
        None => "not valid base64".to_owned(),
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            v1::ContentBlock::Image(i) => {
                Some(format!("an image ({}, {})", i.mime_type, size(&i.data)))
            }
            v1::ContentBlock::Audio(a) => Some(format!(
                "an audio clip ({}, {})",
                a.mime_type,
                size(&a.data)
            )),
            v1::ContentBlock::Resource(r) => Some(match &r.resource {
                v1::EmbeddedResourceResource::TextResourceContents(t) => format!(
                    "an embedded file ({}, {} characters)",
                    t.uri,
                    t.text.chars().count()
                ),
                v1::EmbeddedResourceResource::BlobResourceContents(b) => {
                    format!("an embedded file ({}, {})", b.uri, size(&b.blob))
                }
                _ => "an embedded resource".to_owned(),
            }),
            v1::ContentBlock::ResourceLink(l) => Some(format!("a link to {}", l.uri)),
            _ => None,
        })
        .collect()
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
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
    /// The client shows notices (`session.notices`).
    notices: bool,
    /// The client follows subagents (`subagents`, unstable).
    subagents: bool,
    /// Everything said so far (kept in the history).
    reply: String,
    plan: Vec<v1::PlanEntry>,
    n: u64,
}

impl Turn {
    async fn run(
        &mut self,
        session: &Session,
        prompt: &[v1::ContentBlock],
        user_text: &str,
        first_turn: bool,
    ) -> Result<(), Halt> {
        self.check()?;
        if first_turn && self.notices {
            self.notice(
                "info",
                script::NOTICE_TITLE,
                "No model runs here: every prompt gets the same script.",
            )
            .await?;
        }
        if session.thinking {
            self.think(&format!(
                "The user said {user_text:?}. No model here: I follow my script (write a file, \
                 run a command)."
            ))
            .await?;
        }
        let wants_question = user_text.to_lowercase().contains(script::ASK_TRIGGER);
        let name = if wants_question {
            self.ask_step().await?
        } else {
            None
        };
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
        let hello = name.map_or_else(|| "Hello!".to_owned(), |n| format!("Hello, {n}!"));
        let model = if session.model == script::MODELS[0].0 {
            String::new()
        } else {
            format!(", answering as model {}", session.model)
        };
        self.say(&format!(
            "{hello} I am the libacp demo agent, in {} mode{model}. I will write {} in {} and \
             then ask your terminal which system this is.\n",
            session.mode,
            script::HELLO_FILE,
            session.cwd.display()
        ))
        .await?;
        let received = attachments(prompt);
        if !received.is_empty() {
            self.say(&format!("I received {}.\n", and_list(&received)))
                .await?;
        }
        if !session.additional_directories.is_empty() {
            self.say(&format!(
                "Additional directories of this session: {}.\n",
                render::path_list(&session.additional_directories)
            ))
            .await?;
        }

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
        let child = format!("{}-runner-{}", self.session_id.0, self.n);
        if self.subagents {
            self.subagent(&child, json!({"state": "running"})).await?;
        }
        let system = if self.client.terminal {
            self.terminal_step(&session.cwd).await?
        } else {
            self.say("Your client does not offer terminal/*, so I skip the command.\n")
                .await?;
            None
        };
        if self.subagents {
            self.subagent(&child, json!({"state": "idle", "stopReason": "end_turn"}))
                .await?;
        }
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

    /// Asks the user's name (`elicitation/create`, a form) when the client
    /// offers form elicitation. Returns the name given, if any.
    async fn ask_step(&mut self) -> Result<Option<String>, Halt> {
        let offered = self
            .client
            .elicitation
            .as_ref()
            .is_some_and(v1::ElicitationCapabilities::supports_form);
        if !offered {
            self.say(
                "You asked me to ask you something, but your client does not offer \
                 elicitation, so I cannot.\n",
            )
            .await?;
            return Ok(None);
        }
        let schema = v1::ElicitationSchema::new().property(
            script::ASK_FIELD,
            v1::StringPropertySchema::new()
                .title("Your name".to_owned())
                .description("What the agent should call you".to_owned())
                .default_value(script::ASK_DEFAULT.to_owned()),
            true,
        );
        let request = v1::CreateElicitationRequest::new(
            v1::ElicitationFormMode::new(
                v1::ElicitationSessionScope::new(self.session_id.clone()),
                schema,
            ),
            "You asked me to ask you something: what should I call you?",
        );
        let answer = self
            .unless_cancelled(self.conn.create_elicitation(&request))
            .await?;
        let name = match answer.map(|a| a.action) {
            Ok(v1::ElicitationAction::Accept(accepted)) => {
                let given = accepted
                    .content
                    .as_ref()
                    .and_then(|c| c.get(script::ASK_FIELD));
                match given {
                    Some(v1::ElicitationContentValue::String(s)) if !s.trim().is_empty() => {
                        Some(s.trim().to_owned())
                    }
                    _ => None,
                }
            }
            Ok(v1::ElicitationAction::Decline) => {
                self.say("You would rather not tell me your name: fine.\n")
                    .await?;
                None
            }
            Ok(_) => {
                self.say("The question was dismissed.\n").await?;
                None
            }
            Err(e) => {
                self.say(&format!("I could not ask you: {e}\n")).await?;
                None
            }
        };
        log(&format!(
            "elicitation answered: {}",
            name.as_deref().unwrap_or("(no name)")
        ));
        Ok(name)
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

    /// A `notice` update (only for clients that advertised
    /// `session.notices`: the core refuses it otherwise).
    async fn notice(&self, severity: &str, title: &str, description: &str) -> Result<(), Halt> {
        let update = update_of(json!({
            "sessionUpdate": "notice",
            "severity": severity,
            "title": title,
            "description": description,
        }));
        match update {
            Some(update) => self.send(update).await,
            None => Ok(()),
        }
    }

    /// Compacts the session's history: `compaction_update` (in progress),
    /// the summary as `compaction_summary_chunk`s, `compaction_update`
    /// (completed). Returns the summary, which replaces the history.
    async fn compact(&mut self, session: &Session) -> Result<String, Halt> {
        let id = format!("compaction-{}", session.compactions + 1);
        let asked: Vec<&str> = session
            .history
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| m.text.as_str())
            .collect();
        let pieces = [
            format!("Summary of {} earlier messages: ", session.history.len()),
            format!(
                "the user asked {}; ",
                and_list(&asked.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>())
            ),
            format!("each turn wrote {} and ran a command.", script::HELLO_FILE),
        ];
        let status = |status: &str| {
            update_of(
                json!({"sessionUpdate": "compaction_update", "compactionId": id, "status": status}),
            )
        };
        if let Some(update) = status("in_progress") {
            self.send(update).await?;
        }
        for piece in &pieces {
            self.pause().await?;
            let chunk = update_of(json!({
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": id,
                "content": {"type": "text", "text": piece},
            }));
            if let Some(update) = chunk {
                self.send(update).await?;
            }
        }
        if let Some(update) = status("completed") {
            self.send(update).await?;
        }
        Ok(pieces.concat())
    }

    /// A `subagent_update` about the turn's runner child (unstable
    /// subagents; only for clients that advertised `subagents`).
    async fn subagent(&self, child: &str, state: serde_json::Value) -> Result<(), Halt> {
        let update = update_of(json!({
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "title": "Command runner",
            "description": "Runs the turn's terminal step",
            "state": state,
        }));
        match update {
            Some(update) => self.send(update).await,
            None => Ok(()),
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
