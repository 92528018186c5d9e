//! Capabilities are enforced both ways: a call the peer did not advertise is
//! refused locally and never sent; an incoming call for a capability this
//! side did not advertise is answered `-32601`.

use libacp_core::{AcpOptions, AcpPeer, CallError, FnHandler, Refusal};
use libacp_tests::{acp_agent_raw, acp_client_raw, acp_pair, init_params, scripted_agent, within};
use serde_json::json;

fn refused_capability(err: &CallError) -> Option<String> {
    match err {
        CallError::Refused(Refusal::CapabilityNotAdvertised { capability, .. }) => {
            Some(capability.clone())
        }
        _ => None,
    }
}

#[tokio::test]
async fn the_client_refuses_unadvertised_session_methods_without_sending() {
    let (client, mut agent) = acp_client_raw(FnHandler::new());
    let init = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request_json("initialize", &init_params(json!({})))
                .await
        }
    });
    let request = agent.expect().await;
    agent
        .send(
            json!({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1,
            "agentCapabilities": {"loadSession": false, "sessionCapabilities": {"list": {}}}}}),
        )
        .await;
    within("init", init).await.expect("task").expect("ok");
    for (method, params, capability) in [
        (
            "session/load",
            json!({"sessionId": "s", "cwd": "/", "mcpServers": []}),
            "agentCapabilities.loadSession",
        ),
        (
            "session/resume",
            json!({"sessionId": "s", "cwd": "/"}),
            "agentCapabilities.sessionCapabilities.resume",
        ),
        (
            "session/close",
            json!({"sessionId": "s"}),
            "agentCapabilities.sessionCapabilities.close",
        ),
        ("logout", json!({}), "agentCapabilities.auth.logout"),
    ] {
        let err = client
            .request_json(method, &params)
            .await
            .expect_err(method);
        assert_eq!(
            refused_capability(&err).as_deref(),
            Some(capability),
            "{method}: {err:?}"
        );
    }
    // Advertised: sent.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.request_json("session/list", &json!({})).await }
    });
    let request = agent.expect().await;
    assert_eq!(
        request["method"], "session/list",
        "nothing else was sent before"
    );
    agent
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"sessions": []}}))
        .await;
    within("list", list).await.expect("task").expect("ok");
}

#[tokio::test]
async fn the_client_refuses_prompt_content_the_agent_cannot_take() {
    let caps = json!({"promptCapabilities": {"image": true}});
    let (client, _agent) = acp_pair(
        FnHandler::new(),
        scripted_agent(caps),
        AcpOptions::default(),
    );
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("ok");
    let session: serde_json::Value = client
        .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
        .decode()
        .await
        .expect("session");
    let sid = session["sessionId"].clone();
    let image = json!({"type": "image", "mimeType": "image/png", "data": "AA=="});
    let audio = json!({"type": "audio", "mimeType": "audio/wav", "data": "AA=="});
    let resource = json!({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}});
    let ok = client
        .request_json(
            "session/prompt",
            &json!({"sessionId": sid, "prompt": [image]}),
        )
        .await;
    assert!(ok.is_ok(), "image is advertised: {ok:?}");
    for block in [audio, resource] {
        let err = client
            .request_json(
                "session/prompt",
                &json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}, block]}),
            )
            .await
            .expect_err("refused");
        assert!(refused_capability(&err).is_some(), "{err:?}");
        assert!(
            !client.turn_in_progress(sid.as_str().expect("id")),
            "no turn left behind"
        );
    }
}

#[tokio::test]
async fn the_agent_refuses_client_methods_the_client_did_not_advertise() {
    // The agent's prompt handler tries fs and terminal calls and reports
    // what happened in its answer.
    let agent = FnHandler::new().on_request(|req| async move {
        let acp = AcpPeer::of(&req.peer).expect("acp");
        match req.method.as_str() {
            "initialize" => Ok(json!({"protocolVersion": 1})),
            "session/new" => Ok(json!({"sessionId": "s0"})),
            _ => {
                let read = acp
                    .request_json(
                        "fs/read_text_file",
                        &json!({"sessionId": "s0", "path": "/etc/hostname"}),
                    )
                    .await;
                let term = acp
                    .request_json(
                        "terminal/create",
                        &json!({"sessionId": "s0", "command": "ls"}),
                    )
                    .await;
                let write = acp
                    .request_json(
                        "fs/write_text_file",
                        &json!({"sessionId": "s0", "path": "/tmp/x", "content": ""}),
                    )
                    .await;
                Ok(json!({"stopReason": "end_turn", "_meta": {
                    "read": read.err().map(|e| e.to_string()),
                    "terminal": term.err().map(|e| e.to_string()),
                    "write": write.err().map(|e| e.to_string()),
                }}))
            }
        }
    });
    let client = FnHandler::new().on_request(|req| async move {
        assert_eq!(
            req.method, "fs/read_text_file",
            "only the advertised call arrives"
        );
        Ok(json!({"content": "host"}))
    });
    let (client, _agent) = acp_pair(client, agent, AcpOptions::default());
    within(
        "init",
        client.request_json(
            "initialize",
            &init_params(json!({"fs": {"readTextFile": true}})),
        ),
    )
    .await
    .expect("ok");
    client
        .request_json("session/new", &json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .expect("session");
    let answer: serde_json::Value = within(
        "prompt",
        client
            .request_json("session/prompt", &json!({"sessionId": "s0", "prompt": []}))
            .decode(),
    )
    .await
    .expect("ok");
    let meta = &answer["_meta"];
    assert_eq!(
        meta["read"],
        serde_json::Value::Null,
        "advertised, so it worked"
    );
    assert!(
        meta["terminal"]
            .as_str()
            .expect("refused")
            .contains("clientCapabilities.terminal")
    );
    assert!(
        meta["write"]
            .as_str()
            .expect("refused")
            .contains("clientCapabilities.fs.writeTextFile")
    );
}

#[tokio::test]
async fn incoming_calls_for_unadvertised_capabilities_get_method_not_found() {
    let (_agent, mut client) = acp_agent_raw(
        scripted_agent(json!({"loadSession": false})),
        AcpOptions::default(),
    );
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}))
        .await;
    client.expect().await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/load",
            "params": {"sessionId": "old", "cwd": "/tmp", "mcpServers": []}}))
        .await;
    let answer = client.expect().await;
    assert_eq!(answer["error"]["code"], -32601);
    assert!(
        answer["error"]["data"]["reason"]
            .as_str()
            .expect("reason")
            .contains("loadSession")
    );
    // A method of the other side is not ours to handle either.
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file",
            "params": {"sessionId": "s", "path": "/a"}}),
        )
        .await;
    assert_eq!(client.expect().await["error"]["code"], -32601);
}
