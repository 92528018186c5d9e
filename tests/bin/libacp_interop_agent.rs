//! The interop agent on libacp's typed API: the libacp side when the
//! official TypeScript, Python and Rust clients drive an agent. It
//! understands the prompt vocabulary of `tests/interop/README.md`:
//! `stream N`, `permission`, `read PATH`, `write PATH TEXT`,
//! `terminal CMD...`, `wait`; and replays history on `session/load`.
//!
//! ```text
//! libacp-interop-agent                     serve one client on stdin/stdout
//! libacp-interop-agent --listen HOST:PORT  serve remote clients
//! libacp-interop-agent --unstable          also the unstable v1 methods
//! ```
//!
//! `--unstable` (before the others) turns on the connection option
//! `unstable` (all features) and advertises the unstable methods, which
//! `libacp_interop_agent/unstable.rs` serves: `session/fork`, `archive`,
//! `unarchive`, `status`, `set_title`, `auth/status`,
//! `providers/list|set|disable`, and the prompt commands `mcp TEXT` (an
//! `mcp/message` to the client) and `auth STATE` (`auth/status_update`), as
//! `tests/interop/README.md` ("Unstable methods") describes. It also takes
//! and sends the unstable payloads of `tests/interop/unstable-payloads.json`
//! (README, "Unstable payloads"): `systemPrompt` on `session/new`, `load`
//! and `fork` (advertised with its `override` mode; the prompt `system` says
//! it back), `usage` in the answer to the prompt `usage`, and the plan
//! operation and subagent updates of the prompts `plan` and `subagent`.
//!
//! On stdio it exits 0 when stdin closes.
//!
//! With `--listen` it serves through `libacp_core::remote::Server`: WebSocket
//! and Streamable HTTP (HTTP/1.1 and h2c) on one port, endpoint `/acp`, a
//! fresh agent (fresh sessions) per remote connection. The contract, the same
//! for every remote interop agent (`tests/interop/README.md`, "Remote"):
//! * the first line on stderr is `listening on HOST:PORT`, with the port
//!   actually bound (`--listen 127.0.0.1:0` picks a free one);
//! * it serves until its stdin closes, then shuts the server down and exits 0
//!   (or until it is killed);
//! * stdout stays empty.
//!
//! Logs to stderr only.

use std::collections::HashMap;
use std::sync::Mutex;

#[path = "libacp_interop_agent/unstable.rs"]
mod unstable;
#[path = "unstable_payloads.rs"]
mod unstable_payloads;

use libacp_core::protocol::unstable::Features;
use libacp_core::remote::{Incoming, Server, ServerOptions};
use libacp_core::v1;
use libacp_core::{AcpOptions, Agent, AgentConnection, RequestContext, RpcError};
use tokio::io::AsyncReadExt as _;

#[derive(Default)]
struct InteropAgent {
    /// Session id -> history: (is the user's, text), replayed by `session/load`.
    sessions: Mutex<HashMap<String, Vec<(bool, String)>>>,
    counter: Mutex<u64>,
    /// `--unstable`: advertise the unstable methods.
    advertise_unstable: bool,
    unstable: Mutex<unstable::Unstable>,
}

/// `-32002` for an unknown session, with its id.
fn not_found(session_id: &str) -> RpcError {
    RpcError::new(-32002, "Resource not found")
        .with_data(serde_json::json!({"sessionId": session_id}))
}

fn text(s: impl Into<String>) -> v1::ContentBlock {
    v1::ContentBlock::Text(v1::TextContent::new(s))
}

fn agent_chunk(session: &v1::SessionId, s: impl Into<String>) -> v1::SessionNotification {
    v1::SessionNotification::new(
        session.clone(),
        v1::SessionUpdate::AgentMessageChunk(v1::ContentChunk::new(text(s))),
    )
}

impl InteropAgent {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(bool, String)>>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn new_session_id(&self) -> String {
        let mut c = self
            .counter
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *c += 1;
        format!("libacp-{c}")
    }

    async fn say(
        &self,
        conn: &AgentConnection,
        session: &v1::SessionId,
        s: String,
    ) -> Result<(), RpcError> {
        self.lock()
            .entry(session.0.to_string())
            .or_default()
            .push((false, s.clone()));
        conn.session_update(&agent_chunk(session, s)).await?;
        Ok(())
    }

    async fn run(
        &self,
        cx: &RequestContext<AgentConnection>,
        session: &v1::SessionId,
        command: &str,
    ) -> Result<v1::PromptResponse, RpcError> {
        let conn = &cx.connection;
        let (verb, rest) = command.split_once(' ').unwrap_or((command, ""));
        match verb {
            "stream" => {
                let n: u64 = rest
                    .trim()
                    .parse()
                    .map_err(|_| RpcError::invalid_params(format!("bad count in {command:?}")))?;
                for i in 0..n {
                    self.say(conn, session, format!("chunk {i}")).await?;
                }
            }
            "permission" => {
                let tool_call = v1::ToolCall::new("perm-1", "Edit file")
                    .kind(v1::ToolKind::Edit)
                    .status(v1::ToolCallStatus::Pending);
                conn.session_update(&v1::SessionNotification::new(
                    session.clone(),
                    v1::SessionUpdate::ToolCall(tool_call),
                ))
                .await?;
                let answer = conn
                    .request_permission(&v1::RequestPermissionRequest::new(
                        session.clone(),
                        v1::ToolCallUpdate::new("perm-1", v1::ToolCallUpdateFields::new()),
                        vec![
                            v1::PermissionOption::new(
                                "allow_once",
                                "Allow",
                                v1::PermissionOptionKind::AllowOnce,
                            ),
                            v1::PermissionOption::new(
                                "reject_once",
                                "Reject",
                                v1::PermissionOptionKind::RejectOnce,
                            ),
                        ],
                    ))
                    .await?;
                let (outcome, status) = match &answer.outcome {
                    v1::RequestPermissionOutcome::Selected(s) => (
                        s.option_id.0.to_string(),
                        if &*s.option_id.0 == "allow_once" {
                            v1::ToolCallStatus::Completed
                        } else {
                            v1::ToolCallStatus::Failed
                        },
                    ),
                    _ => return Ok(v1::PromptResponse::new(v1::StopReason::Cancelled)),
                };
                self.say(conn, session, format!("permission: {outcome}"))
                    .await?;
                conn.session_update(&v1::SessionNotification::new(
                    session.clone(),
                    v1::SessionUpdate::ToolCallUpdate(v1::ToolCallUpdate::new(
                        "perm-1",
                        v1::ToolCallUpdateFields::new().status(status),
                    )),
                ))
                .await?;
            }
            "read" => {
                let file = conn
                    .read_text_file(&v1::ReadTextFileRequest::new(session.clone(), rest.trim()))
                    .await?;
                self.say(conn, session, file.content).await?;
            }
            "write" => {
                let (path, content) = rest.split_once(' ').unwrap_or((rest, ""));
                conn.write_text_file(&v1::WriteTextFileRequest::new(
                    session.clone(),
                    path,
                    content,
                ))
                .await?;
                self.say(conn, session, "wrote".into()).await?;
            }
            "terminal" => {
                let term = conn
                    .create_terminal(
                        &v1::CreateTerminalRequest::new(session.clone(), "sh")
                            .args(vec!["-c".to_owned(), rest.to_owned()]),
                    )
                    .await?;
                let id = term.terminal_id;
                conn.wait_for_terminal_exit(&v1::WaitForTerminalExitRequest::new(
                    session.clone(),
                    id.clone(),
                ))
                .await?;
                let output = conn
                    .terminal_output(&v1::TerminalOutputRequest::new(session.clone(), id.clone()))
                    .await?;
                conn.release_terminal(&v1::ReleaseTerminalRequest::new(session.clone(), id))
                    .await?;
                self.say(conn, session, output.output).await?;
            }
            "wait" => {
                cx.cancellation.cancelled().await;
                return Ok(v1::PromptResponse::new(v1::StopReason::Cancelled));
            }
            "mcp" => {
                let said = self.mcp(conn, session, rest).await?;
                self.say(conn, session, said).await?;
            }
            "auth" => {
                let said = self.auth(conn, rest.trim()).await?;
                self.say(conn, session, said).await?;
            }
            "system" => {
                let said = self.said_system_prompt(session);
                self.say(conn, session, said).await?;
            }
            "usage" => {
                return Ok(
                    v1::PromptResponse::new(v1::StopReason::EndTurn).usage(unstable::usage()?)
                );
            }
            "plan" | "subagent" => {
                let said = self.send_updates(conn, session, verb).await?;
                self.say(conn, session, said).await?;
            }
            _ => {
                return Err(RpcError::invalid_params(format!(
                    "unknown prompt {command:?}"
                )));
            }
        }
        Ok(v1::PromptResponse::new(v1::StopReason::EndTurn))
    }
}

impl Agent for InteropAgent {
    async fn initialize(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, RpcError> {
        let capabilities = v1::AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                v1::PromptCapabilities::new()
                    .image(true)
                    .embedded_context(true),
            );
        Ok(v1::InitializeResponse::new(v1::ProtocolVersion::V1)
            .agent_capabilities(if self.advertise_unstable {
                unstable::capabilities(capabilities)
            } else {
                capabilities
            })
            .agent_info(v1::Implementation::new("libacp-interop-agent", "0.1.0")))
    }

    async fn new_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, RpcError> {
        let system_prompt = unstable::system_prompt(args.system_prompt)?;
        let id = self.new_session_id();
        self.lock().insert(id.clone(), Vec::new());
        self.opened(&id, &args.mcp_servers, system_prompt);
        Ok(v1::NewSessionResponse::new(id))
    }

    async fn load_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::LoadSessionRequest,
    ) -> Result<v1::LoadSessionResponse, RpcError> {
        let history = self.lock().get(&*args.session_id.0).cloned();
        let Some(history) = history else {
            return Err(not_found(&args.session_id.0));
        };
        let system_prompt = unstable::system_prompt(args.system_prompt)?;
        self.opened(&args.session_id.0, &args.mcp_servers, system_prompt);
        for (user, line) in history {
            let chunk = v1::ContentChunk::new(text(line));
            let update = if user {
                v1::SessionUpdate::UserMessageChunk(chunk)
            } else {
                v1::SessionUpdate::AgentMessageChunk(chunk)
            };
            cx.connection
                .session_update(&v1::SessionNotification::new(
                    args.session_id.clone(),
                    update,
                ))
                .await?;
        }
        Ok(v1::LoadSessionResponse::new())
    }

    async fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> Result<v1::PromptResponse, RpcError> {
        let command = args
            .prompt
            .iter()
            .find_map(|b| match b {
                v1::ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .unwrap_or_default();
        self.lock()
            .entry(args.session_id.0.to_string())
            .or_default()
            .push((true, command.clone()));
        self.run(&cx, &args.session_id, &command).await
    }

    // The unstable methods (`unstable.rs`).

    async fn fork_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ForkSessionRequest,
    ) -> Result<v1::ForkSessionResponse, RpcError> {
        self.fork(&args)
    }

    async fn session_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SessionStatusRequest,
    ) -> Result<v1::SessionStatusResponse, RpcError> {
        self.status(&args.session_id)
    }

    async fn archive_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::ArchiveSessionRequest,
    ) -> Result<v1::ArchiveSessionResponse, RpcError> {
        self.archive(&args.session_id)
    }

    async fn unarchive_session(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::UnarchiveSessionRequest,
    ) -> Result<v1::UnarchiveSessionResponse, RpcError> {
        self.unarchive(&args.session_id)
    }

    async fn set_session_title(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SetSessionTitleRequest,
    ) -> Result<v1::SetSessionTitleResponse, RpcError> {
        self.set_title(&args)
    }

    async fn auth_status(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::AuthStatusRequest,
    ) -> Result<v1::AuthStatusResponse, RpcError> {
        Ok(InteropAgent::auth_status(self))
    }

    async fn list_providers(
        &self,
        _cx: RequestContext<AgentConnection>,
        _args: v1::ListProvidersRequest,
    ) -> Result<v1::ListProvidersResponse, RpcError> {
        Ok(self.providers())
    }

    async fn set_provider(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::SetProviderRequest,
    ) -> Result<v1::SetProviderResponse, RpcError> {
        let current = v1::ProviderCurrentConfig::new(args.api_type, args.base_url);
        self.route_provider(&args.provider_id, Some(current))?;
        Ok(v1::SetProviderResponse::new())
    }

    async fn disable_provider(
        &self,
        _cx: RequestContext<AgentConnection>,
        args: v1::DisableProviderRequest,
    ) -> Result<v1::DisableProviderResponse, RpcError> {
        self.route_provider(&args.provider_id, None)?;
        Ok(v1::DisableProviderResponse::new())
    }

    async fn mcp_message(&self, _connection: AgentConnection, args: v1::MessageMcpNotification) {
        self.mcp_notification(args);
    }
}

/// Serves a fresh [`InteropAgent`] per remote connection on `listen` until
/// stdin closes.
async fn serve_remote(listen: &str, unstable: bool) -> Result<(), String> {
    let server = Server::bind(
        listen,
        ServerOptions::default(),
        move |incoming: Incoming| {
            // The server keeps the handle, so the connection, while it lasts.
            let (agent, options) = agent(unstable);
            AgentConnection::start(incoming.transport, agent, options)
        },
    )
    .await
    .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    eprintln!("listening on {}", server.local_addr());
    let mut stdin = tokio::io::stdin();
    let mut buffer = [0u8; 4096];
    while let Ok(1..) = stdin.read(&mut buffer).await {}
    server.shutdown().await;
    eprintln!("libacp-interop-agent: stdin closed, server shut down");
    Ok(())
}

/// A fresh agent and its connection options; `unstable`: with the unstable
/// methods, on the wire and advertised.
fn agent(unstable: bool) -> (InteropAgent, AcpOptions) {
    let agent = InteropAgent {
        advertise_unstable: unstable,
        ..InteropAgent::default()
    };
    let options = AcpOptions {
        unstable: if unstable {
            Features::all()
        } else {
            Features::NONE
        },
        ..AcpOptions::default()
    };
    (agent, options)
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let unstable = args.first().is_some_and(|a| a == "--unstable");
    if unstable {
        args.remove(0);
    }
    match args.as_slice() {
        [] => {}
        [flag, listen] if flag == "--listen" => {
            if let Err(e) = serve_remote(listen, unstable).await {
                eprintln!("libacp-interop-agent: {e}");
                std::process::exit(1);
            }
            return;
        }
        _ => {
            eprintln!("usage: libacp-interop-agent [--unstable] [--listen HOST:PORT]");
            std::process::exit(2);
        }
    }
    let (agent, options) = agent(unstable);
    let conn = AgentConnection::serve_stdio(agent, options);
    let reason = conn.acp().closed().await;
    conn.acp().terminated().await;
    eprintln!("libacp-interop-agent: connection closed ({reason})");
}
