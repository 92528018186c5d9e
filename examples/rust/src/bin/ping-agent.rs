//! A minimal agent on stdio, built on libacp-core's JSON-RPC engine. It
//! answers `initialize`, and `_libacp/ping` by first sending a
//! `_libacp/tick` notification and then the pong: the client's ordering
//! guarantee means it always sees the tick before the pong. Logs go to
//! stderr; stdout carries only frames.

use libacp_core::{Connection, ConnectionOptions, FnHandler, RpcError, Transport};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    let handler = FnHandler::new().on_request(|req| async move {
        match req.method.as_str() {
            "initialize" => {
                eprintln!("ping-agent: initialize");
                to_raw(json!({
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": false},
                    "agentInfo": {"name": "libacp-ping-agent", "version": env!("CARGO_PKG_VERSION")},
                    "authMethods": []
                }))
            }
            "_libacp/ping" => {
                let params: Value = req.params_as()?;
                let n = params["n"].as_u64().unwrap_or(0);
                req.peer
                    .notify("_libacp/tick", &json!({ "n": n }))
                    .await
                    .map_err(|e| RpcError::internal_error(e.to_string()))?;
                to_raw(json!({ "pong": n }))
            }
            other => Err(RpcError::method_not_found(other)),
        }
    });
    let conn = Connection::start(Transport::stdio(), handler, ConnectionOptions::default());
    let reason = conn.closed().await;
    conn.terminated().await; // what was answered is written before exiting
    eprintln!("ping-agent: connection closed ({reason}), exiting");
}

fn to_raw(v: Value) -> Result<Box<libacp_core::RawValue>, RpcError> {
    serde_json::value::to_raw_value(&v).map_err(|e| RpcError::internal_error(e.to_string()))
}
