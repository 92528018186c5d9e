//! The remote server: one endpoint (default `/acp`) on a TCP listener,
//! plain or TLS, serving WebSocket (a GET with `Upgrade: websocket`) and
//! Streamable HTTP (POST, GET event streams, DELETE) over HTTP/1.1 and
//! HTTP/2 (h2c on plain TCP, ALPN over TLS). Each remote connection gets a
//! [`Transport`] from a pipe (`../pipe.rs`), handed to the host's
//! [`AgentFactory`], which starts one agent connection on it.
//!
//! Checks, in this order, before any agent code runs: the path (404), the
//! `Origin` (403 unless allowed: browser access is off by default), the
//! credentials (401: the bearer tokens, then the [`AuthHook`]), the
//! `Acp-Protocol-Version` (400 for a version not served), the connection
//! limit (503). Then the transport's own rules (`ws.rs`, `http.rs`).
//!
//! **Isolation.** Each remote connection has its own pipe, queues and
//! tasks; one that fails, floods or stalls touches no other.
//!
//! **Shutdown** ([`Server::shutdown`]): the listener closes; connections
//! with no request of the client's waiting for an answer close at once,
//! the others when their last answer has gone out or the grace period
//! ([`ServerOptions::shutdown_grace`]) ends, whichever comes first.

mod http;
mod ws;

use std::any::Any;
use std::collections::HashSet;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::http::{HeaderMap, Request, Response, StatusCode, header};
use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

use super::pipe::{self, Inbound, Outbound};
use super::{DEFAULT_PATH, PROTOCOL_VERSION_HEADER, PROTOCOL_VERSIONS, RemoteKind};
use crate::rpc::lock;
use crate::transport::Transport;

/// A response body: whole, or an event stream.
pub(crate) type ResponseBody = UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// Checks a request's headers before anything else runs; `Err` carries the
/// reason, answered 401. Called on the runtime's threads, for every HTTP
/// request and WebSocket upgrade: do not block.
pub type AuthHook = Arc<dyn Fn(&HeaderMap) -> Result<(), String> + Send + Sync>;

/// What a server serves with. `Default` gives the values in each field's
/// doc.
#[derive(Clone)]
pub struct ServerOptions {
    /// The endpoint's path. Default `/acp`.
    pub path: String,
    /// A PEM certificate chain: with `tls_key`, the server speaks TLS only.
    /// Default: none (plain TCP).
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// `Origin` values allowed (exactly, for example
    /// `https://editor.example`); `*` allows any. A request without an
    /// `Origin` (every non-browser client) is always allowed. Default:
    /// none, so browsers are refused (403).
    pub allowed_origins: Vec<String>,
    /// Bearer tokens accepted in `Authorization: Bearer ...`; when any is
    /// set, a request without one of them is refused (401) before any agent
    /// code runs. Default: none (no token needed).
    pub bearer_tokens: Vec<String>,
    /// A further check of each request's headers (after the tokens).
    pub authenticate: Option<AuthHook>,
    /// Remote connections served at once; one more is refused with 503.
    /// Default 4096.
    pub max_connections: usize,
    /// Largest message (POST body, WebSocket message) accepted, in bytes;
    /// a larger POST is refused with 413, a larger WebSocket message closes
    /// that connection (1009). Default 64 MiB.
    pub max_message_size: usize,
    /// A connection from which nothing arrived for this long (no message,
    /// no pong, no open event stream) is closed. Default 60 s.
    pub idle_timeout: Duration,
    /// WebSocket pings and SSE keep-alive comments, so proxies keep quiet
    /// connections open. Default 20 s.
    pub keepalive_interval: Duration,
    /// Messages queued per direction and per stream before the sender
    /// waits. Default 1024.
    pub queue: usize,
    /// On [`Server::shutdown`], how long connections with requests in
    /// flight may take to answer them. Default 10 s.
    pub shutdown_grace: Duration,
    /// Serve WebSocket upgrades. Default true.
    pub websocket: bool,
    /// Serve Streamable HTTP. Default true.
    pub streamable_http: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            tls_cert: None,
            tls_key: None,
            allowed_origins: Vec::new(),
            bearer_tokens: Vec::new(),
            authenticate: None,
            max_connections: 4096,
            max_message_size: crate::framing::DEFAULT_MAX_FRAME_SIZE,
            idle_timeout: Duration::from_secs(60),
            keepalive_interval: Duration::from_secs(20),
            queue: 1024,
            shutdown_grace: Duration::from_secs(10),
            websocket: true,
            streamable_http: true,
        }
    }
}

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerOptions")
            .field("path", &self.path)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("allowed_origins", &self.allowed_origins)
            .field("bearer_tokens", &self.bearer_tokens.len())
            .field("authenticate", &self.authenticate.is_some())
            .field("max_connections", &self.max_connections)
            .field("max_message_size", &self.max_message_size)
            .field("idle_timeout", &self.idle_timeout)
            .field("keepalive_interval", &self.keepalive_interval)
            .field("queue", &self.queue)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("websocket", &self.websocket)
            .field("streamable_http", &self.streamable_http)
            .finish_non_exhaustive()
    }
}

/// A remote connection, for the [`AgentFactory`] to serve.
#[derive(Debug)]
pub struct Incoming {
    /// The transport to start the agent connection on (NDJSON framing).
    pub transport: Transport,
    /// The connection's `Acp-Connection-Id`.
    pub connection_id: String,
    /// WebSocket or Streamable HTTP.
    pub kind: RemoteKind,
    /// The client's address.
    pub remote_addr: SocketAddr,
    /// The headers of the request that made the connection (the upgrade,
    /// or the `initialize` POST).
    pub headers: HeaderMap,
}

/// Starts one agent per remote connection. The value it returns (an
/// `AgentConnection`, an `AcpConnection`, a child process) is kept until the
/// connection has ended, then dropped.
pub trait AgentFactory: Send + Sync + 'static {
    /// Starts serving `incoming`. Called on a runtime thread: start the
    /// connection and return, do not wait for it.
    fn start(&self, incoming: Incoming) -> Box<dyn Any + Send>;
}

impl<F, T> AgentFactory for F
where
    F: Fn(Incoming) -> T + Send + Sync + 'static,
    T: Send + 'static,
{
    fn start(&self, incoming: Incoming) -> Box<dyn Any + Send> {
        Box::new(self(incoming))
    }
}

/// One remote connection's life, seen by the server.
pub(crate) struct Live {
    /// Requests of the client's not answered yet (ids), for shutdown.
    in_flight: Mutex<HashSet<String>>,
    /// Closes the connection (a server shutting down, DELETE, idle).
    pub(crate) stop: CancellationToken,
    /// Cancelled once the connection is gone and its agent dropped.
    pub(crate) gone: CancellationToken,
    guard: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Live {
    /// A request from the client went in.
    pub(crate) fn asked(&self, id: &str) {
        lock(&self.in_flight).insert(id.to_owned());
    }

    /// The agent answered `id`.
    pub(crate) fn answered(&self, id: &str) {
        lock(&self.in_flight).remove(id);
    }

    fn idle(&self) -> bool {
        lock(&self.in_flight).is_empty()
    }
}

pub(crate) struct Shared {
    pub(crate) options: ServerOptions,
    factory: Box<dyn AgentFactory>,
    live: Mutex<Vec<Arc<Live>>>,
    count: AtomicUsize,
    next_id: AtomicUsize,
    /// Stop accepting (shutdown begun).
    pub(crate) accepting: CancellationToken,
    /// Close everything now, writing nothing more (the server was dropped).
    pub(crate) closing: CancellationToken,
    pub(crate) http: http::Registry,
}

impl Shared {
    /// Makes a connection: its pipe, its agent, its place in the books.
    /// `None` when the server is full or shutting down.
    pub(crate) fn open(
        self: &Arc<Self>,
        kind: RemoteKind,
        remote_addr: SocketAddr,
        headers: HeaderMap,
    ) -> Option<(String, Arc<Live>, Inbound, Outbound)> {
        if self.accepting.is_cancelled() {
            return None;
        }
        let taken = self.count.fetch_add(1, Ordering::SeqCst);
        if taken >= self.options.max_connections {
            self.count.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection_id = connection_id(n);
        let (transport, inbound, outbound) = pipe::pipe(self.options.queue);
        let incoming = Incoming {
            transport,
            connection_id: connection_id.clone(),
            kind,
            remote_addr,
            headers,
        };
        let live = Arc::new(Live {
            in_flight: Mutex::new(HashSet::new()),
            stop: CancellationToken::new(),
            gone: CancellationToken::new(),
            guard: Mutex::new(None),
        });
        lock(&self.live).push(Arc::clone(&live));
        let guard = self.factory.start(incoming);
        *lock(&live.guard) = Some(guard);
        Some((connection_id, live, inbound, outbound))
    }

    /// The connection has ended: its agent is dropped, its place freed.
    pub(crate) fn close(&self, live: &Arc<Live>) {
        let guard = lock(&live.guard).take();
        drop(guard);
        let mut all = lock(&self.live);
        if let Some(at) = all.iter().position(|l| Arc::ptr_eq(l, live)) {
            all.swap_remove(at);
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
        drop(all);
        live.gone.cancel();
    }
}

/// A fresh, unguessable-enough connection id: 128 bits from the OS.
fn connection_id(n: usize) -> String {
    let mut bytes = [0u8; 16];
    // SAFETY: `bytes` is a valid writable buffer of its length.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        // No randomness: unique all the same (never a credential).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = (t ^ (n as u128).rotate_left(64)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A running server. Dropping it stops accepting and closes every
/// connection at once; [`Server::shutdown`] does it gracefully.
pub struct Server {
    shared: Arc<Shared>,
    local_addr: SocketAddr,
    tls: bool,
    /// Cancelled to close every connection now.
    closing: CancellationToken,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .field("tls", &self.tls)
            .field("connections", &self.connections())
            .finish()
    }
}

impl Server {
    /// Listens on `addr` and serves remote connections with `factory`.
    /// Errors: the address cannot be bound; the TLS files cannot be read
    /// or do not make an identity (`InvalidInput`). Must be called within
    /// a Tokio runtime; the server's tasks run there.
    pub async fn bind(
        addr: impl ToSocketAddrs,
        options: ServerOptions,
        factory: impl AgentFactory,
    ) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        Self::from_listener(listener, options, factory)
    }

    /// Serves on a listener the host bound.
    pub fn from_listener(
        listener: TcpListener,
        options: ServerOptions,
        factory: impl AgentFactory,
    ) -> std::io::Result<Server> {
        let tls = match (&options.tls_cert, &options.tls_key) {
            (Some(cert), Some(key)) => Some(tokio_rustls::TlsAcceptor::from(
                super::tls::server_config(cert, key)?,
            )),
            (None, None) => None,
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "tls_cert and tls_key go together",
                ));
            }
        };
        let local_addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            options,
            factory: Box::new(factory),
            live: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            next_id: AtomicUsize::new(0),
            accepting: CancellationToken::new(),
            closing: CancellationToken::new(),
            http: http::Registry::default(),
        });
        let closing = shared.closing.clone();
        let server = Server {
            shared: Arc::clone(&shared),
            local_addr,
            tls: tls.is_some(),
            closing: closing.clone(),
        };
        tokio::spawn(accept_loop(listener, shared, tls, closing));
        Ok(server)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL for `kind` (`ws://`, `wss://`, `http://`,
    /// `https://`), with the listening address as host.
    pub fn url(&self, kind: RemoteKind) -> String {
        let scheme = match (kind, self.tls) {
            (RemoteKind::WebSocket, false) => "ws",
            (RemoteKind::WebSocket, true) => "wss",
            (RemoteKind::StreamableHttp, false) => "http",
            (RemoteKind::StreamableHttp, true) => "https",
        };
        format!("{scheme}://{}{}", self.local_addr, self.shared.options.path)
    }

    /// Remote connections open now.
    pub fn connections(&self) -> usize {
        self.shared.count.load(Ordering::SeqCst)
    }

    /// Stops accepting, lets connections answer what they were asked for
    /// (up to [`ServerOptions::shutdown_grace`]), closes them, and returns
    /// once every agent was dropped (or 5 s after the grace).
    pub async fn shutdown(&self) {
        self.shared.accepting.cancel();
        let deadline = tokio::time::Instant::now() + self.shared.options.shutdown_grace;
        loop {
            let all: Vec<Arc<Live>> = lock(&self.shared.live).clone();
            for live in &all {
                if live.idle() {
                    live.stop.cancel();
                }
            }
            if all.iter().all(|l| l.stop.is_cancelled()) || tokio::time::Instant::now() >= deadline
            {
                for live in &all {
                    live.stop.cancel();
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let wait_gone = async {
            loop {
                let next = lock(&self.shared.live).first().cloned();
                match next {
                    Some(live) => live.gone.cancelled().await,
                    None => break,
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), wait_gone).await;
        self.closing.cancel();
    }
}

impl Drop for Server {
    /// Closes everything at once, as if the process died: sockets first, so
    /// that nothing the agents write while they wind down goes out.
    fn drop(&mut self) {
        self.closing.cancel();
        self.shared.accepting.cancel();
        for live in lock(&self.shared.live).iter() {
            live.stop.cancel();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    closing: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = shared.accepting.cancelled() => return,
        };
        let (tcp, remote) = match accepted {
            Ok(pair) => pair,
            // Out of descriptors and the like: wait a little, go on.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let shared = Arc::clone(&shared);
        let tls = tls.clone();
        let closing = closing.clone();
        tokio::spawn(async move {
            let serve = async {
                match tls {
                    None => serve_connection(shared, tcp, remote).await,
                    Some(acceptor) => {
                        let handshake = acceptor.accept(tcp);
                        let timeout = shared.options.idle_timeout;
                        if let Ok(Ok(stream)) = tokio::time::timeout(timeout, handshake).await {
                            serve_connection(shared, stream, remote).await;
                        }
                    }
                }
            };
            tokio::select! {
                () = serve => {}
                () = closing.cancelled() => {}
            }
        });
    }
}

/// Serves one TCP (or TLS) connection: HTTP/1.1 with upgrades, or HTTP/2.
async fn serve_connection<S>(shared: Arc<Shared>, stream: S, remote: SocketAddr)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request: Request<Body>| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, std::convert::Infallible>(route(shared, request, remote).await) }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30))
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(Duration::from_secs(20)));
    let _ = builder
        .serve_connection_with_upgrades(TokioIo::new(stream), service)
        .await;
}

/// The endpoint: the checks every request passes, then the transport.
async fn route(
    shared: Arc<Shared>,
    request: Request<Body>,
    remote: SocketAddr,
) -> Response<ResponseBody> {
    if request.uri().path() != shared.options.path {
        return plain(StatusCode::NOT_FOUND, "no ACP endpoint here");
    }
    if let Some(refused) = check(&shared.options, request.headers()) {
        return refused;
    }
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if upgrade {
        if !shared.options.websocket {
            return plain(StatusCode::NOT_IMPLEMENTED, "WebSocket is not served here");
        }
        return ws::upgrade(shared, request, remote);
    }
    if !shared.options.streamable_http {
        return plain(
            StatusCode::NOT_IMPLEMENTED,
            "Streamable HTTP is not served here",
        );
    }
    http::handle(shared, request, remote).await
}

/// Origin, credentials, protocol version: `Some(refusal)` or `None`.
fn check(options: &ServerOptions, headers: &HeaderMap) -> Option<Response<ResponseBody>> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let allowed = options
            .allowed_origins
            .iter()
            .any(|a| a == "*" || a.eq_ignore_ascii_case(origin));
        if !allowed {
            return Some(plain(
                StatusCode::FORBIDDEN,
                &format!("the Origin `{origin}` is not allowed"),
            ));
        }
    }
    if !options.bearer_tokens.is_empty() {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        let ok = given.is_some_and(|g| {
            options
                .bearer_tokens
                .iter()
                .any(|t| same(t.as_bytes(), g.as_bytes()))
        });
        if !ok {
            return Some(unauthorized("a valid bearer token is required"));
        }
    }
    if let Some(hook) = &options.authenticate
        && let Err(why) = hook(headers)
    {
        return Some(unauthorized(&why));
    }
    if let Some(version) = headers.get(PROTOCOL_VERSION_HEADER) {
        let version = version.to_str().unwrap_or_default();
        if !PROTOCOL_VERSIONS.contains(&version.trim()) {
            return Some(plain(
                StatusCode::BAD_REQUEST,
                &format!(
                    "unsupported Acp-Protocol-Version `{version}` (served: {})",
                    PROTOCOL_VERSIONS.join(", ")
                ),
            ));
        }
    }
    None
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn unauthorized(why: &str) -> Response<ResponseBody> {
    let mut response = plain(StatusCode::UNAUTHORIZED, why);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        ::http::HeaderValue::from_static("Bearer"),
    );
    response
}

pub(crate) fn full(body: impl Into<Bytes>) -> ResponseBody {
    Full::new(body.into()).boxed_unsync()
}

/// A plain-text response.
pub(crate) fn plain(status: StatusCode, text: &str) -> Response<ResponseBody> {
    let mut response = Response::new(full(format!("{text}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
