//! `acp_call`: a handle to cancel an outgoing call.

use libacp_core::{CancelHandle, CancelMode};

use crate::error::acp_error;
use crate::export;
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

impl export::Owned for acp_call {}

/// Cancels the call (`mode` is an `acp_cancel_mode`).
/// `ACP_ERR_INVALID_ARGUMENT` if it had already ended or `mode` is unknown.
///
/// # Safety
/// `call` is a live `acp_call`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_call_cancel(call: *const acp_call, mode: i32) -> acp_status {
    // SAFETY: `call` is NULL or live, per this function's `# Safety`.
    unsafe {
        export::status(export::NO_ERROR, || {
            let call = export::arg(call, "call")?;
            let mode = match mode {
                m if m == acp_cancel_mode::ACP_CANCEL_KEEP_WAITING as i32 => {
                    CancelMode::KeepWaiting
                }
                m if m == acp_cancel_mode::ACP_CANCEL_ABANDON as i32 => CancelMode::Abandon,
                _ => return Err(acp_error::invalid_argument("unknown cancel mode")),
            };
            if call.handle.cancel(mode) {
                Ok(())
            } else {
                Err(acp_error::invalid_argument("the call has already ended"))
            }
        })
    }
}

/// Frees the handle (the call goes on). NULL is ignored.
///
/// # Safety
/// `call` is NULL or from `acp_connection_request`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_call_free(call: *mut acp_call) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(call) }
}
