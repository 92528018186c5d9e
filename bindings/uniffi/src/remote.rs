//! Remote ACP for Swift and Kotlin: [`remote_connect`] (a client reaching
//! an agent by URL) and [`Server`] (the core's `remote::Server`: WebSocket
//! and Streamable HTTP on one endpoint, one agent connection per remote
//! connection), with the core's options (`Use::Connect`, `Use::Serve`).
//! The transports, the server's checks, limits and shutdown are the core's;
//! this module converts values and threads.
//!
//! **Serving.** For each remote connection the core's server calls the
//! host's [`RemoteAgentFactory::on_connection`] on a libacp runtime thread
//! with an [`IncomingConnection`]: the host starts the agent connection on
//! it with [`IncomingConnection::start`] (giving its `HostHandler`, as
//! `Connection::from_fds` would) or refuses it with
//! [`IncomingConnection::reject`]. The server holds the started
//! `Connection` until the remote connection ends, so an agent runs as long
//! as its client stays, whoever else holds it.
//!
//! **Threads.** Every method may be called from any thread; the async ones
//! are driven by the host's runtime with libacp's entered (`runtime.rs`).

use std::sync::{Arc, Mutex};

use libacp_core::host::InboxHooks;
use libacp_core::options::Use;
use libacp_core::remote::{self, Incoming, RemoteKind};
use libacp_core::{AcpOptions, Role, Transport};

use crate::connection::Connection;
use crate::error::AcpError;
use crate::handler::HostHandler;
use crate::options::{self, ConnectOptions, lock};
use crate::runtime::{self, InRuntime};

/// Client side: connects to the remote agent at `url` (`ws://`, `wss://`,
/// `http://`, `https://`; the scheme picks the transport) with the remote
/// options of `options` (`headers`, `ca_file`, `connect_timeout_ms`,
/// `prefer_websocket`, ...), and returns the connection, in the client
/// role, once the transport is up. Options are checked first
/// (`InvalidArgument`); a failed connect throws [`AcpError::Remote`] with
/// its kind (`dns`, `refused`, `timeout`, `tls`, `unauthorized`, ...).
#[uniffi::export]
pub async fn remote_connect(
    url: String,
    handler: Arc<dyn HostHandler>,
    options: ConnectOptions,
) -> Result<Arc<Connection>, AcpError> {
    let runtime = runtime::handle()?;
    let parsed = options::settings(Role::Client, Use::Connect, &options)?;
    let transport = InRuntime::new(runtime, remote::connect(&url, &parsed.settings.remote)).await?;
    Ok(Connection::start(
        runtime,
        Role::Client,
        transport,
        handler,
        parsed.settings.acp,
        parsed.hooks,
    ))
}

/// Receives each remote connection of a [`Server`]; the host implements it.
#[uniffi::export(with_foreign)]
pub trait RemoteAgentFactory: Send + Sync {
    /// A remote client connected: start its agent with
    /// [`IncomingConnection::start`] (here or later, from any thread) or
    /// refuse it with [`IncomingConnection::reject`]; one dropped without
    /// either is refused. Called on a libacp runtime thread, possibly for
    /// several connections at once: return quickly, do not block. An error
    /// thrown here refuses the connection.
    fn on_connection(&self, incoming: Arc<IncomingConnection>) -> Result<(), AcpError>;
}

/// A remote connection waiting for its agent (see [`RemoteAgentFactory`]).
#[derive(uniffi::Object)]
pub struct IncomingConnection {
    /// Taken by `start`, dropped by `reject`.
    transport: Mutex<Option<Transport>>,
    /// The server's connection options.
    acp: AcpOptions,
    /// Which of the server's hooks each connection's handler gets.
    hooks: InboxHooks,
    /// What the core's server keeps until the remote connection ends.
    kept: Kept,
    connection_id: String,
    kind: RemoteKind,
    remote_address: String,
}

/// The agent connection a remote connection started, held by the core's
/// server until that connection ends (the factory's value in its terms).
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Option<Arc<Connection>>>>);

impl std::fmt::Debug for IncomingConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingConnection")
            .field("connection_id", &self.connection_id)
            .field("remote_address", &self.remote_address)
            .finish_non_exhaustive()
    }
}

#[uniffi::export]
impl IncomingConnection {
    /// Starts the agent connection on this remote connection with
    /// `handler`, once; [`AcpError::InvalidArgument`] if it was started or
    /// rejected already.
    pub fn start(&self, handler: Arc<dyn HostHandler>) -> Result<Arc<Connection>, AcpError> {
        let transport = lock(&self.transport).take().ok_or_else(|| {
            AcpError::argument("this remote connection was started or rejected already")
        })?;
        let runtime = runtime::handle()?;
        let acp = self.acp.clone();
        let conn = Connection::start(runtime, Role::Agent, transport, handler, acp, self.hooks);
        *lock(&self.kept.0) = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// Refuses the connection: it ends (the remote client sees it close).
    pub fn reject(&self) {
        lock(&self.transport).take();
    }

    /// The connection's `Acp-Connection-Id`.
    pub fn connection_id(&self) -> String {
        self.connection_id.clone()
    }

    /// `"websocket"` or `"http"` (the core's names, as in every binding).
    pub fn kind(&self) -> String {
        self.kind.name().to_owned()
    }

    /// The client's address, `host:port`.
    pub fn remote_address(&self) -> String {
        self.remote_address.clone()
    }
}

/// A remote ACP server (see the module docs). Closed at once when freed
/// (Kotlin `close()`, Swift `deinit`): the listener and every remote
/// connection, whose agent connections see the close.
#[derive(uniffi::Object)]
pub struct Server {
    runtime: &'static tokio::runtime::Handle,
    /// Taken (and dropped: closed at once) by `close`.
    server: Mutex<Option<Arc<remote::Server>>>,
    local_address: String,
    port: u16,
    urls: [String; 2],
}

/// Listens on `listen` (`"127.0.0.1:0"`: any free port on loopback) and
/// serves remote ACP there: WebSocket and Streamable HTTP on one endpoint
/// (the option `path`, default `/acp`). Each remote connection goes to
/// `factory`. The options that apply are those of every connection, of
/// agents and of a server (`bearer_tokens`, `allowed_origins`,
/// `max_connections`, `idle_timeout_ms`, `shutdown_grace_ms`, `tls_cert`
/// and `tls_key`, ...); others are refused (`InvalidArgument`). An address
/// that does not parse throws `InvalidArgument`, one that cannot be bound
/// (in use, not this machine's) [`AcpError::Remote`] of kind `io`.
#[uniffi::export]
pub async fn remote_serve(
    listen: String,
    factory: Arc<dyn RemoteAgentFactory>,
    options: ConnectOptions,
) -> Result<Arc<Server>, AcpError> {
    let runtime = runtime::handle()?;
    // No handler yet: the hooks go to each connection's own (`start`).
    let parsed = options::settings(Role::Agent, Use::Serve, &options)?;
    let acp = parsed.settings.acp;
    let hooks = parsed.hooks;
    let on_incoming = move |incoming: Incoming| -> Kept {
        let kept = Kept::default();
        let offered = Arc::new(IncomingConnection {
            transport: Mutex::new(Some(incoming.transport)),
            acp: acp.clone(),
            hooks,
            kept: kept.clone(),
            connection_id: incoming.connection_id,
            kind: incoming.kind,
            remote_address: incoming.remote_addr.to_string(),
        });
        if factory.on_connection(Arc::clone(&offered)).is_err() {
            offered.reject();
        }
        kept
    };
    let server = InRuntime::new(
        runtime,
        remote::Server::bind(listen.as_str(), parsed.settings.server, on_incoming),
    )
    .await
    .map_err(|e| {
        let detail = format!("could not serve on {listen}: {e}");
        // As the C ABI: an address that does not parse is an argument
        // error, one that cannot be bound (in use, not ours) an I/O one.
        if e.kind() == std::io::ErrorKind::InvalidInput {
            AcpError::InvalidArgument { detail }
        } else {
            AcpError::Remote {
                kind: "io".into(),
                status: None,
                detail,
            }
        }
    })?;
    let local = server.local_addr();
    Ok(Arc::new(Server {
        runtime,
        local_address: local.to_string(),
        port: local.port(),
        urls: [
            server.url(RemoteKind::WebSocket),
            server.url(RemoteKind::StreamableHttp),
        ],
        server: Mutex::new(Some(Arc::new(server))),
    }))
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_address", &self.local_address)
            .finish_non_exhaustive()
    }
}

#[uniffi::export]
impl Server {
    /// The port it listens on (the one the system chose for port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address it listens on, `host:port`.
    pub fn local_address(&self) -> String {
        self.local_address.clone()
    }

    /// The endpoint's URL for `kind`, `"websocket"` (`ws://`) or `"http"`
    /// (`http://`; `wss://` and `https://` with TLS): what a client passes
    /// to [`remote_connect`]. [`AcpError::InvalidArgument`] for another
    /// kind.
    pub fn url(&self, kind: String) -> Result<String, AcpError> {
        match RemoteKind::from_name(&kind) {
            Some(RemoteKind::WebSocket) => Ok(self.urls[0].clone()),
            Some(RemoteKind::StreamableHttp) => Ok(self.urls[1].clone()),
            None => Err(AcpError::argument(format!(
                "unknown remote kind {kind:?} (\"websocket\" or \"http\")"
            ))),
        }
    }

    /// How many remote connections are open now.
    pub fn connections(&self) -> u64 {
        lock(&self.server)
            .as_ref()
            .map_or(0, |s| s.connections() as u64)
    }

    /// Stops gracefully: no new connection is accepted, each open one gets
    /// up to `shutdown_grace_ms` (default 10 s) to answer the requests it
    /// was sent, then it is closed. Returns once every remote connection
    /// has ended. Idempotent.
    pub async fn shutdown(&self) {
        let server = lock(&self.server).clone();
        if let Some(server) = server {
            InRuntime::new(self.runtime, async move { server.shutdown().await }).await;
        }
    }

    /// Closes now: the listener and every remote connection. Idempotent
    /// (also what freeing the server does).
    pub fn close(&self) {
        let server = lock(&self.server).take();
        drop(server);
    }
}
