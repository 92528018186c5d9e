//! `acp_options`: how a connection is made. Create with `acp_options_new`,
//! set what differs from the defaults, pass to a connection constructor
//! (which copies it), free with `acp_options_free`.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use crate::error::acp_error;
use crate::events::acp_event;
use crate::export;
use crate::status::acp_status;

/// Frame delimiting on the wire.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_framing {
    /// Newline-delimited JSON (the default; what ACP peers speak).
    ACP_FRAMING_NDJSON = 0,
    /// LSP-style `Content-Length` headers.
    ACP_FRAMING_CONTENT_LENGTH = 1,
}

/// Which way a traced frame went.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_direction {
    /// Read from the peer.
    ACP_DIRECTION_INCOMING = 0,
    /// Written to the peer.
    ACP_DIRECTION_OUTGOING = 1,
}

/// Receives each event in callback mode, on the connection's dispatch
/// thread, one at a time. The callee owns `event` (free it with
/// `acp_event_free`). The first call comes after the constructor
/// returned: the connection pointer it wrote to `*out` is there to read.
pub type acp_event_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *mut acp_event)>;

/// Sees every frame (`frame`, `len` borrowed for the call). Runs on the
/// thread that reads or writes the frame: libacp's I/O threads, or the
/// thread whose `acp_*` call wrote an answer or a request directly (when
/// the writer was idle), possibly concurrently with events: it must be
/// thread-safe, quick, and must not call blocking `acp_*` functions (they
/// return `ACP_ERR_WRONG_THREAD` inside it, on any thread).
pub type acp_trace_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        direction: acp_direction,
        frame: *const c_char,
        len: usize,
    ),
>;

/// A host pointer handed back in callbacks. libacp never dereferences it;
/// the host guarantees it may be used from the threads named in the docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserData(pub(crate) *mut c_void);

// SAFETY: libacp only passes the pointer back to the host's callbacks; the
// host's contract (include/README.md) is that it may be used from the
// dispatch or I/O threads.
unsafe impl Send for UserData {}
// SAFETY: as above; never dereferenced by libacp.
unsafe impl Sync for UserData {}

/// Connection settings.
#[derive(Debug, Clone)]
pub struct acp_options {
    pub(crate) framing: acp_framing,
    pub(crate) max_frame_size: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) after_stdin_close: Duration,
    pub(crate) after_sigterm: Duration,
    pub(crate) event_callback:
        Option<(unsafe extern "C" fn(*mut c_void, *mut acp_event), UserData)>,
    pub(crate) trace_callback: Option<(
        unsafe extern "C" fn(*mut c_void, acp_direction, *const c_char, usize),
        UserData,
    )>,
    pub(crate) stderr_events: bool,
    pub(crate) require_auth: bool,
    pub(crate) session_model: bool,
    pub(crate) fs: bool,
    pub(crate) terminals: bool,
    pub(crate) event_queue: usize,
}

impl Default for acp_options {
    fn default() -> Self {
        Self {
            framing: acp_framing::ACP_FRAMING_NDJSON,
            max_frame_size: libacp_core::framing::DEFAULT_MAX_FRAME_SIZE,
            request_timeout: None,
            after_stdin_close: Duration::from_secs(2),
            after_sigterm: Duration::from_secs(2),
            event_callback: None,
            trace_callback: None,
            stderr_events: true,
            require_auth: false,
            session_model: false,
            fs: false,
            terminals: false,
            event_queue: 1024,
        }
    }
}

/// Writes new default options to `*out` (owned; free with
/// `acp_options_free`): NDJSON, 64 MiB frames, no request timeout, 2 s + 2 s
/// shutdown grace, poll mode, the agent's stderr delivered as events, no
/// client services.
///
/// # Safety
/// `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_new(out: *mut *mut acp_options) -> acp_status {
    // SAFETY: `out` is NULL or valid, per this function's `# Safety`.
    unsafe { export::output(out, export::NO_ERROR, || Ok(Box::default())) }
}

impl export::Owned for acp_options {}

/// Frees options. NULL is ignored.
///
/// # Safety
/// `options` is NULL or from `acp_options_new`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_free(options: *mut acp_options) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(options) }
}

/// A setter: `f` changes the options behind `options`.
///
/// # Safety
/// `options` is NULL or a live `acp_options`, not used concurrently.
unsafe fn set(
    options: *mut acp_options,
    f: impl FnOnce(&mut acp_options) -> Result<(), acp_error>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe { export::status(export::NO_ERROR, || f(export::arg_mut(options, "options")?)) }
}

/// Sets the framing (an `acp_framing`).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_framing(
    options: *mut acp_options,
    framing: i32,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.framing = match framing {
                0 => acp_framing::ACP_FRAMING_NDJSON,
                1 => acp_framing::ACP_FRAMING_CONTENT_LENGTH,
                _ => return Err(acp_error::invalid_argument("unknown framing")),
            };
            Ok(())
        })
    }
}

/// Sets the largest frame accepted from the peer (bytes, at least 1).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_max_frame_size(
    options: *mut acp_options,
    bytes: usize,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            if bytes == 0 {
                return Err(acp_error::invalid_argument(
                    "the frame size must be at least 1 byte",
                ));
            }
            o.max_frame_size = bytes;
            Ok(())
        })
    }
}

/// Sets the default timeout of outgoing requests in milliseconds (0: none).
/// A timed-out call is cancelled at the peer and its result is
/// `ACP_ERR_TIMEOUT`.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_request_timeout_ms(
    options: *mut acp_options,
    ms: u64,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.request_timeout = (ms > 0).then(|| Duration::from_millis(ms));
            Ok(())
        })
    }
}

/// Sets the spawned agent's shutdown ladder: wait `after_stdin_close_ms`
/// after closing its stdin, then SIGTERM its process group, wait
/// `after_sigterm_ms`, then SIGKILL it.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_shutdown_grace_ms(
    options: *mut acp_options,
    after_stdin_close_ms: u64,
    after_sigterm_ms: u64,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.after_stdin_close = Duration::from_millis(after_stdin_close_ms);
            o.after_sigterm = Duration::from_millis(after_sigterm_ms);
            Ok(())
        })
    }
}

/// Chooses callback mode: `callback` receives every event on the
/// connection's dispatch thread. NULL `callback` returns to poll mode.
///
/// # Safety
/// `options` is a live `acp_options`; `user_data` may be used from the
/// dispatch thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_event_callback(
    options: *mut acp_options,
    callback: acp_event_callback,
    user_data: *mut c_void,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.event_callback = callback.map(|cb| (cb, UserData(user_data)));
            Ok(())
        })
    }
}

/// Sets a wire-trace callback (NULL removes it). See `acp_trace_callback`
/// for its threading rules.
///
/// # Safety
/// `options` is a live `acp_options`; `user_data` is usable from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_trace_callback(
    options: *mut acp_options,
    callback: acp_trace_callback,
    user_data: *mut c_void,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.trace_callback = callback.map(|cb| (cb, UserData(user_data)));
            Ok(())
        })
    }
}

/// Whether a spawned agent's stderr lines arrive as `ACP_EVENT_LOG` events
/// (true, the default) or go to this process's stderr (false).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_stderr_events(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.stderr_events = enabled;
            Ok(())
        })
    }
}

/// Agent side: sessions need `authenticate` first (`session/new|load|resume`
/// answer `-32000` with `data.authMethods` until then).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_require_auth(
    options: *mut acp_options,
    required: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.require_auth = required;
            Ok(())
        })
    }
}

/// Client side: fold every `session/update` into a session model, read with
/// `acp_connection_session_snapshot`.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_session_model(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.session_model = enabled;
            Ok(())
        })
    }
}

/// Client side: answer `fs/read_text_file` and `fs/write_text_file` in the
/// core, confined to each session's cwd (advertised automatically; the host
/// never sees those requests).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_fs(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.fs = enabled;
            Ok(())
        })
    }
}

/// Client side: answer `terminal/*` in the core with real processes
/// (advertised automatically).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_terminals(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.terminals = enabled;
            Ok(())
        })
    }
}

/// Sets how many events may wait for the host before libacp stops reading
/// from the peer, and from a spawned agent's stderr (back-pressure: a host
/// that falls behind slows them down; no event is dropped). At least 1;
/// default 1024.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_event_queue_capacity(
    options: *mut acp_options,
    events: usize,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            if events == 0 {
                return Err(acp_error::invalid_argument(
                    "the queue must hold at least 1 event",
                ));
            }
            o.event_queue = events;
            Ok(())
        })
    }
}
