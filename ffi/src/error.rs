//! `acp_error`: the detail behind a failing status.

use std::ffi::c_char;

use libacp_core::options::{OptionError, OptionErrorKind};
use libacp_core::remote::RemoteError;
use libacp_core::{CallError, CloseReason, ConnectionError, RespondError, RpcError};

use crate::export;
use crate::status::acp_status;

/// An error: a status, a message, for JSON-RPC errors the code and data,
/// and for remote failures and option refusals a stable kind name (and
/// the HTTP status when one was received). Owned by the caller; free with
/// `acp_error_free`.
#[derive(Debug, Clone)]
pub struct acp_error {
    pub(crate) status: acp_status,
    pub(crate) message: String,
    pub(crate) code: i64,
    pub(crate) data: Option<String>,
    pub(crate) kind: Option<&'static str>,
    pub(crate) http_status: u16,
}

impl acp_error {
    pub(crate) fn new(status: acp_status, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            code: 0,
            data: None,
            kind: None,
            http_status: 0,
        }
    }

    /// `ACP_ERR_INVALID_ARGUMENT` for an option the core refused, with its
    /// message and the refusal's kind.
    pub(crate) fn from_option(e: &OptionError) -> Self {
        let kind = match e.kind {
            OptionErrorKind::Unknown => "unknown",
            OptionErrorKind::Type => "type",
            OptionErrorKind::Range => "range",
            OptionErrorKind::NotApplicable => "not_applicable",
        };
        Self {
            kind: Some(kind),
            ..Self::new(acp_status::ACP_ERR_INVALID_ARGUMENT, e.message.clone())
        }
    }

    /// `ACP_ERR_REMOTE`: a remote transport's failure, its kind's stable
    /// name and the HTTP status, when there was one.
    pub(crate) fn from_remote(e: &RemoteError) -> Self {
        Self {
            kind: Some(e.kind.name()),
            http_status: e.status.unwrap_or(0),
            ..Self::new(acp_status::ACP_ERR_REMOTE, e.message.clone())
        }
    }

    /// What a close event carries: the remote failure that closed the
    /// connection, if that is what did.
    pub(crate) fn from_close(reason: &CloseReason) -> Option<Self> {
        match reason {
            CloseReason::Remote(e) => Some(Self::from_remote(e)),
            _ => None,
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
            kind: None,
            http_status: 0,
        }
    }

    pub(crate) fn from_call(e: &CallError) -> Self {
        match e {
            CallError::Rpc(rpc) => Self::from_rpc(rpc),
            // The remote transport failed: the call says how, as the close
            // event does.
            CallError::Connection(
                ConnectionError::Remote(remote)
                | ConnectionError::Closed(CloseReason::Remote(remote)),
            ) => Self {
                message: e.to_string(),
                ..Self::from_remote(remote)
            },
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

/// A stable lower-case name for the error's kind, borrowed from `error`;
/// NULL and 0 when it has none. For `ACP_ERR_REMOTE`, how the remote
/// transport failed (the same names in every binding): `invalid_url`,
/// `dns`, `refused`, `timeout`, `tls`, `unauthorized`, `forbidden`,
/// `not_found`, `version_refused`, `http`, `io`. For an option refused
/// (`ACP_ERR_INVALID_ARGUMENT` from an `acp_options_*` setter or a
/// constructor): `unknown`, `type`, `range`, `not_applicable`.
///
/// # Safety
/// As `acp_error_message`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_kind(
    error: *const acp_error,
    out: *mut *const c_char,
    out_len: *mut usize,
) -> acp_status {
    // SAFETY: as `acp_error_message`.
    unsafe {
        export::output(export::text(out, out_len), export::NO_ERROR, || {
            Ok(export::arg(error, "error")?.kind)
        })
    }
}

/// The HTTP status a remote server answered with (`ACP_ERR_REMOTE`: 401,
/// 403, 404, ...); 0 when there was none, or for NULL.
///
/// # Safety
/// `error` is NULL or a live `acp_error`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_error_http_status(error: *const acp_error) -> u16 {
    // SAFETY: `error` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(error, 0, |e| e.http_status) }
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
