//! The wire-trace hook sees every frame in both directions, and extension
//! methods (`_`-prefixed) and `_meta` pass through untouched.

use std::sync::{Arc, Mutex};

use libacp_core::{ConnectionOptions, Direction, FnHandler};
use libacp_tests::{connect_pair, connect_raw, raw, within};
use serde_json::json;

#[tokio::test]
async fn the_trace_hook_sees_every_frame_both_ways() {
    let frames = Arc::new(Mutex::new(Vec::new()));
    let sink = frames.clone();
    let options = ConnectionOptions {
        trace: Some(Arc::new(move |dir: Direction, frame: &[u8]| {
            sink.lock()
                .expect("frames")
                .push((dir, String::from_utf8_lossy(frame).into_owned()));
        })),
        ..ConnectionOptions::default()
    };
    let handler = FnHandler::new().on_request(|_r| async { Ok(raw(json!("pong"))) });
    let (_conn, mut peer) = connect_raw(handler, options);
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await;
    peer.expect().await;
    peer.send_raw(b"not json\n").await;
    peer.expect().await;
    let frames = frames.lock().expect("frames").clone();
    assert_eq!(
        frames,
        vec![
            (Direction::Incoming, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned()),
            (Direction::Outgoing, r#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#.to_owned()),
            (Direction::Incoming, "not json".to_owned()),
            (
                Direction::Outgoing,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"expected ident at line 1 column 2"}}"#
                    .to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn extension_methods_and_meta_pass_through_byte_for_byte() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = FnHandler::new()
        .on_request({
            let seen = seen.clone();
            move |req| {
                seen.lock().expect("seen").push((
                    req.method.clone(),
                    req.params.as_ref().map(|p| p.get().to_owned()),
                ));
                async move { Ok(req.params.unwrap_or_else(|| raw(json!(null)))) }
            }
        })
        .on_notification({
            let seen = seen.clone();
            move |n| {
                seen.lock().expect("seen").push((
                    n.method.clone(),
                    n.params.as_ref().map(|p| p.get().to_owned()),
                ));
                async {}
            }
        });
    let (client, _agent) = connect_pair(
        FnHandler::new(),
        ConnectionOptions::default(),
        agent,
        ConnectionOptions::default(),
    );
    let params = r#"{"_meta":{"zed.dev":{"x":[1,2.50,"\u00e9"]}},"custom":true}"#;
    let raw_params = serde_json::value::RawValue::from_string(params.to_owned()).expect("raw");
    client
        .notify_raw("_zed/notice", Some(raw_params.clone()))
        .await
        .expect("notify");
    let result = within(
        "ext request",
        client.request_raw("_vendor/do", Some(raw_params)),
    )
    .await
    .expect("ok");
    assert_eq!(result.get(), params);
    let seen = seen.lock().expect("seen").clone();
    assert_eq!(
        seen,
        vec![
            ("_zed/notice".to_owned(), Some(params.to_owned())),
            ("_vendor/do".to_owned(), Some(params.to_owned())),
        ]
    );
}

#[tokio::test]
async fn scalar_params_fail_locally_and_nothing_is_sent() {
    let (conn, mut peer) = connect_raw(FnHandler::new(), ConnectionOptions::default());
    let err = within("call", conn.request("m", &json!(5)))
        .await
        .expect_err("invalid");
    assert!(
        matches!(err, libacp_core::CallError::InvalidParams(_)),
        "{err:?}"
    );
    conn.notify("marker", &json!({})).await.expect("notify");
    assert_eq!(peer.expect().await["method"], "marker");
}
