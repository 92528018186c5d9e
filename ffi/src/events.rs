//! `acp_event`: one delivery of the core's inbox (`libacp_core::host`), as
//! the host takes it, in order, in both modes (see include/README.md,
//! "Threads and events"). The queue itself, its ordering, back-pressure and
//! the close delivered last are the core's; this module only converts.

use std::ffi::{c_char, c_void};

use libacp_core::host::Delivery;
use libacp_core::{CloseReason, Signal};

use crate::error::acp_error;
use crate::export;
use crate::request::acp_request;
use crate::status::acp_status;

/// What an event is about.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_event_kind {
    /// Not an event (what `acp_event_get_kind` returns for NULL).
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
    /// Something the engine reports that is not a message (only with
    /// `acp_options_set_engine_events`): `acp_event_engine_kind` (a stable
    /// name: `"payload_rule"`, `"invalid_frame"`, ...), `acp_event_text`
    /// (a sentence), `acp_event_details` (JSON).
    ACP_EVENT_ENGINE = 7,
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
    /// `ACP_EVENT_ENGINE`: the engine's kind name and details (JSON text).
    pub(crate) engine_kind: &'static str,
    pub(crate) details: Option<String>,
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
            engine_kind: "",
            details: None,
        }
    }

    /// The event for a delivery; `None` for deliveries C hosts do not see
    /// (a request's "superseded" signal: its cancellation came before).
    pub(crate) fn of(delivery: Delivery<usize>) -> Option<Self> {
        Some(match delivery {
            Delivery::Notification { method, params } => Self {
                method,
                params: params.map(|p| String::from(Box::<str>::from(p))),
                ..Self::new(acp_event_kind::ACP_EVENT_NOTIFICATION)
            },
            Delivery::Request(request) => {
                let request = acp_request::new(request);
                Self {
                    method: request.method().to_owned(),
                    params: request.params_text().map(str::to_owned),
                    request_id: Some(request.id_text().to_owned()),
                    request: Some(Box::new(request)),
                    ..Self::new(acp_event_kind::ACP_EVENT_REQUEST)
                }
            }
            Delivery::Result { tag, outcome } => {
                let mut event = Self {
                    call_data: tag,
                    ..Self::new(acp_event_kind::ACP_EVENT_RESULT)
                };
                match outcome {
                    Ok(raw) => event.result = Some(String::from(Box::<str>::from(raw))),
                    Err(e) => {
                        let e = acp_error::from_call(&e);
                        event.status = e.status;
                        event.error = Some(e);
                    }
                }
                event
            }
            Delivery::Signal {
                id,
                signal: Signal::Cancelled,
                ..
            } => Self {
                request_id: Some(serde_json::to_string(&id).unwrap_or_else(|_| "null".into())),
                ..Self::new(acp_event_kind::ACP_EVENT_REQUEST_CANCELLED)
            },
            Delivery::Log(text) => Self {
                text,
                ..Self::new(acp_event_kind::ACP_EVENT_LOG)
            },
            Delivery::Engine {
                kind,
                message,
                details,
            } => Self {
                engine_kind: kind,
                text: message,
                details: Some(details.to_string()),
                ..Self::new(acp_event_kind::ACP_EVENT_ENGINE)
            },
            Delivery::Closed(reason) => Self {
                text: close_text(&reason),
                error: acp_error::from_close(&reason),
                ..Self::new(acp_event_kind::ACP_EVENT_CLOSED)
            },
            _ => return None,
        })
    }
}

fn close_text(reason: &CloseReason) -> String {
    reason.to_string()
}

impl export::Owned for acp_event {}

/// The event's kind (an `acp_event_kind`; `ACP_EVENT_NONE` for NULL).
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_get_kind(event: *const acp_event) -> i32 {
    // SAFETY: `event` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(event, 0, |e| e.kind as i32) }
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
    // SAFETY: the pointers are NULL or valid, per this function's `# Safety`.
    unsafe { export::get_text(event, out, out_len, |e| Some(&e.method)) }
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
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| e.params.as_deref()) }
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
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| e.request_id.as_deref()) }
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
    // SAFETY: `event` is NULL or live and not shared, `out` NULL or valid,
    // per this function's `# Safety`.
    unsafe {
        export::output(out, export::NO_ERROR, || {
            export::arg_mut(event, "event")?
                .request
                .take()
                .ok_or_else(|| {
                    acp_error::invalid_argument("not a request event, or its request was taken")
                })
        })
    }
}

/// The `call_data` given to `acp_connection_request` (`ACP_EVENT_RESULT`).
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_call_data(event: *const acp_event) -> *mut c_void {
    // SAFETY: `event` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(event, 0, |e| e.call_data) as *mut c_void }
}

/// How the call ended (`ACP_EVENT_RESULT`): `ACP_OK` with a result, or the
/// failure's status with an error.
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_result_status(event: *const acp_event) -> acp_status {
    // SAFETY: `event` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(event, acp_status::ACP_ERR_NULL_ARGUMENT, |e| e.status) }
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
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| e.result.as_deref()) }
}

/// The call's error (`ACP_EVENT_RESULT`; NULL when it succeeded), or for
/// `ACP_EVENT_CLOSED` the remote transport's failure that closed the
/// connection (`ACP_ERR_REMOTE`, with `acp_error_kind`; NULL when the
/// connection closed for another reason). Borrowed from `event`.
///
/// # Safety
/// `event` is NULL or a live `acp_event`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_error(event: *const acp_event) -> *const acp_error {
    // SAFETY: `event` is NULL or live, per this function's `# Safety`.
    unsafe {
        export::get(event, std::ptr::null(), |e| {
            e.error
                .as_ref()
                .map_or(std::ptr::null(), std::ptr::from_ref)
        })
    }
}

/// The text of an `ACP_EVENT_LOG` (one stderr line), `ACP_EVENT_CLOSED`
/// (the reason) or `ACP_EVENT_ENGINE` (a sentence) event, borrowed from
/// `event`.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_text(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| Some(&e.text)) }
}

/// The kind of an `ACP_EVENT_ENGINE` event, borrowed from `event` (empty
/// for other events): `payload_rule` (a payload capability rule was
/// broken: `details` has `rule`, `withheld`, `method`, `field`,
/// `capability`; the rule names are in acp_protocol.h), `invalid_frame`,
/// `oversized_frame`, `bad_header`, `unmatched_response`,
/// `duplicate_request_id`, `cancel_for_unknown_request`, `invalid_cancel`,
/// `ignored`, `handler_panicked`, `served`, `closed`, `events_dropped`
/// (the event queue was full: `details.count` events were dropped), or a
/// name added later.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_engine_kind(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| Some(e.engine_kind)) }
}

/// The details of an `ACP_EVENT_ENGINE` event as a JSON object (borrowed
/// from `event`); NULL and 0 for other events.
///
/// # Safety
/// As `acp_event_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_details(
    event: *const acp_event,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_event_method`.
    unsafe { export::get_text(event, out, out_len, |e| e.details.as_deref()) }
}

/// Frees an event (and the request in it, if not taken: that request is
/// then answered `-32603`). NULL is ignored.
///
/// # Safety
/// `event` is NULL or an `acp_event` from libacp, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_event_free(event: *mut acp_event) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(event) }
}
