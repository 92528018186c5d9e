//! Ordering: notifications are handled in arrival order, one at a time; a
//! response is delivered only after every notification received before it
//! was handled; requests start in arrival order and run concurrently, so
//! handlers can await nested requests to the peer without deadlock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libacp_core::{CallOptions, ConnectionOptions, FnHandler, Handler, IncomingRequest, Responder};
use libacp_tests::{connect_pair, connect_raw, connect_socket, raw, value, within};
use serde_json::json;

#[tokio::test]
async fn notifications_are_handled_in_order_one_at_a_time() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Arc::new(AtomicUsize::new(0));
    let handler = FnHandler::new().on_notification({
        let seen = seen.clone();
        let running = running.clone();
        move |n| {
            let seen = seen.clone();
            let running = running.clone();
            async move {
                assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "overlap");
                let i = n.params_as::<serde_json::Value>().expect("params")["i"]
                    .as_u64()
                    .expect("i");
                // Yield so that an engine running handlers concurrently
                // would interleave them.
                if i % 7 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                tokio::task::yield_now().await;
                seen.lock().expect("seen").push(i);
                running.fetch_sub(1, Ordering::SeqCst);
            }
        }
    });
    let (_conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    for i in 0..300u64 {
        peer.send(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"i": i}}))
            .await;
    }
    within("all handled", async {
        while seen.lock().expect("seen").len() < 300 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(*seen.lock().expect("seen"), (0..300).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_response_waits_for_the_notifications_received_before_it() {
    let handled = Arc::new(AtomicUsize::new(0));
    let handler = FnHandler::new().on_notification({
        let handled = handled.clone();
        move |_n| {
            let handled = handled.clone();
            async move {
                // A slow UI: each update takes a while to render.
                tokio::time::sleep(Duration::from_millis(2)).await;
                handled.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let (conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    let prompt = tokio::spawn({
        let conn = conn.clone();
        let handled = handled.clone();
        async move {
            let result = conn.request("session/prompt", &json!({})).await;
            (result, handled.load(Ordering::SeqCst))
        }
    });
    let request = peer.expect().await;
    // 50 updates and the response, written back to back in one burst.
    let mut burst = Vec::new();
    for i in 0..50 {
        burst.extend(
            serde_json::to_vec(
                &json!({"jsonrpc": "2.0", "method": "session/update", "params": {"i": i}}),
            )
            .expect("json"),
        );
        burst.push(b'\n');
    }
    burst.extend(
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}}),
        )
        .expect("json"),
    );
    burst.push(b'\n');
    peer.send_raw(&burst).await;
    let (result, handled_before) = within("prompt", prompt).await.expect("task");
    assert_eq!(value(&result.expect("ok"))["stopReason"], "end_turn");
    assert_eq!(
        handled_before, 50,
        "prompt returned before its updates were handled"
    );
}

#[tokio::test]
async fn requests_start_in_arrival_order_and_run_concurrently() {
    let started = Arc::new(Mutex::new(Vec::new()));
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let handler = FnHandler::new().on_request({
        let started = started.clone();
        move |req| {
            started.lock().expect("started").push(req.method.clone());
            let mut release = release_rx.clone();
            async move {
                if req.method == "first" {
                    // Blocks until the *second* request has finished: only
                    // possible if they run concurrently.
                    let _ = release.wait_for(|r| *r).await;
                }
                Ok(raw(json!(req.method)))
            }
        }
    });
    let (_conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "first"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "second"}))
        .await;
    assert_eq!(peer.expect().await["id"], 2);
    release_tx.send_replace(true);
    assert_eq!(peer.expect().await["id"], 1);
    assert_eq!(*started.lock().expect("started"), vec!["first", "second"]);
}

#[tokio::test]
async fn a_request_handler_can_await_a_nested_request_to_the_peer() {
    // The agent, while handling session/prompt, asks the client for a file.
    let agent = FnHandler::new().on_request(|req| async move {
        let file = req
            .peer
            .request("fs/read_text_file", &json!({"path": "/tmp/a"}))
            .await
            .map_err(|e| libacp_core::RpcError::internal_error(e.to_string()))?;
        Ok(raw(
            json!({"stopReason": "end_turn", "read": value(&file)["content"]}),
        ))
    });
    let client = FnHandler::new().on_request(|req| async move {
        assert_eq!(req.method, "fs/read_text_file");
        Ok(raw(json!({"content": "file text"})))
    });
    let (client, _agent) = connect_pair(
        client,
        ConnectionOptions::default(),
        agent,
        ConnectionOptions::default(),
    );
    let result = within("prompt", client.request("session/prompt", &json!({})))
        .await
        .expect("ok");
    assert_eq!(value(&result)["read"], "file text");
}

#[tokio::test]
async fn a_notification_handler_can_await_a_request_to_the_peer() {
    // Responses to requests made from inside a notification handler skip the
    // ordering barrier; otherwise this would deadlock.
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let done_tx = Arc::new(Mutex::new(Some(done_tx)));
    let client = FnHandler::new().on_notification(move |n| {
        let done_tx = done_tx.clone();
        async move {
            let answer = n.peer.request("lookup", &json!({})).await;
            if let Some(tx) = done_tx.lock().expect("tx").take() {
                let _ = tx.send(answer.map(|r| value(&r)));
            }
        }
    });
    let agent = FnHandler::new().on_request(|_req| async move { Ok(raw(json!("found"))) });
    let (_client, agent) = connect_pair(
        client,
        ConnectionOptions::default(),
        agent,
        ConnectionOptions::default(),
    );
    agent
        .notify("session/update", &json!({}))
        .await
        .expect("notify");
    let answer = within("nested from notification", done_rx)
        .await
        .expect("sent");
    assert_eq!(answer.expect("ok"), json!("found"));
}

#[tokio::test]
async fn ping_pong_nesting_many_levels_deep() {
    // Each side answers "depth N" by asking the other for "depth N-1".
    #[derive(Clone)]
    struct Bounce;
    impl Handler for Bounce {
        fn on_request(&self, req: IncomingRequest, responder: Responder) {
            tokio::spawn(async move {
                let depth = req.params_as::<serde_json::Value>().expect("params")["depth"]
                    .as_u64()
                    .expect("depth");
                if depth == 0 {
                    let _ = responder.respond(Ok(raw(json!(0))));
                    return;
                }
                let inner = req
                    .peer
                    .request("bounce", &json!({ "depth": depth - 1 }))
                    .await
                    .expect("nested");
                let _ = responder.respond(Ok(raw(json!(value(&inner).as_u64().expect("n") + 1))));
            });
        }
    }
    let (a, _b) = connect_pair(
        Bounce,
        ConnectionOptions::default(),
        Bounce,
        ConnectionOptions::default(),
    );
    let result = within("deep", a.request("bounce", &json!({"depth": 40})))
        .await
        .expect("ok");
    assert_eq!(value(&result), json!(40));
}

#[tokio::test]
async fn a_call_made_with_skip_barrier_is_answered_while_a_notification_handler_blocks() {
    let (gate_tx, gate_rx) = tokio::sync::watch::channel(false);
    let handler = FnHandler::new().on_notification(move |_n| {
        let mut gate = gate_rx.clone();
        async move {
            let _ = gate.wait_for(|open| *open).await;
        }
    });
    let (conn, mut peer) = connect_raw(handler, ConnectionOptions::default());
    let p = conn.peer();
    let skip = CallOptions {
        skip_barrier: true,
        ..CallOptions::default()
    };
    let skipping = tokio::spawn(p.request_with("skip", None, skip));
    let ordered = tokio::spawn(p.request_raw("ordered", None));
    let mut ids = std::collections::HashMap::new();
    for _ in 0..2 {
        let req = within("request", peer.expect()).await;
        ids.insert(
            req["method"].as_str().expect("method").to_owned(),
            req["id"].clone(),
        );
    }
    // A notification whose handler blocks, then both answers.
    peer.send(json!({"jsonrpc": "2.0", "method": "n", "params": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": ids["ordered"], "result": {"which": "ordered"}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": ids["skip"], "result": {"which": "skip"}}))
        .await;
    let answer = within("the skipping call", skipping).await.expect("task");
    assert_eq!(value(&answer.expect("answer"))["which"], "skip");
    // The ordered call still waits for the blocked handler.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!ordered.is_finished(), "delivered ahead of the barrier");
    let _ = gate_tx.send(true);
    let answer = within("the ordered call", ordered).await.expect("task");
    assert_eq!(value(&answer.expect("answer"))["which"], "ordered");
}

/// Calls and notifications leave in the order they were made, whether the
/// transport is a descriptor (requests written directly by the calling
/// thread when the writer is idle) or a stream (everything through the
/// writer task), and whether or not the outgoing queue is full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_and_notifications_leave_in_the_order_they_were_made() {
    for queue in [1024, 2] {
        let options = ConnectionOptions {
            outgoing_queue: queue,
            ..ConnectionOptions::default()
        };
        let (socket_conn, socket_peer) = connect_socket(FnHandler::new(), options.clone());
        let (memory_conn, memory_peer) = connect_raw(FnHandler::new(), options);
        let (mut socket_reader, _w1) = socket_peer.into_parts();
        let (mut memory_reader, _w2) = memory_peer.into_parts();
        for (name, conn) in [("socket", &socket_conn), ("memory", &memory_conn)] {
            let mut calls = Vec::new();
            for i in 0..20 {
                // A request is queued when made, before it is awaited; the
                // notification after it must not overtake it.
                calls.push(conn.request("r", &json!({ "i": i })));
                conn.notify("n", &json!({ "i": i })).await.expect("notify");
            }
            let reader: &mut (dyn tokio::io::AsyncBufRead + Unpin + Send) = if name == "socket" {
                &mut socket_reader
            } else {
                &mut memory_reader
            };
            for i in 0..20 {
                for method in ["r", "n"] {
                    let mut line = String::new();
                    within(
                        "frame",
                        tokio::io::AsyncBufReadExt::read_line(reader, &mut line),
                    )
                    .await
                    .expect("read");
                    let frame: serde_json::Value = serde_json::from_str(&line).expect("json");
                    assert_eq!(
                        (frame["method"].as_str(), frame["params"]["i"].as_u64()),
                        (Some(method), Some(i)),
                        "{name} transport, queue {queue}: {frame}"
                    );
                }
            }
            drop(calls);
        }
    }
}
