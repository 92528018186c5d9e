//! Payload capability rules (`libacp_core::protocol::payload`): the engine
//! event each breach produces. What goes on the wire is pinned by the
//! shared scenarios `payload_rules_*`; the events are not in their
//! vocabulary, so they are checked here.

use libacp_core::{AcpOptions, FnHandler};
use libacp_tests::{Events, acp_agent_raw, acp_client_raw_with, within};
use serde_json::json;

/// The agent removes a boolean config option the client did not advertise
/// from its own answer, and says so: `payload_rule`, withheld, naming the
/// rule, the member and the capability.
#[tokio::test]
async fn an_agent_answer_tells_the_host_what_it_withheld() {
    let events = Events::default();
    let host = FnHandler::new().on_request(|r| async move {
        Ok(match r.method.as_str() {
            "initialize" => json!({"protocolVersion": 1, "agentCapabilities": {}}),
            _ => json!({"sessionId": "s1", "configOptions": [
                {"id": "x", "name": "X", "type": "boolean", "currentValue": true}]}),
        })
    });
    let options = AcpOptions {
        connection: events.options(),
        ..AcpOptions::default()
    };
    let (_conn, mut peer) = acp_agent_raw(host, options);
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        .await;
    peer.expect().await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": "/w", "mcpServers": []}}))
        .await;
    let answer = peer.expect().await;
    assert_eq!(answer["result"]["configOptions"], json!([]), "{answer}");
    let seen = events.wait_for("PayloadRule").await;
    for part in [
        "boolean_config_option",
        "withheld: true",
        "session/new",
        "/configOptions/0/type",
        "clientCapabilities.session.configOptions.boolean",
    ] {
        assert!(seen.contains(part), "{part} not in {seen}");
    }
    let (kind, _, details) = {
        let e = libacp_core::Event::PayloadRule {
            rule: "notice",
            withheld: false,
            method: "session/update".into(),
            field: "/update/sessionUpdate".into(),
            capability: "clientCapabilities.session.notices",
        };
        e.describe()
    };
    assert_eq!(kind, "payload_rule");
    assert_eq!(details["withheld"], false);
}

/// What the agent sends that the client did not advertise is delivered
/// and reported (`withheld: false`): a notice, and a boolean option in an
/// answer to the client's call.
#[tokio::test]
async fn a_client_reports_what_it_received_without_advertising_it() {
    let events = Events::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let host = FnHandler::new().on_notification(move |n| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(n.method.clone());
        }
    });
    let options = AcpOptions {
        connection: events.options(),
        ..AcpOptions::default()
    };
    let (conn, mut peer) = acp_client_raw_with(host, options);
    let init = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request(
                "initialize",
                Some(libacp_tests::raw(
                    json!({"protocolVersion": 1, "clientCapabilities": {}}),
                )),
            )
            .await
        }
    });
    let req = peer.expect().await;
    peer.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}}))
        .await;
    within("initialize", init)
        .await
        .expect("join")
        .expect("initialize");
    let new = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.request(
                "session/new",
                Some(libacp_tests::raw(json!({"cwd": "/w", "mcpServers": []}))),
            )
            .await
        }
    });
    let req = peer.expect().await;
    peer.send(
        json!({"jsonrpc": "2.0", "id": req["id"], "result": {"sessionId": "s1",
        "configOptions": [{"id": "x", "name": "X", "type": "boolean", "currentValue": true}]}}),
    )
    .await;
    within("session/new", new)
        .await
        .expect("join")
        .expect("session/new");
    let seen = events.wait_for("boolean_config_option").await;
    assert!(seen.contains("withheld: false"), "{seen}");
    peer.send(
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
        "update": {"sessionUpdate": "notice", "severity": "info", "title": "Hi"}}}),
    )
    .await;
    assert_eq!(
        within("notice", rx.recv()).await.as_deref(),
        Some("session/update")
    );
    let seen = events.wait_for("\"notice\"").await;
    assert!(
        seen.contains("clientCapabilities.session.notices"),
        "{seen}"
    );
}
