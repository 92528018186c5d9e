//! An ACP v1 agent written with libacp-core's raw JSON API, serving on its
//! stdin/stdout: the libacp side when the official Rust SDK's client drives it.
//!
//! Same behaviour as `official-rust-agent`:
//! * `initialize`: protocol version 1, `loadSession: false`.
//! * `session/new`: a fresh session id.
//! * `session/prompt` with `stream N`: N `agent_message_chunk` updates
//!   (`chunk 0` .. `chunk N-1`), then `end_turn`.
//! * `session/prompt` with `read PATH`: `fs/read_text_file` to the client, the
//!   content streamed back as one chunk, then `end_turn`.
//!
//! Exits (code 0) once the client closes its stdin.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use libacp_core::{
    Connection, ConnectionOptions, FnHandler, IncomingRequest, Peer, RpcError, Transport,
};
use serde_json::{Value, json};

async fn send_chunk(peer: &Peer, session_id: &Value, text: &str) -> Result<(), RpcError> {
    peer.notify(
        "session/update",
        &json!({
            "sessionId": session_id,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text},
            },
        }),
    )
    .await?;
    Ok(())
}

async fn prompt(request: IncomingRequest) -> Result<Value, RpcError> {
    let params: Value = request.params_as()?;
    let session_id = params
        .get("sessionId")
        .cloned()
        .ok_or_else(|| RpcError::invalid_params("missing sessionId"))?;
    let text = params
        .get("prompt")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        })
        .and_then(|b| b.get("text"))
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("the prompt has no text block"))?;
    let peer = &request.peer;
    if let Some(n) = text.strip_prefix("stream ") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| RpcError::invalid_params(format!("bad count in {text:?}")))?;
        for i in 0..n {
            send_chunk(peer, &session_id, &format!("chunk {i}")).await?;
        }
    } else if let Some(path) = text.strip_prefix("read ") {
        let result: Value = peer
            .request(
                "fs/read_text_file",
                &json!({"sessionId": session_id, "path": path.trim()}),
            )
            .decode()
            .await?;
        let content = result
            .get("content")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::internal_error("fs/read_text_file result has no content"))?;
        send_chunk(peer, &session_id, content).await?;
    } else {
        return Err(RpcError::invalid_params(format!("unknown prompt {text:?}")));
    }
    Ok(json!({"stopReason": "end_turn"}))
}

#[tokio::main]
async fn main() {
    let sessions = Arc::new(AtomicU64::new(0));
    let handler = FnHandler::new().on_request(move |request: IncomingRequest| {
        let sessions = Arc::clone(&sessions);
        async move {
            match request.method.as_str() {
                "initialize" => Ok(json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": false},
                    "authMethods": [],
                })),
                "session/new" => {
                    let n = sessions.fetch_add(1, Ordering::Relaxed);
                    Ok(json!({"sessionId": format!("libacp-session-{n}")}))
                }
                "session/prompt" => prompt(request).await,
                other => Err(RpcError::method_not_found(other)),
            }
        }
    });
    let conn = Connection::start(Transport::stdio(), handler, ConnectionOptions::default());
    let reason = conn.closed().await;
    conn.terminated().await;
    eprintln!("libacp-echo-agent: connection closed: {reason}");
}
