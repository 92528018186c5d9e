//! Prompt-turn cancellation semantics: the client's `cancel_session`
//! answers pending permission requests `cancelled`; the agent's prompt
//! answers `stopReason: "cancelled"` whatever its handler returns.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::{AcpOptions, CancellationToken, FnHandler, Handler, IncomingRequest, Responder};
use libacp_tests::{acp_agent_raw, acp_pair, initialize_and_open, scripted_agent, within};
use serde_json::{Value, json};

/// A client that parks permission requests (a UI waiting for the user).
#[derive(Clone, Default)]
struct PermissionUi(Arc<Mutex<Vec<(CancellationToken, Responder)>>>);

impl Handler for PermissionUi {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        assert!(
            matches!(
                request.method.as_str(),
                "session/request_permission" | "elicitation/create"
            ),
            "{}",
            request.method
        );
        self.0
            .lock()
            .expect("ui")
            .push((request.cancellation.clone(), responder));
    }
}

impl PermissionUi {
    /// The next permission request the UI parked.
    async fn next(&self) -> (CancellationToken, Responder) {
        within("permission asked", async {
            loop {
                if let Some(p) = self.0.lock().expect("ui").pop() {
                    return p;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
    }
}

/// A client with `ui` as its host against a raw agent, initialized, with
/// session `s1` open.
async fn raw_client_with_session(
    ui: &PermissionUi,
) -> (libacp_core::AcpConnection, libacp_tests::RawPeer) {
    raw_client_advertising(ui, json!({})).await
}

/// As [`raw_client_with_session`], the client advertising `caps`.
async fn raw_client_advertising(
    ui: &PermissionUi,
    caps: Value,
) -> (libacp_core::AcpConnection, libacp_tests::RawPeer) {
    let (client, mut agent) = libacp_tests::acp_client_raw(ui.clone());
    for (method, params, result) in [
        (
            "initialize",
            libacp_tests::init_params(caps.clone()),
            json!({"protocolVersion": 1, "agentCapabilities": {}}),
        ),
        (
            "session/new",
            json!({"cwd": "/w", "mcpServers": []}),
            json!({"sessionId": "s1"}),
        ),
    ] {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.request_json(method, &params).await }
        });
        let req = agent.expect().await;
        agent
            .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": result}))
            .await;
        within(method, call).await.expect("task").expect(method);
    }
    (client, agent)
}

/// Sends a prompt in session `s1`; its answer comes from the task.
fn prompt_in_s1(
    client: &libacp_core::AcpConnection,
) -> tokio::task::JoinHandle<Result<Value, libacp_core::CallError>> {
    let client = client.clone();
    let params = json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]});
    tokio::spawn(async move {
        client
            .request_json("session/prompt", &params)
            .decode::<Value>()
            .await
    })
}

/// The agent's `session/request_permission` number `id` for session `s1`.
fn permission_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1"},
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    }})
}

#[tokio::test]
async fn cancel_answers_pending_permission_requests_cancelled() {
    let ui = PermissionUi::default();
    let (client, _agent) = acp_pair(ui.clone(), scripted_agent(json!({})), AcpOptions::default());
    let sid = initialize_and_open(&client, json!({})).await;
    let turn = tokio::spawn({
        let client = client.clone();
        let sid = sid.clone();
        async move {
            client
                .request_json(
                    "session/prompt",
                    &json!({"sessionId": sid, "prompt": [{"type": "text", "text": "permission"}]}),
                )
                .decode::<Value>()
                .await
        }
    });
    let (token, responder) = ui.next().await;
    client.cancel_session(&sid).await.expect("cancel sent");
    assert!(token.is_cancelled(), "the UI is told to dismiss its prompt");
    // The user clicks too late: refused, not sent.
    assert_eq!(
        responder.respond(Ok(libacp_tests::raw(
            json!({"outcome": {"outcome": "selected", "optionId": "allow"}})
        ))),
        Err(libacp_core::RespondError::Cancelled)
    );
    let answer = within("turn ends", turn).await.expect("task").expect("ok");
    // The scripted agent puts the permission outcome it received in _meta,
    // and its own answer is rewritten to cancelled.
    assert_eq!(
        answer["_meta"]["outcome"]["outcome"]["outcome"],
        "cancelled"
    );
    assert_eq!(answer["stopReason"], "cancelled");
}

/// The race seen in 5 of 500 runs: the host's "selected" landed after
/// `session/cancel` was queued and before the core answered `cancelled`.
/// Pending permission requests must be taken from the host before the
/// notification is queued. Made deterministic with back-pressure: the
/// agent stops reading, so `session/cancel` waits for room in the outgoing
/// queue; meanwhile the request must already be cancelled (the host's
/// click refused), and once the agent reads again it gets `session/cancel`
/// and then `cancelled`.
#[tokio::test]
async fn pending_permissions_are_taken_from_the_host_before_session_cancel_is_queued() {
    let ui = PermissionUi::default();
    let (client, mut agent) = raw_client_with_session(&ui).await;
    agent.send(permission_request(7)).await;
    let (token, responder) = ui.next().await;
    // The agent stops reading: fill the pipe and the outgoing queue.
    let filler = json!({"pad": "x".repeat(1024)});
    let mut queued = 0;
    loop {
        match client.try_notify("_test/fill", Some(libacp_tests::raw(filler.clone()))) {
            Ok(libacp_core::TryNotify::Sent) => queued += 1,
            Ok(libacp_core::TryNotify::Full(_)) => break,
            Err(e) => panic!("fill: {e}"),
        }
        if queued % 64 == 0 {
            tokio::task::yield_now().await;
        }
    }
    let cancel = tokio::spawn({
        let client = client.clone();
        async move { client.cancel_session("s1").await }
    });
    // session/cancel is waiting for room; the request is no longer the host's.
    within("the permission request is taken from the host", async {
        while !token.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    assert!(!cancel.is_finished(), "session/cancel waits for room");
    assert_eq!(
        responder.respond(Ok(libacp_tests::raw(
            json!({"outcome": {"outcome": "selected", "optionId": "allow"}})
        ))),
        Err(libacp_core::RespondError::Cancelled)
    );
    // The agent reads again: the fillers, session/cancel, then `cancelled`.
    let mut order = Vec::new();
    while order.len() < 2 {
        let frame = within("frames", agent.expect()).await;
        if frame["method"] == "_test/fill" {
            continue;
        }
        order.push(frame);
    }
    within("cancel sent", cancel)
        .await
        .expect("task")
        .expect("cancel");
    assert_eq!(order[0]["method"], "session/cancel");
    assert_eq!(order[1]["id"], 7);
    assert_eq!(order[1]["result"]["outcome"]["outcome"], "cancelled");
}

#[tokio::test]
async fn a_cancelled_prompt_answers_cancelled_even_if_the_handler_errors() {
    let (client, _agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    let sid = initialize_and_open(&client, json!({})).await;
    let turn = tokio::spawn({
        let client = client.clone();
        let sid = sid.clone();
        async move {
            client
                .request_json(
                    "session/prompt",
                    &json!({"sessionId": sid, "prompt": [{"type": "text", "text": "wait"}]}),
                )
                .decode::<Value>()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    client.cancel_session(&sid).await.expect("cancel");
    let answer = within("turn", turn)
        .await
        .expect("task")
        .expect("an answer, not an error");
    assert_eq!(answer["stopReason"], "cancelled");
    assert!(!client.turn_in_progress(&sid));
}

#[tokio::test]
async fn session_cancel_fires_the_prompt_handlers_token_and_keeps_its_updates_ordered() {
    // A raw client: the wire shows the agent's answer after cancel.
    let agent = FnHandler::new().on_request(|req| async move {
        match req.method.as_str() {
            "initialize" => Ok(json!({"protocolVersion": 1})),
            "session/new" => Ok(json!({"sessionId": "s0"})),
            _ => {
                req.cancellation.cancelled().await;
                // A well-behaved agent may still flush an update, then stop.
                let acp = libacp_core::AcpPeer::of(&req.peer).expect("acp");
                acp.notify_json("session/update", &json!({"sessionId": "s0", "update": {
                    "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "stopping"}}}))
                    .await
                    .map_err(libacp_core::RpcError::from)?;
                Ok(json!({"stopReason": "end_turn"}))
            }
        }
    });
    let (_agent, mut client) = acp_agent_raw(agent, AcpOptions::default());
    for (id, method, params) in [
        (1, "initialize", json!({"protocolVersion": 1})),
        (2, "session/new", json!({"cwd": "/tmp", "mcpServers": []})),
    ] {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        client.expect().await;
    }
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
            "params": {"sessionId": "s0", "prompt": [{"type": "text", "text": "go"}]}}),
        )
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s0"}}))
        .await;
    let update = client.expect().await;
    assert_eq!(update["method"], "session/update");
    let answer = client.expect().await;
    assert_eq!(answer["id"], 3);
    assert_eq!(
        answer["result"]["stopReason"], "cancelled",
        "end_turn rewritten"
    );
}

/// After the client cancelled a turn, a permission request for that
/// session arriving before the prompt's answer is answered `cancelled` by
/// the core: the host (which already dismissed the turn) never sees it.
/// Once the prompt is answered, permission requests reach the host again.
#[tokio::test]
async fn permission_requests_after_cancel_and_before_the_answer_are_answered_cancelled() {
    let ui = PermissionUi::default();
    let (client, mut agent) = raw_client_with_session(&ui).await;
    let turn = prompt_in_s1(&client);
    let prompt = agent.expect().await;
    assert_eq!(prompt["method"], "session/prompt");
    client.cancel_session("s1").await.expect("cancel");
    assert_eq!(agent.expect().await["method"], "session/cancel");
    agent.send(permission_request(8)).await;
    let answer = agent.expect().await;
    assert_eq!(answer["id"], 8);
    assert_eq!(answer["result"]["outcome"]["outcome"], "cancelled");
    assert!(ui.0.lock().expect("ui").is_empty(), "the host never saw it");
    // The agent ends the turn; the next permission request is the host's.
    agent
        .send(json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "cancelled"}}))
        .await;
    let ended = within("turn ends", turn).await.expect("task").expect("ok");
    assert_eq!(ended["stopReason"], "cancelled");
    agent.send(permission_request(9)).await;
    within("the host gets it", async {
        while ui.0.lock().expect("ui").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

/// An elicitation about the session (a form the user has not filled in yet)
/// is answered `action: cancel` when the client cancels the turn, like a
/// pending permission request, and later ones are answered so at once.
#[tokio::test]
async fn cancel_answers_pending_elicitations_cancel() {
    let ui = PermissionUi::default();
    let (client, mut agent) = raw_client_advertising(&ui, json!({"elicitation": {}})).await;
    let turn = prompt_in_s1(&client);
    let prompt = agent.expect().await;
    let elicitation = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
            "sessionId": "s1", "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }})
    };
    agent.send(elicitation(20)).await;
    let (token, responder) = ui.next().await;
    client.cancel_session("s1").await.expect("cancel");
    assert!(token.is_cancelled(), "the form is told to close");
    assert_eq!(agent.expect().await["method"], "session/cancel");
    let answer = agent.expect().await;
    assert_eq!(
        (answer["id"].clone(), answer["result"].clone()),
        (json!(20), json!({"action": "cancel"}))
    );
    assert!(
        responder
            .respond(Ok(libacp_tests::raw(json!({"action": "accept"}))))
            .is_err()
    );
    agent.send(elicitation(21)).await;
    assert_eq!(agent.expect().await["result"], json!({"action": "cancel"}));
    agent
        .send(json!({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "cancelled"}}))
        .await;
    within("turn ends", turn).await.expect("task").expect("ok");
}
