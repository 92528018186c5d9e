//! `acp_call`: a handle to cancel an outgoing call.

use libacp_core::{CancelHandle, CancelMode};

use crate::status::acp_status;

/// What `acp_call_cancel` does with the call.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_cancel_mode {
    /// Send `$/cancel_request` and keep waiting: the result event still
    /// comes (usually an error `-32800`).
    ACP_CANCEL_KEEP_WAITING = 0,
    /// Send `$/cancel_request` and give up: the result event comes at once
    /// with `ACP_ERR_CANCELLED`; a late answer is dropped.
    ACP_CANCEL_ABANDON = 1,
}

/// Cancels one outgoing call from any thread. Owned by the host; free with
/// `acp_call_free` (freeing does not cancel).
#[derive(Debug)]
pub struct acp_call {
    pub(crate) handle: CancelHandle,
}

/// Cancels the call (`mode` is an `acp_cancel_mode`).
/// `ACP_ERR_INVALID_ARGUMENT` if it had already ended or `mode` is unknown.
///
/// # Safety
/// `call` is a live `acp_call`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_call_cancel(call: *const acp_call, mode: i32) -> acp_status {
    crate::ffi_guard(|| {
        // SAFETY: per the contract.
        let Some(call) = (unsafe { call.as_ref() }) else {
            return acp_status::ACP_ERR_NULL_ARGUMENT;
        };
        let mode = match mode {
            m if m == acp_cancel_mode::ACP_CANCEL_KEEP_WAITING as i32 => CancelMode::KeepWaiting,
            m if m == acp_cancel_mode::ACP_CANCEL_ABANDON as i32 => CancelMode::Abandon,
            _ => return acp_status::ACP_ERR_INVALID_ARGUMENT,
        };
        if call.handle.cancel(mode) {
            acp_status::ACP_OK
        } else {
            acp_status::ACP_ERR_INVALID_ARGUMENT
        }
    })
}

/// Frees the handle (the call goes on). NULL is ignored.
///
/// # Safety
/// `call` is NULL or from `acp_connection_request`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_call_free(call: *mut acp_call) {
    crate::ffi_guard_or((), || {
        if !call.is_null() {
            // SAFETY: created by Box::into_raw, freed once.
            drop(unsafe { Box::from_raw(call) });
        }
    });
}
