//! The WebSocket side of the endpoint: a GET with `Upgrade: websocket`
//! becomes one remote connection (RFC 6455 over HTTP/1.1).
//!
//! Interop notes: the 101 carries `Acp-Connection-Id` (as both official
//! servers send it), no subprotocol and no extension (the Rust crate's
//! client refuses a 101 naming either). Unlike the TypeScript server, the
//! first message need not be `initialize`: the engine answers anything
//! before it under the phase rules, as on stdio. Unlike the Rust crate's
//! server, libacp sends pings (every `keepalive_interval`) and a close
//! frame when the agent's connection ends (1000) or the server shuts down
//! (1001); a message over `max_message_size` closes the connection (1009).

use std::net::SocketAddr;
use std::sync::Arc;

use ::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming as Body;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::{ResponseBody, Shared, full, plain};
use crate::remote::websocket::{self, PumpSettings};
use crate::remote::{CONNECTION_ID_HEADER, RemoteKind};

/// Answers an upgrade request: 101 and a task that serves the socket, or
/// the refusal.
pub(super) fn upgrade(
    shared: Arc<Shared>,
    mut request: Request<Body>,
    remote: SocketAddr,
) -> Response<ResponseBody> {
    let headers = request.headers();
    if request.method() != ::http::Method::GET {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "a WebSocket upgrade is a GET",
        );
    }
    let version_ok = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_some_and(|v| v.as_bytes() == b"13");
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return plain(StatusCode::BAD_REQUEST, "Sec-WebSocket-Key is missing");
    };
    if !version_ok {
        let mut response = plain(
            StatusCode::UPGRADE_REQUIRED,
            "Sec-WebSocket-Version must be 13",
        );
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    }
    let accept = derive_accept_key(key.as_bytes());
    let Some((connection_id, live, inbound, outbound)) =
        shared.open(RemoteKind::WebSocket, remote, headers.clone())
    else {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is full or shutting down",
        );
    };
    let on_upgrade = hyper::upgrade::on(&mut request);
    let settings = PumpSettings {
        keepalive: shared.options.keepalive_interval,
        idle_timeout: shared.options.idle_timeout,
        peer: "the client",
    };
    let config = websocket::config(shared.options.max_message_size);
    let task_shared = Arc::clone(&shared);
    let task_live = Arc::clone(&live);
    tokio::spawn(async move {
        if let Ok(upgraded) = on_upgrade.await {
            let ws = WebSocketStream::from_raw_socket(
                TokioIo::new(upgraded),
                Role::Server,
                Some(config),
            )
            .await;
            let stop = task_live.stop.clone();
            websocket::pump_tracked(
                ws,
                inbound,
                outbound,
                settings,
                stop,
                Some(Arc::clone(&task_live)),
            )
            .await;
        }
        task_shared.close(&task_live);
    });
    let mut response = Response::new(full(""));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    if let Ok(v) = HeaderValue::from_str(&connection_id) {
        h.insert(CONNECTION_ID_HEADER, v);
    }
    response
}
