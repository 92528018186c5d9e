//! The unstable v1 methods of the libacp interop agent (`--unstable`: the
//! option `unstable` set to all, the capabilities advertised), on libacp's
//! typed API (cargo features `unstable_*`). The same behaviour as the
//! official Rust agent's `--unstable` and `tests/interop/ts/unstable-agent.mjs`;
//! `tests/interop/README.md` ("Unstable methods") describes it.
//!
//! The core keeps the session table of the protocol: it opens a forked
//! session from the `session/fork` answer, closes an archived one (a prompt
//! for it is answered `-32002` before this agent sees it) and opens it again
//! on `session/load`. What this agent keeps is what it reports: whether a
//! session is in memory (`session/status`), titles, MCP servers, system
//! prompts, providers, the auth state.
//!
//! The unstable payloads are those of `tests/interop/unstable-payloads.json`
//! (README, "Unstable payloads"), decoded into libacp's types before they
//! are sent. Unlike the official agents, this one does not look at the
//! client's capabilities before it sends a plan operation or subagent
//! update: the core refuses to send one the client did not advertise
//! (`Refusal::CapabilityNotAdvertised`), and the agent then says so.

use std::collections::HashMap;

use libacp_core::v1;
use libacp_core::{AgentConnection, CallError, Refusal, RpcError};
use serde_json::{Map, Value, json};

use super::InteropAgent;
use super::unstable_payloads as payloads;

/// The MCP revision whose request `_meta` the MCP-over-ACP binding requires
/// (`io.modelcontextprotocol/protocolVersion`), as both official SDKs check.
const MCP_PROTOCOL_VERSION: &str = "2026-07-28";

/// What the unstable methods report.
pub struct Unstable {
    /// Session id -> in memory (created, forked or loaded since its last
    /// archive).
    open: HashMap<String, bool>,
    titles: HashMap<String, String>,
    /// Session id -> the `serverId`s of its MCP servers of transport `acp`.
    acp_servers: HashMap<String, Vec<String>>,
    /// Session id -> the `systemPrompt` it was created, loaded or forked
    /// with.
    system_prompts: HashMap<String, Option<v1::SystemPrompt>>,
    auth: v1::AuthState,
    providers: Vec<v1::ProviderInfo>,
    /// `(serverId, requestId, method)` of the client's `mcp/message`
    /// notifications, until the `mcp` turn that owns them takes them.
    mcp_notifications: Vec<(String, String, String)>,
    mcp_requests: u64,
}

impl Default for Unstable {
    fn default() -> Self {
        Self {
            open: HashMap::new(),
            titles: HashMap::new(),
            acp_servers: HashMap::new(),
            system_prompts: HashMap::new(),
            auth: v1::AuthState::Authenticated,
            providers: vec![
                v1::ProviderInfo::new(
                    "main",
                    vec![v1::LlmProtocol::Anthropic, v1::LlmProtocol::OpenAi],
                    true,
                    v1::ProviderCurrentConfig::new(
                        v1::LlmProtocol::Anthropic,
                        "https://llm.example.invalid/anthropic",
                    ),
                ),
                v1::ProviderInfo::new("backup", vec![v1::LlmProtocol::OpenAi], false, None),
            ],
            mcp_notifications: Vec::new(),
            mcp_requests: 0,
        }
    }
}

/// The capabilities `--unstable` adds.
pub fn capabilities(capabilities: v1::AgentCapabilities) -> v1::AgentCapabilities {
    capabilities
        .session_capabilities(
            v1::SessionCapabilities::new()
                .fork(v1::SessionForkCapabilities::new())
                .archive(v1::SessionArchiveCapabilities::new())
                .status(v1::SessionStatusCapabilities::new())
                .title(v1::SessionTitleCapabilities::new())
                .system_prompt(
                    v1::SessionSystemPromptCapabilities::new().mode(
                        v1::SessionSystemPromptModeCapabilities::new()
                            .override_(v1::SessionSystemPromptOverrideCapabilities::new()),
                    ),
                ),
        )
        .auth(v1::AgentAuthCapabilities::new().status(v1::AuthStatusCapabilities::new()))
        .providers(v1::ProvidersCapabilities::new())
        .mcp_capabilities(v1::McpCapabilities::new().acp(true))
}

fn accounts(state: &v1::AuthState) -> Vec<v1::AuthAccount> {
    if *state == v1::AuthState::Authenticated {
        vec![
            v1::AuthAccount::new("Interop account")
                .email("interop@example.invalid")
                .active(true),
        ]
    } else {
        Vec::new()
    }
}

fn invalid(data: Value) -> RpcError {
    RpcError::invalid_params("Invalid params").with_data(data)
}

/// The system prompt of a `session/new`, `load` or `fork`, if this agent
/// applies it; else `-32602` (before the session is created, loaded or
/// forked).
pub fn system_prompt(
    system_prompt: Option<v1::SystemPrompt>,
) -> Result<Option<v1::SystemPrompt>, RpcError> {
    match payloads::refused_system_prompt(&json!(system_prompt)) {
        Some(data) => Err(invalid(data)),
        None => Ok(system_prompt),
    }
}

/// The payload at `pointer`, in libacp's types.
fn payload<T: serde::de::DeserializeOwned>(pointer: &str) -> Result<T, RpcError> {
    payloads::typed(pointer).map_err(RpcError::internal_error)
}

/// The `usage` of the `usage` prompt's answer.
pub fn usage() -> Result<v1::Usage, RpcError> {
    payload("/usage")
}

impl InteropAgent {
    fn unstable(&self) -> std::sync::MutexGuard<'_, Unstable> {
        self.unstable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A session is in memory, with these MCP servers and system prompt.
    pub fn opened(
        &self,
        id: &str,
        servers: &[v1::McpServer],
        system_prompt: Option<v1::SystemPrompt>,
    ) {
        let servers = servers
            .iter()
            .filter_map(|s| match s {
                v1::McpServer::Acp(acp) => Some(acp.server_id.0.to_string()),
                _ => None,
            })
            .collect();
        let mut unstable = self.unstable();
        unstable.open.insert(id.to_owned(), true);
        unstable.acp_servers.insert(id.to_owned(), servers);
        unstable.system_prompts.insert(id.to_owned(), system_prompt);
    }

    /// A new session with the source's history and title.
    pub fn fork(&self, args: &v1::ForkSessionRequest) -> Result<v1::ForkSessionResponse, RpcError> {
        let source = args.session_id.0.to_string();
        let system_prompt = system_prompt(args.system_prompt.clone())?;
        let history = self
            .lock()
            .get(&source)
            .cloned()
            .ok_or_else(|| super::not_found(&source))?;
        let id = self.new_session_id();
        self.lock().insert(id.clone(), history);
        self.opened(&id, &args.mcp_servers, system_prompt);
        let mut unstable = self.unstable();
        if let Some(title) = unstable.titles.get(&source).cloned() {
            unstable.titles.insert(id.clone(), title);
        }
        Ok(v1::ForkSessionResponse::new(id))
    }

    fn known(&self, id: &v1::SessionId) -> Result<String, RpcError> {
        let id = id.0.to_string();
        if self.lock().contains_key(&id) {
            Ok(id)
        } else {
            Err(super::not_found(&id))
        }
    }

    pub fn status(&self, id: &v1::SessionId) -> Result<v1::SessionStatusResponse, RpcError> {
        let id = self.known(id)?;
        let open = self.unstable().open.get(&id).copied().unwrap_or(false);
        Ok(v1::SessionStatusResponse::new(if open {
            v1::SessionStatus::Open
        } else {
            v1::SessionStatus::Saved
        }))
    }

    /// Out of memory (the core closed it and cancelled its turn).
    pub fn archive(&self, id: &v1::SessionId) -> Result<v1::ArchiveSessionResponse, RpcError> {
        let id = self.known(id)?;
        self.unstable().open.insert(id, false);
        Ok(v1::ArchiveSessionResponse::new())
    }

    /// Unarchived, neither loaded nor resumed: still `saved`.
    pub fn unarchive(&self, id: &v1::SessionId) -> Result<v1::UnarchiveSessionResponse, RpcError> {
        self.known(id)?;
        Ok(v1::UnarchiveSessionResponse::new())
    }

    pub fn set_title(
        &self,
        args: &v1::SetSessionTitleRequest,
    ) -> Result<v1::SetSessionTitleResponse, RpcError> {
        let id = self.known(&args.session_id)?;
        let title = args.title.trim();
        if title.is_empty() {
            return Err(invalid(json!({"title": args.title,
                "details": "the title is empty once trimmed"})));
        }
        self.unstable().titles.insert(id, title.to_owned());
        Ok(v1::SetSessionTitleResponse::new(title))
    }

    pub fn auth_status(&self) -> v1::AuthStatusResponse {
        let state = self.unstable().auth.clone();
        let accounts = accounts(&state);
        v1::AuthStatusResponse::new(state).accounts(accounts)
    }

    pub fn providers(&self) -> v1::ListProvidersResponse {
        v1::ListProvidersResponse::new(self.unstable().providers.clone())
    }

    /// Sets (`Some`: protocol and URL; headers are not reported back) or
    /// disables (`None`) a provider's routing.
    pub fn route_provider(
        &self,
        provider: &v1::ProviderId,
        current: Option<v1::ProviderCurrentConfig>,
    ) -> Result<(), RpcError> {
        let mut unstable = self.unstable();
        let info = unstable
            .providers
            .iter_mut()
            .find(|p| p.provider_id == *provider)
            .ok_or_else(|| {
                invalid(json!({"providerId": provider, "details": "unknown provider"}))
            })?;
        match &current {
            Some(c) if !info.supported.contains(&c.api_type) => {
                return Err(invalid(
                    json!({"providerId": provider, "apiType": c.api_type,
                    "details": "protocol not supported by this provider"}),
                ));
            }
            None if info.required => {
                return Err(invalid(json!({"providerId": provider,
                    "details": "a required provider cannot be disabled"})));
            }
            _ => {}
        }
        info.current = current;
        Ok(())
    }

    pub fn mcp_notification(&self, n: v1::MessageMcpNotification) {
        self.unstable().mcp_notifications.push((
            n.server_id.0.to_string(),
            n.request_id.0.to_string(),
            n.method,
        ));
    }

    /// `mcp TEXT`: the tool `echo` of the session's first MCP server of
    /// transport `acp`, over `mcp/message`; returns the chunk to say.
    pub async fn mcp(
        &self,
        conn: &AgentConnection,
        session: &v1::SessionId,
        text: &str,
    ) -> Result<String, RpcError> {
        let (server, request_id) = {
            let mut unstable = self.unstable();
            let server = unstable
                .acp_servers
                .get(&*session.0)
                .and_then(|s| s.first().cloned())
                .ok_or_else(|| {
                    invalid(json!({"prompt": format!("mcp {text}"),
                        "details": "the session has no MCP server of transport acp"}))
                })?;
            unstable.mcp_requests += 1;
            (server, format!("libacp-mcp-{}", unstable.mcp_requests))
        };
        let params = json!({
            "name": "echo",
            "arguments": {"text": text},
            "_meta": {
                "progressToken": request_id,
                "io.modelcontextprotocol/protocolVersion": MCP_PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        });
        let answer = conn
            .mcp_message(
                &v1::MessageMcpRequest::new(server.clone(), request_id.clone(), "tools/call")
                    .params(params.as_object().cloned().unwrap_or_else(Map::new)),
            )
            .await?;
        let outcome = match answer {
            v1::MessageMcpResponse::Result { result, .. } => result["content"][0]["text"]
                .as_str()
                .map_or_else(|| format!("result {result}"), str::to_owned),
            v1::MessageMcpResponse::Error { error, .. } => {
                format!("error {} {}", error.code, error.message)
            }
            // The enum is non-exhaustive: an outcome this agent does not know.
            other => format!("outcome {}", json!(other)),
        };
        // The core delivers an answer after the notifications before it:
        // the client's are in.
        let notes: Vec<String> = {
            let mut unstable = self.unstable();
            let (mine, rest) = std::mem::take(&mut unstable.mcp_notifications)
                .into_iter()
                .partition(|(s, r, _)| *s == server && *r == request_id);
            unstable.mcp_notifications = rest;
            mine.into_iter().map(|(_, _, method)| method).collect()
        };
        Ok(format!("mcp: {outcome} [{}]", notes.join(", ")))
    }

    /// `auth STATE`: `auth/status_update`, and `auth/status` reports STATE.
    pub async fn auth(&self, conn: &AgentConnection, state: &str) -> Result<String, RpcError> {
        let parsed: v1::AuthState = serde_json::from_value(json!(state)).map_err(|e| {
            invalid(json!({"prompt": format!("auth {state}"), "details": e.to_string()}))
        })?;
        self.unstable().auth = parsed.clone();
        let accounts = accounts(&parsed);
        conn.auth_status_update(&v1::AuthStatusUpdateNotification::new(parsed).accounts(accounts))
            .await?;
        Ok(format!("auth: {state}"))
    }

    /// `system`: the session's system prompt, as this agent got it.
    pub fn said_system_prompt(&self, session: &v1::SessionId) -> String {
        let prompt = self.unstable().system_prompts.get(&*session.0).cloned();
        format!("system: {}", json!(prompt.flatten()))
    }

    /// `plan` / `subagent`: the payloads' plan operation or subagent
    /// updates (`/plan`, `/subagent`); returns the chunk to say.
    pub async fn send_updates(
        &self,
        conn: &AgentConnection,
        session: &v1::SessionId,
        command: &str,
    ) -> Result<String, RpcError> {
        let updates: Vec<v1::SessionUpdate> = payload(&format!("/{command}"))?;
        let n = updates.len();
        for update in updates {
            match conn
                .session_update(&v1::SessionNotification::new(session.clone(), update))
                .await
            {
                Ok(()) => {}
                Err(CallError::Refused(Refusal::CapabilityNotAdvertised { .. })) => {
                    return Ok(format!("{command}: not advertised"));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(format!("{command}: {n} updates"))
    }
}
