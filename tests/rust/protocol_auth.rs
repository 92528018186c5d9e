//! Authentication: an agent that requires it answers `session/new` with
//! `-32000` and its `authMethods` until `authenticate` succeeds; the client
//! retries after authenticating.

use libacp_core::AcpOptions;
use libacp_tests::{acp_pair, init_params, scripted_agent, within};
use serde_json::{Value, json};

#[tokio::test]
async fn sessions_need_authentication_and_the_client_can_retry() {
    let options = AcpOptions {
        require_auth: true,
        ..AcpOptions::default()
    };
    let (client, _agent) = acp_pair(
        libacp_core::FnHandler::new(),
        scripted_agent(json!({})),
        options,
    );
    within(
        "init",
        client.request_json("initialize", &init_params(json!({}))),
    )
    .await
    .expect("init");
    let new_session = json!({"cwd": "/tmp", "mcpServers": []});
    let err = client
        .request_json("session/new", &new_session)
        .await
        .expect_err("auth required");
    let libacp_core::CallError::Rpc(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.code, -32000);
    let methods = e.data.expect("data")["authMethods"].clone();
    assert_eq!(methods, json!([{"id": "key", "name": "Key"}]));
    assert_eq!(client.auth_methods(), methods, "also known from initialize");
    assert!(client.sessions().is_empty());

    client
        .request_json("authenticate", &json!({"methodId": "key"}))
        .await
        .expect("authenticated");
    let session: Value = client
        .request_json("session/new", &new_session)
        .decode()
        .await
        .expect("retry succeeds");
    assert_eq!(
        client.sessions(),
        vec![session["sessionId"].as_str().expect("id")]
    );
}
