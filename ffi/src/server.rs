//! `acp_server`: a remote ACP server (`libacp_core::remote::Server`:
//! WebSocket and Streamable HTTP on one endpoint). Each remote connection
//! becomes an agent-role `acp_connection`, made and handed to the host's
//! callback on the server's own thread (`libacp-server`), one at a time in
//! arrival order; the host owns it from then on.

use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::{JoinHandle, ThreadId};

use libacp_core::options::Use;
use libacp_core::remote::{Incoming, RemoteKind, Server};
use libacp_core::{Role, Transport};

use crate::connection::{
    Source, acp_connection, build, io_runtime, options_or_default, wrong_thread,
};
use crate::error::acp_error;
use crate::export;
use crate::options::{UserData, acp_options};
use crate::runtime;
use crate::status::acp_status;
use crate::string::acp_str;

/// Which remote transport a URL names.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_remote_kind {
    /// WebSocket: `ws://` (`wss://` with TLS).
    ACP_REMOTE_WEBSOCKET = 0,
    /// Streamable HTTP: `http://` (`https://` with TLS).
    ACP_REMOTE_STREAMABLE_HTTP = 1,
}

/// Receives each remote connection of a server: `conn` is a new
/// agent-role connection, owned by the callee (free it with
/// `acp_connection_free`, now or later, from any thread).
///
/// Runs on the server's own thread, one call at a time, in the order the
/// connections arrived; never inside one of your `acp_*` calls. It may
/// call any `acp_*` function, blocking ones included (a connection waiting
/// to be handed over waits meanwhile), except `acp_server_shutdown` of
/// this server (`ACP_ERR_WRONG_THREAD`); `acp_server_free` of this server
/// is allowed, and no call follows it.
///
/// `*event_user_data` holds the `user_data` of the options' event callback
/// (callback mode) and may be overwritten here: the connection's events
/// then carry that pointer instead, so each connection can have its own.
/// No event of `conn` is delivered before this call returns.
pub type acp_server_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        conn: *mut acp_connection,
        event_user_data: *mut *mut c_void,
    ),
>;

/// What the listener hands to the server's thread.
enum Message {
    Incoming(Transport),
    Stop,
}

/// A remote ACP server. Owned by the host; `acp_server_shutdown` stops it
/// gracefully, `acp_server_free` closes it now and frees it.
pub struct acp_server {
    server: Option<Server>,
    address: String,
    urls: [String; 2],
    port: u16,
    /// Set by `acp_server_free`: no callback after it.
    stopped: Arc<AtomicBool>,
    to_thread: Mutex<mpsc::Sender<Message>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
    runtime: &'static tokio::runtime::Runtime,
}

impl std::fmt::Debug for acp_server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("acp_server")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl export::Owned for acp_server {}

/// The server's thread: makes each remote connection's `acp_connection`
/// and hands it to the host, until `acp_server_free`.
struct Handover {
    options: acp_options,
    callback: unsafe extern "C" fn(*mut c_void, *mut acp_connection, *mut *mut c_void),
    user_data: UserData,
    stopped: Arc<AtomicBool>,
    runtime: &'static tokio::runtime::Runtime,
}

impl Handover {
    fn run(self, inbox: mpsc::Receiver<Message>) {
        // A remote connection not handed over when the server stops is
        // dropped with the receiver: its transport closes.
        while let Ok(Message::Incoming(transport)) = inbox.recv() {
            if self.stopped.load(Ordering::Acquire) {
                break;
            }
            let made = catch_unwind(AssertUnwindSafe(|| {
                let settings = self.options.settings(Role::Agent, Use::Serve)?;
                build(
                    &self.options,
                    &settings,
                    Source::Transport(Role::Agent, transport),
                    self.runtime,
                )
            }));
            // A connection that cannot be made (no thread, no eventfd):
            // its transport is dropped and the remote client sees it close.
            let Ok(Ok(conn)) = made else { continue };
            let start = Arc::clone(&conn.start);
            // Held across the call: the slot the host may write stays valid
            // even if the host frees `conn` inside the callback.
            let user_data = Arc::clone(&conn.event_user_data);
            let ud: UserData = self.user_data;
            // SAFETY: the host registered `callback` with `user_data` for
            // this; the connection is handed over (the host frees it); the
            // slot is a live `*mut c_void` (`user_data` holds it), read by
            // the dispatch thread only once `start` is rung below.
            unsafe { (self.callback)(ud.0, Box::into_raw(conn), user_data.as_ptr()) };
            start.ring();
        }
    }
}

/// Listens on `listen_addr` (`"127.0.0.1:0"`: any free port on loopback;
/// see `acp_server_port`) and serves remote ACP there: WebSocket and
/// Streamable HTTP on one endpoint (the option `path`, default `/acp`).
/// Each remote connection becomes an agent-role connection in the
/// options' event mode, handed to `callback` (see `acp_server_callback`
/// for its thread, what it may call, and ownership). `options` may be NULL
/// for the defaults; the options that apply are those of every
/// connection, of agent connections and of a server (`bearer_tokens`,
/// `allowed_origins`, `max_connections`, `idle_timeout_ms`,
/// `shutdown_grace_ms`, `tls_cert` and `tls_key`, ...); any other option
/// set by name is refused (`ACP_ERR_INVALID_ARGUMENT`, kind
/// `not_applicable`). Blocks while binding; not on libacp's threads.
/// An address that cannot be bound (in use, not ours) is `ACP_ERR_IO`; an
/// address that does not parse, and TLS files that cannot be read or do
/// not go together, are `ACP_ERR_INVALID_ARGUMENT`. On success
/// `*out` is owned (free with `acp_server_free`); `user_data` must stay
/// valid until `acp_server_free` returns.
///
/// # Safety
/// Pointers per include/README.md; `user_data` may be used from the
/// server's thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_new(
    options: *const acp_options,
    listen_addr: acp_str,
    callback: acp_server_callback,
    user_data: *mut c_void,
    out: *mut *mut acp_server,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `options` is NULL or live, `listen_addr` valid, `out` and
    // `error` NULL or valid, per this function's `# Safety`.
    unsafe {
        export::output(out, error, || {
            let callback = callback.ok_or_else(|| export::null_argument("callback"))?;
            let options = options_or_default(options);
            let settings = options.settings(Role::Agent, Use::Serve)?;
            let addr = listen_addr.to_str()?;
            if runtime::on_runtime_thread() {
                return Err(wrong_thread());
            }
            let rt = io_runtime()?;
            let (to_thread, inbox) = mpsc::channel();
            let from_listener = Mutex::new(to_thread.clone());
            let factory = move |incoming: Incoming| {
                // Refused once the server's thread is gone: the transport
                // is dropped and the connection closes.
                let _ = from_listener
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .send(Message::Incoming(incoming.transport));
            };
            let server = rt
                .block_on(Server::bind(addr, settings.server.clone(), factory))
                .map_err(|e| {
                    let status = if e.kind() == std::io::ErrorKind::InvalidInput {
                        acp_status::ACP_ERR_INVALID_ARGUMENT
                    } else {
                        acp_status::ACP_ERR_IO
                    };
                    acp_error::new(status, format!("could not serve on {addr}: {e}"))
                })?;
            let stopped = Arc::new(AtomicBool::new(false));
            let handover = Handover {
                options,
                callback,
                user_data: UserData(user_data),
                stopped: Arc::clone(&stopped),
                runtime: rt,
            };
            // If the thread cannot start, `server` is dropped: closed.
            let thread = std::thread::Builder::new()
                .name("libacp-server".into())
                .spawn(move || {
                    // The host's signals go to the host's threads
                    // (core::host::runtime).
                    libacp_core::host::block_signals();
                    handover.run(inbox);
                })
                .map_err(|e| {
                    acp_error::new(
                        acp_status::ACP_ERR_IO,
                        format!("could not start the server's thread: {e}"),
                    )
                })?;
            let local = server.local_addr();
            Ok(Box::new(acp_server {
                address: local.to_string(),
                urls: [
                    server.url(RemoteKind::WebSocket),
                    server.url(RemoteKind::StreamableHttp),
                ],
                port: local.port(),
                server: Some(server),
                stopped,
                to_thread: Mutex::new(to_thread),
                thread_id: thread.thread().id(),
                thread: Mutex::new(Some(thread)),
                runtime: rt,
            }))
        })
    }
}

/// The port the server listens on (the one the system chose for port 0);
/// 0 for NULL.
///
/// # Safety
/// `server` is NULL or a live `acp_server`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_port(server: *const acp_server) -> u16 {
    // SAFETY: `server` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(server, 0, |s| s.port) }
}

/// The address the server listens on, `host:port` (`127.0.0.1:40321`,
/// `[::1]:40321`), borrowed from `server`.
///
/// # Safety
/// `server` is a live `acp_server`; `out`/`out_len` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_local_address(
    server: *const acp_server,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: the pointers are NULL or valid, per this function's `# Safety`.
    unsafe { export::get_text(server, out, out_len, |s| Some(&s.address)) }
}

/// The endpoint's URL for `kind` (an `acp_remote_kind`): `ws://` or
/// `http://` (`wss://`, `https://` with TLS), the listening address as
/// host, then the path: what a client passes to `acp_connection_connect`
/// (a server listening on `0.0.0.0` gives that address: clients elsewhere
/// use the machine's name instead). Borrowed from `server`.
/// `ACP_ERR_INVALID_ARGUMENT` for an unknown kind.
///
/// # Safety
/// As `acp_server_local_address`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_url(
    server: *const acp_server,
    kind: i32,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: the pointers are NULL or valid, per this function's `# Safety`.
    unsafe {
        export::output(export::text(out, out_len), export::NO_ERROR, || {
            let s = export::arg(server, "server")?;
            let i = usize::try_from(kind)
                .ok()
                .filter(|i| *i < s.urls.len())
                .ok_or_else(|| acp_error::invalid_argument("unknown remote kind"))?;
            Ok(Some(s.urls[i].as_str()))
        })
    }
}

/// How many remote connections are open now (handed over or not yet); 0
/// for NULL.
///
/// # Safety
/// `server` is NULL or a live `acp_server`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_connections(server: *const acp_server) -> usize {
    // SAFETY: `server` is NULL or live, per this function's `# Safety`.
    unsafe {
        export::get(server, 0, |s| {
            s.server.as_ref().map_or(0, Server::connections)
        })
    }
}

/// Stops the server gracefully and waits: no new connection is accepted,
/// each open one gets up to the option `shutdown_grace_ms` (default 10 s)
/// to answer the requests it was sent, then it is closed (its
/// `acp_connection` gets `ACP_EVENT_CLOSED`; it is still yours to free).
/// Returns once every remote connection has ended, or 5 s after the
/// grace. Idempotent. Not on libacp's threads nor in the server's callback
/// (`ACP_ERR_WRONG_THREAD`). The server still needs `acp_server_free`.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_shutdown(
    server: *const acp_server,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `server` is NULL or live, `error` NULL or valid, per this
    // function's `# Safety`.
    unsafe {
        export::status(error, || {
            let s = export::arg(server, "server")?;
            if runtime::on_runtime_thread() || std::thread::current().id() == s.thread_id {
                return Err(wrong_thread());
            }
            if let Some(server) = &s.server {
                s.runtime.block_on(server.shutdown());
            }
            Ok(())
        })
    }
}

/// Closes the server now and frees it: the listener and every remote
/// connection are closed at once (the `acp_connection`s handed over get
/// `ACP_EVENT_CLOSED` and stay yours to free; those not handed over yet
/// are dropped). Waits for a callback in progress on another thread; once
/// it returns the callback is never called again and `user_data` is yours.
/// Allowed inside the callback (it then returns at once, and the callback
/// is not called again). NULL is ignored.
///
/// # Safety
/// `server` is NULL or a live `acp_server`, freed once, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_server_free(server: *mut acp_server) {
    // SAFETY: as this function's `# Safety` says.
    unsafe {
        export::free_with(server, |mut s| {
            s.stopped.store(true, Ordering::Release);
            drop(s.server.take()); // closes everything now
            let _ = s
                .to_thread
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send(Message::Stop);
            let handle = s
                .thread
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(handle) = handle
                && std::thread::current().id() != s.thread_id
            {
                let _ = handle.join();
            }
        });
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
