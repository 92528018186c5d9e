//! `acp_connection`'s callback mode: no event before the constructor
//! wrote `*out`; a descriptor transport is read on the dispatch thread.

use std::ffi::{c_char, c_void};
use std::os::fd::{IntoRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::events::acp_event_free;

/// A connected stream socket (ours, as a descriptor given up to the
/// caller) whose far end already sent an `initialize` request: the
/// connection made on it has an event to deliver as soon as it starts.
fn socket_with_a_request() -> (RawFd, UnixStream) {
    let (ours, mut theirs) = match UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => panic!("socketpair: {e}"),
    };
    let frame = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
    if let Err(e) = std::io::Write::write_all(&mut theirs, frame) {
        panic!("write: {e}");
    }
    (ours.into_raw_fd(), theirs)
}

/// `acp_connection_from_fds` in the agent role on the socket `fd` (given
/// up), the connection written to `out`.
fn agent_on(options: &acp_options, fd: RawFd, out: *mut *mut acp_connection) {
    let mut error = std::ptr::null_mut();
    // SAFETY: live options, a stream socket given up, `out` valid for a
    // write, a valid error out-param.
    let status = unsafe {
        acp_connection_from_fds(
            options,
            acp_role::ACP_ROLE_AGENT as i32,
            fd,
            fd,
            out,
            &raw mut error,
        )
    };
    assert_eq!(status, acp_status::ACP_OK);
}

/// Counts events; `user_data` is the counter.
unsafe extern "C" fn count(user_data: *mut c_void, event: *mut acp_event) {
    // SAFETY: the tests pass a live `AtomicUsize` as `user_data`.
    unsafe { &*user_data.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the callee owns the event.
    unsafe { acp_event_free(event) };
}

fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "hang: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_dispatch_thread_waits_for_the_constructor() {
    static EVENTS: AtomicUsize = AtomicUsize::new(0);
    let options = acp_options {
        event_callback: Some((
            count,
            UserData(std::ptr::from_ref(&EVENTS).cast_mut().cast()),
        )),
        ..acp_options::default()
    };
    let (fd, _peer) = socket_with_a_request();
    // SAFETY: a stream socket we give up.
    let transport = match unsafe { Transport::from_raw_fds(fd, fd) } {
        Ok(t) => t,
        Err(e) => panic!("transport: {e}"),
    };
    let rt = match io_runtime() {
        Ok(rt) => rt,
        Err(e) => panic!("{e:?}"),
    };
    let settings = match options.settings(Role::Agent, Use::Local) {
        Ok(s) => s,
        Err(e) => panic!("{e:?}"),
    };
    let conn = match build(
        &options,
        &settings,
        Source::Transport(Role::Agent, transport),
        rt,
    ) {
        Ok(conn) => conn,
        Err(e) => panic!("{e:?}"),
    };
    // The request is waiting on the socket, which the dispatch thread
    // reads: the callback must still not have run.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        EVENTS.load(Ordering::SeqCst),
        0,
        "an event before the constructor returned"
    );
    conn.start.ring();
    wait_for("the first event", || EVENTS.load(Ordering::SeqCst) > 0);
    // SAFETY: a live connection, freed once.
    unsafe { acp_connection_free(Box::into_raw(conn)) };
}

/// The connection `acp_connection_from_fds` wrote, as its first
/// event's callback saw it.
static SLOT: AtomicPtr<acp_connection> = AtomicPtr::new(std::ptr::null_mut());
static SEEN: AtomicUsize = AtomicUsize::new(0);
const UNSET: usize = 1;
const SET: usize = 2;

unsafe extern "C" fn look(_: *mut c_void, event: *mut acp_event) {
    let seen = if SLOT.load(Ordering::SeqCst).is_null() {
        UNSET
    } else {
        SET
    };
    let _ = SEEN.compare_exchange(0, seen, Ordering::SeqCst, Ordering::SeqCst);
    // SAFETY: the callee owns the event.
    unsafe { acp_event_free(event) };
}

#[test]
fn the_first_event_finds_out_written() {
    for _ in 0..50 {
        SLOT.store(std::ptr::null_mut(), Ordering::SeqCst);
        SEEN.store(0, Ordering::SeqCst);
        let options = acp_options {
            event_callback: Some((look, UserData(std::ptr::null_mut()))),
            ..acp_options::default()
        };
        let (fd, _peer) = socket_with_a_request();
        // The slot is read atomically by the callback.
        agent_on(&options, fd, SLOT.as_ptr());
        wait_for("the first event", || SEEN.load(Ordering::SeqCst) != 0);
        assert_eq!(
            SEEN.load(Ordering::SeqCst),
            SET,
            "the callback ran before *out was written"
        );
        // SAFETY: the live connection the constructor wrote, freed once.
        unsafe { acp_connection_free(SLOT.swap(std::ptr::null_mut(), Ordering::SeqCst)) };
    }
}

/// The threads that traced incoming and outgoing frames and that ran the
/// event callback, and the callback's answer status.
static THREADS: Mutex<Vec<(&str, std::thread::ThreadId)>> = Mutex::new(Vec::new());

fn note(what: &'static str) {
    THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((what, std::thread::current().id()));
}

unsafe extern "C" fn trace_thread(_: *mut c_void, dir: acp_direction, _: *const c_char, _: usize) {
    note(match dir {
        acp_direction::ACP_DIRECTION_INCOMING => "in",
        acp_direction::ACP_DIRECTION_OUTGOING => "out",
    });
}

/// Answers the `initialize` request, noting its thread.
unsafe extern "C" fn answer(_: *mut c_void, event: *mut acp_event) {
    let mut request = std::ptr::null_mut();
    // SAFETY: the callee owns the event; `request` is a valid out-param.
    if unsafe { crate::events::acp_event_take_request(event, &raw mut request) }
        == acp_status::ACP_OK
    {
        note("callback");
        let result = r#"{"protocolVersion":1}"#;
        let text = acp_str {
            ptr: result.as_ptr().cast(),
            len: result.len(),
        };
        // SAFETY: a live request, a valid string; the request freed once.
        unsafe {
            crate::request::acp_request_respond(request, text, std::ptr::null_mut());
            crate::request::acp_request_free(request);
        }
    }
    // SAFETY: the callee owns the event.
    unsafe { acp_event_free(event) };
}

#[test]
fn a_request_is_read_handled_and_answered_on_the_dispatch_thread() {
    let options = acp_options {
        event_callback: Some((answer, UserData(std::ptr::null_mut()))),
        trace_callback: Some((trace_thread, UserData(std::ptr::null_mut()))),
        ..acp_options::default()
    };
    let (fd, peer) = socket_with_a_request();
    let mut conn = std::ptr::null_mut();
    agent_on(&options, fd, &raw mut conn);
    let mut line = String::new();
    if let Err(e) = std::io::BufRead::read_line(&mut std::io::BufReader::new(&peer), &mut line) {
        panic!("read: {e}");
    }
    assert!(line.contains(r#""protocolVersion":1"#), "{line}");
    // SAFETY: the live connection the constructor wrote, freed once.
    unsafe { acp_connection_free(conn) };
    let threads = THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let of = |what: &str| {
        threads
            .iter()
            .find(|(w, _)| *w == what)
            .map(|(_, t)| *t)
            .unwrap_or_else(|| panic!("no {what} in {threads:?}"))
    };
    // Read and handed to the callback on one thread: no hand-off from an
    // I/O thread. (The answer is written there too once the writer has
    // published its descriptor for direct writes: the writer's business.)
    assert_eq!(of("in"), of("callback"), "{threads:?}");
}
