//! Any byte stream is a transport: Unix and TCP sockets carry a connection.

use libacp_core::{Connection, ConnectionOptions, FnHandler, Transport};
use libacp_tests::{raw, value, within};
use serde_json::json;

fn echo() -> FnHandler {
    FnHandler::new()
        .on_request(|req| async move { Ok(req.params.unwrap_or_else(|| raw(json!(null)))) })
}

#[tokio::test]
async fn unix_socket_transport() {
    let dir = std::env::temp_dir().join(format!("libacp-sock-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("agent.sock");
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path).expect("bind");
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("accept");
        let conn = Connection::start(
            Transport::from_stream(stream),
            echo(),
            ConnectionOptions::default(),
        );
        conn.closed().await
    });
    let stream = tokio::net::UnixStream::connect(&path)
        .await
        .expect("connect");
    let client = Connection::start(
        Transport::from_stream(stream),
        FnHandler::new(),
        ConnectionOptions::default(),
    );
    let result = within("echo", client.request("echo", &json!({"over": "unix"})))
        .await
        .expect("ok");
    assert_eq!(value(&result), json!({"over": "unix"}));
    client.close().await;
    within("server sees close", server).await.expect("server");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tcp_socket_transport() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("accept");
        let conn = Connection::start(
            Transport::from_stream(stream),
            echo(),
            ConnectionOptions::default(),
        );
        conn.closed().await
    });
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let client = Connection::start(
        Transport::from_stream(stream),
        FnHandler::new(),
        ConnectionOptions::default(),
    );
    let result = within("echo", client.request("echo", &json!([1, 2, 3])))
        .await
        .expect("ok");
    assert_eq!(value(&result), json!([1, 2, 3]));
}
