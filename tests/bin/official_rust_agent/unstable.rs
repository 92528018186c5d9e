//! The unstable v1 methods of the official Rust agent, on the SDK's typed
//! API (its cargo feature `unstable`): what `--unstable` advertises and the
//! agent answers, as described in `tests/interop/README.md` ("Unstable
//! methods", "Unstable payloads"). The same behaviour as
//! `tests/interop/ts/unstable-agent.mjs` and `libacp-interop-agent
//! --unstable`.
//!
//! The unstable payloads are those of `tests/interop/unstable-payloads.json`,
//! decoded into the SDK's types before they are sent (so a member the SDK
//! could not carry would be missing on the client's side): `usage` in a
//! prompt's answer, the plan operation and subagent session updates, sent
//! only when the client advertised `plan` / `subagents`. A `systemPrompt` on
//! `session/new`, `session/load` or `session/fork` is kept per session
//! (`override` mode advertised too).

use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AuthAccount, AuthState, AuthStatusCapabilities, AuthStatusResponse,
    ClientCapabilities, DisableProviderRequest, DisableProviderResponse, ForkSessionRequest,
    ForkSessionResponse, ListProvidersResponse, LlmProtocol, McpCapabilities, McpServer,
    MessageMcpNotification, ProviderCurrentConfig, ProviderId, ProviderInfo, ProvidersCapabilities,
    SessionArchiveCapabilities, SessionCapabilities, SessionForkCapabilities, SessionStatus,
    SessionStatusCapabilities, SessionSystemPromptCapabilities,
    SessionSystemPromptModeCapabilities, SessionSystemPromptOverrideCapabilities,
    SessionTitleCapabilities, SessionUpdate, SetProviderRequest, SetProviderResponse,
    SetSessionTitleRequest, SetSessionTitleResponse, SystemPrompt, Usage,
};
use serde_json::{Map, Value};

use super::unstable_payloads as payloads;
use super::{AgentCapabilities, Error, Session, SessionId, State, json, session_not_found};

/// The MCP revision whose request `_meta` the MCP-over-ACP binding of both
/// official SDKs requires (`io.modelcontextprotocol/protocolVersion`).
pub const MCP_PROTOCOL_VERSION: &str = "2026-07-28";

/// Agent-wide state of the unstable methods.
pub struct Unstable {
    /// What `auth/status` answers; `auth STATE` prompts change it.
    pub auth: AuthState,
    /// `providers/list`: `main` (required) and `backup`.
    pub providers: Vec<ProviderInfo>,
    /// `(serverId, requestId, method)` of every `mcp/message` notification
    /// received, until the `mcp` turn that owns it takes it.
    pub mcp_notifications: Vec<(String, String, String)>,
    /// Counts `mcp/message` requests (their `requestId`s).
    pub mcp_requests: u64,
    /// What the client advertised in `initialize`.
    pub client: ClientCapabilities,
}

impl Default for Unstable {
    fn default() -> Self {
        Self {
            auth: AuthState::Authenticated,
            providers: vec![
                ProviderInfo::new(
                    "main",
                    vec![LlmProtocol::Anthropic, LlmProtocol::OpenAi],
                    true,
                    ProviderCurrentConfig::new(
                        LlmProtocol::Anthropic,
                        "https://llm.example.invalid/anthropic",
                    ),
                ),
                ProviderInfo::new("backup", vec![LlmProtocol::OpenAi], false, None),
            ],
            mcp_notifications: Vec::new(),
            mcp_requests: 0,
            client: ClientCapabilities::new(),
        }
    }
}

/// The capabilities `--unstable` adds to `initialize`.
pub fn capabilities(capabilities: AgentCapabilities) -> AgentCapabilities {
    capabilities
        .session_capabilities(
            SessionCapabilities::new()
                .fork(SessionForkCapabilities::new())
                .archive(SessionArchiveCapabilities::new())
                .status(SessionStatusCapabilities::new())
                .title(SessionTitleCapabilities::new())
                .system_prompt(
                    SessionSystemPromptCapabilities::new().mode(
                        SessionSystemPromptModeCapabilities::new()
                            .override_(SessionSystemPromptOverrideCapabilities::new()),
                    ),
                ),
        )
        .auth(AgentAuthCapabilities::new().status(AuthStatusCapabilities::new()))
        .providers(ProvidersCapabilities::new())
        .mcp_capabilities(McpCapabilities::new().acp(true))
}

/// The `serverId`s of the MCP servers of transport `acp` among `servers`.
pub fn acp_servers(servers: &[McpServer]) -> Vec<String> {
    servers
        .iter()
        .filter_map(|server| match server {
            McpServer::Acp(acp) => Some(acp.server_id.0.to_string()),
            _ => None,
        })
        .collect()
}

/// The accounts `auth/status` reports in `state`.
pub fn accounts(state: &AuthState) -> Vec<AuthAccount> {
    if *state == AuthState::Authenticated {
        vec![
            AuthAccount::new("Interop account")
                .email("interop@example.invalid")
                .active(true),
        ]
    } else {
        Vec::new()
    }
}

pub fn auth_status(state: &State) -> AuthStatusResponse {
    let auth = state.unstable().auth.clone();
    let accounts = accounts(&auth);
    AuthStatusResponse::new(auth).accounts(accounts)
}

/// A new open session with the source's cwd, history and title.
pub fn fork(state: &State, request: ForkSessionRequest) -> Result<ForkSessionResponse, Error> {
    let mut sessions = state.sessions();
    let source = sessions
        .get(&request.session_id)
        .ok_or_else(|| session_not_found(&request.session_id))?;
    let mut session = Session::new(request.cwd, acp_servers(&request.mcp_servers));
    session.system_prompt = system_prompt(request.system_prompt)?;
    session.history = source.history.clone();
    session.title = source.title.clone();
    let session_id = state.new_session_id();
    sessions.insert(session_id.clone(), session);
    Ok(ForkSessionResponse::new(session_id))
}

/// `open` while the session is in memory (created, forked or loaded, and
/// not archived since), else `saved`.
pub fn status(state: &State, session_id: &SessionId) -> Result<SessionStatus, Error> {
    state.with_session(session_id, |s| {
        if s.open {
            SessionStatus::Open
        } else {
            SessionStatus::Saved
        }
    })
}

/// Archived: closed as by `session/close` (its turn cancelled, prompts
/// refused until a `session/load`), history kept.
pub fn archive(state: &State, session_id: &SessionId) -> Result<(), Error> {
    let waiters = state.with_session(session_id, |s| {
        s.archived = true;
        s.open = false;
        s.cancelled = true;
        std::mem::take(&mut s.cancel_waiters)
    })?;
    for wake in waiters {
        let _ = wake.send(());
    }
    Ok(())
}

/// Unarchived, but neither loaded nor resumed: still `saved`.
pub fn unarchive(state: &State, session_id: &SessionId) -> Result<(), Error> {
    state.with_session(session_id, |s| s.archived = false)
}

/// The title, trimmed; an empty one is refused.
pub fn set_title(
    state: &State,
    request: SetSessionTitleRequest,
) -> Result<SetSessionTitleResponse, Error> {
    let title = request.title.trim().to_owned();
    if title.is_empty() {
        return Err(Error::invalid_params().data(json!({"title": request.title,
            "details": "the title is empty once trimmed"})));
    }
    state.with_session(&request.session_id, |s| s.title = Some(title.clone()))?;
    Ok(SetSessionTitleResponse::new(title))
}

pub fn list_providers(state: &State) -> ListProvidersResponse {
    ListProvidersResponse::new(state.unstable().providers.clone())
}

/// Runs `f` on the provider's entry, or fails with `-32602`.
fn with_provider<T>(
    state: &State,
    id: &ProviderId,
    f: impl FnOnce(&mut ProviderInfo) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut unstable = state.unstable();
    let provider = unstable
        .providers
        .iter_mut()
        .find(|p| p.provider_id == *id)
        .ok_or_else(|| {
            Error::invalid_params().data(json!({"providerId": id, "details": "unknown provider"}))
        })?;
    f(provider)
}

/// Replaces the provider's routing (`headers` are accepted and not
/// reported back: `providers/list` shows non-secret routing only).
pub fn set_provider(
    state: &State,
    request: SetProviderRequest,
) -> Result<SetProviderResponse, Error> {
    with_provider(state, &request.provider_id, |provider| {
        if !provider.supported.contains(&request.api_type) {
            return Err(Error::invalid_params().data(json!({
                "providerId": request.provider_id,
                "apiType": request.api_type,
                "details": "protocol not supported by this provider",
            })));
        }
        provider.current = Some(ProviderCurrentConfig::new(
            request.api_type.clone(),
            request.base_url.clone(),
        ));
        Ok(SetProviderResponse::new())
    })
}

/// Disables an optional provider; a required one is refused.
pub fn disable_provider(
    state: &State,
    request: DisableProviderRequest,
) -> Result<DisableProviderResponse, Error> {
    with_provider(state, &request.provider_id, |provider| {
        if provider.required {
            return Err(Error::invalid_params().data(json!({
                "providerId": request.provider_id,
                "details": "a required provider cannot be disabled",
            })));
        }
        provider.current = None;
        Ok(DisableProviderResponse::new())
    })
}

/// Records an `mcp/message` notification from the client.
pub fn mcp_notification(state: &State, notification: MessageMcpNotification) {
    state.unstable().mcp_notifications.push((
        notification.server_id.0.to_string(),
        notification.request_id.0.to_string(),
        notification.method,
    ));
}

/// The inner params of the `tools/call` of an `mcp TEXT` turn: the tool
/// `echo`, and the `_meta` the MCP-over-ACP binding requires (plus a
/// `progressToken`, the request id).
pub fn echo_params(request_id: &str, text: &str) -> Map<String, Value> {
    let params = json!({
        "name": "echo",
        "arguments": {"text": text},
        "_meta": {
            "progressToken": request_id,
            "io.modelcontextprotocol/protocolVersion": MCP_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    });
    match params {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The `mcp/message` notification methods received for one request.
pub fn take_mcp_notifications(state: &State, server_id: &str, request_id: &str) -> Vec<String> {
    let mut unstable = state.unstable();
    let (mine, rest) = std::mem::take(&mut unstable.mcp_notifications)
        .into_iter()
        .partition(|(s, r, _)| s == server_id && r == request_id);
    unstable.mcp_notifications = rest;
    mine.into_iter().map(|(_, _, method)| method).collect()
}

/// The `usage` of the `usage` prompt's answer.
pub fn usage() -> Result<Usage, Error> {
    payloads::typed("/usage").map_err(|e| Error::internal_error().data(e))
}

/// The updates of the `plan` (`/plan`) or `subagent` (`/subagent`) prompt,
/// if the client advertised their capability (`plan` / `subagents`).
pub fn updates(state: &State, command: &str) -> Result<Option<Vec<SessionUpdate>>, Error> {
    let advertised = {
        let client = &state.unstable().client;
        match command {
            "plan" => client.plan.is_some(),
            _ => client.subagents.is_some(),
        }
    };
    advertised
        .then(|| payloads::typed(&format!("/{command}")))
        .transpose()
        .map_err(|e| Error::internal_error().data(e))
}

/// The system prompt of a `session/new`, `load` or `fork`, if this agent
/// applies it; else `-32602` (before the session is created, loaded or
/// forked).
pub fn system_prompt(system_prompt: Option<SystemPrompt>) -> Result<Option<SystemPrompt>, Error> {
    match payloads::refused_system_prompt(&json!(system_prompt)) {
        Some(data) => Err(Error::invalid_params().data(data)),
        None => Ok(system_prompt),
    }
}
