//! Framing over a live connection: oversized and malformed frames are
//! answered and skipped while the connection keeps going; CRLF, the final
//! unterminated line and Content-Length framing all work end to end.

use libacp_core::{ConnectionOptions, FnHandler, Framing, RpcError};
use libacp_tests::{Events, connect_pair, connect_raw, raw, value, within};
use serde_json::json;

fn echo() -> FnHandler {
    FnHandler::new().on_request(|req| async move {
        Ok(req
            .params
            .unwrap_or_else(|| raw(json!({ "method": req.method }))))
    })
}

fn ping(id: u64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"n": id}})
}

#[tokio::test]
async fn oversized_request_is_answered_with_its_id_and_the_connection_continues() {
    let events = Events::default();
    let options = ConnectionOptions {
        max_frame_size: 1024,
        ..events.options()
    };
    let (_conn, mut peer) = connect_raw(echo(), options);
    let big = "x".repeat(100_000);
    peer.send(json!({"jsonrpc": "2.0", "method": "ping", "params": {"t": big}, "id": "big-1"}))
        .await;
    let answer = peer.expect().await;
    assert_eq!(answer["id"], "big-1");
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(answer["error"]["data"]["limit"], 1024);
    events.wait_for("OversizedFrame").await;

    peer.send(ping(2)).await;
    assert_eq!(
        peer.expect().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"n": 2}})
    );
}

#[tokio::test]
async fn oversized_notification_is_reported_not_answered() {
    let events = Events::default();
    let options = ConnectionOptions {
        max_frame_size: 512,
        ..events.options()
    };
    let (_conn, mut peer) = connect_raw(echo(), options);
    let big = "n".repeat(10_000);
    peer.send(json!({"jsonrpc": "2.0", "method": "note", "params": {"t": big}}))
        .await;
    peer.send(ping(1)).await;
    // The first thing back is the answer to the ping: nothing for the note.
    assert_eq!(peer.expect().await["id"], 1);
    assert!(
        events
            .wait_for("OversizedFrame")
            .await
            .contains("answered: false")
    );
}

#[tokio::test]
async fn oversized_response_fails_the_call_instead_of_hanging() {
    let options = ConnectionOptions {
        max_frame_size: 256,
        ..ConnectionOptions::default()
    };
    let (conn, mut peer) = connect_raw(FnHandler::new(), options);
    let call = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request("get", &json!({})).await }
    });
    let request = peer.expect().await;
    let big = "r".repeat(5_000);
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"t": big}}))
        .await;
    let result = within("call", call).await.expect("task");
    let err = result.expect_err("too large");
    assert_eq!(err.rpc_code(), Some(-32603));
}

#[tokio::test]
async fn invalid_json_gets_parse_error_with_null_id_and_connection_survives() {
    let (_conn, mut peer) = connect_raw(echo(), ConnectionOptions::default());
    peer.send_raw(b"{this is not json\n").await;
    let answer = peer.expect().await;
    assert_eq!(answer["id"], serde_json::Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    peer.send(ping(1)).await;
    assert_eq!(peer.expect().await["result"]["n"], 1);
}

#[tokio::test]
async fn non_request_json_gets_invalid_request() {
    let (_conn, mut peer) = connect_raw(echo(), ConnectionOptions::default());
    for (frame, id) in [
        ("42", json!(null)),
        ("[]", json!(null)),
        (r#"{"jsonrpc":"2.0","id":9}"#, json!(9)),
        (r#"{"jsonrpc":"2.0","id":10,"method":7}"#, json!(10)),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"m","params":"str"}"#,
            json!(11),
        ),
    ] {
        peer.send_raw(format!("{frame}\n").as_bytes()).await;
        let answer = peer.expect().await;
        assert_eq!(answer["error"]["code"], -32600, "{frame}");
        assert_eq!(answer["id"], id, "{frame}");
    }
    peer.send(ping(1)).await;
    assert_eq!(peer.expect().await["result"]["n"], 1);
}

#[tokio::test]
async fn crlf_and_final_line_without_newline_are_delivered() {
    let (_conn, mut peer) = connect_raw(echo(), ConnectionOptions::default());
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n")
        .await;
    assert_eq!(peer.expect().await["result"]["method"], "a");
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"last\"}")
        .await;
    peer.close_write().await;
    // Answered even though the line never ended and the stream did.
    assert_eq!(peer.expect().await["result"]["method"], "last");
}

#[tokio::test]
async fn content_length_framing_end_to_end() {
    let options = || ConnectionOptions {
        framing: Framing::ContentLength,
        ..ConnectionOptions::default()
    };
    let (client, _agent) = connect_pair(FnHandler::new(), options(), echo(), options());
    let text = "multi-byte: \u{e9}\u{1F600}\nline two";
    let result = within("request", client.request("echo", &json!({"text": text})))
        .await
        .expect("answer");
    assert_eq!(value(&result), json!({"text": text}));
}

#[tokio::test]
async fn large_frames_under_the_limit_arrive_intact() {
    let (client, _agent) = connect_pair(
        FnHandler::new(),
        ConnectionOptions::default(),
        echo(),
        ConnectionOptions::default(),
    );
    let big = "\"quoted\" line\n".repeat(8 * 1024 * 1024 / 14);
    let result = within("8 MiB echo", client.request("echo", &json!({"t": big})))
        .await
        .expect("answer");
    assert_eq!(value(&result)["t"].as_str().map(str::len), Some(big.len()));
}

#[tokio::test]
async fn errors_from_handlers_reach_the_caller_with_code_and_data() {
    let agent = FnHandler::new().on_request(|_req| async move {
        Err::<(), _>(
            RpcError::new(-32002, "Resource not found").with_data(json!({"sessionId": "s9"})),
        )
    });
    let (client, _agent) = connect_pair(
        FnHandler::new(),
        ConnectionOptions::default(),
        agent,
        ConnectionOptions::default(),
    );
    let err = within("call", client.request("session/prompt", &json!({})))
        .await
        .expect_err("error");
    match err {
        libacp_core::CallError::Rpc(e) => {
            assert_eq!(e.code, -32002);
            assert_eq!(e.data, Some(json!({"sessionId": "s9"})));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn large_and_small_frames_batched_together_arrive_intact_in_order_in_both_framings() {
    // Frames of 256 KiB and more are written from their own bytes, the
    // small ones around them through the batch buffer. The twelve are
    // queued synchronously (`try_notify_raw`), so the writer takes them as
    // one batch; the peer must read them intact and in the order queued.
    for framing in [Framing::Ndjson, Framing::ContentLength] {
        let options = || ConnectionOptions {
            framing,
            ..ConnectionOptions::default()
        };
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let agent = FnHandler::new().on_notification({
            let seen = seen.clone();
            move |n| {
                let seen = seen.clone();
                async move {
                    let v = n.params_as::<serde_json::Value>().expect("params");
                    seen.lock().expect("seen").push(v);
                }
            }
        });
        let (client, _agent) = connect_pair(FnHandler::new(), options(), agent, options());
        let sent: Vec<_> = (0..12usize)
            .map(|i| {
                let size = if i % 3 == 1 { 300_000 + i * 7919 } else { i };
                json!({"i": i, "t": "\"q\" \\ ".repeat(size / 6 + 1)})
            })
            .collect();
        let peer = client.peer();
        for params in &sent {
            let queued = peer.try_notify_raw("n", Some(raw(params.clone())));
            assert!(
                matches!(queued, Ok(libacp_core::TryNotify::Sent)),
                "{framing:?}"
            );
        }
        within("all twelve", async {
            while seen.lock().expect("seen").len() < sent.len() {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(
            *seen.lock().expect("seen") == sent,
            "{framing:?}: out of order or altered"
        );
    }
}

/// A Content-Length peer that dies in the middle of a header: the partial
/// header is reported, the connection closes as an ordinary end of stream
/// and pending calls fail (the decoder used to panic there, killing the
/// reader task and leaving every call pending).
#[tokio::test]
async fn a_content_length_peer_dying_inside_a_header_closes_the_connection_cleanly() {
    for partial in ["Content-Len", "Content-Length: 40\r\n"] {
        let events = Events::default();
        let options = ConnectionOptions {
            framing: Framing::ContentLength,
            ..events.options()
        };
        let (conn, mut peer) = connect_raw(echo(), options);
        let call = conn.request("pending", &json!({}));
        peer.send_raw(partial.as_bytes()).await;
        peer.close_write().await;
        assert_eq!(
            within("closed", conn.closed()).await,
            libacp_core::CloseReason::PeerClosed,
            "{partial:?}"
        );
        assert!(
            within("the pending call", call).await.is_err(),
            "{partial:?}"
        );
        assert!(
            events
                .wait_for("BadHeader")
                .await
                .contains("inside a header"),
            "{partial:?}"
        );
    }
}

/// Params with a raw newline inside a number the JSON parser cannot hold
/// (out of f64 range) still leave as one NDJSON line: the compaction of
/// host text never falls back to the raw text.
#[tokio::test]
async fn host_params_with_newlines_and_huge_numbers_leave_as_one_line() {
    let (conn, peer) = connect_raw(echo(), ConnectionOptions::default());
    let (mut reader, _writer) = peer.into_parts();
    let text = "{\"protocolVersion\": 1,\n \"clientCapabilities\": {}, \"x\": 1e999}";
    let params = libacp_core::json::parse_host_json(text).expect("valid JSON");
    let _call = conn.request_raw("initialize", Some(params));
    // A Rust user building raw text by hand gets the same guarantee.
    let raw = libacp_core::RawValue::from_string("[1,\n2]".into()).expect("json");
    let _call2 = conn.request_raw("m", Some(raw));
    let mut line = String::new();
    within(
        "line",
        tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut line),
    )
    .await
    .expect("read");
    assert_eq!(
        line,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{},\"x\":1e999}}\n"
    );
    line.clear();
    within(
        "line",
        tokio::io::AsyncBufReadExt::read_line(&mut reader, &mut line),
    )
    .await
    .expect("read");
    assert_eq!(
        line,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[1,2]}\n"
    );
}
