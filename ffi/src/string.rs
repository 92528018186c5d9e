//! Text across the boundary: `acp_str`, every string argument (pointer and
//! length, borrowed for the call), and `acp_string`, text libacp hands to
//! the caller (snapshots, capabilities).

use std::ffi::{CStr, c_char};

use crate::export;

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
    let empty = acp_str {
        ptr: std::ptr::null(),
        len: 0,
    };
    export::value(empty, || {
        if s.is_null() {
            return Some(empty);
        }
        // SAFETY: a NUL-terminated string, per this function's `# Safety`.
        let len = unsafe { CStr::from_ptr(s) }.count_bytes();
        Some(acp_str { ptr: s, len })
    })
}

/// UTF-8 text owned by the caller; read with `acp_string_ptr` /
/// `acp_string_len`, free with `acp_string_free`. Not NUL-terminated.
#[derive(Debug)]
pub struct acp_string(pub(crate) String);

impl acp_string {
    pub(crate) fn boxed(s: String) -> Box<acp_string> {
        Box::new(acp_string(s))
    }
}

impl export::Owned for acp_string {}

/// The text's bytes (borrowed from `s`; NULL if `s` is NULL).
///
/// # Safety
/// `s` is NULL or a live `acp_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_ptr(s: *const acp_string) -> *const c_char {
    // SAFETY: `s` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(s, std::ptr::null(), |s| s.0.as_ptr().cast()) }
}

/// The text's length in bytes (0 if `s` is NULL).
///
/// # Safety
/// `s` is NULL or a live `acp_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_len(s: *const acp_string) -> usize {
    // SAFETY: `s` is NULL or live, per this function's `# Safety`.
    unsafe { export::get(s, 0, |s| s.0.len()) }
}

/// Frees a string. NULL is ignored.
///
/// # Safety
/// `s` is NULL or an `acp_string` from libacp, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_string_free(s: *mut acp_string) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(s) }
}
