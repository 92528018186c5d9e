//! Remote ACP for Node, over the core's `libacp_core::remote`: a client
//! connecting to a remote agent by URL (`connectRemote`) and a server
//! serving remote clients (`NativeServer`). Both only produce transports:
//! each is parked here under a number, handed to JavaScript through a
//! threadsafe function, and JavaScript starts a connection on it like any
//! other (`connect({ kind: "remote", id })`), with the same inbox and
//! delivery as a local connection.
//!
//! Threads: `connectRemote`, `serve` and the server's methods are called on
//! the JavaScript thread; the connects, the server's accept loop and its
//! factory run on libacp's runtime and only call the threadsafe functions.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi_derive::napi;
use serde_json::json;

use libacp_core::options::Use;
use libacp_core::remote::{self, Incoming, RemoteError, RemoteKind, Server};
use libacp_core::{Role, Transport};

use crate::options::{NativeOption, settings};
use crate::runtime;

/// Called once with a JSON text (the outcome), from any thread; keeps the
/// event loop alive until then. (Spelled out in the `#[napi]` signatures:
/// napi-rs writes the TypeScript types from those tokens.)
pub(crate) type DoneFn = ThreadsafeFunction<String, UnknownReturnValue, String, Status, false>;

/// Transports made on the runtime, waiting for JavaScript to start their
/// connection.
static PARKED: Mutex<Option<Parked>> = Mutex::new(None);

#[derive(Default)]
struct Parked {
    next: u32,
    transports: HashMap<u32, Transport>,
}

fn parked<R>(f: impl FnOnce(&mut Parked) -> R) -> R {
    let mut guard = PARKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(guard.get_or_insert_with(Parked::default))
}

fn park(transport: Transport) -> u32 {
    parked(|p| {
        p.next = p.next.wrapping_add(1).max(1);
        let id = p.next;
        p.transports.insert(id, transport);
        id
    })
}

/// The transport parked under `id` (taken: once).
pub(crate) fn unpark(id: u32) -> Option<Transport> {
    parked(|p| p.transports.remove(&id))
}

/// What the server keeps per connection: drops the transport if
/// JavaScript never took it (the server closed first).
struct Unpark(u32);

impl Drop for Unpark {
    fn drop(&mut self) {
        drop(unpark(self.0));
    }
}

/// The error object of a failed remote connect (see `ts/errors.ts`).
pub(crate) fn remote_error(e: &RemoteError) -> serde_json::Value {
    json!({
        "kind": "remote",
        "message": e.message,
        "remoteKind": e.kind.name(),
        "status": e.status,
    })
}

fn failure(kind: &str, message: String) -> String {
    json!({"kind": kind, "message": message}).to_string()
}

/// Client side: connects to the remote agent at `url` with the options
/// (`Use::Connect`). `null`: `done` will be called with `{"id": n}` (the
/// transport, for `connect({ kind: "remote", role: "client", id })`) or the
/// error (JSON); a string: the options were refused (JSON), nothing started.
#[napi]
pub fn connect_remote(
    url: String,
    options: Vec<NativeOption>,
    done: ThreadsafeFunction<String, UnknownReturnValue, String, Status, false>,
) -> Option<String> {
    let settings = match settings(Role::Client, Use::Connect, options) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let rt = match runtime::handle() {
        Ok(rt) => rt,
        Err(e) => return Some(failure("io", e)),
    };
    let remote = settings.remote;
    rt.spawn(async move {
        let text = match remote::connect(&url, &remote).await {
            Ok(transport) => json!({ "id": park(transport) }).to_string(),
            Err(e) => remote_error(&e).to_string(),
        };
        done.call(text, ThreadsafeFunctionCallMode::NonBlocking);
    });
    None
}

/// A remote server (the core's `remote::Server`) serving agents made in
/// JavaScript, one per remote connection.
#[napi]
pub struct NativeServer {
    server: Option<Arc<Server>>,
    on_connection: Arc<DoneFn>,
    held: bool,
}

impl std::fmt::Debug for NativeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeServer")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Listens on `listen` (`host:port`; port 0 picks one) with the options
/// (`Use::Serve`) and calls `onConnection` with
/// `{"id", "kind", "connectionId", "remoteAddr"}` (JSON) for each remote
/// connection: JavaScript starts the agent connection on transport `id`.
/// A string: the error (JSON), nothing started.
#[napi]
pub fn serve(
    listen: String,
    options: Vec<NativeOption>,
    on_connection: ThreadsafeFunction<String, UnknownReturnValue, String, Status, false>,
) -> Either<NativeServer, String> {
    let settings = match settings(Role::Agent, Use::Serve, options) {
        Ok(s) => s,
        Err(e) => return Either::B(e.to_string()),
    };
    let rt = match runtime::handle() {
        Ok(rt) => rt,
        Err(e) => return Either::B(failure("io", e)),
    };
    let listener = match std::net::TcpListener::bind(listen.as_str())
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => return Either::B(failure("listen", format!("cannot listen on {listen}: {e}"))),
    };
    let on_connection = Arc::new(on_connection);
    let calls = Arc::clone(&on_connection);
    let factory = move |incoming: Incoming| {
        let id = park(incoming.transport);
        let text = json!({
            "id": id,
            "kind": incoming.kind.name(),
            "connectionId": incoming.connection_id,
            "remoteAddr": incoming.remote_addr.to_string(),
        })
        .to_string();
        calls.call(text, ThreadsafeFunctionCallMode::NonBlocking);
        Unpark(id)
    };
    let _entered = rt.enter();
    let made = tokio::net::TcpListener::from_std(listener)
        .and_then(|l| Server::from_listener(l, settings.server, factory));
    match made {
        Ok(server) => Either::A(NativeServer {
            server: Some(Arc::new(server)),
            on_connection,
            held: true,
        }),
        Err(e) => Either::B(failure("listen", format!("cannot serve on {listen}: {e}"))),
    }
}

fn address_json(addr: SocketAddr) -> String {
    json!({
        "address": addr.ip().to_string(),
        "port": addr.port(),
        "family": if addr.is_ipv4() { "IPv4" } else { "IPv6" },
    })
    .to_string()
}

#[napi]
impl NativeServer {
    /// The endpoint's URL: `"websocket"` (`ws://`, `wss://`) or `"http"`
    /// (`http://`, `https://`); `null` once closed.
    #[napi]
    pub fn url(&self, kind: String) -> Result<Option<String>> {
        let Some(kind) = RemoteKind::from_name(&kind) else {
            return Err(Error::new(
                Status::InvalidArg,
                format!("kind must be \"websocket\" or \"http\", not {kind:?}"),
            ));
        };
        Ok(self.server.as_ref().map(|s| s.url(kind)))
    }

    /// `{"address", "port", "family"}` (JSON) of the listening socket;
    /// `null` once closed.
    #[napi(getter)]
    pub fn address(&self) -> Option<String> {
        self.server.as_ref().map(|s| address_json(s.local_addr()))
    }

    /// Remote connections open now.
    #[napi(getter)]
    pub fn connections(&self) -> u32 {
        self.server
            .as_ref()
            .map_or(0, |s| u32::try_from(s.connections()).unwrap_or(u32::MAX))
    }

    /// Stops accepting, lets the connections answer what they were asked
    /// (up to `shutdownGraceMs`), closes them; calls `done` once every
    /// agent was dropped. Then the server is closed.
    #[napi]
    pub fn shutdown(
        &mut self,
        env: Env,
        done: ThreadsafeFunction<String, UnknownReturnValue, String, Status, false>,
    ) {
        let Some(server) = self.server.take() else {
            done.call("null".into(), ThreadsafeFunctionCallMode::NonBlocking);
            return;
        };
        self.let_go(env);
        match runtime::handle() {
            Ok(rt) => {
                rt.spawn(async move {
                    server.shutdown().await;
                    drop(server);
                    done.call("null".into(), ThreadsafeFunctionCallMode::NonBlocking);
                });
            }
            Err(_) => {
                drop(server);
                done.call("null".into(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }

    /// Closes at once: stops accepting and closes every connection
    /// (their agents see the end of stream). Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.let_go(env);
        drop(self.server.take());
    }

    /// The connection callback no longer holds the event loop.
    fn let_go(&mut self, env: Env) {
        if self.held {
            self.held = false;
            // SAFETY: on the JavaScript thread, with the env of this call,
            // on a live threadsafe function (held by `self.on_connection`).
            unsafe {
                napi::sys::napi_unref_threadsafe_function(env.raw(), self.on_connection.raw());
            }
        }
    }
}
