//! `acp_string`: text libacp hands to the caller (snapshots, capabilities).

use std::ffi::c_char;

/// UTF-8 text owned by the caller; read with `acp_string_ptr` /
/// `acp_string_len`, free with `acp_string_free`. Not NUL-terminated.
#[derive(Debug)]
pub struct acp_string(pub(crate) String);

impl acp_string {
    pub(crate) fn boxed(s: String) -> *mut acp_string {
        Box::into_raw(Box::new(acp_string(s)))
    }
}

/// The text's bytes (borrowed from `s`; NULL if `s` is NULL).
///
/// # Safety
/// `s` is NULL or a live `acp_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_ptr(s: *const acp_string) -> *const c_char {
    crate::ffi_guard_or(std::ptr::null(), || {
        // SAFETY: NULL or a live acp_string.
        unsafe { s.as_ref() }.map_or(std::ptr::null(), |s| s.0.as_ptr().cast())
    })
}

/// The text's length in bytes (0 if `s` is NULL).
///
/// # Safety
/// `s` is NULL or a live `acp_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_len(s: *const acp_string) -> usize {
    crate::ffi_guard_or(0, || {
        // SAFETY: NULL or a live acp_string.
        unsafe { s.as_ref() }.map_or(0, |s| s.0.len())
    })
}

/// Frees a string. NULL is ignored.
///
/// # Safety
/// `s` is NULL or an `acp_string` from libacp, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_free(s: *mut acp_string) {
    crate::ffi_guard_or((), || {
        if !s.is_null() {
            // SAFETY: created by Box::into_raw, freed once.
            drop(unsafe { Box::from_raw(s) });
        }
    });
}
