//! `acp_error`: the detail behind a failing status.

use std::ffi::c_char;

use libacp_core::{CallError, ConnectionError, RespondError, RpcError};

use crate::export;
use crate::status::acp_status;

/// An error: a status, a message, and for JSON-RPC errors the code and
/// data. Owned by the caller; free with `acp_error_free`.
#[derive(Debug, Clone)]
pub struct acp_error {
    pub(crate) status: acp_status,
    pub(crate) message: String,
    pub(crate) code: i64,
    pub(crate) data: Option<String>,
}

impl acp_error {
    pub(crate) fn new(status: acp_status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: 0,
            data: None,
        }
    }

    /// `ACP_ERR_INVALID_ARGUMENT`, saying why.
    pub(crate) fn invalid_argument(why: impl Into<String>) -> Self {
        Self::new(acp_status::ACP_ERR_INVALID_ARGUMENT, why)
    }

    pub(crate) fn from_rpc(e: &RpcError) -> Self {
        Self {
            status: acp_status::ACP_ERR_RPC,
            message: e.message.clone(),
            code: e.code,
            data: e.data.as_ref().map(ToString::to_string),
        }
    }

    pub(crate) fn from_call(e: &CallError) -> Self {
        match e {
            CallError::Rpc(rpc) => Self::from_rpc(rpc),
            CallError::Connection(ConnectionError::Spawn { .. }) => {
                Self::new(acp_status::ACP_ERR_SPAWN, e.to_string())
            }
            CallError::Connection(_) => Self::new(acp_status::ACP_ERR_CLOSED, e.to_string()),
            CallError::Cancelled => Self::new(acp_status::ACP_ERR_CANCELLED, e.to_string()),
            CallError::Timeout => Self::new(acp_status::ACP_ERR_TIMEOUT, e.to_string()),
            CallError::InvalidParams(_) => {
                Self::new(acp_status::ACP_ERR_INVALID_ARGUMENT, e.to_string())
            }
            CallError::InvalidResult(_) => {
                Self::new(acp_status::ACP_ERR_INVALID_RESULT, e.to_string())
            }
            CallError::Refused(r) => Self {
                data: Some(r.to_json().to_string()),
                ..Self::new(acp_status::ACP_ERR_REFUSED, e.to_string())
            },
            // A kind the core adds later: an I/O-level failure of the call
            // until this ABI gives it its own status.
            _ => Self::new(acp_status::ACP_ERR_IO, e.to_string()),
        }
    }

    pub(crate) fn from_respond(e: RespondError) -> Self {
        let status = match e {
            RespondError::Closed => acp_status::ACP_ERR_CLOSED,
            RespondError::Serialize => acp_status::ACP_ERR_INVALID_JSON,
            _ => acp_status::ACP_ERR_ALREADY_ANSWERED,
        };
        Self::new(status, e.to_string())
    }
}

impl export::Owned for acp_error {}

/// The error's status.
///
/// # Safety
/// `error` is NULL or an `acp_error` from libacp, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_status(error: *const acp_error) -> acp_status {
    // SAFETY: `error` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(error, acp_status::ACP_ERR_NULL_ARGUMENT, |e| e.status) }
}

/// The JSON-RPC error code (0 when the error is not a JSON-RPC error).
///
/// # Safety
/// `error` is NULL or a live `acp_error`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_code(error: *const acp_error) -> i64 {
    // SAFETY: `error` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(error, 0, |e| e.code) }
}

/// The message: UTF-8, borrowed from `error`.
///
/// # Safety
/// `error` is a live `acp_error`; `out`/`out_len` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_message(
    error: *const acp_error,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: `error` is NULL or live and the out-params NULL or valid, per
    // this function's `# Safety`.
    unsafe {
        export::output(export::text(out, out_len), export::NO_ERROR, || {
            Ok(Some(export::arg(error, "error")?.message.as_str()))
        })
    }
}

/// The JSON-RPC `data` as JSON text, borrowed from `error`; writes NULL and
/// 0 when there is none.
///
/// # Safety
/// As `acp_error_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_data(
    error: *const acp_error,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_error_message`.
    unsafe {
        export::output(export::text(out, out_len), export::NO_ERROR, || {
            Ok(export::arg(error, "error")?.data.as_deref())
        })
    }
}

/// Frees an error. NULL is ignored.
///
/// # Safety
/// `error` is NULL or an `acp_error` from libacp, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_free(error: *mut acp_error) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(error) }
}
