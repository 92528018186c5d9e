//! `acp_request`: a request from the peer, answered exactly once from any
//! thread (not concurrently). A thin wrapper over the core's `HostRequest`
//! (its cancellation reaches the host as `ACP_EVENT_REQUEST_CANCELLED`
//! events from the core's inbox; no thread watches it).

use std::ffi::c_char;

use libacp_core::RpcError;
use libacp_core::host::HostRequest;

use crate::error::acp_error;
use crate::export;
use crate::status::acp_status;
use crate::string::acp_str;

/// A request from the peer. Owned by the host after
/// `acp_event_take_request`; free with `acp_request_free` (an unanswered
/// request is then answered `-32603`).
#[derive(Debug)]
pub struct acp_request {
    request: HostRequest,
    /// The id as JSON text, as `ACP_EVENT_REQUEST_CANCELLED` names it.
    id: String,
}

impl acp_request {
    pub(crate) fn new(request: HostRequest) -> Self {
        let id = serde_json::to_string(&request.id).unwrap_or_else(|_| "null".into());
        Self { request, id }
    }

    pub(crate) fn method(&self) -> &str {
        &self.request.method
    }

    pub(crate) fn params_text(&self) -> Option<&str> {
        self.request
            .params
            .as_deref()
            .map(libacp_core::RawValue::get)
    }

    pub(crate) fn id_text(&self) -> &str {
        &self.id
    }
}

impl export::Owned for acp_request {}

/// The method (borrowed from `request`).
///
/// # Safety
/// `request` is a live `acp_request`; `out`/`out_len` valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_method(
    request: *const acp_request,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: the pointers are NULL or valid, per this function's `# Safety`.
    unsafe { export::get_text(request, out, out_len, |r| Some(r.method())) }
}

/// The params as JSON text (borrowed from `request`); `{}` when absent.
///
/// # Safety
/// As `acp_request_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_params(
    request: *const acp_request,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_request_method`.
    unsafe {
        export::get_text(request, out, out_len, |r| {
            Some(r.params_text().unwrap_or("{}"))
        })
    }
}

/// The request id as JSON text (borrowed from `request`), as named by
/// `ACP_EVENT_REQUEST_CANCELLED` events.
///
/// # Safety
/// As `acp_request_method`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_id(
    request: *const acp_request,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_request_method`.
    unsafe { export::get_text(request, out, out_len, |r| Some(&r.id)) }
}

/// Whether the peer cancelled the request (`$/cancel_request`, or
/// `session/cancel` for a prompt) or the connection closed.
///
/// # Safety
/// `request` is NULL or a live `acp_request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_is_cancelled(request: *const acp_request) -> bool {
    // SAFETY: `request` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(request, false, |r| r.request.signals().0) }
}

/// Answers with a result (JSON text, borrowed). `ACP_ERR_ALREADY_ANSWERED`
/// if it was answered before (by you, or by libacp on cancellation).
///
/// # Safety
/// `request` is a live `acp_request`; `result` valid for its length;
/// `error` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_respond(
    request: *const acp_request,
    result: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `request`, `result` and `error` are as this function's
    // `# Safety` says.
    unsafe {
        export::status(error, || {
            let r = export::arg(request, "request")?;
            let raw = result.to_json()?;
            r.request.respond(Ok(raw)).map_err(acp_error::from_respond)
        })
    }
}

/// Answers with a JSON-RPC error: `code`, `message` (UTF-8, borrowed) and
/// optional `data` (JSON text; NULL/0 for none), sent as given. To fail
/// with the peer's error to a nested call, pass its `acp_error_code`,
/// `acp_error_message` and `acp_error_data` unchanged: what every other
/// binding answers when such an error escapes a handler (a `-32601` too,
/// which then names the nested method, not this request's).
///
/// # Safety
/// As `acp_request_respond`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_respond_error(
    request: *const acp_request,
    code: i64,
    message: acp_str,
    data: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_request_respond`.
    unsafe {
        export::status(error, || {
            let r = export::arg(request, "request")?;
            let mut rpc = RpcError::new(code, message.to_str()?);
            if !data.is_absent() {
                let value = serde_json::from_str(data.to_str()?).map_err(|e| {
                    acp_error::new(
                        acp_status::ACP_ERR_INVALID_JSON,
                        format!("invalid data JSON: {e}"),
                    )
                })?;
                rpc.data = Some(value);
            }
            r.request.respond(Err(rpc)).map_err(acp_error::from_respond)
        })
    }
}

/// Frees a request; an unanswered one is answered `-32603`. NULL is ignored.
///
/// # Safety
/// `request` is NULL or from `acp_event_take_request`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_request_free(request: *mut acp_request) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(request) }
}
