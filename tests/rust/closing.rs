//! Closing: pending calls fail at once with a "connection closed" error when
//! the transport ends or the host closes, new calls fail immediately, close
//! is idempotent, and answers to requests received before the peer's end of
//! stream are still written.

use std::time::Duration;

use libacp_core::{CallError, CloseReason, ConnectionError, ConnectionOptions, FnHandler};
use libacp_tests::{connect_raw, raw, still_pending, within};
use serde_json::json;

fn is_closed(err: &CallError) -> bool {
    matches!(err, CallError::Connection(ConnectionError::Closed(_)))
}

#[tokio::test]
async fn peer_end_of_stream_fails_pending_calls_at_once() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let c = conn.clone();
            tokio::spawn(async move { c.request("wait", &json!({ "i": i })).await })
        })
        .collect();
    for _ in 0..3 {
        peer.expect().await;
    }
    peer.close_write().await;
    for call in calls {
        let err = within("pending call fails", call)
            .await
            .expect("task")
            .expect_err("no answer can come");
        assert_eq!(
            err,
            CallError::Connection(ConnectionError::Closed(CloseReason::PeerClosed))
        );
    }
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
    // New calls fail immediately, without waiting.
    let err = within("new call", conn.request("late", &json!({})))
        .await
        .expect_err("closed");
    assert!(is_closed(&err), "{err:?}");
    let err = within("notify", conn.notify("late", &json!({})))
        .await
        .expect_err("closed");
    assert!(is_closed(&err), "{err:?}");
}

#[tokio::test]
async fn dropping_the_peer_entirely_fails_pending_calls() {
    let (conn, peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = tokio::spawn({
        let c = conn.clone();
        async move { c.request("wait", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(peer);
    let err = within("fails", call)
        .await
        .expect("task")
        .expect_err("closed");
    assert!(is_closed(&err), "{err:?}");
}

#[tokio::test]
async fn local_close_fails_pending_calls_and_is_idempotent() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let call = tokio::spawn({
        let c = conn.clone();
        async move { c.request("wait", &json!({})).await }
    });
    peer.expect().await;
    within("close", conn.close()).await;
    within("close again", conn.close()).await;
    let err = within("fails", call)
        .await
        .expect("task")
        .expect_err("closed");
    assert_eq!(
        err,
        CallError::Connection(ConnectionError::Closed(CloseReason::Local))
    );
    assert_eq!(conn.close_reason(), Some(CloseReason::Local));
    // The peer sees end of stream.
    assert_eq!(peer.recv().await, None);
}

#[tokio::test]
async fn dropping_the_last_connection_handle_closes_it() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let peer_handle = conn.peer();
    drop(conn);
    assert_eq!(peer.recv().await, None);
    assert_eq!(
        within("closed", peer_handle.closed()).await,
        CloseReason::Local
    );
}

#[tokio::test]
async fn answers_to_requests_received_before_end_of_stream_are_still_written() {
    let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
    let handler = FnHandler::new().on_request(move |req| {
        let mut gate = gate_rx.clone();
        async move {
            let _ = gate.wait_for(|open| *open).await;
            Ok(raw(json!({ "answered": req.method })))
        }
    });
    let (conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "slow"}))
        .await;
    peer.close_write().await;
    // Still open: a request is being handled.
    assert!(still_pending(conn.closed(), Duration::from_millis(100)).await);
    gate_tx.send_replace(true);
    assert_eq!(peer.expect().await["result"]["answered"], "slow");
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
    assert_eq!(peer.recv().await, None);
}

#[tokio::test]
async fn handlers_are_cancelled_when_the_connection_closes() {
    let keep = std::sync::Arc::new(Keep(std::sync::Mutex::new(Vec::new())));
    let (conn, mut peer) = connect_raw(keep.clone(), ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "forever"}))
        .await;
    within("dispatched", async {
        while keep.0.lock().expect("keep").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    let (token, responder) = keep.0.lock().expect("keep").pop().expect("request");
    assert!(!token.is_cancelled());
    within("close", conn.close()).await;
    assert!(token.is_cancelled());
    assert_eq!(
        responder.respond(Ok(raw(json!(1)))),
        Err(libacp_core::RespondError::Closed)
    );
}

#[tokio::test]
async fn after_end_of_stream_handlers_are_cancelled_and_the_wait_is_bounded() {
    let keep = std::sync::Arc::new(Keep(std::sync::Mutex::new(Vec::new())));
    let options = ConnectionOptions {
        flush_timeout: Duration::from_millis(200),
        ..ConnectionOptions::default()
    };
    let (conn, mut peer) = connect_raw(keep.clone(), options);
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "never_answered"}))
        .await;
    within("dispatched", async {
        while keep.0.lock().expect("keep").is_empty() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
    peer.close_write().await;
    let (token, _responder) = keep.0.lock().expect("keep").pop().expect("request");
    within("handler told to stop", token.cancelled()).await;
    // The handler holds its responder and never answers: the connection
    // still closes once the grace period is over.
    assert_eq!(
        within("closed", conn.closed()).await,
        CloseReason::PeerClosed
    );
}

/// Keeps every request's token and responder, answering nothing.
struct Keep(std::sync::Mutex<Vec<(libacp_core::CancellationToken, libacp_core::Responder)>>);
impl libacp_core::Handler for Keep {
    fn on_request(&self, req: libacp_core::IncomingRequest, responder: libacp_core::Responder) {
        self.0
            .lock()
            .expect("keep")
            .push((req.cancellation, responder));
    }
}

/// The close is reported before the connection counts as terminated: a
/// host that stops listening once it terminated (the host inbox queues
/// `Closed` then and refuses what comes after) still hears it, however
/// late the closing thread gets to its report (it is the last step of the
/// close; under load that thread can be preempted while the writer, on
/// another thread, finishes: the Python `closed` event was lost this way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_closed_event_is_reported_before_the_connection_terminates() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use libacp_core::Event;

    let heard = Arc::new(AtomicBool::new(false));
    let events: libacp_core::EventHook = Arc::new({
        let heard = Arc::clone(&heard);
        move |event: &Event| {
            if matches!(event, Event::Closed(_)) {
                // A closing thread slow to report (preempted).
                std::thread::sleep(Duration::from_millis(300));
                heard.store(true, Ordering::SeqCst);
            }
        }
    });
    let options = ConnectionOptions {
        events: Some(events),
        ..ConnectionOptions::default()
    };
    let (conn, _peer) = connect_raw(FnHandler::new(), options);
    let peer = conn.peer();
    let closing = tokio::spawn(async move { conn.close().await });
    within("terminated", peer.terminated()).await;
    assert!(
        heard.load(Ordering::SeqCst),
        "the connection terminated before its close was reported"
    );
    within("close", closing).await.expect("the close task");
}
