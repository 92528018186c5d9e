//! `acp_connection`'s callback-mode start: no event before the
//! constructor wrote `*out`.

use std::ffi::c_void;
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
    // The request is in the inbox by now (read on libacp's threads);
    // the callback must still not have run.
    wait_for("the request reaches the inbox", || {
        !conn.inbox.is_empty() || EVENTS.load(Ordering::SeqCst) > 0
    });
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
        let mut error = std::ptr::null_mut();
        // SAFETY: live options, a stream socket given up, valid
        // out-params (the slot is read atomically by the callback).
        let status = unsafe {
            acp_connection_from_fds(
                &raw const options,
                acp_role::ACP_ROLE_AGENT as i32,
                fd,
                fd,
                SLOT.as_ptr(),
                &raw mut error,
            )
        };
        assert_eq!(status, acp_status::ACP_OK);
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
