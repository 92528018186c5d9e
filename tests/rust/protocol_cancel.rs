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
        assert_eq!(request.method, "session/request_permission");
        self.0
            .lock()
            .expect("ui")
            .push((request.cancellation.clone(), responder));
    }
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
    let (token, responder) = within("permission asked", async {
        loop {
            if let Some(p) = ui.0.lock().expect("ui").pop() {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
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
