//! The WebSocket client: `ws://` and `wss://` (or an `http(s)://` URL with
//! `prefer_websocket`). The handshake is made before [`connect`] returns,
//! so a refused token (401), a wrong path (404) or a server that does not
//! upgrade fails the connect with a typed [`RemoteError`].
//!
//! Interop notes: both official servers return `Acp-Connection-Id` in the
//! 101 response; it is not needed afterwards (the socket is the
//! connection). No subprotocol is asked for. No `Origin` is sent, as
//! non-browser clients do (the Rust crate's server refuses any `Origin` by
//! default).

use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::dial::{self, Target};
use super::websocket::{self, PumpSettings};
use super::{ClientOptions, RemoteError, RemoteErrorKind, pipe};
use crate::transport::Transport;

pub(crate) async fn connect(
    target: &Target,
    options: &ClientOptions,
) -> Result<Transport, RemoteError> {
    let stream = dial::dial(target, options, &[b"http/1.1"]).await?;
    let mut request = target.url.as_str().into_client_request().map_err(|e| {
        RemoteError::new(
            RemoteErrorKind::InvalidUrl,
            format!("`{}`: {e}", target.url),
        )
    })?;
    for (name, value) in &options.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| {
            RemoteError::new(RemoteErrorKind::InvalidUrl, format!("header `{name}`: {e}"))
        })?;
        let value = HeaderValue::from_str(value).map_err(|e| {
            RemoteError::new(RemoteErrorKind::InvalidUrl, format!("header `{name}`: {e}"))
        })?;
        request.headers_mut().append(name, value);
    }
    let config = websocket::config(options.max_message_size);
    let handshake = tokio_tungstenite::client_async_with_config(request, stream, Some(config));
    let where_ = target.url.as_str();
    let (ws, _response) = match tokio::time::timeout(options.handshake_timeout, handshake).await {
        Err(_) => {
            return Err(RemoteError::new(
                RemoteErrorKind::Timeout,
                format!(
                    "the WebSocket handshake with {where_} took longer than {:?}",
                    options.handshake_timeout
                ),
            ));
        }
        Ok(Err(tungstenite::Error::Http(response))) => {
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            let what = format!("{where_} did not upgrade to WebSocket");
            return Err(RemoteError::status(
                response.status().as_u16(),
                &what,
                &body,
            ));
        }
        Ok(Err(e)) => {
            return Err(RemoteError::new(
                RemoteErrorKind::Http,
                format!("the WebSocket handshake with {where_} failed: {e}"),
            ));
        }
        Ok(Ok(done)) => done,
    };
    let (transport, inbound, outbound) = pipe::pipe(options.queue);
    let settings = PumpSettings {
        keepalive: options.keepalive_interval,
        idle_timeout: options.keepalive_interval * 2,
        peer: "the server",
    };
    tokio::spawn(websocket::pump(
        ws,
        inbound,
        outbound,
        settings,
        CancellationToken::new(),
    ));
    Ok(transport)
}
