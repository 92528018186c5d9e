//! `acp_connection`: an ACP connection in one role, made from options and
//! a transport (a spawned agent, file descriptors, or this process's
//! stdio). Everything it receives arrives as events (see `events`): the
//! core's inbox (`libacp_core::host`) delivers them, woken through an
//! eventfd (poll mode), or taken by the dispatch thread (callback mode),
//! which also reads the transport itself when it is a descriptor (the
//! core's `HostThread`), so a request is read, handed to the event callback
//! and answered on that one thread. Answers and requests the host sends
//! while the writer is idle are written by the host's own thread.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{JoinHandle, ThreadId};

use libacp_core::host::{Bell, HostConnection, HostOptions, HostThread, Inbox, InboxHooks};
use libacp_core::options::{Settings, Use};
use libacp_core::{AcpPeer, AgentCommand, CallOptions, Direction, Role, Transport};

use crate::call::acp_call;
use crate::error::acp_error;
use crate::events::{acp_event, acp_event_kind};
use crate::export;
use crate::gate::CallbackGate;
use crate::options::{UserData, acp_direction, acp_options};
use crate::runtime;
use crate::status::acp_status;
use crate::string::acp_str;
use crate::string::acp_string;

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

/// The dispatch thread's start (callback mode): the thread waits on this
/// doorbell before its first event, rung once the
/// constructor has written `*out` (see [`construct`]), so a callback that
/// reads the variable `*out` points to always finds the connection there.
/// Without it the first events could reach the callback while the
/// constructor was still returning (a bench agent answering
/// `session/prompt` on a fast client found its global connection NULL
/// about once in 400 runs under load).
#[derive(Default)]
pub(crate) struct Doorbell {
    rung: Mutex<bool>,
    cv: Condvar,
}

impl Doorbell {
    pub(crate) fn ring(&self) {
        *self.rung.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_one();
    }

    fn wait(&self) {
        let mut rung = self.rung.lock().unwrap_or_else(PoisonError::into_inner);
        while !*rung {
            rung = self.cv.wait(rung).unwrap_or_else(PoisonError::into_inner);
        }
        *rung = false;
    }
}

/// An ACP connection. Owned by the host; `acp_connection_close` closes it,
/// `acp_connection_free` closes and frees it.
pub struct acp_connection {
    conn: Option<HostConnection<usize>>,
    peer: AcpPeer,
    inbox: Arc<Inbox<usize>>,
    /// Poll mode: the wake-up descriptor, an eventfd readable exactly
    /// while events wait (rung when a batch starts, cleared when the inbox
    /// empties; shared with the inbox's wake).
    wake_fd: Option<Arc<Bell>>,
    callback_mode: bool,
    dispatch: Mutex<Option<JoinHandle<()>>>,
    dispatch_id: Option<ThreadId>,
    /// Rung once the constructor wrote `*out` (callback mode: the
    /// dispatch thread's first event waits for it).
    pub(crate) start: Arc<Doorbell>,
    /// The event callback's `user_data`, read by the dispatch thread once
    /// `start` is rung (a server's connection callback may change it
    /// before).
    pub(crate) event_user_data: Arc<AtomicPtr<c_void>>,
    /// Closed by `acp_connection_free`: no trace callback after it returns.
    trace_gate: Arc<CallbackGate>,
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

fn role_of(role: i32) -> Option<Role> {
    match role {
        r if r == acp_role::ACP_ROLE_CLIENT as i32 => Some(Role::Client),
        r if r == acp_role::ACP_ROLE_AGENT as i32 => Some(Role::Agent),
        _ => None,
    }
}

/// libacp's I/O threads, started on first use.
pub(crate) fn io_runtime() -> Result<&'static tokio::runtime::Runtime, acp_error> {
    runtime::handle().ok_or_else(|| {
        acp_error::new(
            acp_status::ACP_ERR_IO,
            "could not start libacp's I/O threads",
        )
    })
}

/// The inbox of a new connection, with its mode's wake-up: the eventfd in
/// poll mode, the dispatch thread's bell in callback mode.
struct Wiring {
    inbox: Arc<Inbox<usize>>,
    wake_fd: Option<Arc<Bell>>,
    bell: Option<Arc<Bell>>,
}

fn wiring(options: &acp_options) -> Result<Wiring, acp_error> {
    let bell = Bell::new().map_err(|e| {
        acp_error::new(
            acp_status::ACP_ERR_IO,
            format!("could not create the wake-up eventfd: {e}"),
        )
    })?;
    if options.event_callback.is_some() {
        Ok(Wiring {
            inbox: Inbox::new(options.event_queue, bell.wake()),
            wake_fd: None,
            bell: Some(bell),
        })
    } else {
        let reset = Arc::clone(&bell);
        Ok(Wiring {
            inbox: Inbox::with_idle(
                options.event_queue,
                bell.wake(),
                Arc::new(move || reset.clear()),
            ),
            wake_fd: Some(bell),
            bell: None,
        })
    }
}

/// The core's options: the settings the constructor made from the table,
/// plus the trace callback, which goes through `trace_gate`
/// (`acp_connection_free` closes it), and the engine's events through the
/// inbox when the host asked for them.
fn host_options(
    options: &acp_options,
    settings: &Settings,
    trace_gate: &Arc<CallbackGate>,
) -> HostOptions {
    let trace = options.trace_callback.map(|(cb, ud)| {
        let gate = Arc::clone(trace_gate);
        let hook: libacp_core::TraceHook = Arc::new(move |dir: Direction, frame: &[u8]| {
            let dir = match dir {
                Direction::Incoming => acp_direction::ACP_DIRECTION_INCOMING,
                Direction::Outgoing => acp_direction::ACP_DIRECTION_OUTGOING,
            };
            let ud: UserData = ud;
            gate.run(|| {
                // SAFETY: the host registered `cb` with `ud` for exactly
                // this use, and keeps `ud` valid until acp_connection_free
                // returns, which closes the gate first.
                runtime::in_hook(|| unsafe { cb(ud.0, dir, frame.as_ptr().cast(), frame.len()) });
            });
        });
        hook
    });
    let mut acp = settings.acp.clone();
    acp.connection.trace = trace;
    HostOptions {
        acp,
        // Callback mode: the dispatch thread reads a descriptor transport
        // itself (no hand-off from an I/O thread per message). Poll mode:
        // reading stays on libacp's threads, since a C host polls one
        // descriptor (the wake-up fd), not the transport's.
        drive_reads: options.event_callback.is_some(),
        // The engine's events as ACP_EVENT_ENGINE; the trace stays a
        // callback (above).
        hooks: InboxHooks {
            trace: false,
            events: options.engine_events,
            lane: settings.hooks,
        },
    }
}

/// Starts the dispatch thread of callback mode: it takes the events
/// and, with the connection's reader (a descriptor transport), reads the
/// transport itself (the core's [`HostThread`]).
/// Its first event waits for `start` (see [`Doorbell`]).
fn start_dispatch(
    options: &acp_options,
    wiring: &Wiring,
    conn: &HostConnection<usize>,
    start: &Arc<Doorbell>,
    user_data: &Arc<AtomicPtr<c_void>>,
) -> Result<(Option<JoinHandle<()>>, Option<ThreadId>), acp_error> {
    let (Some((cb, _)), Some(bell)) = (options.event_callback, wiring.bell.clone()) else {
        return Ok((None, None));
    };
    let mut events = HostThread::new(Arc::clone(&wiring.inbox), bell, conn.take_reader());
    let start = Arc::clone(start);
    let user_data = Arc::clone(user_data);
    let spawned = std::thread::Builder::new()
        .name("libacp-dispatch".into())
        .spawn(move || {
            // The host's signals go to the host's threads (core::host::runtime).
            libacp_core::host::block_signals();
            start.wait();
            // Final once `start` is rung (see `acp_connection`).
            let ud = UserData(user_data.load(Ordering::Acquire));
            loop {
                let Some(event) = acp_event::of(events.next_delivery()) else {
                    continue;
                };
                let last = event.kind == acp_event_kind::ACP_EVENT_CLOSED;
                // SAFETY: the host registered `cb` with `ud` for this; the
                // event is handed over (the host frees it).
                unsafe { cb(ud.0, Box::into_raw(Box::new(event))) };
                if last {
                    return;
                }
            }
        });
    match spawned {
        Ok(handle) => {
            let id = handle.thread().id();
            Ok((Some(handle), Some(id)))
        }
        Err(e) => Err(acp_error::new(
            acp_status::ACP_ERR_IO,
            format!("could not start the dispatch thread: {e}"),
        )),
    }
}

/// Where a connection's bytes come from.
pub(crate) enum Source {
    Spawn(AgentCommand),
    Transport(Role, Transport),
}

/// Makes the connection with the settings its constructor made: the inbox
/// and its wake-up, the core's connection, then in callback mode the
/// dispatch thread (if it cannot start, the connection is closed again and
/// nothing is left running).
pub(crate) fn build(
    options: &acp_options,
    settings: &Settings,
    source: Source,
    rt: &'static tokio::runtime::Runtime,
) -> Result<Box<acp_connection>, acp_error> {
    let wiring = wiring(options)?;
    let trace_gate = Arc::new(CallbackGate::new());
    let host = host_options(options, settings, &trace_gate);
    let conn = match source {
        Source::Spawn(mut command) => {
            if options.stderr_events {
                command = wiring.inbox.forward_stderr(command);
            }
            HostConnection::spawn_agent(rt.handle(), &command, Arc::clone(&wiring.inbox), host)
                .map_err(|e| acp_error::new(acp_status::ACP_ERR_SPAWN, e.to_string()))?
        }
        Source::Transport(role, transport) => HostConnection::start(
            rt.handle(),
            role,
            transport,
            Arc::clone(&wiring.inbox),
            host,
        ),
    };
    // Events queued meanwhile wait in the inbox for the dispatch thread,
    // which waits for `construct` to open `start`.
    let start = Arc::new(Doorbell::default());
    let user_data = Arc::new(AtomicPtr::new(
        options
            .event_callback
            .map_or(std::ptr::null_mut(), |(_, ud)| ud.0),
    ));
    let (dispatch, dispatch_id) = start_dispatch(options, &wiring, &conn, &start, &user_data)?;
    Ok(Box::new(acp_connection {
        peer: conn.acp_peer(),
        conn: Some(conn),
        inbox: wiring.inbox,
        wake_fd: wiring.wake_fd,
        callback_mode: options.event_callback.is_some(),
        dispatch: Mutex::new(dispatch),
        dispatch_id,
        start,
        event_user_data: user_data,
        trace_gate,
        runtime: rt,
    }))
}

/// A constructor's export: [`export::output`], then (callback mode) lets
/// the dispatch thread deliver, so the event callback runs only once
/// `*out` holds the connection (the contract of `acp_event_callback`).
///
/// # Safety
/// As [`export::output`].
unsafe fn construct(
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
    body: impl FnOnce() -> Result<Box<acp_connection>, acp_error>,
) -> acp_status {
    let mut start = None;
    // SAFETY: per this function's contract.
    let status = unsafe {
        export::output(out, error, || {
            let conn = body()?;
            start = Some(Arc::clone(&conn.start));
            Ok(conn)
        })
    };
    // Set only when `body` succeeded, and then `*out` is written.
    if let Some(start) = start {
        start.ring();
    }
    status
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
    // SAFETY: `options` is NULL or live, the strings and arrays valid for
    // their lengths, `out` and `error` NULL or valid, per this function's
    // `# Safety`.
    unsafe {
        construct(out, error, || {
            let options = options_or_default(options);
            let settings = options.settings(Role::Client, Use::Spawn)?;
            let program = program.to_str()?;
            if program.is_empty() {
                return Err(acp_error::invalid_argument("program is empty"));
            }
            let mut command = AgentCommand::new(program);
            for a in export::slice_arg(args, nargs, "args")? {
                command = command.args([a.to_str()?]);
            }
            // The options' `cwd`, `env`, `clear_env` and grace first; the
            // arguments' `env` and `cwd` on top.
            command = settings.spawn.apply(command);
            for v in export::slice_arg(env, nenv, "env")? {
                command = command.env(v.name.to_str()?, v.value.to_str()?);
            }
            let cwd = cwd.to_str()?;
            if !cwd.is_empty() {
                command = command.cwd(cwd);
            }
            build(&options, &settings, Source::Spawn(command), io_runtime()?)
        })
    }
}

/// Connects over file descriptors in `role` (an `acp_role`): a read end and
/// a write end (pipes, FIFOs, sockets, files), or one connected stream
/// socket passed as both `read_fd` and `write_fd`. The contract is the
/// core's `Transport::from_fds`: pipes and FIFOs are set non-blocking (do
/// not share their open file descriptions); sockets are used with
/// `MSG_DONTWAIT` and their flags left alone; closing the connection shuts
/// a socket's write side down, so the peer sees end of stream even through
/// a `dup`; files and terminals go through blocking threads.
/// `ACP_ERR_INVALID_ARGUMENT` (nothing taken over: the descriptors are
/// still the caller's): a descriptor that is not open, the same descriptor
/// twice when it is not a stream socket, a socket that is not a stream
/// socket, an unknown role. On success (and on `ACP_ERR_IO`) libacp owns
/// both descriptors and closes them when the connection ends.
///
/// # Safety
/// Pointers per include/README.md; open descriptors are the caller's to
/// give up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_from_fds(
    options: *const acp_options,
    role: i32,
    read_fd: i32,
    write_fd: i32,
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `options` is NULL or live, `out` and `error` NULL or valid,
    // and open descriptors are given up, per this function's `# Safety`.
    unsafe {
        construct(out, error, || {
            let role = role_of(role).ok_or_else(|| acp_error::invalid_argument("unknown role"))?;
            let options = options_or_default(options);
            let settings = options.settings(role, Use::Local)?;
            let rt = io_runtime()?;
            // Every check is made before anything is taken over.
            let transport = Transport::from_raw_fds(read_fd, write_fd).map_err(|e| {
                let status = if e.kind() == std::io::ErrorKind::InvalidInput {
                    acp_status::ACP_ERR_INVALID_ARGUMENT
                } else {
                    acp_status::ACP_ERR_IO
                };
                acp_error::new(status, e.to_string())
            })?;
            build(&options, &settings, Source::Transport(role, transport), rt)
        })
    }
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
    // SAFETY: `options` is NULL or live, `out` and `error` NULL or valid,
    // per this function's `# Safety`.
    unsafe {
        construct(out, error, || {
            let options = options_or_default(options);
            let settings = options.settings(Role::Agent, Use::Local)?;
            build(
                &options,
                &settings,
                Source::Transport(Role::Agent, Transport::stdio()),
                io_runtime()?,
            )
        })
    }
}

/// Client side: connects to a remote agent at `url` (`ws://`, `wss://`:
/// WebSocket; `http://`, `https://`: Streamable HTTP, or WebSocket first
/// with the option `prefer_websocket`) and makes a client connection over
/// it, in the options' event mode. Blocks until connected, bounded by the
/// options `connect_timeout_ms` and `handshake_timeout_ms` (10 s each by
/// default); not on libacp's threads (`ACP_ERR_WRONG_THREAD`). `options`
/// may be NULL for the defaults; the options that apply are those of every
/// connection, of client connections and of a client connecting by URL
/// (`headers`, `ca_file`, `keepalive_interval_ms`, ...); any other option
/// set by name is refused (`ACP_ERR_INVALID_ARGUMENT`, kind
/// `not_applicable`). On success `*out` is owned (free with
/// `acp_connection_free`).
///
/// A failed connect is `ACP_ERR_REMOTE`: `acp_error_kind` says how
/// (`invalid_url`, `dns`, `refused`, `timeout`, `tls`, `unauthorized`,
/// `forbidden`, `not_found`, `version_refused`, `http`, `io`) and
/// `acp_error_http_status` gives the HTTP status when there was one. Over
/// WebSocket the handshake is made here; over Streamable HTTP the first
/// request is `initialize`, so a refused token or a wrong path shows as
/// that call's failure (`ACP_ERR_REMOTE` with the same kind) and in the
/// `ACP_EVENT_CLOSED` event that follows (`acp_event_error`).
///
/// # Safety
/// Pointers per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_connect(
    options: *const acp_options,
    url: acp_str,
    out: *mut *mut acp_connection,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `options` is NULL or live, `url` valid, `out` and `error`
    // NULL or valid, per this function's `# Safety`.
    unsafe {
        construct(out, error, || {
            let options = options_or_default(options);
            let settings = options.settings(Role::Client, Use::Connect)?;
            let url = url.to_str()?;
            if runtime::on_runtime_thread() {
                return Err(wrong_thread());
            }
            let rt = io_runtime()?;
            let transport = rt
                .block_on(libacp_core::remote::connect(url, &settings.remote))
                .map_err(|e| acp_error::from_remote(&e))?;
            build(
                &options,
                &settings,
                Source::Transport(Role::Client, transport),
                rt,
            )
        })
    }
}

/// The error of a blocking function called where blocking would deadlock.
pub(crate) fn wrong_thread() -> acp_error {
    acp_error::new(
        acp_status::ACP_ERR_WRONG_THREAD,
        "a blocking function was called on one of libacp's threads \
         (a trace or log callback, or a frame being written)",
    )
}

/// A copy of the options behind `options`, or the defaults for NULL.
///
/// # Safety
/// `options` is NULL or a live `acp_options`.
pub(crate) unsafe fn options_or_default(options: *const acp_options) -> acp_options {
    // SAFETY: per this function's contract.
    unsafe { options.as_ref() }.cloned().unwrap_or_default()
}

impl acp_connection {
    /// Runs a future to completion on the calling (host) thread.
    fn block_on<F: std::future::Future>(&self, f: F) -> Result<F::Output, acp_error> {
        if runtime::on_runtime_thread() {
            return Err(wrong_thread());
        }
        Ok(self.runtime.block_on(f))
    }

    /// The core's connection, until `acp_connection_free`.
    fn open(&self) -> Result<&HostConnection<usize>, acp_error> {
        self.conn
            .as_ref()
            .ok_or_else(|| acp_error::new(acp_status::ACP_ERR_CLOSED, "the connection is closed"))
    }
}

/// An export on one connection: `f` of the connection behind `conn`.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`; `error` NULL or valid.
unsafe fn on(
    conn: *const acp_connection,
    error: *mut *mut acp_error,
    f: impl FnOnce(&acp_connection) -> Result<(), acp_error>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe { export::status(error, || f(export::arg(conn, "conn")?)) }
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
    // SAFETY: `conn` is NULL or live, the strings valid, `out_call` and
    // `error` NULL or valid, per this function's `# Safety`.
    unsafe {
        export::output(export::Optional(out_call), error, || {
            let c = export::arg(conn, "conn")?;
            let (method, params) = (method.to_str()?, params.to_params()?);
            // The result (or the failure) arrives as an ACP_EVENT_RESULT
            // carrying `call_data`, before ACP_EVENT_CLOSED.
            let handle = c
                .open()?
                .call(method, params, CallOptions::default(), call_data as usize)
                .map_err(|e| acp_error::from_call(&e))?;
            Ok(Box::new(acp_call { handle }))
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
    // SAFETY: `conn` is NULL or live, the strings valid, `error` NULL or
    // valid, per this function's `# Safety`.
    unsafe {
        on(conn, error, |c| {
            let (method, params) = (method.to_str()?, params.to_params()?);
            c.block_on(c.peer.notify(method, params))?
                .map_err(|e| acp_error::from_call(&e))
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
    // SAFETY: `conn` is NULL or live, `session_id` valid, `error` NULL or
    // valid, per this function's `# Safety`.
    unsafe {
        on(conn, error, |c| {
            let id = session_id.to_str()?;
            c.block_on(c.peer.cancel_session(id))?
                .map_err(|e| acp_error::from_call(&e))
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
    // SAFETY: `conn` is NULL or live, `out` NULL or valid, per this
    // function's `# Safety`.
    unsafe {
        export::output(out, export::NO_ERROR, || {
            let c = export::arg(conn, "conn")?;
            if c.callback_mode {
                return Err(acp_error::new(
                    acp_status::ACP_ERR_WRONG_MODE,
                    "callback mode: events go to the callback",
                ));
            }
            // Deliveries C hosts do not see are skipped.
            std::iter::from_fn(|| c.inbox.pop())
                .find_map(acp_event::of)
                .map(Box::new)
                .ok_or_else(|| acp_error::new(acp_status::ACP_ERR_EMPTY, "no event is waiting"))
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
    // SAFETY: `conn` is NULL or live, per this function's `# Safety`.
    unsafe {
        export::get(conn, -1, |c| {
            c.wake_fd.as_ref().map_or(-1, |bell| bell.fd())
        })
    }
}

/// The negotiated protocol version, or -1 before `initialize` completed.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_protocol_version(conn: *const acp_connection) -> i32 {
    // SAFETY: `conn` is NULL or live, per this function's `# Safety`.
    unsafe {
        export::get(conn, -1, |c| {
            c.peer.protocol_version().map_or(-1, i32::from)
        })
    }
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
    // SAFETY: `conn` is NULL or live, `out` NULL or valid, per this
    // function's `# Safety`.
    unsafe {
        export::output(out, export::NO_ERROR, || {
            let c = export::arg(conn, "conn")?;
            Ok(acp_string::boxed(c.peer.peer_capabilities().to_string()))
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
    // SAFETY: `conn` is NULL or live, `session_id` valid, `out` and `error`
    // NULL or valid, per this function's `# Safety`.
    unsafe {
        export::output(out, error, || {
            let c = export::arg(conn, "conn")?;
            let id = session_id.to_str()?;
            let store = c.peer.services().sessions.ok_or_else(|| {
                acp_error::new(
                    acp_status::ACP_ERR_WRONG_MODE,
                    "the session model is not enabled",
                )
            })?;
            let snapshot = store
                .snapshot_json(id)
                .ok_or_else(|| acp_error::invalid_argument(format!("unknown session `{id}`")))?;
            Ok(acp_string::boxed(snapshot.to_string()))
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
    // SAFETY: `conn` is NULL or live, per this function's `# Safety`.
    unsafe { on(conn, export::NO_ERROR, |c| c.block_on(c.peer.close())) }
}

impl export::Owned for acp_connection {}

/// Closes (without waiting) and frees the connection. Events not yet taken
/// are dropped (their requests answered `-32603`). In callback mode it
/// waits for the dispatch thread to deliver `ACP_EVENT_CLOSED`, unless it
/// is called from that thread (the event callback then still gets the
/// events queued before that one, and that one, after the current call
/// returns: its `user_data` lives until then). Once it
/// returns the trace callback is not running and is never called again
/// (it waits for a call in progress on another thread). NULL is ignored.
///
/// # Safety
/// `conn` is NULL or a live `acp_connection`, freed once, not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_connection_free(conn: *mut acp_connection) {
    // SAFETY: as this function's `# Safety` says.
    unsafe {
        export::free_with(conn, |mut conn| {
            drop(conn.conn.take()); // the owner: the connection closes
            conn.start.ring(); // rung already; never joined while held
            let handle = conn
                .dispatch
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let on_dispatch = Some(std::thread::current().id()) == conn.dispatch_id;
            if let Some(handle) = handle
                && !on_dispatch
            {
                let _ = handle.join();
            }
            // Nobody takes from the inbox any more (poll mode, or the
            // dispatch thread ended): what waits there, a request that came
            // before the close, would keep the engine and its socket alive
            // (the request holds the engine, which holds the inbox). Not
            // when freed inside its own callback: that thread goes on until
            // `ACP_EVENT_CLOSED`.
            if !on_dispatch {
                conn.inbox.discard();
            }
            // The engine may still write (a flush on close) on its threads:
            // the trace callback's user_data is the host's to free from now
            // on.
            conn.trace_gate.close();
        });
    }
}

#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;
