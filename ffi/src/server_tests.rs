//! `acp_server` and `acp_connection_connect`: a client made through the C
//! ABI reaches a server made through it, over both transports; failures
//! are typed.

use std::ffi::c_void;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::*;
use crate::connection::{
    acp_connection_connect, acp_connection_free, acp_connection_next_event, acp_connection_request,
};
use crate::events::{
    acp_event, acp_event_free, acp_event_get_kind, acp_event_kind, acp_event_result_status,
    acp_event_take_request,
};
use crate::request::{acp_request_free, acp_request_respond};

/// The connections a server handed over (as addresses).
static HANDED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn keep(_: *mut c_void, conn: *mut acp_connection, _: *mut *mut c_void) {
    HANDED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(conn as usize);
}

/// Answers every request `{"protocolVersion":1}` (enough for `initialize`).
unsafe extern "C" fn answer(_: *mut c_void, event: *mut acp_event) {
    // SAFETY: the callee owns the event; the request taken is answered
    // and freed once.
    unsafe {
        let mut request = std::ptr::null_mut();
        if acp_event_take_request(event, &raw mut request) == acp_status::ACP_OK {
            let result = r#"{"protocolVersion":1,"agentCapabilities":{}}"#;
            let text = acp_str {
                ptr: result.as_ptr().cast(),
                len: result.len(),
            };
            let _ = acp_request_respond(request, text, std::ptr::null_mut());
            acp_request_free(request);
        }
        acp_event_free(event);
    }
}

fn text(s: &str) -> acp_str {
    acp_str {
        ptr: s.as_ptr().cast(),
        len: s.len(),
    }
}

/// The next event of a poll-mode connection, within 60 s.
fn next_event(conn: *mut acp_connection) -> *mut acp_event {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut event = std::ptr::null_mut();
        // SAFETY: a live connection and a valid out-param.
        if unsafe { acp_connection_next_event(conn, &raw mut event) } == acp_status::ACP_OK {
            return event;
        }
        assert!(Instant::now() < deadline, "no event within 60 s");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn url(server: *const acp_server, kind: acp_remote_kind) -> String {
    let (mut p, mut n) = (std::ptr::null(), 0);
    // SAFETY: a live server, valid out-params.
    let st = unsafe { acp_server_url(server, kind as i32, &raw mut p, &raw mut n) };
    assert_eq!(st, acp_status::ACP_OK);
    // SAFETY: borrowed UTF-8 from the live server.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_client_initializes_with_a_server_over_both_transports() {
    let options = acp_options {
        event_callback: Some((answer, UserData(std::ptr::null_mut()))),
        ..acp_options::default()
    };
    let mut server = std::ptr::null_mut();
    let mut error = std::ptr::null_mut();
    // SAFETY: live options, valid out-params.
    let st = unsafe {
        acp_server_new(
            &raw const options,
            text("127.0.0.1:0"),
            Some(keep),
            std::ptr::null_mut(),
            &raw mut server,
            &raw mut error,
        )
    };
    assert_eq!(st, acp_status::ACP_OK);
    for kind in [
        acp_remote_kind::ACP_REMOTE_WEBSOCKET,
        acp_remote_kind::ACP_REMOTE_STREAMABLE_HTTP,
    ] {
        let url = url(server, kind);
        let mut client = std::ptr::null_mut();
        // SAFETY: default options, a valid URL string and out-params.
        let st = unsafe {
            acp_connection_connect(
                std::ptr::null(),
                text(&url),
                &raw mut client,
                &raw mut error,
            )
        };
        assert_eq!(st, acp_status::ACP_OK, "{url}");
        // SAFETY: a live connection; no call handle wanted.
        let st = unsafe {
            acp_connection_request(
                client,
                text("initialize"),
                text(r#"{"protocolVersion":1}"#),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &raw mut error,
            )
        };
        assert_eq!(st, acp_status::ACP_OK);
        let event = next_event(client);
        // SAFETY: the event is ours until freed.
        unsafe {
            assert_eq!(
                acp_event_get_kind(event),
                acp_event_kind::ACP_EVENT_RESULT as i32
            );
            assert_eq!(acp_event_result_status(event), acp_status::ACP_OK, "{url}");
            acp_event_free(event);
            acp_connection_free(client);
        }
    }
    let handed: Vec<usize> =
        std::mem::take(&mut *HANDED.lock().unwrap_or_else(PoisonError::into_inner));
    assert_eq!(handed.len(), 2);
    // SAFETY: the server and the connections it handed over, freed once.
    unsafe {
        acp_server_free(server);
        for conn in handed {
            acp_connection_free(conn as *mut acp_connection);
        }
    }
}

#[test]
fn a_refused_connect_is_a_remote_error_with_its_kind() {
    // Bound, not listening: connections are refused.
    let socket = std::net::TcpListener::bind("127.0.0.1:0").map(|l| l.local_addr());
    let Ok(Ok(addr)) = socket else {
        panic!("bind a loopback port")
    };
    // The listener is dropped: nothing listens there any more.
    let url = format!("ws://{addr}/acp");
    let mut client = std::ptr::null_mut();
    let mut error = std::ptr::null_mut();
    // SAFETY: default options, valid out-params.
    let st = unsafe {
        acp_connection_connect(
            std::ptr::null(),
            text(&url),
            &raw mut client,
            &raw mut error,
        )
    };
    assert_eq!(st, acp_status::ACP_ERR_REMOTE);
    assert!(client.is_null());
    // SAFETY: filled with an owned error.
    let e = unsafe { Box::from_raw(error) };
    assert_eq!(
        (e.status, e.kind),
        (acp_status::ACP_ERR_REMOTE, Some("refused"))
    );
}

#[test]
fn server_options_are_checked_for_the_server() {
    let mut options = acp_options::default();
    // SAFETY: live options and valid strings.
    let st = unsafe {
        crate::options::acp_options_set_int(
            &raw mut options,
            text("connect_timeout_ms"),
            100,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, acp_status::ACP_OK);
    let mut server = std::ptr::null_mut();
    let mut error = std::ptr::null_mut();
    // SAFETY: live options, valid out-params.
    let st = unsafe {
        acp_server_new(
            &raw const options,
            text("127.0.0.1:0"),
            Some(keep),
            std::ptr::null_mut(),
            &raw mut server,
            &raw mut error,
        )
    };
    assert_eq!(st, acp_status::ACP_ERR_INVALID_ARGUMENT);
    assert!(server.is_null());
    // SAFETY: filled with an owned error.
    let e = unsafe { Box::from_raw(error) };
    assert_eq!(e.kind, Some("not_applicable"));
    assert!(e.message.contains("connect_timeout_ms"), "{}", e.message);
}
