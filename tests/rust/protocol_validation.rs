//! Validation at the boundary: absolute paths, 1-based lines and required
//! fields, answered `-32602` with the field when received, refused locally
//! when sent.

use libacp_core::{AcpOptions, AcpPeer, CallError, FnHandler};
use libacp_tests::{acp_agent_raw, acp_pair, init_params, scripted_agent, within};
use serde_json::{Value, json};

#[tokio::test]
async fn incoming_violations_get_invalid_params_with_the_field() {
    let (_agent, mut client) = acp_agent_raw(scripted_agent(json!({})), AcpOptions::default());
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client.expect().await;
    for (id, method, params, field) in [
        (
            2,
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
            "/cwd",
        ),
        (3, "session/new", json!({"cwd": "/tmp"}), "/mcpServers"),
        (4, "session/prompt", json!({"sessionId": "s"}), "/prompt"),
    ] {
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = client.expect().await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], -32602, "{method}");
        assert_eq!(answer["error"]["data"]["field"], field, "{method}");
    }
}

#[tokio::test]
async fn the_client_rejects_relative_paths_and_zero_lines_from_the_agent() {
    // The agent side sends raw frames through the engine (bypassing its own
    // checks) to see what the client answers.
    let agent = FnHandler::new().on_request(|req| async move {
        match req.method.as_str() {
            "initialize" => Ok(json!({"protocolVersion": 1})),
            "session/new" => Ok(json!({"sessionId": "s0"})),
            _ => {
                let mut codes = Vec::new();
                for params in [
                    json!({"sessionId": "s0", "path": "notes.txt"}),
                    json!({"sessionId": "s0", "path": "/notes.txt", "line": 0}),
                ] {
                    let r = req.peer.request("fs/read_text_file", &params).await;
                    codes.push(r.err().and_then(|e| e.rpc_code()));
                }
                Ok(json!({"stopReason": "end_turn", "_meta": {"codes": codes}}))
            }
        }
    });
    let client = FnHandler::new().on_request(|_req| async move { Ok(json!({"content": "x"})) });
    let (client, _agent) = acp_pair(client, agent, AcpOptions::default());
    within(
        "init",
        client.request_json(
            "initialize",
            &init_params(json!({"fs": {"readTextFile": true}})),
        ),
    )
    .await
    .expect("init");
    client
        .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .expect("session");
    let answer: Value = client
        .request_json("session/prompt", &json!({"sessionId": "s0", "prompt": []}))
        .decode()
        .await
        .expect("prompt");
    assert_eq!(answer["_meta"]["codes"], json!([-32602, -32602]));
}

#[tokio::test]
async fn outgoing_violations_fail_locally() {
    let (client, _agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(json!({})),
        AcpOptions::default(),
    );
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("init");
    let err = client
        .request_json("session/new", &json!({"cwd": "./here", "mcpServers": []}))
        .await
        .expect_err("relative");
    match err {
        CallError::InvalidParams(message) => assert!(message.contains("/cwd"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(client.sessions().is_empty(), "nothing was opened");
}

#[tokio::test]
async fn an_agent_cannot_report_a_tool_call_at_a_relative_location() {
    let agent = FnHandler::new().on_request(|req| async move {
        match req.method.as_str() {
            "initialize" => Ok(json!({"protocolVersion": 1})),
            "session/new" => Ok(json!({"sessionId": "s0"})),
            _ => {
                let acp = AcpPeer::of(&req.peer).expect("acp");
                let bad = acp
                    .notify_json("session/update", &json!({"sessionId": "s0", "update": {
                        "sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit",
                        "locations": [{"path": "src/main.rs", "line": 3}]}}))
                    .await;
                Ok(json!({"stopReason": "end_turn", "_meta": {"error": bad.err().map(|e| e.to_string())}}))
            }
        }
    });
    let (client, _agent) = acp_pair(FnHandler::new(), agent, AcpOptions::default());
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("init");
    client
        .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .expect("session");
    let answer: Value = client
        .request_json("session/prompt", &json!({"sessionId": "s0", "prompt": []}))
        .decode()
        .await
        .expect("prompt");
    let error = answer["_meta"]["error"].as_str().expect("refused locally");
    assert!(error.contains("/update/locations/0/path"), "{error}");
}
