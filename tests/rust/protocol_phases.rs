//! Protocol phases and versions: nothing before `initialize`, one
//! `initialize`, pipelined requests queued behind it, version negotiation on
//! both sides.

use std::time::Duration;

use libacp_core::{AcpOptions, CallError, FnHandler, Phase, Refusal};
use libacp_tests::{acp_agent_raw, acp_client_raw, acp_pair, init_params, scripted_agent, within};
use serde_json::json;

#[tokio::test]
async fn the_agent_refuses_everything_before_initialize() {
    let (_agent, mut client) = acp_agent_raw(scripted_agent(json!({})), AcpOptions::default());
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}))
        .await;
    let answer = client.expect().await;
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .expect("msg")
            .contains("initialize")
    );
}

#[tokio::test]
async fn a_second_initialize_is_refused() {
    let (_agent, mut client) = acp_agent_raw(scripted_agent(json!({})), AcpOptions::default());
    for id in [1, 2] {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": 1}}))
            .await;
    }
    let mut answers = [client.expect().await, client.expect().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers[0]["result"]["protocolVersion"], 1);
    assert_eq!(answers[1]["id"], 2);
    assert_eq!(answers[1]["error"]["code"], -32600);
}

#[tokio::test]
async fn requests_pipelined_behind_initialize_are_handled_after_it() {
    // The host's initialize is slow; session/new arrives meanwhile.
    let agent = FnHandler::new().on_request(|req| async move {
        match req.method.as_str() {
            "initialize" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(json!({"protocolVersion": 1}))
            }
            _ => Ok(json!({"sessionId": "s0"})),
        }
    });
    let (_agent, mut client) = acp_agent_raw(agent, AcpOptions::default());
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}))
        .await;
    let first = client.expect().await;
    let second = client.expect().await;
    assert_eq!(first["id"], 1, "initialize answered first");
    assert_eq!(second["id"], 2);
    assert_eq!(second["result"]["sessionId"], "s0");
}

/// An agent host that claims version 7 whatever is asked.
fn boastful_agent() -> FnHandler {
    FnHandler::new().on_request(|_req| async move {
        Ok(json!({"protocolVersion": 7, "agentCapabilities": {}}))
    })
}

#[tokio::test]
async fn the_agent_answers_the_requested_version_or_its_latest() {
    for (requested, expected) in [(1, 1), (2, 1), (0, 1)] {
        let (_agent, mut client) = acp_agent_raw(boastful_agent(), AcpOptions::default());
        client
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": requested}}))
            .await;
        assert_eq!(client.expect().await["result"]["protocolVersion"], expected);
    }
}

#[tokio::test]
async fn the_client_refuses_an_unsupported_version_and_closes() {
    let (client, mut agent) = acp_client_raw(FnHandler::new());
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request_json("initialize", &init_params(json!({})))
                .await
        }
    });
    let request = agent.expect().await;
    agent
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 99}}))
        .await;
    let err = within("initialize", call)
        .await
        .expect("task")
        .expect_err("refused");
    assert_eq!(
        err,
        CallError::Refused(Refusal::UnsupportedVersion {
            version: "99".into()
        })
    );
    within("closed", client.closed()).await;
    assert_eq!(agent.recv().await, None, "the client closed the connection");
}

#[tokio::test]
async fn the_client_refuses_calls_before_initialize_and_a_second_initialize() {
    let (client, _agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    let err = client
        .request_json("session/new", &json!({"cwd": "/", "mcpServers": []}))
        .await
        .expect_err("refused");
    assert!(
        matches!(err, CallError::Refused(Refusal::NotInitialized { .. })),
        "{err:?}"
    );
    assert_eq!(client.phase(), Phase::AwaitingInitialize);
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("ok");
    assert_eq!(client.phase(), Phase::Ready);
    assert_eq!(client.protocol_version(), Some(1));
    let err = client
        .request_json("initialize", &init_params(json!({})))
        .await
        .expect_err("refused");
    assert_eq!(err, CallError::Refused(Refusal::AlreadyInitialized));
}

/// A connection that closes while requests wait behind an `initialize` the
/// host never answered frees everything: the queued requests hold the
/// connection, so keeping them after the close would leak it.
#[tokio::test]
async fn requests_queued_behind_initialize_are_freed_when_the_connection_closes() {
    let agent = FnHandler::new().on_request(|req| async move {
        if req.method == "initialize" {
            // Never answers: the engine drops this future when it closes.
            std::future::pending::<()>().await;
        }
        Ok(json!({}))
    });
    // The trace hook lives as long as the engine's state does.
    let alive = std::sync::Arc::new(());
    let mut options = AcpOptions::default();
    let held = std::sync::Arc::clone(&alive);
    options.connection.trace = Some(std::sync::Arc::new(move |_, _| {
        let _ = &held;
    }));
    let (agent_conn, mut client) = acp_agent_raw(agent, options);
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}))
        .await;
    client.close_write().await;
    within("the agent closes", agent_conn.terminated()).await;
    drop(agent_conn);
    drop(client);
    within("the engine's state is freed", async {
        while std::sync::Arc::strong_count(&alive) > 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}
