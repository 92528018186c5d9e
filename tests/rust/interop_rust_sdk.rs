//! Interop at the JSON-RPC engine level with the official Rust ACP SDK
//! (`agent-client-protocol` 5.0.0) over real OS pipes: a bare libacp-core
//! `Connection` (no protocol layer) drives the SDK's agent; streamed updates
//! are all handled before the prompt's response, and a nested
//! `fs/read_text_file` round trip works. The protocol-level interop, both
//! directions, is in `interop_sdks.rs`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use libacp_core::{
    AgentCommand, Connection, ConnectionOptions, FnHandler, IncomingNotification, IncomingRequest,
    RawValue, RpcError,
};
use serde_json::{Value, json};

/// Upper bound of every await in these tests.
const LIMIT: Duration = Duration::from_secs(30);
const STREAM_COUNT: usize = 200;
const READ_PATH: &str = "/tmp/x";
const FILE_CONTENT: &str = "hello from the libacp client\nline two";

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {LIMIT:?}"))
}

/// What the libacp client's handler saw, in order.
#[derive(Debug, Default)]
struct Seen {
    /// `(sessionId, text)` of each `agent_message_chunk`; any other update
    /// is recorded as its JSON.
    updates: Vec<(String, String)>,
    /// Paths asked for with `fs/read_text_file`.
    reads: Vec<String>,
    /// Requests or notifications other than those.
    unexpected: Vec<String>,
}

type Shared = Arc<Mutex<Seen>>;

fn lock(seen: &Shared) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(PoisonError::into_inner)
}

fn chunk_of(params: &Value) -> (String, String) {
    let sid = params["sessionId"].as_str().unwrap_or("<no sessionId>");
    let update = &params["update"];
    let text = match (
        update["sessionUpdate"].as_str(),
        update["content"]["type"].as_str(),
        update["content"]["text"].as_str(),
    ) {
        (Some("agent_message_chunk"), Some("text"), Some(text)) => text.to_owned(),
        _ => format!("<other update {update}>"),
    };
    (sid.to_owned(), text)
}

fn client_handler(seen: &Shared) -> FnHandler {
    let on_note = Arc::clone(seen);
    let on_req = Arc::clone(seen);
    FnHandler::new()
        .on_notification(move |n: IncomingNotification| {
            let seen = Arc::clone(&on_note);
            async move {
                if n.method != "session/update" {
                    lock(&seen).unexpected.push(n.method);
                    return;
                }
                let params: Value = n.params_as().unwrap_or(Value::Null);
                let count = {
                    let mut seen = lock(&seen);
                    seen.updates.push(chunk_of(&params));
                    seen.updates.len()
                };
                // A slow handler now and then: a response delivered without
                // waiting for earlier notifications would overtake these.
                if count % 25 == 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        })
        .on_request(move |r: IncomingRequest| {
            let seen = Arc::clone(&on_req);
            async move {
                if r.method != "fs/read_text_file" {
                    lock(&seen).unexpected.push(r.method.clone());
                    return Err(RpcError::method_not_found(&r.method));
                }
                let params: Value = r.params_as()?;
                let path = params["path"]
                    .as_str()
                    .ok_or_else(|| RpcError::invalid_params("no path"))?;
                lock(&seen).reads.push(path.to_owned());
                libacp_core::json::to_raw(&json!({ "content": FILE_CONTENT }))
                    .map_err(|e| RpcError::internal_error(e.to_string()))
            }
        })
}

fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("results are JSON")
}

async fn prompt(conn: &Connection, session_id: &str, text: &str) -> Value {
    let result = within(
        text,
        conn.request(
            "session/prompt",
            &json!({
                "sessionId": session_id,
                "prompt": [{ "type": "text", "text": text }],
            }),
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("session/prompt {text:?} failed: {e}"));
    parse(&result)
}

/// libacp-core client -> official SDK agent.
#[tokio::test(flavor = "multi_thread")]
async fn libacp_client_drives_official_agent() {
    let seen = Shared::default();
    let conn = Connection::spawn(
        &AgentCommand::new(env!("CARGO_BIN_EXE_official-rust-agent")),
        client_handler(&seen),
        ConnectionOptions::default(),
    )
    .expect("spawn official-rust-agent");

    let init = within(
        "initialize",
        conn.request(
            "initialize",
            &json!({
                "protocolVersion": 1,
                "clientCapabilities": { "fs": { "readTextFile": true, "writeTextFile": true } },
            }),
        ),
    )
    .await
    .expect("initialize");
    let init = parse(&init);
    assert_eq!(init["protocolVersion"], json!(1), "initialize: {init}");
    assert_eq!(
        init["agentCapabilities"]["loadSession"],
        json!(true),
        "initialize: {init}"
    );

    let session = within(
        "session/new",
        conn.request("session/new", &json!({ "cwd": "/", "mcpServers": [] })),
    )
    .await
    .expect("session/new");
    let session = parse(&session);
    let session_id = session["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("session/new gave no sessionId: {session}"))
        .to_owned();

    // Every update sent before the response was handled before it returned.
    let result = prompt(&conn, &session_id, &format!("stream {STREAM_COUNT}")).await;
    let updates = std::mem::take(&mut lock(&seen).updates);
    assert_eq!(result, json!({ "stopReason": "end_turn" }));
    let expected: Vec<(String, String)> = (0..STREAM_COUNT)
        .map(|i| (session_id.clone(), format!("chunk {i}")))
        .collect();
    assert_eq!(
        updates.len(),
        STREAM_COUNT,
        "updates handled before the prompt's response"
    );
    assert_eq!(updates, expected, "updates out of order or malformed");

    // A nested agent -> client request served by the libacp handler.
    let result = prompt(&conn, &session_id, &format!("read {READ_PATH}")).await;
    assert_eq!(result, json!({ "stopReason": "end_turn" }));
    {
        let seen = lock(&seen);
        assert_eq!(seen.reads, [READ_PATH]);
        assert_eq!(
            seen.updates,
            [(session_id.clone(), FILE_CONTENT.to_owned())],
            "the file content, echoed before the response"
        );
        assert!(
            seen.unexpected.is_empty(),
            "unexpected: {:?}",
            seen.unexpected
        );
    }

    let status = conn.process().cloned().expect("a spawned agent");
    within("close", conn.close()).await;
    let exit = within("agent exit", status.wait()).await;
    assert!(
        exit.success(),
        "the official agent should exit 0 once its stdin closes, got {exit}"
    );
    assert_eq!(
        lock(&seen).updates.len(),
        1,
        "no updates after the response"
    );
}
