//! Strings and JSON crossing the boundary: (pointer, length) in, borrowed
//! (pointer, length) out.

use std::ffi::c_char;

use libacp_core::RawValue;

use crate::error::acp_error;
use crate::status::acp_status;

/// Reads a UTF-8 string given as pointer + length. NULL with length 0 is "".
///
/// # Safety
/// `ptr` is NULL or valid for `len` bytes for the duration of the call.
pub(crate) unsafe fn in_str<'a>(ptr: *const c_char, len: usize) -> Result<&'a str, acp_error> {
    if ptr.is_null() {
        return if len == 0 {
            Ok("")
        } else {
            Err(acp_error::new(
                acp_status::ACP_ERR_NULL_ARGUMENT,
                "a string pointer is NULL with a non-zero length",
            ))
        };
    }
    // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|e| {
        acp_error::new(
            acp_status::ACP_ERR_INVALID_UTF8,
            format!("a string argument is not valid UTF-8: {e}"),
        )
    })
}

/// Reads optional JSON params (NULL/0 means none), which must be an object
/// or an array.
///
/// # Safety
/// As [`in_str`].
pub(crate) unsafe fn in_params(
    ptr: *const c_char,
    len: usize,
) -> Result<Option<Box<RawValue>>, acp_error> {
    if ptr.is_null() && len == 0 {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    let text = unsafe { in_str(ptr, len) }?;
    let raw = in_json_text(text)?;
    match raw.get().as_bytes().first() {
        Some(b'{' | b'[') => Ok(Some(raw)),
        _ => Err(acp_error::new(
            acp_status::ACP_ERR_INVALID_JSON,
            "params must be a JSON object or array",
        )),
    }
}

/// Parses JSON text (any value).
pub(crate) fn in_json_text(text: &str) -> Result<Box<RawValue>, acp_error> {
    libacp_core::json::parse_host_json(text).map_err(|e| {
        acp_error::new(
            acp_status::ACP_ERR_INVALID_JSON,
            format!("invalid JSON: {e}"),
        )
    })
}

/// Writes a borrowed (pointer, length) view of `s`.
///
/// # Safety
/// `out` and `out_len` are NULL or valid for one write each.
pub(crate) unsafe fn out_str(s: &str, out: *mut *const c_char, out_len: *mut usize) -> acp_status {
    if out.is_null() || out_len.is_null() {
        return acp_status::ACP_ERR_NULL_ARGUMENT;
    }
    // SAFETY: checked non-NULL; the caller guarantees validity.
    unsafe {
        *out = s.as_ptr().cast::<c_char>();
        *out_len = s.len();
    }
    acp_status::ACP_OK
}
