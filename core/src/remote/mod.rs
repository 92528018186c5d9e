//! Remote ACP: WebSocket and Streamable HTTP, client and server
//! (`spec/rfds/streamable-http-websocket-transport.mdx`).
//!
//! A remote connection is one more [`Transport`] under the
//! same engine: [`connect`] gives a client a transport to start a
//! connection on, a [`Server`] hands one transport per remote connection to
//! an [`AgentFactory`]. Between the network and the engine sits a message
//! pipe (`pipe.rs`), so every rule the engine enforces on stdio (limits,
//! validation, ordering, cancellation, exactly-once answers) holds remotely
//! unchanged.
//!
//! Layout:
//! * `pipe.rs`: messages to and from the engine's NDJSON byte stream;
//! * `dial.rs`: URL, DNS, TCP, TLS, each failure typed ([`RemoteError`]);
//! * `tls.rs`: rustls configurations (platform roots plus a CA file;
//!   certificate and key files for a server);
//! * `ws_client.rs`, `http_client.rs`: the two client transports;
//! * `server/`: the listener, one endpoint routing POST, GET, DELETE and the
//!   WebSocket upgrade; limits, Origin, authentication, shutdown;
//! * `route.rs`: what the Streamable HTTP transport reads of a message to
//!   route it (kind, id, method, session).
//!
//! Where the RFD and the official implementations (the Rust crate
//! `agent-client-protocol-http` 5.0.0, the TypeScript SDK 2.4.0) differ,
//! interop decides; each difference is written down in the module of the
//! side it concerns (`http_client.rs`, `server/http.rs`, `server/ws.rs`).

mod dial;
mod http_client;
mod pipe;
mod route;
pub mod server;
mod tls;
mod websocket;
mod ws_client;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use server::{AgentFactory, AuthHook, Incoming, Server, ServerOptions};

/// What the fuzz targets (`fuzz/fuzz_targets/remote_route.rs`) reach of
/// the remote transports' handling of untrusted bytes: not part of the API.
#[doc(hidden)]
pub mod fuzzing {
    pub use super::pipe::one_line;
    pub use super::route::{Kind, Peeked, engine_response_id, is_batch, peek};
}

use crate::error::ConnectionError;
use crate::transport::Transport;

/// The one endpoint the RFD names; both official servers serve it.
pub const DEFAULT_PATH: &str = "/acp";

/// Header carrying the transport connection's id (returned by `initialize`
/// over HTTP, by the upgrade over WebSocket).
pub const CONNECTION_ID_HEADER: &str = "acp-connection-id";
/// Header carrying the session a POST or a GET stream is scoped to.
pub const SESSION_ID_HEADER: &str = "acp-session-id";
/// Header carrying the ACP protocol version after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "acp-protocol-version";

/// The protocol versions this transport serves (`Acp-Protocol-Version`).
pub const PROTOCOL_VERSIONS: &[&str] = &["1"];

/// What a remote client connects with. `Default` gives the values in each
/// field's doc.
#[derive(Clone)]
pub struct ClientOptions {
    /// Extra HTTP headers sent on the handshake and on every HTTP request
    /// (for example `Authorization: Bearer ...`). Default: none.
    pub headers: Vec<(String, String)>,
    /// A PEM file of extra CA certificates trusted beside the platform's
    /// roots (for `wss://` and `https://`). Default: none.
    pub ca_file: Option<PathBuf>,
    /// DNS plus TCP connect, per attempt. Default 10 s.
    pub connect_timeout: Duration,
    /// TLS plus the HTTP or WebSocket handshake. Default 10 s.
    pub handshake_timeout: Duration,
    /// For `http://` and `https://` URLs: try a WebSocket upgrade on the
    /// same URL first, and fall back to Streamable HTTP when the server does
    /// not upgrade. Default false (the scheme decides: `ws`/`wss` are
    /// WebSocket, `http`/`https` Streamable HTTP).
    pub prefer_websocket: bool,
    /// Speak HTTP/2 without TLS (h2c, prior knowledge) on `http://`. Over
    /// TLS HTTP/2 is chosen by ALPN whenever the server offers it. Default
    /// false: the TypeScript SDK's server speaks HTTP/1.1 only.
    pub http2_prior_knowledge: bool,
    /// WebSocket pings, and nothing else: a server that answers no ping for
    /// twice this long is taken as gone. Default 20 s.
    pub keepalive_interval: Duration,
    /// Largest message accepted from the server, in bytes. Default 64 MiB.
    pub max_message_size: usize,
    /// Messages queued per direction between the network and the engine.
    /// Default 1024.
    pub queue: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            ca_file: None,
            connect_timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
            prefer_websocket: false,
            http2_prior_knowledge: false,
            keepalive_interval: Duration::from_secs(20),
            max_message_size: crate::framing::DEFAULT_MAX_FRAME_SIZE,
            queue: 1024,
        }
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values may be credentials: names only.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ClientOptions")
            .field("headers", &names)
            .field("ca_file", &self.ca_file)
            .field("connect_timeout", &self.connect_timeout)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("prefer_websocket", &self.prefer_websocket)
            .field("http2_prior_knowledge", &self.http2_prior_knowledge)
            .field("keepalive_interval", &self.keepalive_interval)
            .field("max_message_size", &self.max_message_size)
            .field("queue", &self.queue)
            .finish()
    }
}

/// What went wrong while connecting to a remote agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RemoteErrorKind {
    /// The URL does not parse, or its scheme is not ws, wss, http or https.
    InvalidUrl,
    /// The host name did not resolve.
    Dns,
    /// Nobody listens there (connection refused, unreachable).
    Refused,
    /// The connect or handshake timeout passed.
    Timeout,
    /// The TLS handshake failed (unknown CA, wrong name, bad file).
    Tls,
    /// 401: the credentials were missing or refused.
    Unauthorized,
    /// 403: refused (an Origin not allowed, a forbidden client).
    Forbidden,
    /// 404: no ACP endpoint at that path, or an unknown connection.
    NotFound,
    /// The server refused the ACP protocol version.
    VersionRefused,
    /// Another HTTP status, or an answer that is not ACP's transport.
    Http,
    /// Reading or writing the socket failed.
    Io,
}

impl RemoteErrorKind {
    /// A stable lower-case name, the same in every binding.
    pub fn name(self) -> &'static str {
        match self {
            Self::InvalidUrl => "invalid_url",
            Self::Dns => "dns",
            Self::Refused => "refused",
            Self::Timeout => "timeout",
            Self::Tls => "tls",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::VersionRefused => "version_refused",
            Self::Http => "http",
            Self::Io => "io",
        }
    }
}

/// A failed remote connect: a kind to branch on, the HTTP status when one
/// was received, and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// What went wrong.
    pub kind: RemoteErrorKind,
    /// The HTTP status, when the server answered with one.
    pub status: Option<u16>,
    /// What happened, with the URL's host and the OS or TLS error text.
    pub message: String,
}

impl RemoteError {
    pub(crate) fn new(kind: RemoteErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            status: None,
            message: message.into(),
        }
    }

    /// The error for an HTTP status the handshake did not expect.
    pub(crate) fn status(status: u16, what: &str, body: &str) -> Self {
        let kind = match status {
            401 => RemoteErrorKind::Unauthorized,
            403 => RemoteErrorKind::Forbidden,
            404 => RemoteErrorKind::NotFound,
            _ if body.contains("rotocol version") || body.contains("Acp-Protocol-Version") => {
                RemoteErrorKind::VersionRefused
            }
            _ => RemoteErrorKind::Http,
        };
        let body = body.trim();
        let detail = if body.is_empty() {
            String::new()
        } else {
            let cut: String = body.chars().take(200).collect();
            format!(": {cut}")
        };
        Self {
            kind,
            status: Some(status),
            message: format!("{what}: HTTP {status}{detail}"),
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

impl From<RemoteError> for ConnectionError {
    fn from(e: RemoteError) -> Self {
        ConnectionError::Remote(e)
    }
}

/// Which transport a URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteKind {
    /// `ws://`, `wss://`.
    WebSocket,
    /// `http://`, `https://`: POST, GET (SSE) and DELETE on one endpoint.
    StreamableHttp,
}

impl RemoteKind {
    /// The name every binding uses: `"websocket"` or `"http"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::WebSocket => "websocket",
            Self::StreamableHttp => "http",
        }
    }

    /// The kind named `name` (see [`RemoteKind::name`]; `"ws"` and
    /// `"streamable_http"` are accepted too).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "websocket" | "ws" => Some(Self::WebSocket),
            "http" | "streamable_http" => Some(Self::StreamableHttp),
            _ => None,
        }
    }
}

/// Connects to a remote agent at `url` and returns the transport to start
/// a client connection on (`ClientConnection::start`,
/// `AcpConnection::start(Role::Client, ...)`). The scheme picks the
/// transport; with [`ClientOptions::prefer_websocket`] an `http(s)` URL is
/// tried as WebSocket first.
///
/// Over WebSocket the handshake is made here; over Streamable HTTP the
/// first POST is the engine's `initialize`, so a refused token or a wrong
/// path shows as the failure of that call (with the same typed error in
/// its close reason) instead.
///
/// Must be called within a Tokio runtime; the transport's tasks run there.
pub async fn connect(url: &str, options: &ClientOptions) -> Result<Transport, RemoteError> {
    let target = dial::Target::parse(url)?;
    match target.kind {
        RemoteKind::WebSocket => ws_client::connect(&target, options).await,
        RemoteKind::StreamableHttp if options.prefer_websocket => {
            let ws = target.as_websocket();
            match ws_client::connect(&ws, options).await {
                Ok(transport) => Ok(transport),
                // Not upgraded: the server speaks Streamable HTTP only.
                Err(e)
                    if e.kind == RemoteErrorKind::Http || e.kind == RemoteErrorKind::NotFound =>
                {
                    http_client::connect(&target, options).await
                }
                Err(e) => Err(e),
            }
        }
        RemoteKind::StreamableHttp => http_client::connect(&target, options).await,
    }
}
