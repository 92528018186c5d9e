//! `$/cancel_request` both ways. Outgoing: cancel and keep waiting, cancel
//! and abandon (late replies dropped), drop, timeout. Incoming: the handler
//! sees its token fire and the engine answers `-32800` unless the handler
//! answered first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::{
    CallError, CancelMode, CancellationToken, ConnectionOptions, FnHandler, RespondError,
};
use libacp_tests::{Events, Parked, connect_raw, raw, within};
use serde_json::json;

#[tokio::test]
async fn cancel_and_keep_waiting_sends_cancel_and_returns_the_peers_answer() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = conn.request("slow", &json!({}));
    let handle = call.cancel_handle();
    let task = tokio::spawn(call);
    let request = peer.expect().await;
    assert!(handle.cancel(CancelMode::KeepWaiting));
    let cancel = peer.expect().await;
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
    assert!(cancel.get("id").is_none(), "a notification");
    // Still waiting for the peer's verdict.
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(!task.is_finished());
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "error": {"code": -32800, "message": "Request cancelled"}}))
        .await;
    let err = within("answer", task)
        .await
        .expect("task")
        .expect_err("cancelled");
    assert_eq!(err.rpc_code(), Some(-32800));
}

#[tokio::test]
async fn cancel_and_abandon_resolves_at_once_and_drops_the_late_reply() {
    let events = Events::default();
    let (conn, mut peer) = connect_raw(FnHandler::new(), events.options());
    let call = conn.request("slow", &json!({}));
    let handle = call.cancel_handle();
    let task = tokio::spawn(call);
    let request = peer.expect().await;
    assert!(handle.cancel(CancelMode::Abandon));
    let err = within("abandoned", task)
        .await
        .expect("task")
        .expect_err("cancelled");
    assert_eq!(err, CallError::Cancelled);
    assert_eq!(peer.expect().await["method"], "$/cancel_request");
    assert!(
        !handle.cancel(CancelMode::Abandon),
        "nothing left to cancel"
    );
    // The late reply is reported and dropped; the connection carries on.
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": "late"}))
        .await;
    events.wait_for("UnmatchedResponse").await;
    let next = tokio::spawn({
        let c = conn.clone();
        async move { c.request("next", &json!({})).await }
    });
    let request = peer.expect().await;
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": "fresh"}))
        .await;
    assert_eq!(
        within("next", next).await.expect("task").expect("ok").get(),
        "\"fresh\""
    );
}

#[tokio::test]
async fn dropping_an_unanswered_call_cancels_it_at_the_peer() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = conn.request("slow", &json!({}));
    let abandoned = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(abandoned.is_err(), "timed out locally, dropping the call");
    let request = peer.expect().await;
    let cancel = peer.expect().await;
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn a_call_is_sent_when_made_so_cancelling_it_unawaited_sends_the_cancel_after_it() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = conn.request("made", &json!({}));
    assert!(call.cancel_handle().cancel(CancelMode::Abandon));
    assert_eq!(within("call", call).await.err(), Some(CallError::Cancelled));
    let request = peer.expect().await;
    assert_eq!(request["method"], "made");
    let cancel = peer.expect().await;
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn a_timeout_cancels_the_request_and_fails_the_call() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = conn
        .request("slow", &json!({}))
        .timeout(Duration::from_millis(50));
    let err = within("timeout", call).await.expect_err("timeout");
    assert_eq!(err, CallError::Timeout);
    let request = peer.expect().await;
    let cancel = peer.expect().await;
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn the_connection_default_timeout_applies_and_can_be_lifted() {
    let options = ConnectionOptions {
        request_timeout: Some(Duration::from_millis(30)),
        ..ConnectionOptions::default()
    };
    let (conn, mut peer) = connect_raw(FnHandler::new(), options);
    assert_eq!(
        within("default timeout", conn.request("a", &json!({})))
            .await
            .err(),
        Some(CallError::Timeout)
    );
    let patient = tokio::spawn({
        let c = conn.clone();
        async move { c.request("b", &json!({})).no_timeout().await }
    });
    peer.expect().await; // a
    peer.expect().await; // cancel of a
    let b = peer.expect().await;
    tokio::time::sleep(Duration::from_millis(80)).await;
    peer.send(json!({"jsonrpc": "2.0", "id": b["id"], "result": 1}))
        .await;
    assert!(within("b", patient).await.expect("task").is_ok());
}

#[tokio::test]
async fn incoming_cancel_fires_the_token_and_answers_request_cancelled() {
    let parked = Parked::default();
    let (_conn, mut peer) = connect_raw(parked.clone(), ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": "p1", "method": "session/prompt"}))
        .await;
    let (request, responder) = parked.take().await;
    let token: CancellationToken = request.cancellation.clone();
    assert!(!token.is_cancelled());
    peer.send(
        json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p1"}}),
    )
    .await;
    let answer = peer.expect().await;
    assert_eq!(answer["id"], "p1");
    assert_eq!(answer["error"]["code"], -32800);
    within("token", token.cancelled()).await;
    // The handler's own answer comes too late and is refused, not sent.
    assert_eq!(
        responder.respond(Ok(raw(json!("done")))),
        Err(RespondError::Cancelled)
    );
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "next"}))
        .await;
    let (_r, responder) = parked.take().await;
    responder.respond(Ok(raw(json!(2)))).expect("answer");
    assert_eq!(peer.expect().await["id"], 2);
}

#[tokio::test]
async fn cancel_after_the_answer_changes_nothing() {
    let events = Events::default();
    let handler = FnHandler::new().on_request(|_r| async { Ok(raw(json!("quick"))) });
    let (_conn, mut peer) = connect_raw(handler, events.options());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "m"}))
        .await;
    assert_eq!(peer.expect().await["result"], "quick");
    peer.send(json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}))
        .await;
    events.wait_for("CancelForUnknownRequest").await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "m"}))
        .await;
    // The next frame is the answer to 2: no stray -32800 for 1.
    assert_eq!(peer.expect().await["id"], 2);
}

#[tokio::test]
async fn fn_handlers_are_dropped_on_cancel() {
    let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
    let dropped_tx = Arc::new(Mutex::new(Some(dropped_tx)));
    struct OnDrop(Option<tokio::sync::oneshot::Sender<()>>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }
    let handler = FnHandler::new().on_request(move |_r| {
        let guard = OnDrop(dropped_tx.lock().expect("tx").take());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok(raw(json!(null)))
        }
    });
    let (_conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "forever"}))
        .await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    peer.send(json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}))
        .await;
    assert_eq!(peer.expect().await["error"]["code"], -32800);
    within("handler future dropped", dropped_rx)
        .await
        .expect("dropped");
}
