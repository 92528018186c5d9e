//! Text across the boundary: `acp_str`, every string argument (pointer and
//! length, borrowed for the call), and `acp_string`, text libacp hands to
//! the caller (snapshots, capabilities).

use std::ffi::{CStr, c_char};

/// A UTF-8 string argument: pointer and length (no NUL needed). A NULL
/// pointer with length 0 is the empty string (or "absent" where noted).
/// `ACP_STR("literal")` makes one from a string literal,
/// `acp_str_from_cstr` from a NUL-terminated string.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct acp_str {
    /// The bytes (borrowed for the call).
    pub ptr: *const c_char,
    /// How many bytes.
    pub len: usize,
}

/// The `acp_str` of a NUL-terminated string (its bytes up to the NUL,
/// borrowed: `s` must outlive the calls it is passed to); NULL gives the
/// empty string.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_str_from_cstr(s: *const c_char) -> acp_str {
    crate::ffi_guard_or(
        acp_str {
            ptr: std::ptr::null(),
            len: 0,
        },
        || {
            if s.is_null() {
                return acp_str {
                    ptr: std::ptr::null(),
                    len: 0,
                };
            }
            // SAFETY: a NUL-terminated string, per the contract.
            let len = unsafe { CStr::from_ptr(s) }.count_bytes();
            acp_str { ptr: s, len }
        },
    )
}

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
