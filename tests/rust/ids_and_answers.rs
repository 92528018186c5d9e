//! Request ids and answers: our ids are unique, the peer's are echoed
//! exactly, a reused in-flight id is refused, every request is answered
//! exactly once, and stray responses are reported without harm.

use libacp_core::{
    ConnectionOptions, FnHandler, Handler, IncomingRequest, RespondError, Responder,
};
use libacp_tests::{Events, Parked, connect_raw, raw, within};
use serde_json::json;

#[tokio::test]
async fn outgoing_ids_are_unique() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let c = conn.clone();
            tokio::spawn(async move { c.request("m", &json!({ "i": i })).await })
        })
        .collect();
    let mut ids = std::collections::HashSet::new();
    for _ in 0..50 {
        let frame = peer.expect().await;
        assert!(
            ids.insert(frame["id"].to_string()),
            "duplicate id {}",
            frame["id"]
        );
        peer.send(json!({"jsonrpc": "2.0", "id": frame["id"], "result": frame["params"]}))
            .await;
    }
    for call in calls {
        within("answer", call).await.expect("task").expect("result");
    }
}

#[tokio::test]
async fn incoming_ids_are_echoed_exactly() {
    let handler = FnHandler::new().on_request(|_r| async { Ok(raw(json!(true))) });
    let (_conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    for id in [
        "0",
        "-7",
        "9007199254740993",
        "\"a-uuid-7f3e\"",
        "\"\"",
        "\"esc\\\"aped\"",
        "1.5",
    ] {
        peer.send_raw(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"m\"}}\n").as_bytes())
            .await;
        let answer = peer.expect().await;
        let expected: serde_json::Value = serde_json::from_str(id).expect("json");
        assert_eq!(answer["id"], expected, "{id}");
    }
}

#[tokio::test]
async fn a_second_request_with_an_in_flight_id_is_refused() {
    let events = Events::default();
    let parked = Parked::default();
    let (_conn, mut peer) = connect_raw(parked.clone(), events.options());
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "slow"}))
        .await;
    let (_req, responder) = parked.take().await;
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "again"}))
        .await;
    // Refused under no id, so it cannot pass for the answer to id 5.
    let refusal = peer.expect().await;
    assert_eq!(refusal["id"], serde_json::Value::Null);
    assert_eq!(refusal["error"]["code"], -32600);
    assert_eq!(refusal["error"]["data"]["id"], 5);
    events.wait_for("DuplicateRequestId").await;
    // The first request is still answered normally.
    responder.respond(Ok(raw(json!("first")))).expect("answer");
    assert_eq!(peer.expect().await["result"], "first");
    // Once answered, the id may be used again.
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "reuse"}))
        .await;
    let (req, responder) = parked.take().await;
    assert_eq!(req.method, "reuse");
    responder.respond(Ok(raw(json!(1)))).expect("answer");
    assert_eq!(peer.expect().await["result"], 1);
}

#[tokio::test]
async fn a_request_is_answered_exactly_once() {
    let parked = Parked::default();
    let (_conn, mut peer) = connect_raw(parked.clone(), ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "m"}))
        .await;
    let (_req, responder) = parked.take().await;
    assert!(!responder.is_answered());
    responder
        .respond(Ok(raw(json!("one"))))
        .expect("first answer");
    assert_eq!(
        responder.respond(Ok(raw(json!("two")))),
        Err(RespondError::AlreadyAnswered)
    );
    assert!(responder.is_answered());
    drop(responder);
    assert_eq!(peer.expect().await["result"], "one");
    // Nothing else was sent for request 1: the next frame answers request 2.
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "m"}))
        .await;
    let (_req, responder) = parked.take().await;
    responder.respond(Ok(raw(json!("x")))).expect("answer");
    assert_eq!(peer.expect().await["id"], 2);
}

#[tokio::test]
async fn a_dropped_responder_answers_internal_error() {
    let parked = Parked::default();
    let (_conn, mut peer) = connect_raw(parked.clone(), ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": "d", "method": "m"}))
        .await;
    let (_req, responder) = parked.take().await;
    drop(responder);
    let answer = peer.expect().await;
    assert_eq!(answer["id"], "d");
    assert_eq!(answer["error"]["code"], -32603);
}

#[tokio::test]
async fn a_panicking_handler_answers_internal_error_and_the_connection_survives() {
    struct Panics;
    impl Handler for Panics {
        fn on_request(&self, request: IncomingRequest, _responder: Responder) {
            if request.method == "boom" {
                panic!("handler bug");
            }
        }
    }
    let events = Events::default();
    let (_conn, mut peer) = connect_raw(Panics, events.options());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "boom"}))
        .await;
    assert_eq!(peer.expect().await["error"]["code"], -32603);
    events.wait_for("handler bug").await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "fine"}))
        .await;
    // Dropped without answer, so -32603 again, but from a live connection.
    assert_eq!(peer.expect().await["id"], 2);
}

#[tokio::test]
async fn unknown_methods_get_method_not_found_with_the_method_in_data() {
    let (_conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "_vendor/thing"}))
        .await;
    let answer = peer.expect().await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(answer["error"]["data"]["method"], "_vendor/thing");
}

#[tokio::test]
async fn responses_with_unknown_or_missing_ids_are_reported_and_ignored() {
    let events = Events::default();
    let (conn, mut peer) = connect_raw(FnHandler::new(), events.options());
    peer.send(json!({"jsonrpc": "2.0", "id": 999, "result": {}}))
        .await;
    // An error object without an id, as one real agent sends for unknown
    // notifications.
    peer.send(json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": "nope"}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": "not-ours", "result": 1}))
        .await;
    events.wait_for("Number(999)").await;
    events.wait_for("id: None").await;
    events.wait_for("not-ours").await;
    // The connection still works, and nothing was sent back for those.
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("after", &json!({})).await }
    });
    let request = peer.expect().await;
    assert_eq!(request["method"], "after");
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": "ok"}))
        .await;
    let result = within("call", call).await.expect("task").expect("ok");
    assert_eq!(result.get(), "\"ok\"");
}
