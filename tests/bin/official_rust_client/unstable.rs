//! The unstable check sequence of the official Rust client (`--unstable`),
//! on the SDK's typed API (its cargo feature `unstable`): every unstable v1
//! method an agent handles, and the two an agent sends during a prompt
//! (`mcp/message`, answered by the MCP server this client declares with
//! transport `acp`, and `auth/status_update`). Then the unstable payloads
//! of `tests/interop/unstable-payloads.json`, each compared member by member
//! with what the SDK decoded: `systemPrompt` on `session/new` and
//! `session/fork` (sent through the SDK's types, said back by the agent),
//! `usage` in a prompt's answer, the plan operation and subagent session
//! updates (this client advertises `plan` and `subagents`). The same
//! sequence as `tests/interop/ts/unstable-client.mjs` and
//! `libacp-interop-client --unstable`; `tests/interop/README.md` ("Unstable
//! methods", "Unstable payloads") lists it.

use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, AuthStatusRequest, ClientCapabilities, DisableProviderRequest,
    ForkSessionRequest, ListProvidersRequest, LlmProtocol, McpError, McpServer, McpServerAcp,
    MessageMcpNotification, MessageMcpRequest, MessageMcpResponse, PlanCapabilities,
    SessionStatusRequest, SetProviderRequest, SetSessionTitleRequest, SubagentCapabilities,
    SystemPrompt, UnarchiveSessionRequest,
};

use super::unstable_payloads as payloads;
use super::{
    Agent, ConnectionTo, Driver, Error, Implementation, InitializeRequest, JsonRpcRequest,
    LoadSessionRequest, NewSessionRequest, PathBuf, ProtocolVersion, SessionId, Shared, StopReason,
    Turn, Value, agent_error, call, check, json, lock, stop_is,
};

/// The MCP server this client provides over ACP, declared in `session/new`.
pub const SERVER_ID: &str = "interop-tools-1";
const SERVER_NAME: &str = "interop-tools";

/// The MCP server behind [`SERVER_ID`]: its one tool, `echo`, answers
/// `echo: TEXT` after one `notifications/progress` for the request (an
/// `mcp/message` notification). An unknown server is the binding's `-33001`;
/// an unknown method or tool, an MCP error inside the result.
pub fn serve_mcp(
    cx: &ConnectionTo<Agent>,
    request: &MessageMcpRequest,
) -> Result<MessageMcpResponse, Error> {
    if &*request.server_id.0 != SERVER_ID {
        return Err(Error::new(-33001, "MCP server registration unavailable")
            .data(json!({"serverId": request.server_id})));
    }
    let params = Value::Object(request.params.clone().unwrap_or_default());
    if request.method != "tools/call" || params["name"] != "echo" {
        return Ok(MessageMcpResponse::error(McpError::new(
            -32601,
            format!("no tool {} {}", request.method, params["name"]),
        )));
    }
    let text = params["arguments"]["text"].as_str().unwrap_or_default();
    let progress =
        json!({"progressToken": params["_meta"]["progressToken"], "progress": 1, "total": 1});
    cx.send_notification(
        MessageMcpNotification::new(
            request.server_id.clone(),
            request.request_id.clone(),
            "notifications/progress",
        )
        .params(progress.as_object().cloned()),
    )?;
    Ok(MessageMcpResponse::success(json!({
        "content": [{"type": "text", "text": format!("echo: {text}")}],
        "isError": false,
    })))
}

/// A request's result as JSON, or why it failed.
async fn ask<Req: JsonRpcRequest>(
    cx: &ConnectionTo<Agent>,
    label: &str,
    request: Req,
) -> Result<Value, String>
where
    Req::Response: serde::Serialize,
{
    let response = cx
        .send_request(request)
        .block_task()
        .await
        .map_err(|e| agent_error(label, &e))?;
    serde_json::to_value(&response).map_err(|e| format!("{label}: {e}"))
}

/// A request that must fail with `code`; returns the error's `data`.
async fn refused<Req: JsonRpcRequest>(
    cx: &ConnectionTo<Agent>,
    label: &str,
    request: Req,
    code: i32,
) -> Result<Value, String>
where
    Req::Response: serde::Serialize,
{
    match cx.send_request(request).block_task().await {
        Ok(response) => Err(format!(
            "{label}: expected error {code}, got {}",
            show!(response)
        )),
        Err(e) if i32::from(e.code) == code => Ok(e.data.unwrap_or(Value::Null)),
        Err(e) => Err(agent_error(&format!("{label} (expected {code})"), &e)),
    }
}

/// `actual == expected`, or a message with both.
fn same(label: &str, actual: &Value, expected: &Value) -> Result<(), String> {
    check(actual == expected, || {
        format!("{label}: got {actual}, expected {expected}")
    })
}

async fn status(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    expected: &str,
) -> Result<(), String> {
    let label = format!("session/status {session}");
    let got = ask(cx, &label, SessionStatusRequest::new(session.clone())).await?;
    same(&label, &got, &json!({"status": expected}))
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

/// A prompt that must end the turn.
async fn end_turn(driver: &mut Driver, text: &str) -> Result<Turn, String> {
    let turn = driver.prompt(text).await?;
    stop_is(text, &turn.response, StopReason::EndTurn)?;
    Ok(turn)
}

/// The agent says (prompt `system`) the session got the `systemPrompt` at
/// `pointer` in the payloads (none: `null`).
async fn system_prompt_is(label: &str, driver: &mut Driver, pointer: &str) -> Result<(), String> {
    let turn = end_turn(driver, "system").await?;
    let chunks: Vec<String> = turn.chunk_texts().into_iter().map(str::to_owned).collect();
    let said = payloads::said_system_prompt(label, &chunks)?;
    same(label, &said, &payloads::json(pointer))
}

/// The unstable check sequence.
#[expect(clippy::too_many_lines, reason = "one scripted sequence, step by step")]
pub async fn drive(cx: ConnectionTo<Agent>, seen: Shared, work_dir: PathBuf) -> Result<(), String> {
    // 1. initialize: the unstable capabilities are advertised.
    let init = cx
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(
                    ClientCapabilities::new()
                        .plan(PlanCapabilities::new())
                        .subagents(SubagentCapabilities::new()),
                )
                .client_info(Implementation::new("official-rust-client", "0.0.0")),
        )
        .block_task()
        .await
        .map_err(|e| agent_error("initialize", &e))?;
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
    let new = cx
        .send_request(
            NewSessionRequest::new(&work_dir).mcp_servers(vec![McpServer::Acp(McpServerAcp::new(
                SERVER_NAME,
                SERVER_ID,
            ))]),
        )
        .block_task()
        .await
        .map_err(|e| agent_error("session/new", &e))?;
    {
        let mut seen = lock(&seen);
        seen.updates.clear();
        seen.requests.clear();
        seen.notifications.clear();
    }
    let driver = |session_id: SessionId| Driver {
        cx: cx.clone(),
        seen: seen.clone(),
        session_id,
        history: Vec::new(),
    };
    let mut main = driver(new.session_id.clone());
    let main_id = new.session_id;

    // 3. Some history.
    let turn = main.prompt("stream 2").await?;
    stop_is("stream 2", &turn.response, StopReason::EndTurn)?;
    check(turn.chunk_texts() == ["chunk 0", "chunk 1"], || {
        format!("stream 2: saw {}", turn.described())
    })?;

    // 4. auth/status.
    let got = ask(&cx, "auth/status", AuthStatusRequest::new()).await?;
    same(
        "auth/status",
        &got,
        &json!({"state": "authenticated", "accounts": [
            {"label": "Interop account", "email": "interop@example.invalid", "active": true}]}),
    )?;

    // 5. mcp/message: the agent calls our MCP server during a prompt; our
    // progress notification reaches it before our answer.
    let turn = main.prompt("mcp hello").await?;
    stop_is("mcp", &turn.response, StopReason::EndTurn)?;
    check(turn.methods() == ["mcp/message"], || {
        format!(
            "mcp: expected one mcp/message, got {}",
            show!(turn.methods())
        )
    })?;
    let request = &turn.requests[0].1;
    check(
        request["serverId"] == SERVER_ID
            && request["method"] == "tools/call"
            && request["params"]["name"] == "echo"
            && request["params"]["arguments"]["text"] == "hello"
            && request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
                == "2026-07-28"
            && request["requestId"]
                .as_str()
                .is_some_and(|id| !id.is_empty()),
        || format!("mcp: the agent sent mcp/message {request}"),
    )?;
    check(
        turn.chunk_texts() == ["mcp: echo: hello [notifications/progress]"],
        || format!("mcp: saw {}", turn.described()),
    )?;

    // 6. auth/status_update during a prompt, before its answer.
    let turn = main.prompt("auth unauthenticated").await?;
    stop_is("auth", &turn.response, StopReason::EndTurn)?;
    let notifications = std::mem::take(&mut lock(&seen).notifications);
    check(
        notifications.len() == 1
            && notifications[0].0 == "auth/status_update"
            && notifications[0].1["state"] == "unauthenticated"
            && notifications[0].1["accounts"]
                .as_array()
                .is_none_or(Vec::is_empty),
        || format!("auth: notifications {}", show!(notifications)),
    )?;
    check(turn.chunk_texts() == ["auth: unauthenticated"], || {
        format!("auth: saw {}", turn.described())
    })?;
    let got = ask(&cx, "auth/status", AuthStatusRequest::new()).await?;
    check(
        got["state"] == "unauthenticated" && got["accounts"].as_array().is_none_or(Vec::is_empty),
        || format!("auth/status after auth/status_update: {got}"),
    )?;

    // 7. providers/list, set, disable.
    let got = ask(&cx, "providers/list", ListProvidersRequest::new()).await?;
    same("providers/list", &got, &providers(None))?;
    let set = SetProviderRequest::new("backup", LlmProtocol::OpenAi, "http://127.0.0.1:9/v1")
        .headers([("x-interop".to_owned(), "1".to_owned())].into());
    let got = ask(&cx, "providers/set", set).await?;
    same("providers/set", &got, &json!({}))?;
    let got = ask(&cx, "providers/list", ListProvidersRequest::new()).await?;
    let current = json!({"apiType": "openai", "baseUrl": "http://127.0.0.1:9/v1"});
    same("providers/list after set", &got, &providers(Some(current)))?;
    let data = refused(
        &cx,
        "providers/disable main",
        DisableProviderRequest::new("main"),
        -32602,
    )
    .await?;
    same(
        "providers/disable main: data.providerId",
        &data["providerId"],
        &json!("main"),
    )?;
    let got = ask(
        &cx,
        "providers/disable",
        DisableProviderRequest::new("backup"),
    )
    .await?;
    same("providers/disable", &got, &json!({}))?;
    let got = ask(&cx, "providers/list", ListProvidersRequest::new()).await?;
    same("providers/list after disable", &got, &providers(None))?;

    // 8. session/fork: a new session, usable for prompts.
    let fork = cx
        .send_request(ForkSessionRequest::new(main_id.clone(), &work_dir))
        .block_task()
        .await
        .map_err(|e| agent_error("session/fork", &e))?;
    check(
        !fork.session_id.0.is_empty() && fork.session_id != main_id,
        || format!("session/fork answered sessionId {}", show!(fork.session_id)),
    )?;
    let fork_id = fork.session_id;
    let turn = driver(fork_id.clone()).prompt("stream 3").await?;
    stop_is("fork: stream 3", &turn.response, StopReason::EndTurn)?;
    check(
        turn.chunk_texts() == ["chunk 0", "chunk 1", "chunk 2"],
        || format!("fork: stream 3 saw {}", turn.described()),
    )?;

    // 9. session/set_title (trimmed by the agent), session/status.
    let got = ask(
        &cx,
        "session/set_title",
        SetSessionTitleRequest::new(fork_id.clone(), "  Forked interop session  "),
    )
    .await?;
    same(
        "session/set_title",
        &got,
        &json!({"title": "Forked interop session"}),
    )?;
    status(&cx, &fork_id, "open").await?;
    status(&cx, &main_id, "open").await?;

    // 10. session/archive closes the session; unarchive keeps it saved;
    // session/load opens it again.
    let got = ask(
        &cx,
        "session/archive",
        ArchiveSessionRequest::new(main_id.clone()),
    )
    .await?;
    same("session/archive", &got, &json!({}))?;
    status(&cx, &main_id, "saved").await?;
    let data = refused(
        &cx,
        "prompt of the archived session",
        super::text_prompt(&main_id, "stream 1"),
        -32002,
    )
    .await?;
    same(
        "prompt of the archived session: data.sessionId",
        &data["sessionId"],
        &json!(main_id),
    )?;
    let got = ask(
        &cx,
        "session/unarchive",
        UnarchiveSessionRequest::new(main_id.clone()),
    )
    .await?;
    same("session/unarchive", &got, &json!({}))?;
    status(&cx, &main_id, "saved").await?;
    let (_, replay, _) = call(
        &cx,
        &seen,
        "session/load",
        LoadSessionRequest::new(main_id.clone(), &work_dir),
    )
    .await?;
    let first = replay.first().map(|(_, u)| u.clone()).unwrap_or_default();
    check(
        first["sessionUpdate"] == "user_message_chunk" && first["content"]["text"] == "stream 2",
        || format!("session/load: the replay starts with {first}"),
    )?;
    status(&cx, &main_id, "open").await?;
    let turn = main.prompt("stream 1").await?;
    stop_is("stream 1 after load", &turn.response, StopReason::EndTurn)?;
    check(turn.chunk_texts() == ["chunk 0"], || {
        format!("stream 1 after load: saw {}", turn.described())
    })?;

    // 11. An unknown session: -32002 with its id.
    let data = refused(
        &cx,
        "session/status nope",
        SessionStatusRequest::new("nope"),
        -32002,
    )
    .await?;
    same(
        "session/status nope: data.sessionId",
        &data["sessionId"],
        &json!("nope"),
    )?;

    // 12. systemPrompt on session/new and session/fork, as the agent got
    // it; none after a session/load without one; an unsupported mode is
    // refused.
    let prompt = |name: &str| payloads::typed::<SystemPrompt>(&format!("/systemPrompt/{name}"));
    let new = cx
        .send_request(NewSessionRequest::new(&work_dir).system_prompt(prompt("append")?))
        .block_task()
        .await
        .map_err(|e| agent_error("session/new with systemPrompt append", &e))?;
    let mut prompted = driver(new.session_id.clone());
    system_prompt_is(
        "system after session/new with systemPrompt append",
        &mut prompted,
        "/systemPrompt/append",
    )
    .await?;
    let fork = cx
        .send_request(
            ForkSessionRequest::new(new.session_id, &work_dir).system_prompt(prompt("override")?),
        )
        .block_task()
        .await
        .map_err(|e| agent_error("session/fork with systemPrompt override", &e))?;
    system_prompt_is(
        "system after session/fork with systemPrompt override",
        &mut driver(fork.session_id),
        "/systemPrompt/override",
    )
    .await?;
    system_prompt_is(
        "system in S, loaded without systemPrompt",
        &mut main,
        "/systemPrompt/none",
    )
    .await?;
    let data = refused(
        &cx,
        "session/new with an unsupported systemPrompt mode",
        NewSessionRequest::new(&work_dir).system_prompt(prompt("unsupported")?),
        -32602,
    )
    .await?;
    same(
        "session/new with an unsupported systemPrompt mode: data.mode",
        &data["mode"],
        &payloads::json("/systemPrompt/unsupported/mode"),
    )?;

    // 13. usage in a prompt's answer.
    let turn = end_turn(&mut main, "usage").await?;
    same(
        "usage",
        &json!(turn.response.usage),
        &payloads::json("/usage"),
    )?;

    // 14. Plan operations, 15. subagent session updates (with their
    // states), as the SDK delivered them.
    for command in ["plan", "subagent"] {
        let turn = end_turn(&mut main, command).await?;
        payloads::check_updates(command, &turn.delivered)?;
    }
    lock(&seen).requests.clear();
    Ok(())
}
