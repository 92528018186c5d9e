//! `acp_event` and the per-connection event queue: the one path by which
//! everything reaches the host, in order, in both modes (see
//! include/README.md, "Threads and events").
//!
//! The queue is bounded for notifications (the core's dispatcher waits for
//! room, so a host that stops taking events slows the peer down); requests,
//! results and the final `ACP_EVENT_CLOSED` are always accepted (each is
//! bounded by something else: the dispatcher's pace, the host's own calls).
//! A wake-up `eventfd` is readable exactly while the queue is not empty.

use std::collections::VecDeque;
use std::ffi::{c_char, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::error::acp_error;
use crate::request::acp_request;
use crate::status::acp_status;
use crate::text::out_str;

/// What an event is about.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_event_kind {
    /// Not an event (what `acp_event_kind` returns for NULL).
    ACP_EVENT_NONE = 0,
    /// A request from the peer: take it with `acp_event_take_request`.
    ACP_EVENT_REQUEST = 1,
    /// A notification from the peer: `acp_event_method`, `acp_event_params`.
    ACP_EVENT_NOTIFICATION = 2,
    /// The result of one of your calls: `acp_event_call_data`,
    /// `acp_event_result_status`, `acp_event_result` or `acp_event_error`.
    ACP_EVENT_RESULT = 3,
    /// The peer cancelled one of its requests: `acp_event_request_id`.
    ACP_EVENT_REQUEST_CANCELLED = 4,
    /// A line of the spawned agent's stderr: `acp_event_text`.
    ACP_EVENT_LOG = 5,
    /// The connection closed (always the last event): `acp_event_text` says why.
    ACP_EVENT_CLOSED = 6,
}

/// One event, owned by the host; free with `acp_event_free`.
#[derive(Debug)]
pub struct acp_event {
    pub(crate) kind: acp_event_kind,
    pub(crate) method: String,
    pub(crate) params: Option<String>,
    pub(crate) request: Option<Box<acp_request>>,
    pub(crate) request_id: Option<String>,
    pub(crate) call_data: usize,
    pub(crate) status: acp_status,
    pub(crate) result: Option<String>,
    pub(crate) error: Option<acp_error>,
    pub(crate) text: String,
}

impl acp_event {
    pub(crate) fn new(kind: acp_event_kind) -> Self {
        Self {
            kind,
            method: String::new(),
            params: None,
            request: None,
            request_id: None,
            call_data: 0,
            status: acp_status::ACP_OK,
            result: None,
            error: None,
            text: String::new(),
        }
    }
}

struct State {
    events: VecDeque<acp_event>,
    /// `ACP_EVENT_CLOSED` was queued: nothing else is accepted.
    closed: bool,
    /// Log lines dropped because the queue was full.
    dropped_logs: usize,
}

/// The queue between libacp's threads and the host.
pub(crate) struct EventQueue {
    state: Mutex<State>,
    capacity: usize,
    /// Wakes async producers waiting for room.
    space: tokio::sync::Notify,
    /// Wakes the dispatch thread (callback mode).
    ready: Condvar,
    /// Callback mode: notify `ready` (in poll mode nobody waits on it, and
    /// a notify costs a futex call per event).
    callback_mode: bool,
    /// Readable while events wait (poll mode only: in callback mode nobody
    /// reads it, and it costs a write and a read per idle wake-up).
    wake: Option<OwnedFd>,
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventQueue")
            .field("capacity", &self.capacity)
            .finish()
    }
}

fn eventfd() -> Option<OwnedFd> {
    // SAFETY: eventfd(2) with valid flags; the returned fd is checked and
    // owned from here on.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    // SAFETY: a non-negative return is a fresh fd we own.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

impl EventQueue {
    /// A queue for `capacity` events, for a host polling it (wake-up fd) or
    /// for the dispatch thread of callback mode (`callback_mode`).
    pub(crate) fn new(capacity: usize, callback_mode: bool) -> Self {
        Self {
            state: Mutex::new(State {
                events: VecDeque::new(),
                closed: false,
                dropped_logs: 0,
            }),
            capacity: capacity.max(1),
            space: tokio::sync::Notify::new(),
            ready: Condvar::new(),
            callback_mode,
            wake: if callback_mode { None } else { eventfd() },
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn wake_fd(&self) -> i32 {
        self.wake.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    fn signal(&self, state: &State) {
        if state.events.len() == 1
            && let Some(fd) = &self.wake
        {
            let one: u64 = 1;
            // SAFETY: writing 8 bytes from a valid u64 to our eventfd.
            let _ = unsafe { libc::write(fd.as_raw_fd(), (&raw const one).cast::<c_void>(), 8) };
        }
        if self.callback_mode {
            self.ready.notify_one();
        }
    }

    /// Queues an event whatever the queue's length. Returns `false` after
    /// `ACP_EVENT_CLOSED` (the event is dropped).
    pub(crate) fn push(&self, event: acp_event) -> bool {
        let mut state = self.lock();
        if state.closed {
            return false;
        }
        if event.kind == acp_event_kind::ACP_EVENT_CLOSED {
            state.closed = true;
        }
        state.events.push_back(event);
        self.signal(&state);
        true
    }

    /// Queues a log line unless the queue is full (then it is counted and
    /// reported with the next line that fits).
    pub(crate) fn push_log(&self, line: &str) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        if state.events.len() >= self.capacity {
            state.dropped_logs += 1;
            return;
        }
        let mut event = acp_event::new(acp_event_kind::ACP_EVENT_LOG);
        event.text = if state.dropped_logs > 0 {
            let n = std::mem::take(&mut state.dropped_logs);
            format!("[{n} stderr lines dropped: the host was not taking events]\n{line}")
        } else {
            line.to_owned()
        };
        state.events.push_back(event);
        self.signal(&state);
    }

    /// Queues an event once there is room (back-pressure for notifications).
    pub(crate) async fn push_bounded(&self, event: acp_event) {
        let mut event = Some(event);
        loop {
            let room = self.space.notified();
            {
                let mut state = self.lock();
                if state.closed {
                    return;
                }
                if state.events.len() < self.capacity {
                    if let Some(e) = event.take() {
                        state.events.push_back(e);
                        self.signal(&state);
                    }
                    return;
                }
            }
            room.await;
        }
    }

    fn after_pop(&self, state: &State) {
        if state.events.is_empty()
            && let Some(fd) = &self.wake
        {
            let mut buf: u64 = 0;
            // SAFETY: reading 8 bytes into a valid u64 from our eventfd
            // (non-blocking; resets the counter).
            let _ = unsafe { libc::read(fd.as_raw_fd(), (&raw mut buf).cast::<c_void>(), 8) };
        }
        self.space.notify_waiters();
    }

    /// The next event, if any (poll mode).
    pub(crate) fn pop(&self) -> Option<acp_event> {
        let mut state = self.lock();
        let event = state.events.pop_front();
        if event.is_some() {
            self.after_pop(&state);
        }
        event
    }

    /// Waits for the next event (the dispatch thread of callback mode).
    pub(crate) fn wait_pop(&self) -> acp_event {
        let mut state = self.lock();
        loop {
            if let Some(event) = state.events.pop_front() {
                self.after_pop(&state);
                return event;
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Runs `f` on the event behind `event`.
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
unsafe fn read<T: Copy>(
    event: *const acp_event,
    fallback: T,
    f: impl FnOnce(&acp_event) -> T,
) -> T {
    crate::ffi_guard_or(fallback, || {
        // SAFETY: per the contract.
        match unsafe { event.as_ref() } {
            Some(e) => f(e),
            None => fallback,
        }
    })
}

/// The event's kind (an `acp_event_kind`; `ACP_EVENT_NONE` for NULL)).
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_get_kind(event: *const acp_event) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { read(event, 0, |e| e.kind as i32) }
}

/// The method of a request or notification (borrowed from `event`).
///
/// # Safety
/// `event` is a live `acp_event`; `out`/`out_len` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_method(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| {
            out_str(&e.method, out, out_len)
        })
    }
}

/// The params of a notification or request as JSON text (borrowed from
/// `event`); NULL and 0 when absent.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_params(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| {
            out_opt(e.params.as_deref(), out, out_len)
        })
    }
}

/// The request id as JSON text (`ACP_EVENT_REQUEST`,
/// `ACP_EVENT_REQUEST_CANCELLED`; borrowed from `event`).
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_request_id(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| {
            out_opt(e.request_id.as_deref(), out, out_len)
        })
    }
}

/// Moves the request out of an `ACP_EVENT_REQUEST` event into `*out`
/// (owned; answer it, then free it with `acp_request_free`). A second take
/// gives `ACP_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `event` is a live `acp_event` not used concurrently; `out` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_take_request(
    event: *mut acp_event,
    out: *mut *mut acp_request,
) -> acp_status {
    crate::ffi_guard(|| {
        // SAFETY: per the contract.
        let Some(e) = (unsafe { event.as_mut() }) else {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        };
        if out.is_null() {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        }
        match e.request.take() {
            Some(request) => {
                // SAFETY: checked non-NULL.
                unsafe { *out = Box::into_raw(request) };
                acp_status::ACP_OK
            }
            None => acp_status::ACP_ERR_INVALID_ARGUMENT,
        }
    })
}

/// The `call_data` given to `acp_connection_request` (`ACP_EVENT_RESULT`).
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_call_data(event: *const acp_event) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { read(event, 0, |e| e.call_data) as *mut c_void }
}

/// How the call ended (`ACP_EVENT_RESULT`): `ACP_OK` with a result, or the
/// failure's status with an error.
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_result_status(event: *const acp_event) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe { read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| e.status) }
}

/// The call's result as JSON text (borrowed from `event`); NULL and 0 when
/// the call failed.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_result(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| {
            out_opt(e.result.as_deref(), out, out_len)
        })
    }
}

/// The call's error (borrowed from `event`; NULL when it succeeded).
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_error(event: *const acp_event) -> *const acp_error {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, std::ptr::null(), |e| {
            e.error
                .as_ref()
                .map_or(std::ptr::null(), std::ptr::from_ref)
        })
    }
}

/// The text of an `ACP_EVENT_LOG` (one stderr line) or `ACP_EVENT_CLOSED`
/// (the reason) event, borrowed from `event`.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_text(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: forwarded contract.
    unsafe {
        read(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| {
            out_str(&e.text, out, out_len)
        })
    }
}

/// Frees an event (and the request in it, if not taken: that request is
/// then answered `-32603`). NULL is ignored.
///
/// # Safety
/// `event` is NULL or an `acp_event` from libacp, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_free(event: *mut acp_event) {
    crate::ffi_guard_or((), || {
        if !event.is_null() {
            // SAFETY: created by Box::into_raw when handed out, freed once.
            drop(unsafe { Box::from_raw(event) });
        }
    });
}

/// Writes an optional borrowed string, NULL/0 when absent.
///
/// # Safety
/// `out`/`out_len` NULL or valid for writes.
unsafe fn out_opt(s: Option<&str>, out: *mut *const c_char, out_len: *mut usize) -> acp_status {
    match s {
        // SAFETY: forwarded.
        Some(s) => unsafe { out_str(s, out, out_len) },
        None => {
            if out.is_null() || out_len.is_null() {
                return acp_status::ACP_ERR_NULL_ARGUMENT;
            }
            // SAFETY: checked non-NULL.
            unsafe {
                *out = std::ptr::null();
                *out_len = 0;
            }
            acp_status::ACP_OK
        }
    }
}
