//! `acp_connection`: an ACP connection in one role, made from options and
//! a transport (a spawned agent, file descriptors, or this process's
//! stdio). Everything it receives arrives as events (see `events`).

use std::ffi::{c_char, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread::{JoinHandle, ThreadId};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use libacp_core::rpc::{BoxFuture, IncomingNotification, IncomingRequest, Responder};
use libacp_core::transport::BoxReader;
use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, AgentCommand, CancellationToken, ClientServices,
    ConnectionOptions, Direction, Framing, Handler, Role, ShutdownGrace, Transport,
};

use crate::call::acp_call;
use crate::error::{acp_error, fail};
use crate::events::{EventQueue, acp_event, acp_event_kind};
use crate::options::{UserData, acp_direction, acp_framing, acp_options};
use crate::request::acp_request;
use crate::runtime;
use crate::status::acp_status;
use crate::string::acp_string;
use crate::text::{in_params, in_str};

/// A UTF-8 string argument: pointer and length (no NUL needed). A NULL
/// pointer with length 0 is the empty string (or "absent" where noted).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_str {
    /// The bytes (borrowed for the call).
    pub ptr: *const c_char,
    /// How many bytes.
    pub len: usize,
}

/// One environment variable for a spawned agent.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_env_var {
    /// Its name.
    pub name: acp_str,
    /// Its value.
    pub value: acp_str,
}

/// Which side this end plays.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_role {
    /// The editor: drives an agent.
    ACP_ROLE_CLIENT = 0,
    /// The agent: serves a client.
    ACP_ROLE_AGENT = 1,
}

/// Counts calls whose result event is not queued yet, so that
/// `ACP_EVENT_CLOSED` comes after all of them.
#[derive(Default)]
struct Outstanding {
    count: AtomicUsize,
    zero: tokio::sync::Notify,
}

impl Outstanding {
    fn begin(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    fn end(&self) {
        if self.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.zero.notify_waiters();
        }
    }

    async fn wait_zero(&self) {
        loop {
            let zero = self.zero.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            zero.await;
        }
    }
}

/// An ACP connection. Owned by the host; `acp_connection_close` closes it,
/// `acp_connection_free` closes and frees it.
pub struct acp_connection {
    acp: Option<AcpConnection>,
    peer: AcpPeer,
    queue: Arc<EventQueue>,
    outstanding: Arc<Outstanding>,
    callback_mode: bool,
    dispatch: Mutex<Option<JoinHandle<()>>>,
    dispatch_id: Option<ThreadId>,
    runtime: &'static tokio::runtime::Runtime,
}

impl std::fmt::Debug for acp_connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("acp_connection")
            .field("peer", &self.peer)
            .field("callback_mode", &self.callback_mode)
            .finish_non_exhaustive()
    }
}

/// Turns what the peer sends into events.
struct FfiHandler {
    queue: Arc<EventQueue>,
}

impl Handler for FfiHandler {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let id = serde_json::to_string(&request.id).unwrap_or_else(|_| "null".into());
        let params = request.params.map(|p| String::from(Box::<str>::from(p)));
        let done = CancellationToken::new();
        let watcher = {
            let queue = Arc::clone(&self.queue);
            let token = request.cancellation.clone();
            let done = done.clone();
            let id = id.clone();
            async move {
                tokio::select! {
                    () = token.cancelled() => {
                        let mut event = acp_event::new(acp_event_kind::ACP_EVENT_REQUEST_CANCELLED);
                        event.request_id = Some(id);
                        queue.push(event);
                    }
                    () = done.cancelled() => {}
                }
            }
        };
        let mut event = acp_event::new(acp_event_kind::ACP_EVENT_REQUEST);
        event.method.clone_from(&request.method);
        event.params.clone_from(&params);
        event.request_id = Some(id.clone());
        event.request = Some(Box::new(acp_request {
            responder,
            method: request.method,
            params,
            id,
            cancellation: request.cancellation,
            done,
        }));
        self.queue.push(event);
        // Only now: a cancellation must not reach the host before the
        // request it cancels.
        tokio::spawn(watcher);
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        let mut event = acp_event::new(acp_event_kind::ACP_EVENT_NOTIFICATION);
        event.method = notification.method;
        event.params = notification
            .params
            .map(|p| String::from(Box::<str>::from(p)));
        let queue = Arc::clone(&self.queue);
        Box::pin(async move { queue.push_bounded(event).await })
    }
}

fn role_of(role: i32) -> Option<Role> {
    match role {
        r if r == acp_role::ACP_ROLE_CLIENT as i32 => Some(Role::Client),
        r if r == acp_role::ACP_ROLE_AGENT as i32 => Some(Role::Agent),
        _ => None,
    }
}

fn no_runtime() -> acp_error {
    acp_error::new(
        acp_status::ACP_ERR_IO,
        "could not start libacp's I/O threads",
    )
}

/// Makes the connection: the event queue, the engine, the closer task and,
/// in callback mode, the dispatch thread.
fn build(
    options: &acp_options,
    role: Role,
    queue: Arc<EventQueue>,
    transport: Transport,
    runtime: &'static tokio::runtime::Runtime,
) -> Result<Box<acp_connection>, acp_error> {
    let trace = options.trace_callback.map(|(cb, ud)| {
        let hook: libacp_core::TraceHook = Arc::new(move |dir: Direction, frame: &[u8]| {
            let dir = match dir {
                Direction::Incoming => acp_direction::ACP_DIRECTION_INCOMING,
                Direction::Outgoing => acp_direction::ACP_DIRECTION_OUTGOING,
            };
            let ud: UserData = ud;
            // SAFETY: the host registered `cb` with `ud` for exactly this use.
            unsafe { cb(ud.0, dir, frame.as_ptr().cast(), frame.len()) };
        });
        hook
    });
    let connection = ConnectionOptions {
        framing: match options.framing {
            acp_framing::ACP_FRAMING_NDJSON => Framing::Ndjson,
            acp_framing::ACP_FRAMING_CONTENT_LENGTH => Framing::ContentLength,
        },
        max_frame_size: options.max_frame_size,
        request_timeout: options.request_timeout,
        trace,
        ..ConnectionOptions::default()
    };
    let services = ClientServices {
        sessions: options
            .session_model
            .then(|| Arc::new(libacp_core::services::session_model::SessionStore::new())),
        fs: options
            .fs
            .then(|| Arc::new(libacp_core::services::fs::SandboxedFs::new())),
        terminals: options
            .terminals
            .then(|| Arc::new(libacp_core::services::terminal::TerminalManager::new())),
    };
    let acp_options = AcpOptions {
        connection,
        require_auth: options.require_auth,
        services,
        ..AcpOptions::default()
    };
    // The dispatch thread first: if it cannot start, nothing else has.
    let (dispatch, dispatch_id) = match options.event_callback {
        Some((cb, ud)) => {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name("libacp-dispatch".into())
                .spawn(move || {
                    let ud: UserData = ud;
                    loop {
                        let event = queue.wait_pop();
                        let last = event.kind == acp_event_kind::ACP_EVENT_CLOSED;
                        // SAFETY: the host registered `cb` with `ud` for this;
                        // the event is handed over (the host frees it).
                        unsafe { cb(ud.0, Box::into_raw(Box::new(event))) };
                        if last {
                            return;
                        }
                    }
                });
            match spawned {
                Ok(handle) => {
                    let id = handle.thread().id();
                    (Some(handle), Some(id))
                }
                Err(e) => {
                    return Err(acp_error::new(
                        acp_status::ACP_ERR_IO,
                        format!("could not start the dispatch thread: {e}"),
                    ));
                }
            }
        }
        None => (None, None),
    };
    let handler = FfiHandler {
        queue: Arc::clone(&queue),
    };
    let acp = AcpConnection::start_on(runtime.handle(), role, transport, handler, acp_options);
    let peer = acp.acp_peer();
    let outstanding = Arc::new(Outstanding::default());
    {
        let peer = peer.clone();
        let queue = Arc::clone(&queue);
        let outstanding = Arc::clone(&outstanding);
        runtime.spawn(async move {
            let reason = peer.closed().await;
            peer.terminated().await;
            outstanding.wait_zero().await;
            let mut event = acp_event::new(acp_event_kind::ACP_EVENT_CLOSED);
            event.text = reason.to_string();
            queue.push(event);
        });
    }
    Ok(Box::new(acp_connection {
        acp: Some(acp),
        peer,
        queue,
        outstanding,
        callback_mode: options.event_callback.is_some(),
        dispatch: Mutex::new(dispatch),
        dispatch_id,
        runtime,
    }))
}

/// Client side: spawns an agent (`program` looked up on PATH, `args`, extra
/// `env` on top of this process's, `cwd` or NULL/0 for ours) in its own
/// process group and connects to its stdio. `options` may be NULL for the
/// defaults. On success `*out` is owned (free with `acp_connection_free`).
/// A program that cannot be started is `ACP_ERR_SPAWN`, at once.
///
/// # Safety
/// Pointers per include/README.md; `args` valid for `nargs` entries, `env`
/// for `nenv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_spawn_agent(
    options: *const acp_options,
    program: acp_str,
    args: *const acp_str,
    nargs: usize,
    env: *const acp_env_var,
    nenv: usize,
    cwd: acp_str,
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
) -> acp_status {
    crate::ffi_guard(|| {
        if out.is_null() || (args.is_null() && nargs > 0) || (env.is_null() && nenv > 0) {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        }
        // SAFETY: NULL or a live acp_options.
        let options = unsafe { options.as_ref() }.cloned().unwrap_or_default();
        let parsed = (|| -> Result<AgentCommand, acp_error> {
            // SAFETY: strings per the contract.
            let program = unsafe { in_str(program.ptr, program.len) }?;
            if program.is_empty() {
                return Err(acp_error::new(
                    acp_status::ACP_ERR_INVALID_ARGUMENT,
                    "program is empty",
                ));
            }
            let mut command = AgentCommand::new(program);
            // SAFETY: `args` valid for `nargs` entries when non-NULL.
            let args = if nargs == 0 {
                &[][..]
            } else {
                unsafe { std::slice::from_raw_parts(args, nargs) }
            };
            for a in args {
                // SAFETY: per the contract.
                command = command.args([unsafe { in_str(a.ptr, a.len) }?]);
            }
            // SAFETY: `env` valid for `nenv` entries when non-NULL.
            let env = if nenv == 0 {
                &[][..]
            } else {
                unsafe { std::slice::from_raw_parts(env, nenv) }
            };
            for v in env {
                // SAFETY: per the contract.
                let (name, value) = unsafe {
                    (
                        in_str(v.name.ptr, v.name.len)?,
                        in_str(v.value.ptr, v.value.len)?,
                    )
                };
                command = command.env(name, value);
            }
            // SAFETY: per the contract.
            let cwd = unsafe { in_str(cwd.ptr, cwd.len) }?;
            if !cwd.is_empty() {
                command = command.cwd(cwd);
            }
            Ok(command.grace(ShutdownGrace {
                after_stdin_close: options.after_stdin_close,
                after_sigterm: options.after_sigterm,
            }))
        })();
        let mut command = match parsed {
            Ok(c) => c,
            // SAFETY: `error` per the contract.
            Err(e) => return unsafe { fail(error, e) },
        };
        let Some(rt) = runtime::handle() else {
            // SAFETY: `error` per the contract.
            return unsafe { fail(error, no_runtime()) };
        };
        let queue = Arc::new(EventQueue::new(
            options.event_queue,
            options.event_callback.is_some(),
        ));
        if options.stderr_events {
            let q = Arc::clone(&queue);
            command = command.stderr(move |line| q.push_log(line));
        }
        let _enter = rt.enter();
        let transport = match libacp_core::transport::process::spawn(&command) {
            Ok(t) => t,
            Err(e) => {
                // SAFETY: `error` per the contract.
                return unsafe {
                    fail(
                        error,
                        acp_error::new(acp_status::ACP_ERR_SPAWN, e.to_string()),
                    )
                };
            }
        };
        let conn = match build(&options, Role::Client, queue, transport, rt) {
            Ok(conn) => conn,
            // SAFETY: `error` per the contract.
            Err(e) => return unsafe { fail(error, e) },
        };
        // SAFETY: checked non-NULL.
        unsafe { *out = Box::into_raw(conn) };
        acp_status::ACP_OK
    })
}

fn fd_reader(fd: OwnedFd) -> std::io::Result<BoxReader> {
    let file = std::fs::File::from(fd);
    let kind = file.metadata()?.file_type();
    if kind.is_fifo() {
        Ok(Box::new(tokio::net::unix::pipe::Receiver::from_file(file)?))
    } else if kind.is_socket() {
        Ok(Box::new(SocketFd::new(file.into())?))
    } else {
        Ok(Box::new(tokio::fs::File::from_std(file)))
    }
}

fn fd_writer(fd: OwnedFd) -> std::io::Result<libacp_core::transport::BoxWriter> {
    let file = std::fs::File::from(fd);
    let kind = file.metadata()?.file_type();
    if kind.is_fifo() {
        Ok(Box::new(tokio::net::unix::pipe::Sender::from_file(file)?))
    } else if kind.is_socket() {
        Ok(Box::new(SocketFd::new(file.into())?))
    } else {
        Ok(Box::new(tokio::fs::File::from_std(file)))
    }
}

/// A socket descriptor (any domain) driven by the runtime's reactor. Not
/// `tokio::fs::File`: that reads in a blocking thread that no close can
/// interrupt, so the socket stayed open (and the peer never saw the end of
/// the stream) after the connection had ended. Shutting the write half down
/// is `shutdown(SHUT_WR)`, so the peer sees the end of the stream even while
/// a `dup` of the descriptor is still open for reading.
struct SocketFd(AsyncFd<OwnedFd>);

impl SocketFd {
    fn new(fd: OwnedFd) -> std::io::Result<Self> {
        let raw = fd.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own.
        let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0 || unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is an open descriptor owned by the AsyncFd from here
        // on, so it stays open and the same for the AsyncFd's lifetime.
        let registered = unsafe { AsyncFd::register(fd) }.map_err(std::io::Error::from)?;
        Ok(Self(registered))
    }
}

/// The result of a `read`/`send`-like call: a count or the OS error.
fn io_result(n: isize) -> std::io::Result<usize> {
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

impl AsyncRead for SocketFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let mut guard = match self.0.poll_read_ready(cx) {
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            let unfilled = buf.initialize_unfilled();
            let read = guard.try_io(|fd| {
                // SAFETY: reading at most `unfilled.len()` bytes into it.
                io_result(unsafe {
                    libc::read(
                        fd.as_raw_fd(),
                        unfilled.as_mut_ptr().cast::<c_void>(),
                        unfilled.len(),
                    )
                })
            });
            match read {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for SocketFd {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        loop {
            let mut guard = match self.0.poll_write_ready(cx) {
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            let sent = guard.try_io(|fd| {
                // SAFETY: sending at most `data.len()` bytes from it; no SIGPIPE.
                io_result(unsafe {
                    libc::send(
                        fd.as_raw_fd(),
                        data.as_ptr().cast::<c_void>(),
                        data.len(),
                        libc::MSG_NOSIGNAL,
                    )
                })
            });
            match sent {
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // SAFETY: shutdown on a socket we own.
        let r = unsafe { libc::shutdown(self.0.get_ref().as_raw_fd(), libc::SHUT_WR) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOTCONN) {
                return Poll::Ready(Err(e));
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Connects over two file descriptors (pipes, sockets, files) in `role`
/// (an `acp_role`).
/// Takes ownership of both (closed when the connection ends; pass the same
/// descriptor twice only if it was `dup`ed). Pipes and sockets are made
/// non-blocking; closing a socket connection shuts its write half down, so
/// the peer sees the end of the stream even through a `dup`.
///
/// # Safety
/// Pointers per include/README.md; the descriptors are open and owned by
/// the caller, who gives them up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_from_fds(
    options: *const acp_options,
    role: i32,
    read_fd: i32,
    write_fd: i32,
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
) -> acp_status {
    crate::ffi_guard(|| {
        if out.is_null() {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        }
        let Some(role) = role_of(role) else {
            return acp_status::ACP_ERR_INVALID_ARGUMENT;
        };
        if read_fd < 0 || write_fd < 0 || read_fd == write_fd {
            return acp_status::ACP_ERR_INVALID_ARGUMENT;
        }
        // SAFETY: NULL or a live acp_options.
        let options = unsafe { options.as_ref() }.cloned().unwrap_or_default();
        let Some(rt) = runtime::handle() else {
            // SAFETY: `error` per the contract.
            return unsafe { fail(error, no_runtime()) };
        };
        let _enter = rt.enter();
        // SAFETY: the caller hands over ownership of open descriptors.
        let (r, w) = unsafe {
            (
                OwnedFd::from_raw_fd(read_fd),
                OwnedFd::from_raw_fd(write_fd),
            )
        };
        let transport = match (fd_reader(r), fd_writer(w)) {
            (Ok(r), Ok(w)) => Transport::new(r, w),
            (Err(e), _) | (_, Err(e)) => {
                // SAFETY: `error` per the contract.
                return unsafe {
                    fail(error, acp_error::new(acp_status::ACP_ERR_IO, e.to_string()))
                };
            }
        };
        let queue = Arc::new(EventQueue::new(
            options.event_queue,
            options.event_callback.is_some(),
        ));
        let conn = match build(&options, role, queue, transport, rt) {
            Ok(conn) => conn,
            // SAFETY: `error` per the contract.
            Err(e) => return unsafe { fail(error, e) },
        };
        // SAFETY: checked non-NULL.
        unsafe { *out = Box::into_raw(conn) };
        acp_status::ACP_OK
    })
}

/// Agent side: serves on this process's stdin and stdout (write nothing
/// else to stdout; log to stderr).
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_serve_stdio(
    options: *const acp_options,
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
) -> acp_status {
    crate::ffi_guard(|| {
        if out.is_null() {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        }
        // SAFETY: NULL or a live acp_options.
        let options = unsafe { options.as_ref() }.cloned().unwrap_or_default();
        let Some(rt) = runtime::handle() else {
            // SAFETY: `error` per the contract.
            return unsafe { fail(error, no_runtime()) };
        };
        let _enter = rt.enter();
        let queue = Arc::new(EventQueue::new(
            options.event_queue,
            options.event_callback.is_some(),
        ));
        let conn = match build(&options, Role::Agent, queue, Transport::stdio(), rt) {
            Ok(conn) => conn,
            // SAFETY: `error` per the contract.
            Err(e) => return unsafe { fail(error, e) },
        };
        // SAFETY: checked non-NULL.
        unsafe { *out = Box::into_raw(conn) };
        acp_status::ACP_OK
    })
}

/// Runs `f` on the connection behind `conn`.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`.
unsafe fn with(
    conn: *const acp_connection,
    f: impl FnOnce(&acp_connection) -> acp_status,
) -> acp_status {
    crate::ffi_guard(|| {
        // SAFETY: per the contract.
        match unsafe { conn.as_ref() } {
            Some(c) => f(c),
            None => acp_status::ACP_ERR_NULL_ARGUMENT,
        }
    })
}

impl acp_connection {
    /// Runs a future to completion on the calling (host) thread.
    fn block_on<F: std::future::Future>(&self, f: F) -> Result<F::Output, acp_status> {
        if runtime::on_runtime_thread() {
            return Err(acp_status::ACP_ERR_WRONG_THREAD);
        }
        Ok(self.runtime.block_on(f))
    }
}

/// Sends a request, checked against the protocol first: a call that must
/// not be sent fails at once with `ACP_ERR_REFUSED` (or
/// `ACP_ERR_INVALID_ARGUMENT` for invalid params, `ACP_ERR_CLOSED` once
/// the connection is closed) and the reason in `*error`. Otherwise it is
/// queued in call order, and its result arrives
/// as an `ACP_EVENT_RESULT` event carrying `call_data`. `params` is JSON
/// text (NULL/0: no params). If `out_call` is non-NULL it receives a handle
/// to cancel the call (owned; free with `acp_call_free`). Never blocks.
///
/// # Safety
/// Pointers per include/README.md; `call_data` is only handed back.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_request(
    conn: *const acp_connection,
    method: acp_str,
    params: acp_str,
    call_data: *mut c_void,
    out_call: *mut *mut acp_call,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            // SAFETY: strings per the contract.
            let parsed = in_str(method.ptr, method.len)
                .and_then(|m| in_params(params.ptr, params.len).map(|p| (m, p)));
            let (method, params) = match parsed {
                Ok(v) => v,
                // SAFETY: `error` per the contract.
                Err(e) => return fail(error, e),
            };
            let _enter = c.runtime.enter();
            let mut call = c.peer.request(method, params);
            if let Some(e) = call.local_error() {
                return fail(error, acp_error::from_call(e));
            }
            // Written only on success (out-params are written only on ACP_OK).
            let handle = if out_call.is_null() {
                None
            } else {
                call.cancel_handle()
            };
            let tag = call_data as usize;
            let queue = Arc::clone(&c.queue);
            let deliver =
                move |result: Result<Box<libacp_core::RawValue>, libacp_core::CallError>| {
                    let mut event = acp_event::new(acp_event_kind::ACP_EVENT_RESULT);
                    event.call_data = tag;
                    match result {
                        Ok(raw) => event.result = Some(String::from(Box::<str>::from(raw))),
                        Err(e) => {
                            let e = acp_error::from_call(&e);
                            event.status = e.status;
                            event.error = Some(e);
                        }
                    }
                    queue.push(event);
                };
            // Counted before the first poll: once the call is registered,
            // `ACP_EVENT_CLOSED` waits for its result event.
            let outstanding = Arc::clone(&c.outstanding);
            outstanding.begin();
            // Poll once here so the request is queued before this returns
            // (calls go out in the order they are made); a full queue
            // finishes the job in a task.
            let mut cx = Context::from_waker(Waker::noop());
            match Pin::new(&mut call).poll(&mut cx) {
                // The connection is closed already: `ACP_EVENT_CLOSED` may
                // have been delivered, after which no result event could
                // come, so the call fails here and now.
                Poll::Ready(Err(e @ libacp_core::CallError::Connection(_))) => {
                    outstanding.end();
                    return fail(error, acp_error::from_call(&e));
                }
                Poll::Ready(result) => {
                    deliver(result);
                    outstanding.end();
                }
                Poll::Pending => {
                    c.runtime.spawn(async move {
                        deliver(call.await);
                        outstanding.end();
                    });
                }
            }
            if !out_call.is_null() {
                *out_call = handle.map_or(std::ptr::null_mut(), |handle| {
                    Box::into_raw(Box::new(acp_call { handle }))
                });
            }
            acp_status::ACP_OK
        })
    }
}

/// Sends a notification, checked against the protocol first. Blocks while
/// the outgoing queue is full (back-pressure). Not on libacp's threads.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_notify(
    conn: *const acp_connection,
    method: acp_str,
    params: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            let parsed = in_str(method.ptr, method.len)
                .and_then(|m| in_params(params.ptr, params.len).map(|p| (m, p)));
            let (method, params) = match parsed {
                Ok(v) => v,
                Err(e) => return fail(error, e),
            };
            match c.block_on(c.peer.notify(method, params)) {
                Ok(Ok(())) => acp_status::ACP_OK,
                Ok(Err(e)) => fail(error, acp_error::from_call(&e)),
                Err(status) => status,
            }
        })
    }
}

/// Client side: cancels the session's prompt turn with the core's
/// semantics (sends `session/cancel`, answers the session's pending
/// permission requests `cancelled`, marks its tool calls cancelled in the
/// session model). Blocks briefly; not on libacp's threads.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_cancel_session(
    conn: *const acp_connection,
    session_id: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            let id = match in_str(session_id.ptr, session_id.len) {
                Ok(id) => id,
                Err(e) => return fail(error, e),
            };
            match c.block_on(c.peer.cancel_session(id)) {
                Ok(Ok(())) => acp_status::ACP_OK,
                Ok(Err(e)) => fail(error, acp_error::from_call(&e)),
                Err(status) => status,
            }
        })
    }
}

/// Poll mode: moves the next event into `*out` (owned; free with
/// `acp_event_free`), or returns `ACP_ERR_EMPTY`. `ACP_ERR_WRONG_MODE` in
/// callback mode.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_next_event(
    conn: *const acp_connection,
    out: *mut *mut acp_event,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            if out.is_null() {
                return acp_status::ACP_ERR_NULL_ARGUMENT;
            }
            if c.callback_mode {
                return acp_status::ACP_ERR_WRONG_MODE;
            }
            match c.queue.pop() {
                Some(event) => {
                    *out = Box::into_raw(Box::new(event));
                    acp_status::ACP_OK
                }
                None => acp_status::ACP_ERR_EMPTY,
            }
        })
    }
}

/// Poll mode: a descriptor readable while events wait (add it to your event
/// loop; do not read or close it). -1 in callback mode or if `conn` is NULL.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_wakeup_fd(conn: *const acp_connection) -> i32 {
    crate::ffi_guard_or(-1, || {
        // SAFETY: per the contract.
        match unsafe { conn.as_ref() } {
            Some(c) if !c.callback_mode => c.queue.wake_fd(),
            _ => -1,
        }
    })
}

/// The negotiated protocol version, or -1 before `initialize` completed.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_protocol_version(conn: *const acp_connection) -> i32 {
    crate::ffi_guard_or(-1, || {
        // SAFETY: per the contract.
        unsafe { conn.as_ref() }
            .and_then(|c| c.peer.protocol_version())
            .map_or(-1, i32::from)
    })
}

/// The capabilities the peer advertised, as JSON text (owned; free with
/// `acp_string_free`). `{}` before `initialize`.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_peer_capabilities(
    conn: *const acp_connection,
    out: *mut *mut acp_string,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            if out.is_null() {
                return acp_status::ACP_ERR_NULL_ARGUMENT;
            }
            *out = acp_string::boxed(c.peer.peer_capabilities().to_string());
            acp_status::ACP_OK
        })
    }
}

/// Client side, with the session model enabled: the session's state as JSON
/// (owned; free with `acp_string_free`). Its shape is documented in
/// `core/src/services/session_model.rs`. `ACP_ERR_WRONG_MODE` if the model
/// is off, `ACP_ERR_INVALID_ARGUMENT` for an unknown session.
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_session_snapshot(
    conn: *const acp_connection,
    session_id: acp_str,
    out: *mut *mut acp_string,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| {
            if out.is_null() {
                return acp_status::ACP_ERR_NULL_ARGUMENT;
            }
            let id = match in_str(session_id.ptr, session_id.len) {
                Ok(id) => id,
                Err(e) => return fail(error, e),
            };
            let Some(store) = c.peer.services().sessions else {
                return fail(
                    error,
                    acp_error::new(
                        acp_status::ACP_ERR_WRONG_MODE,
                        "the session model is not enabled",
                    ),
                );
            };
            match store.snapshot_json(id) {
                Some(v) => {
                    *out = acp_string::boxed(v.to_string());
                    acp_status::ACP_OK
                }
                None => fail(
                    error,
                    acp_error::new(
                        acp_status::ACP_ERR_INVALID_ARGUMENT,
                        format!("unknown session `{id}`"),
                    ),
                ),
            }
        })
    }
}

/// Closes the connection and waits until it is closed: pending calls end
/// with `ACP_ERR_CLOSED` result events, queued frames are written, a
/// spawned agent is shut down (stdin close, SIGTERM, SIGKILL). Idempotent.
/// Not on libacp's threads (`ACP_ERR_WRONG_THREAD`); allowed in an event
/// callback.
///
/// # Safety
/// `conn` is a live `acp_connection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_close(conn: *const acp_connection) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        with(conn, |c| match c.block_on(c.peer.close()) {
            Ok(()) => acp_status::ACP_OK,
            Err(status) => status,
        })
    }
}

/// Closes (without waiting) and frees the connection. Events not yet taken
/// are dropped (their requests answered `-32603`). In callback mode it
/// waits for the dispatch thread to deliver `ACP_EVENT_CLOSED`, unless it
/// is called from that thread. NULL is ignored.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`, freed once, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_free(conn: *mut acp_connection) {
    crate::ffi_guard_or((), || {
        if conn.is_null() {
            return;
        }
        // SAFETY: created by Box::into_raw, freed once.
        let mut conn = unsafe { Box::from_raw(conn) };
        drop(conn.acp.take()); // the last owner: the connection closes
        let handle = conn
            .dispatch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle
            && Some(std::thread::current().id()) != conn.dispatch_id
        {
            let _ = handle.join();
        }
    });
}
