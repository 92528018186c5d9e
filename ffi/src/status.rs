//! `acp_status`: what every fallible function returns, from one list
//! (the `statuses!` macro below): the enum, `from_i32`, the text of `acp_status_str`, and
//! the C declaration the header test writes into `include/acp.h` (cbindgen
//! is told to leave the enum out: it cannot see through a macro).
//!
//! Numbers are stable: a code is never renumbered or reused, new codes are
//! added at the end, and a retired code goes to the reserved list with its
//! number.

use std::ffi::CStr;

/// Declares the statuses: doc comment, name, number and the text
/// `acp_status_str` gives, once each.
macro_rules! statuses {
    (
        reserved: [ $($retired:literal),* $(,)? ];
        $( $(#[doc = $doc:literal])* $name:ident = $num:literal => $text:literal, )*
    ) => {
        /// The outcome of a call. Numbers are stable: never renumbered or
        /// reused; new codes are added at the end.
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum acp_status {
            $( $(#[doc = $doc])* $name = $num, )*
        }

        impl acp_status {
            /// Every status, in number order.
            pub const ALL: &'static [acp_status] = &[$(acp_status::$name),*];

            /// Numbers retired from use: never given to a new status.
            pub const RESERVED: &'static [i32] = &[$($retired),*];

            /// The status with this number, if it is one.
            pub fn from_i32(n: i32) -> Option<Self> {
                match n {
                    $( $num => Some(acp_status::$name), )*
                    _ => None,
                }
            }

            /// Its name in C (`ACP_OK`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $( acp_status::$name => stringify!($name), )*
                }
            }

            /// Its doc comment, one line per item.
            pub fn doc(self) -> &'static [&'static str] {
                match self {
                    $( acp_status::$name => &[$($doc),*], )*
                }
            }

            /// What `acp_status_str` says of it.
            pub fn text(self) -> &'static CStr {
                match self {
                    $( acp_status::$name => $text, )*
                }
            }
        }
    };
}

statuses! {
    // A retired code's number goes here, and its entry below is removed.
    reserved: [];
    /// Success.
    ACP_OK = 0 => c"ok",
    /// A required pointer argument was NULL.
    ACP_ERR_NULL_ARGUMENT = 1 => c"a required pointer argument was NULL",
    /// A string argument was not valid UTF-8.
    ACP_ERR_INVALID_UTF8 = 2 => c"a string argument was not valid UTF-8",
    /// A JSON argument was not valid JSON (or params not an object/array).
    ACP_ERR_INVALID_JSON = 3 => c"a JSON argument was not valid JSON",
    /// Another argument was out of range or inconsistent.
    ACP_ERR_INVALID_ARGUMENT = 4 => c"an argument was invalid",
    /// The connection is closed.
    ACP_ERR_CLOSED = 5 => c"the connection is closed",
    /// The protocol layer refused the call; nothing was sent. The error's
    /// data says why: `{"kind": "CapabilityNotAdvertised", "capability": ...}`
    /// (kinds: NotInitialized, AlreadyInitialized, CapabilityNotAdvertised,
    /// UnknownSession, PromptInProgress, UnsupportedVersion, WrongDirection).
    ACP_ERR_REFUSED = 6 => c"the call was refused locally and not sent",
    /// The peer answered with a JSON-RPC error (code and data in the error).
    ACP_ERR_RPC = 7 => c"the peer answered with a JSON-RPC error",
    /// The agent process could not be started.
    ACP_ERR_SPAWN = 8 => c"the agent process could not be started",
    /// The request was already answered (or answered by libacp on cancel).
    ACP_ERR_ALREADY_ANSWERED = 9 => c"the request was already answered",
    /// No event is waiting (poll mode).
    ACP_ERR_EMPTY = 10 => c"no event is waiting",
    /// The function does not apply in this connection's mode.
    ACP_ERR_WRONG_MODE = 11 => c"not available in this connection's event mode",
    /// The function must not be called on this thread (see include/README.md).
    ACP_ERR_WRONG_THREAD = 12 => c"not allowed on this thread",
    /// The call was cancelled.
    ACP_ERR_CANCELLED = 13 => c"the call was cancelled",
    /// The call timed out.
    ACP_ERR_TIMEOUT = 14 => c"the call timed out",
    /// An I/O or system error.
    ACP_ERR_IO = 15 => c"an I/O error occurred",
    /// A Rust panic was caught at the boundary (a libacp bug).
    ACP_ERR_PANIC = 16 => c"internal error (a panic was caught)",
    /// The peer's answer was not what the call expects.
    ACP_ERR_INVALID_RESULT = 17 => c"the peer's answer was malformed",
    /// A remote transport failed (connecting, or a connection it carried):
    /// `acp_error_kind` says how, `acp_error_http_status` gives the HTTP
    /// status when there was one.
    ACP_ERR_REMOTE = 18 => c"the remote connection failed",
}

impl acp_status {
    /// The C declaration of the enum, as the header carries it (written by
    /// the header test, `ffi/tests/header.rs`).
    pub fn c_declaration() -> String {
        let mut c = String::from(
            "// The outcome of a call. Numbers are stable: never renumbered or reused;\n\
             // new codes are added at the end.\n\
             typedef enum {\n",
        );
        for status in Self::ALL {
            for line in status.doc() {
                c.push_str("  //");
                c.push_str(line);
                c.push('\n');
            }
            c.push_str(&format!("  {} = {},\n", status.name(), *status as i32));
        }
        for n in Self::RESERVED {
            c.push_str(&format!("  // {n}: retired, never reused.\n"));
        }
        c.push_str("} acp_status;");
        c
    }
}

/// A static, NUL-terminated English description of a status number
/// (an `acp_status`); "unknown status" for other numbers.
#[unsafe(no_mangle)]
pub extern "C" fn acp_status_str(status: i32) -> *const std::ffi::c_char {
    let unknown = c"unknown status".as_ptr();
    crate::export::value(unknown, || {
        Some(acp_status::from_i32(status)?.text().as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::acp_status;

    #[test]
    fn numbers_are_dense_unique_and_never_reserved() {
        for (i, status) in acp_status::ALL.iter().enumerate() {
            assert_eq!(
                *status as i32,
                i32::try_from(i).expect("small"),
                "{status:?}"
            );
            assert_eq!(acp_status::from_i32(*status as i32), Some(*status));
            assert!(!acp_status::RESERVED.contains(&(*status as i32)));
            assert!(!status.text().is_empty());
        }
        assert_eq!(acp_status::from_i32(-1), None);
    }
}
