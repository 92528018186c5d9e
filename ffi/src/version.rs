//! `acp_version`: which libacp a program runs against.

/// libacp's version as `"MAJOR.MINOR.PATCH"`: a static, NUL-terminated
/// string (never free it). The header the program was compiled with says
/// which version it expected: `ACP_VERSION_MAJOR`, `ACP_VERSION_MINOR`,
/// `ACP_VERSION_PATCH`; a program can compare the two at startup.
#[unsafe(no_mangle)]
pub extern "C" fn acp_version() -> *const std::ffi::c_char {
    crate::export::value(std::ptr::null(), || Some(VERSION.as_ptr().cast()))
}

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_is_the_crate_version_and_static() {
        // SAFETY: acp_version returns a pointer to a static NUL-terminated
        // string.
        let text = unsafe { std::ffi::CStr::from_ptr(super::acp_version()) };
        assert_eq!(text.to_str(), Ok(env!("CARGO_PKG_VERSION")));
        assert_eq!(super::acp_version(), super::acp_version());
    }
}
