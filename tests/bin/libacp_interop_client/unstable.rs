//! The unstable check sequence of the libacp interop client (`--unstable`:
//! the option `unstable` set to all), on libacp's typed API (cargo features
//! `unstable_*`): the sequence of the official Rust client's `--unstable`
//! and `tests/interop/ts/unstable-client.mjs` (`tests/interop/README.md`,
//! "Unstable methods", "Unstable payloads"), plus what libacp's own side
//! must show: a forked session is open here (a prompt for it goes out), an
//! archived one is closed (a prompt for it is refused here, never sent)
//! until `session/load` opens it again.
//!
//! The unstable payloads of `tests/interop/unstable-payloads.json` go
//! through libacp's types both ways: the `systemPrompt`s it sends, and the
//! end-of-turn `usage` and plan operation and subagent updates it receives,
//! compared member by member as libacp's typed view decoded them. This
//! client advertises `plan` and `subagents`, so the core must report no
//! payload rule breach (`Event::PayloadRule`) of the agent's over the run.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use libacp_core::protocol::unstable::Features;
use libacp_core::v1;
use libacp_core::{
    AcpOptions, CallError, Client, ClientConnection, ConnectionOptions, Event, Refusal,
    RequestContext, RpcError, Tolerant,
};
use serde_json::{Value, json};

use super::unstable_payloads as payloads;
use super::{Target, prompt};

/// The MCP server this client provides over ACP, declared in `session/new`.
const SERVER_ID: &str = "interop-tools-1";
const SERVER_NAME: &str = "interop-tools";

/// One `session/update`, as received and as libacp's typed view decoded it.
struct Update {
    session_id: String,
    raw: Value,
    /// The typed `update` serialized back, or why there is none.
    typed: Result<Value, String>,
}

/// What the handlers saw, in order.
#[derive(Default)]
struct Log {
    /// Every `session/update`.
    updates: Vec<Update>,
    /// The params of every `mcp/message` request.
    mcp: Vec<Value>,
    /// The params of every `auth/status_update`.
    auth: Vec<Value>,
    /// Every `Event::PayloadRule` the core reported.
    payload_rules: Vec<String>,
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Log>>);

impl Seen {
    fn lock(&self) -> MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every update since the last take, which must all be for `session`,
    /// as libacp's typed view decoded them.
    fn take_updates(&self, session: &v1::SessionId) -> Result<Vec<Value>, String> {
        let updates = std::mem::take(&mut self.lock().updates);
        let mut typed = Vec::new();
        for Update {
            session_id,
            raw,
            typed: update,
        } in updates
        {
            if session_id != *session.0 {
                return Err(format!(
                    "an update for session {session_id}, expected {session}: {raw}"
                ));
            }
            typed.push(update.map_err(|e| format!("libacp's typed view of {raw}: {e}"))?);
        }
        Ok(typed)
    }
}

/// The texts of the `agent_message_chunk`s among `updates`.
fn chunk_texts(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| {
            u["content"]["text"]
                .as_str()
                .unwrap_or("<no text>")
                .to_owned()
        })
        .collect()
}

impl Client for Seen {
    async fn request_permission(
        &self,
        _cx: RequestContext<ClientConnection>,
        _args: v1::RequestPermissionRequest,
    ) -> Result<v1::RequestPermissionResponse, RpcError> {
        Err(RpcError::method_not_found("session/request_permission"))
    }

    async fn session_update(
        &self,
        _connection: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) {
        let raw: Value = serde_json::from_str(update.raw().get()).unwrap_or_default();
        let typed = match update.typed() {
            Some(typed) => serde_json::to_value(&typed.update).map_err(|e| e.to_string()),
            None => Err(update.decode_error().unwrap_or_default().to_owned()),
        };
        self.lock().updates.push(Update {
            session_id: raw["sessionId"].as_str().unwrap_or_default().to_owned(),
            raw: raw["update"].clone(),
            typed,
        });
    }

    /// The MCP server [`SERVER_ID`]: its tool `echo` answers `echo: TEXT`
    /// after one `notifications/progress` (an `mcp/message` notification).
    async fn mcp_message(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::MessageMcpRequest,
    ) -> Result<v1::MessageMcpResponse, RpcError> {
        self.lock().mcp.push(json!(args));
        if &*args.server_id.0 != SERVER_ID {
            return Err(RpcError::new(-33001, "MCP server registration unavailable")
                .with_data(json!({"serverId": args.server_id})));
        }
        let params = Value::Object(args.params.clone().unwrap_or_default());
        if args.method != "tools/call" || params["name"] != "echo" {
            return Ok(v1::MessageMcpResponse::error(v1::McpError::new(
                -32601,
                format!("no tool {} {}", args.method, params["name"]),
            )));
        }
        let progress =
            json!({"progressToken": params["_meta"]["progressToken"], "progress": 1, "total": 1});
        cx.connection
            .mcp_message(
                &v1::MessageMcpNotification::new(
                    args.server_id.clone(),
                    args.request_id.clone(),
                    "notifications/progress",
                )
                .params(progress.as_object().cloned()),
            )
            .await
            .map_err(|e| RpcError::internal_error(e.to_string()))?;
        let text = params["arguments"]["text"].as_str().unwrap_or_default();
        Ok(v1::MessageMcpResponse::success(json!({
            "content": [{"type": "text", "text": format!("echo: {text}")}],
            "isError": false,
        })))
    }

    async fn auth_status_update(
        &self,
        _connection: ClientConnection,
        args: v1::AuthStatusUpdateNotification,
    ) {
        self.lock().auth.push(json!(args));
    }
}

fn check(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

/// `actual` (serialized) `== expected`.
fn same(label: &str, actual: &impl serde::Serialize, expected: &Value) -> Result<(), String> {
    let actual = json!(actual);
    check(actual == *expected, || {
        format!("{label}: got {actual}, expected {expected}")
    })
}

/// The call must fail with the agent's error `code`; returns its `data`.
fn rpc_error<T: std::fmt::Debug>(
    label: &str,
    result: Result<T, CallError>,
    code: i64,
) -> Result<Value, String> {
    match result {
        Err(CallError::Rpc(e)) if e.code == code => Ok(e.data.unwrap_or(Value::Null)),
        other => Err(format!(
            "{label}: expected the agent's error {code}, got {other:?}"
        )),
    }
}

fn providers(backup: Option<Value>) -> Value {
    let mut backup_info =
        json!({"providerId": "backup", "supported": ["openai"], "required": false});
    if let Some(current) = backup {
        backup_info["current"] = current;
    }
    json!({"providers": [
        {"providerId": "main", "supported": ["anthropic", "openai"], "required": true,
         "current": {"apiType": "anthropic", "baseUrl": "https://llm.example.invalid/anthropic"}},
        backup_info,
    ]})
}

struct Driver {
    client: ClientConnection,
    seen: Seen,
}

impl Driver {
    /// A prompt that must end the turn: its answer and the updates it got
    /// (typed view).
    async fn end_turn(
        &self,
        session: &v1::SessionId,
        text: &str,
    ) -> Result<(v1::PromptResponse, Vec<Value>), String> {
        let label = format!("prompt {text:?} in {session}");
        let done = self
            .client
            .prompt(&prompt(session, text))
            .await
            .map_err(|e| format!("{label}: {e}"))?;
        check(done.stop_reason == v1::StopReason::EndTurn, || {
            format!("{label}: stopReason {:?}", done.stop_reason)
        })?;
        let updates = self
            .seen
            .take_updates(session)
            .map_err(|e| format!("{label}: {e}"))?;
        Ok((done, updates))
    }

    /// A prompt that must end the turn; the chunks it got.
    async fn turn(&self, session: &v1::SessionId, text: &str) -> Result<Vec<String>, String> {
        Ok(chunk_texts(&self.end_turn(session, text).await?.1))
    }

    /// The agent says (prompt `system`) the session got the `systemPrompt`
    /// at `pointer` in the payloads (none: `null`).
    async fn system_prompt_is(
        &self,
        label: &str,
        session: &v1::SessionId,
        pointer: &str,
    ) -> Result<(), String> {
        let said = payloads::said_system_prompt(label, &self.turn(session, "system").await?)?;
        same(label, &said, &payloads::json(pointer))
    }

    /// A `session/new` with the payloads' system prompt `name`.
    async fn new_session_with(
        &self,
        dir: &std::path::Path,
        name: &str,
    ) -> Result<v1::NewSessionResponse, CallError> {
        let system_prompt = payloads::typed::<v1::SystemPrompt>(&format!("/systemPrompt/{name}"))
            .map_err(|e| CallError::Rpc(RpcError::internal_error(e)))?;
        self.client
            .new_session(&v1::NewSessionRequest::new(dir).system_prompt(system_prompt))
            .await
    }

    async fn status(&self, session: &v1::SessionId, expected: &str) -> Result<(), String> {
        let label = format!("session/status {session}");
        let got = self
            .client
            .session_status(&v1::SessionStatusRequest::new(session.clone()))
            .await
            .map_err(|e| format!("{label}: {e}"))?;
        same(&label, &got, &json!({"status": expected}))
    }
}

/// Runs the unstable check sequence against the agent at `target`.
#[expect(clippy::too_many_lines, reason = "one scripted sequence, step by step")]
pub async fn run(target: &Target) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("libacp-interop-unstable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let seen = Seen::default();
    let rules = seen.clone();
    let options = AcpOptions {
        unstable: Features::all(),
        connection: ConnectionOptions {
            events: Some(Arc::new(move |event: &Event| {
                if matches!(event, Event::PayloadRule { .. }) {
                    rules.lock().payload_rules.push(format!("{event:?}"));
                }
            })),
            ..ConnectionOptions::default()
        },
        ..AcpOptions::default()
    };
    let client = target.connect(seen.clone(), options).await?;
    let d = Driver {
        client: client.clone(),
        seen: seen.clone(),
    };
    let e = |label: &'static str| move |e: CallError| format!("{label}: {e}");

    // 1. initialize: the unstable capabilities.
    let init = client
        .initialize(
            &v1::InitializeRequest::new(v1::ProtocolVersion::V1).client_capabilities(
                v1::ClientCapabilities::new()
                    .plan(v1::PlanCapabilities::new())
                    .subagents(v1::SubagentCapabilities::new()),
            ),
        )
        .await
        .map_err(e("initialize"))?;
    let caps = json!(init.agent_capabilities);
    let session_caps = &caps["sessionCapabilities"];
    check(
        caps["loadSession"] == true
            && ["fork", "archive", "status", "title"]
                .iter()
                .all(|c| session_caps[c].is_object())
            && caps["auth"]["status"].is_object()
            && caps["providers"].is_object()
            && caps["mcpCapabilities"]["acp"] == true
            && session_caps["systemPrompt"]["mode"]["override"].is_object(),
        || format!("initialize: agentCapabilities {caps} lack an unstable capability"),
    )?;

    // 2. session/new with this client's MCP server of transport acp.
    let main = client
        .new_session(
            &v1::NewSessionRequest::new(&dir).mcp_servers(vec![v1::McpServer::Acp(
                v1::McpServerAcp::new(SERVER_NAME, SERVER_ID),
            )]),
        )
        .await
        .map_err(e("session/new"))?
        .session_id;

    // 3. Some history.
    let chunks = d.turn(&main, "stream 2").await?;
    same("stream 2", &chunks, &json!(["chunk 0", "chunk 1"]))?;

    // 4. auth/status.
    let got = client
        .auth_status(&v1::AuthStatusRequest::new())
        .await
        .map_err(e("auth/status"))?;
    same(
        "auth/status",
        &got,
        &json!({"state": "authenticated", "accounts": [
            {"label": "Interop account", "email": "interop@example.invalid", "active": true}]}),
    )?;

    // 5. mcp/message during a prompt; our progress notification reaches the
    // agent before our answer.
    let chunks = d.turn(&main, "mcp hello").await?;
    let mcp = std::mem::take(&mut seen.lock().mcp);
    check(
        mcp.len() == 1
            && mcp[0]["serverId"] == SERVER_ID
            && mcp[0]["method"] == "tools/call"
            && mcp[0]["params"]["name"] == "echo"
            && mcp[0]["params"]["arguments"]["text"] == "hello"
            && mcp[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            && mcp[0]["requestId"]
                .as_str()
                .is_some_and(|id| !id.is_empty()),
        || format!("mcp: the agent sent {}", json!(mcp)),
    )?;
    same(
        "mcp",
        &chunks,
        &json!(["mcp: echo: hello [notifications/progress]"]),
    )?;

    // 6. auth/status_update during a prompt: handled before its answer.
    let chunks = d.turn(&main, "auth unauthenticated").await?;
    let auth = std::mem::take(&mut seen.lock().auth);
    check(
        auth.len() == 1
            && auth[0]["state"] == "unauthenticated"
            && auth[0]["accounts"].as_array().is_none_or(Vec::is_empty),
        || format!("auth: auth/status_update {}", json!(auth)),
    )?;
    same("auth", &chunks, &json!(["auth: unauthenticated"]))?;
    let got = client
        .auth_status(&v1::AuthStatusRequest::new())
        .await
        .map_err(e("auth/status"))?;
    check(
        got.state == v1::AuthState::Unauthenticated && got.accounts.is_empty(),
        || format!("auth/status after auth/status_update: {}", json!(got)),
    )?;

    // 7. providers/list, set, disable.
    let request = v1::ListProvidersRequest::new();
    let list = || client.list_providers(&request);
    same(
        "providers/list",
        &list().await.map_err(e("providers/list"))?,
        &providers(None),
    )?;
    let set =
        v1::SetProviderRequest::new("backup", v1::LlmProtocol::OpenAi, "http://127.0.0.1:9/v1")
            .headers([("x-interop".to_owned(), "1".to_owned())].into());
    let got = client
        .set_provider(&set)
        .await
        .map_err(e("providers/set"))?;
    same("providers/set", &got, &json!({}))?;
    let current = json!({"apiType": "openai", "baseUrl": "http://127.0.0.1:9/v1"});
    same(
        "providers/list after set",
        &list().await.map_err(e("providers/list"))?,
        &providers(Some(current)),
    )?;
    let data = rpc_error(
        "providers/disable main",
        client
            .disable_provider(&v1::DisableProviderRequest::new("main"))
            .await,
        -32602,
    )?;
    same(
        "providers/disable main: data.providerId",
        &data["providerId"],
        &json!("main"),
    )?;
    let got = client
        .disable_provider(&v1::DisableProviderRequest::new("backup"))
        .await
        .map_err(e("providers/disable"))?;
    same("providers/disable", &got, &json!({}))?;
    same(
        "providers/list after disable",
        &list().await.map_err(e("providers/list"))?,
        &providers(None),
    )?;

    // 8. session/fork: open here from its answer, so a prompt for it goes out.
    let fork = client
        .fork_session(&v1::ForkSessionRequest::new(main.clone(), &dir))
        .await
        .map_err(e("session/fork"))?
        .session_id;
    check(!fork.0.is_empty() && fork != main, || {
        format!("session/fork answered sessionId {fork}")
    })?;
    let chunks = d.turn(&fork, "stream 3").await?;
    same(
        "fork: stream 3",
        &chunks,
        &json!(["chunk 0", "chunk 1", "chunk 2"]),
    )?;

    // 9. session/set_title (trimmed by the agent), session/status.
    let got = client
        .set_session_title(&v1::SetSessionTitleRequest::new(
            fork.clone(),
            "  Forked interop session  ",
        ))
        .await
        .map_err(e("session/set_title"))?;
    same(
        "session/set_title",
        &got,
        &json!({"title": "Forked interop session"}),
    )?;
    d.status(&fork, "open").await?;
    d.status(&main, "open").await?;

    // 10. session/archive closes the session here: a prompt for it is
    // refused locally. Unarchived it stays saved; session/load opens it.
    let got = client
        .archive_session(&v1::ArchiveSessionRequest::new(main.clone()))
        .await
        .map_err(e("session/archive"))?;
    same("session/archive", &got, &json!({}))?;
    d.status(&main, "saved").await?;
    let refused = client.prompt(&prompt(&main, "stream 1")).await;
    check(
        matches!(&refused, Err(CallError::Refused(Refusal::UnknownSession { session_id }))
            if *session_id == *main.0),
        || {
            format!(
                "prompt of the archived session: {refused:?}, expected a local UnknownSession refusal"
            )
        },
    )?;
    let got = client
        .unarchive_session(&v1::UnarchiveSessionRequest::new(main.clone()))
        .await
        .map_err(e("session/unarchive"))?;
    same("session/unarchive", &got, &json!({}))?;
    d.status(&main, "saved").await?;
    client
        .load_session(&v1::LoadSessionRequest::new(main.clone(), &dir))
        .await
        .map_err(e("session/load"))?;
    let replay = std::mem::take(&mut seen.lock().updates);
    let first = replay.first().map(|u| u.raw.clone()).unwrap_or_default();
    check(
        first["sessionUpdate"] == "user_message_chunk" && first["content"]["text"] == "stream 2",
        || format!("session/load: the replay starts with {first}"),
    )?;
    d.status(&main, "open").await?;
    let chunks = d.turn(&main, "stream 1").await?;
    same("stream 1 after load", &chunks, &json!(["chunk 0"]))?;

    // 11. An unknown session: -32002 from the agent, with its id.
    let data = rpc_error(
        "session/status nope",
        client
            .session_status(&v1::SessionStatusRequest::new("nope"))
            .await,
        -32002,
    )?;
    same(
        "session/status nope: data.sessionId",
        &data["sessionId"],
        &json!("nope"),
    )?;

    // 12. systemPrompt on session/new and session/fork, as the agent got
    // it; none after a session/load without one; an unsupported mode is
    // refused (by the agent: the core's rules only need the capability).
    let prompted = d
        .new_session_with(&dir, "append")
        .await
        .map_err(e("session/new with systemPrompt append"))?
        .session_id;
    d.system_prompt_is(
        "system after session/new with systemPrompt append",
        &prompted,
        "/systemPrompt/append",
    )
    .await?;
    let override_prompt = payloads::typed::<v1::SystemPrompt>("/systemPrompt/override")?;
    let overridden = client
        .fork_session(
            &v1::ForkSessionRequest::new(prompted.clone(), &dir).system_prompt(override_prompt),
        )
        .await
        .map_err(e("session/fork with systemPrompt override"))?
        .session_id;
    d.system_prompt_is(
        "system after session/fork with systemPrompt override",
        &overridden,
        "/systemPrompt/override",
    )
    .await?;
    d.system_prompt_is(
        "system in S, loaded without systemPrompt",
        &main,
        "/systemPrompt/none",
    )
    .await?;
    let data = rpc_error(
        "session/new with an unsupported systemPrompt mode",
        d.new_session_with(&dir, "unsupported").await,
        -32602,
    )?;
    same(
        "session/new with an unsupported systemPrompt mode: data.mode",
        &data["mode"],
        &payloads::json("/systemPrompt/unsupported/mode"),
    )?;

    // 13. usage in a prompt's answer.
    let (done, _) = d.end_turn(&main, "usage").await?;
    same("usage", &done.usage, &payloads::json("/usage"))?;

    // 14. Plan operations, 15. subagent session updates (with their
    // states), as libacp's typed view decoded them; the core saw no breach.
    for command in ["plan", "subagent"] {
        let (_, updates) = d.end_turn(&main, command).await?;
        payloads::check_updates(command, &updates)?;
    }
    let breaches = std::mem::take(&mut seen.lock().payload_rules);
    check(breaches.is_empty(), || {
        format!("the core reported payload rule breaches: {breaches:?}")
    })?;

    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
