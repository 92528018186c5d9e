//! Remote ACP for Python: `connect` (a client reaching an agent by URL) and
//! `serve` (the core's `remote::Server`, one agent connection per remote
//! connection), with the core's options (`Use::Connect`, `Use::Serve`).
//!
//! Thin like the rest: the transports, the server, its limits, checks and
//! shutdown are the core's; this module converts values and hops threads.
//!
//! * `connect` parses its options on the host's thread (raising before
//!   anything starts), then returns an asyncio future (`awaitable`) that
//!   resolves with a `NativeConnection` once `remote::connect` has made the
//!   transport (or fails with `libacp.RemoteError`).
//! * `serve` binds on libacp's runtime and resolves with a `NativeServer`.
//!   The server's factory runs on a runtime thread for each remote
//!   connection: it wraps the connection's transport in a `NativeIncoming`
//!   and hands it to the Python server's `_accept` on the host's loop with
//!   `call_soon_threadsafe`, the way every other completion reaches the
//!   loop. There, `_accept` calls the host's factory, then
//!   `incoming.start(dispatcher)` starts the agent connection (as
//!   `from_fds` would) and `incoming.keep(connection)` gives the core's
//!   server the Python connection to hold until the remote connection ends
//!   (the factory's return value in the core's terms). The server holds
//!   the Python server only weakly (no cycle through Rust).
//!
//! Threads: the `#[pyfunction]`s and methods run on the host's thread with
//! the GIL; the factory closure and the futures' bodies on runtime threads,
//! entering Python only through `attach_alive`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use libacp_core::host::{HostConnection, HostOptions, InboxHooks};
use libacp_core::options::Use;
use libacp_core::remote::{self, Incoming, RemoteKind, Server};
use libacp_core::{AcpOptions, CancellationToken, Role, Transport};

use crate::awaitable::{awaitable, runtime};
use crate::connection::{NativeConnection, wrap};
use crate::errors::{remote_error, report};
use crate::handler::lock;
use crate::inbox::{NativeInbox, new_inbox};
use crate::interpreter::attach_alive;
use crate::options::{Parsed, settings};
use crate::start::{Source, start};

/// Client side: connects to the remote agent at `url` (`ws://`, `wss://`,
/// `http://`, `https://`) with the table's remote options, and resolves
/// with the connection. Option errors raise at once; a failed connect
/// fails the future with `libacp.RemoteError`.
#[pyfunction]
#[pyo3(signature = (url, dispatcher, **options))]
pub(crate) fn connect<'py>(
    py: Python<'py>,
    url: String,
    dispatcher: Py<PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let Parsed {
        settings, hooks, ..
    } = settings(Role::Client, Use::Connect, options)?;
    let rt = runtime()?;
    let inbox = new_inbox(py, &dispatcher)?;
    awaitable(py, async move {
        let made = remote::connect(&url, &settings.remote).await;
        attach_alive(|py| {
            let transport =
                made.map_err(|e| remote_error(py, &format!("could not connect: {e}"), &e, None))?;
            let conn = HostConnection::start(
                rt.handle(),
                Role::Client,
                transport,
                Arc::clone(&inbox),
                HostOptions {
                    acp: settings.acp,
                    drive_reads: false,
                    hooks,
                },
            );
            NativeInbox::attach(py, &dispatcher, inbox, None)?;
            Ok(Py::new(py, wrap(conn, dispatcher))?.into_any())
        })
    })
}

/// Where a server listens: `"host:port"` or `(host, port)`.
enum Listen {
    Text(String),
    Pair(String, u16),
}

impl Listen {
    fn of(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(Self::Text(text.extract::<String>()?));
        }
        if value.cast::<PyTuple>().is_ok()
            && let Ok((host, port)) = value.extract::<(String, u16)>()
        {
            return Ok(Self::Pair(host, port));
        }
        Err(PyValueError::new_err(format!(
            "listen must be \"host:port\" or a (host, port) pair, not {}",
            value.repr()?
        )))
    }
}

/// Server side: binds `listen` and serves one agent connection per remote
/// connection (WebSocket and Streamable HTTP on one endpoint), handing
/// each to `server._accept(incoming)` on the running loop. Resolves with
/// the `NativeServer`; option errors raise at once, a failed bind fails
/// the future with `OSError`.
#[pyfunction]
#[pyo3(signature = (listen, server, **options))]
pub(crate) fn serve<'py>(
    py: Python<'py>,
    listen: &Bound<'py, PyAny>,
    server: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let listen = Listen::of(listen)?;
    let Parsed {
        settings, hooks, ..
    } = settings(Role::Agent, Use::Serve, options)?;
    let event_loop = py
        .import("asyncio")?
        .call_method0("get_running_loop")?
        .unbind();
    let weak = py
        .import("weakref")?
        .getattr("ref")?
        .call1((server,))?
        .unbind();
    let acp = settings.acp;
    let factory = move |incoming: Incoming| -> Kept {
        let kept = Kept::default();
        let native = NativeIncoming {
            transport: Mutex::new(Some(incoming.transport)),
            acp: acp.clone(),
            hooks,
            kept: kept.clone(),
            connection_id: incoming.connection_id,
            kind: incoming.kind.name(),
            remote_addr: incoming.remote_addr,
        };
        attach_alive(|py| {
            let handed = (|| -> PyResult<()> {
                let server = weak.call0(py)?;
                if server.is_none(py) {
                    return Ok(()); // the Python server is gone: refused
                }
                let accept = server.getattr(py, "_accept")?;
                let native = Py::new(py, native)?;
                event_loop.call_method1(py, "call_soon_threadsafe", (accept, native))?;
                Ok(())
            })();
            // A closed loop (RuntimeError) takes nobody: the incoming
            // connection is dropped, which ends it.
            if let Err(e) = handed
                && !e.is_instance_of::<PyRuntimeError>(py)
            {
                report(py, &e);
            }
        });
        kept
    };
    let options = settings.server;
    awaitable(py, async move {
        let bound = match listen {
            Listen::Text(addr) => Server::bind(addr, options, factory).await,
            Listen::Pair(host, port) => Server::bind((host, port), options, factory).await,
        };
        attach_alive(|py| {
            let server = bound.map_err(|e| PyOSError::new_err(e.to_string()))?;
            let native = NativeServer {
                closing: CancellationToken::new(),
                local_addr: server.local_addr(),
                urls: [
                    server.url(RemoteKind::WebSocket),
                    server.url(RemoteKind::StreamableHttp),
                ],
                server: Mutex::new(Some(Arc::new(server))),
            };
            Ok(Py::new(py, native)?.into_any())
        })
    })
}

/// What the core's server keeps for a remote connection until it ends: the
/// Python connection `_accept` made for it (set by `keep`). Dropping it
/// releases that connection (the decref waits for the GIL when the core
/// drops it on a runtime thread: PyO3 defers it).
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Option<Py<PyAny>>>>);

/// A remote connection waiting for its agent, as `Server._accept` gets it.
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct NativeIncoming {
    /// The transport; taken by `start`, dropped by `reject`.
    transport: Mutex<Option<Transport>>,
    /// The server's connection options.
    acp: AcpOptions,
    /// The server's hooks, for each connection's dispatcher.
    hooks: InboxHooks,
    kept: Kept,
    connection_id: String,
    kind: &'static str,
    remote_addr: SocketAddr,
}

#[pymethods]
impl NativeIncoming {
    /// Starts the agent connection for `dispatcher` on this transport (once).
    fn start(&self, py: Python<'_>, dispatcher: Py<PyAny>) -> PyResult<NativeConnection> {
        let Some(transport) = lock(&self.transport).take() else {
            return Err(PyRuntimeError::new_err(
                "this connection was started already",
            ));
        };
        start(
            py,
            dispatcher,
            Source::Transport(Role::Agent, transport),
            self.acp.clone(),
            self.hooks,
            false,
        )
    }

    /// Gives the server `connection` to hold until the remote connection
    /// ends.
    fn keep(&self, connection: Py<PyAny>) {
        *lock(&self.kept.0) = Some(connection);
    }

    /// Refuses the connection (the host's factory failed): it ends.
    fn reject(&self) {
        lock(&self.transport).take();
    }

    /// The connection's `Acp-Connection-Id`.
    #[getter]
    fn connection_id(&self) -> &str {
        &self.connection_id
    }

    /// `"websocket"` or `"http"` (Streamable HTTP).
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// The client's `(host, port)`.
    #[getter]
    fn remote_address(&self) -> (String, u16) {
        (self.remote_addr.ip().to_string(), self.remote_addr.port())
    }
}

/// A running server (the core's `remote::Server`). Dropping it (or
/// `close()`) closes every connection at once.
#[pyclass(module = "libacp._libacp", frozen)]
pub(crate) struct NativeServer {
    /// `None` once closed.
    server: Mutex<Option<Arc<Server>>>,
    /// Fired by `close()`: a running `shutdown()` lets go of the server.
    closing: CancellationToken,
    local_addr: SocketAddr,
    /// The WebSocket and Streamable HTTP URLs.
    urls: [String; 2],
}

#[pymethods]
impl NativeServer {
    /// The endpoint's URL for `kind`: `"websocket"` (`ws://`, `wss://`) or
    /// `"http"` (`http://`, `https://`).
    #[pyo3(signature = (kind="websocket"))]
    fn url(&self, kind: &str) -> PyResult<String> {
        match RemoteKind::from_name(kind) {
            Some(RemoteKind::WebSocket) => Ok(self.urls[0].clone()),
            Some(RemoteKind::StreamableHttp) => Ok(self.urls[1].clone()),
            None => Err(PyValueError::new_err(format!(
                "kind must be \"websocket\" or \"http\", not {kind:?}"
            ))),
        }
    }

    /// The address listened on, `(host, port)`.
    #[getter]
    fn address(&self) -> (String, u16) {
        (self.local_addr.ip().to_string(), self.local_addr.port())
    }

    /// Remote connections open now (0 once closed).
    #[getter]
    fn connections(&self) -> usize {
        lock(&self.server).as_ref().map_or(0, |s| s.connections())
    }

    /// Stops accepting and lets running requests finish (the core's
    /// graceful shutdown, up to `shutdown_grace_ms`); resolves once every
    /// connection is gone. Nothing to do once closed.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let server = lock(&self.server).clone();
        let closing = self.closing.clone();
        awaitable(py, async move {
            if let Some(server) = server {
                tokio::select! {
                    () = server.shutdown() => {}
                    () = closing.cancelled() => {}
                }
            }
            attach_alive(|py| Ok(py.None()))
        })
    }

    /// Closes the server and every connection now (idempotent; a running
    /// `shutdown()` returns).
    fn close(&self) {
        let server = lock(&self.server).take();
        self.closing.cancel();
        drop(server);
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.server).is_none()
    }
}
