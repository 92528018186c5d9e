//! Sessions and prompt turns: unknown session ids, one turn per session,
//! `session/load` replaying history before its answer, sessions closed.

use std::sync::{Arc, Mutex};

use libacp_core::{AcpOptions, CallError, FnHandler, Refusal};
use libacp_tests::{
    acp_agent_raw, acp_pair, init_params, initialize_and_open, scripted_agent, within,
};
use serde_json::{Value, json};

fn prompt(sid: &str, text: &str) -> Value {
    json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]})
}

#[tokio::test]
async fn unknown_sessions_get_resource_not_found_with_the_id() {
    let (_agent, mut client) = acp_agent_raw(scripted_agent(json!({})), AcpOptions::default());
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client.expect().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt("nope", "hi")}))
        .await;
    let answer = client.expect().await;
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(answer["error"]["data"]["sessionId"], "nope");
}

#[tokio::test]
async fn the_client_refuses_calls_for_sessions_it_does_not_know() {
    let (client, _agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    initialize_and_open(&client, json!({})).await;
    let err = client
        .request_json("session/prompt", &prompt("ghost", "hi"))
        .await
        .expect_err("refused");
    assert_eq!(
        err,
        CallError::Refused(Refusal::UnknownSession {
            session_id: "ghost".into()
        })
    );
}

#[tokio::test]
async fn one_prompt_turn_per_session_both_sides() {
    let (client, agent_conn) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    let sid = initialize_and_open(&client, json!({})).await;
    let first = client.request_json("session/prompt", &prompt(&sid, "wait"));
    let cancel = first.cancel_handle().expect("sent");
    let first = tokio::spawn(first);
    // Locally refused while the first turn runs.
    let err = within(
        "second",
        client.request_json("session/prompt", &prompt(&sid, "hi")),
    )
    .await
    .expect_err("refused");
    assert_eq!(
        err,
        CallError::Refused(Refusal::PromptInProgress {
            session_id: sid.clone()
        })
    );
    assert!(client.turn_in_progress(&sid));
    assert!(agent_conn.turn_in_progress(&sid) || !first.is_finished());
    cancel.cancel(libacp_core::CancelMode::Abandon);
    let _ = within("first ends", first).await;
    assert!(
        !client.turn_in_progress(&sid),
        "an abandoned prompt frees the turn"
    );
}

#[tokio::test]
async fn the_agent_refuses_a_second_concurrent_prompt() {
    let (_agent, mut client) = acp_agent_raw(scripted_agent(json!({})), AcpOptions::default());
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client.expect().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}))
        .await;
    let sid = client.expect().await["result"]["sessionId"].clone();
    let sid = sid.as_str().expect("sid");
    client
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt(sid, "wait")}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": prompt(sid, "hi")}))
        .await;
    let refused = client.expect().await;
    assert_eq!(refused["id"], 4);
    assert_eq!(refused["error"]["code"], -32600);
    assert_eq!(refused["error"]["data"]["sessionId"], sid);
}

#[tokio::test]
async fn load_replays_history_before_its_answer() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client_handler = FnHandler::new().on_notification({
        let seen = seen.clone();
        move |n| {
            let v: Value = n.params_as().expect("params");
            seen.lock().expect("seen").push(
                v["update"]["content"]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            );
            async {}
        }
    });
    let (client, _agent) = acp_pair(
        client_handler,
        scripted_agent(json!({"loadSession": true})),
        AcpOptions::default(),
    );
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("init");
    within(
        "load",
        client.request_json(
            "session/load",
            &json!({"sessionId": "old-1", "cwd": "/tmp", "mcpServers": []}),
        ),
    )
    .await
    .expect("loaded");
    assert_eq!(
        *seen.lock().expect("seen"),
        vec!["earlier question", "earlier answer"],
        "replay seen before load returned"
    );
    assert_eq!(client.sessions(), vec!["old-1"]);
}

#[tokio::test]
async fn closed_sessions_are_forgotten() {
    let caps = json!({"sessionCapabilities": {"close": {}}});
    let (client, agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(caps),
        AcpOptions::default(),
    );
    let sid = initialize_and_open(&client, json!({})).await;
    assert_eq!(agent.sessions(), vec![sid.clone()]);
    client
        .request_json("session/close", &json!({"sessionId": sid}))
        .await
        .expect("closed");
    assert!(client.sessions().is_empty());
    within("agent forgets", async {
        while !agent.sessions().is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await;
}

#[tokio::test]
async fn try_notify_follows_the_same_rules_as_notify() {
    use libacp_core::TryNotify;
    let (client, agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    let update = |sid: &str| {
        libacp_tests::raw(json!({"sessionId": sid, "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}}))
    };
    // Before initialize: refused locally, like notify.
    assert!(matches!(
        agent.try_notify("session/update", Some(update("s1"))),
        Err(CallError::Refused(_))
    ));
    let sid = initialize_and_open(&client, json!({})).await;
    within("agent sees the session", async {
        while agent.sessions().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(matches!(
        agent.try_notify("session/update", Some(update(&sid))),
        Ok(TryNotify::Sent)
    ));
    assert_eq!(
        agent
            .try_notify("session/update", Some(update("ghost")))
            .expect_err("unknown session"),
        CallError::Refused(Refusal::UnknownSession {
            session_id: "ghost".into()
        })
    );
    // A client's session/cancel always takes the waiting path.
    let cancel = libacp_tests::raw(json!({"sessionId": sid}));
    assert!(matches!(
        client.try_notify("session/cancel", Some(cancel)),
        Ok(TryNotify::Full(Some(_)))
    ));
}
