//! Strings and JSON crossing the boundary, inward: an `acp_str` read as
//! UTF-8 text, params and results read as JSON. (Text going out is the
//! `export::Text` out-param or an owned `acp_string`.)

use libacp_core::RawValue;

use crate::error::acp_error;
use crate::status::acp_status;
use crate::string::acp_str;

impl acp_str {
    /// The UTF-8 text. NULL with length 0 is "".
    ///
    /// # Safety
    /// `ptr` is NULL or valid for `len` bytes for `'a`.
    pub(crate) unsafe fn to_str<'a>(self) -> Result<&'a str, acp_error> {
        if self.ptr.is_null() {
            return if self.len == 0 {
                Ok("")
            } else {
                Err(acp_error::new(
                    acp_status::ACP_ERR_NULL_ARGUMENT,
                    "a string pointer is NULL with a non-zero length",
                ))
            };
        }
        // SAFETY: `len` readable bytes at `ptr`, per this function's
        // contract.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) };
        std::str::from_utf8(bytes).map_err(|e| {
            acp_error::new(
                acp_status::ACP_ERR_INVALID_UTF8,
                format!("a string argument is not valid UTF-8: {e}"),
            )
        })
    }

    /// Whether it is NULL/0: "absent" where a function says so.
    pub(crate) fn is_absent(self) -> bool {
        self.ptr.is_null() && self.len == 0
    }

    /// Optional JSON params (NULL/0 means none), which must be an object or
    /// an array.
    ///
    /// # Safety
    /// As [`acp_str::to_str`].
    pub(crate) unsafe fn to_params(self) -> Result<Option<Box<RawValue>>, acp_error> {
        if self.is_absent() {
            return Ok(None);
        }
        // SAFETY: forwarded contract.
        let raw = unsafe { self.to_json() }?;
        match raw.get().as_bytes().first() {
            Some(b'{' | b'[') => Ok(Some(raw)),
            _ => Err(acp_error::new(
                acp_status::ACP_ERR_INVALID_JSON,
                "params must be a JSON object or array",
            )),
        }
    }

    /// JSON text (any value).
    ///
    /// # Safety
    /// As [`acp_str::to_str`].
    pub(crate) unsafe fn to_json(self) -> Result<Box<RawValue>, acp_error> {
        // SAFETY: forwarded contract.
        let text = unsafe { self.to_str() }?;
        libacp_core::json::parse_host_json(text).map_err(|e| {
            acp_error::new(
                acp_status::ACP_ERR_INVALID_JSON,
                format!("invalid JSON: {e}"),
            )
        })
    }
}
