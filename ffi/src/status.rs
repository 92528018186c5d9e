//! `acp_status`: what every fallible function returns.

/// The outcome of a call. Numbers are stable: never renumbered or reused;
/// new codes are added at the end.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_status {
    /// Success.
    ACP_OK = 0,
    /// A required pointer argument was NULL.
    ACP_ERR_NULL_ARGUMENT = 1,
    /// A string argument was not valid UTF-8.
    ACP_ERR_INVALID_UTF8 = 2,
    /// A JSON argument was not valid JSON (or params not an object/array).
    ACP_ERR_INVALID_JSON = 3,
    /// Another argument was out of range or inconsistent.
    ACP_ERR_INVALID_ARGUMENT = 4,
    /// The connection is closed.
    ACP_ERR_CLOSED = 5,
    /// The protocol layer refused the call; nothing was sent. The error's
    /// data says why: `{"kind": "CapabilityNotAdvertised", "capability": ...}`
    /// (kinds: NotInitialized, AlreadyInitialized, CapabilityNotAdvertised,
    /// UnknownSession, PromptInProgress, UnsupportedVersion, WrongDirection).
    ACP_ERR_REFUSED = 6,
    /// The peer answered with a JSON-RPC error (code and data in the error).
    ACP_ERR_RPC = 7,
    /// The agent process could not be started.
    ACP_ERR_SPAWN = 8,
    /// The request was already answered (or answered by libacp on cancel).
    ACP_ERR_ALREADY_ANSWERED = 9,
    /// No event is waiting (poll mode).
    ACP_ERR_EMPTY = 10,
    /// The function does not apply in this connection's mode.
    ACP_ERR_WRONG_MODE = 11,
    /// The function must not be called on this thread (see include/README.md).
    ACP_ERR_WRONG_THREAD = 12,
    /// The call was cancelled.
    ACP_ERR_CANCELLED = 13,
    /// The call timed out.
    ACP_ERR_TIMEOUT = 14,
    /// An I/O or system error.
    ACP_ERR_IO = 15,
    /// A Rust panic was caught at the boundary (a libacp bug).
    ACP_ERR_PANIC = 16,
    /// The peer's answer was not what the call expects.
    ACP_ERR_INVALID_RESULT = 17,
}

impl acp_status {
    /// The status with this number, if it is one.
    pub fn from_i32(n: i32) -> Option<Self> {
        use acp_status::*;
        const ALL: [acp_status; 18] = [
            ACP_OK,
            ACP_ERR_NULL_ARGUMENT,
            ACP_ERR_INVALID_UTF8,
            ACP_ERR_INVALID_JSON,
            ACP_ERR_INVALID_ARGUMENT,
            ACP_ERR_CLOSED,
            ACP_ERR_REFUSED,
            ACP_ERR_RPC,
            ACP_ERR_SPAWN,
            ACP_ERR_ALREADY_ANSWERED,
            ACP_ERR_EMPTY,
            ACP_ERR_WRONG_MODE,
            ACP_ERR_WRONG_THREAD,
            ACP_ERR_CANCELLED,
            ACP_ERR_TIMEOUT,
            ACP_ERR_IO,
            ACP_ERR_PANIC,
            ACP_ERR_INVALID_RESULT,
        ];
        ALL.into_iter().find(|s| *s as i32 == n)
    }
}

/// A static, NUL-terminated English description of a status number
/// (an `acp_status`); "unknown status" for other numbers.
#[unsafe(no_mangle)]
pub extern "C" fn acp_status_str(status: i32) -> *const std::ffi::c_char {
    let Some(status) = acp_status::from_i32(status) else {
        return c"unknown status".as_ptr();
    };
    let s: &'static std::ffi::CStr = match status {
        acp_status::ACP_OK => c"ok",
        acp_status::ACP_ERR_NULL_ARGUMENT => c"a required pointer argument was NULL",
        acp_status::ACP_ERR_INVALID_UTF8 => c"a string argument was not valid UTF-8",
        acp_status::ACP_ERR_INVALID_JSON => c"a JSON argument was not valid JSON",
        acp_status::ACP_ERR_INVALID_ARGUMENT => c"an argument was invalid",
        acp_status::ACP_ERR_CLOSED => c"the connection is closed",
        acp_status::ACP_ERR_REFUSED => c"the call was refused locally and not sent",
        acp_status::ACP_ERR_RPC => c"the peer answered with a JSON-RPC error",
        acp_status::ACP_ERR_SPAWN => c"the agent process could not be started",
        acp_status::ACP_ERR_ALREADY_ANSWERED => c"the request was already answered",
        acp_status::ACP_ERR_EMPTY => c"no event is waiting",
        acp_status::ACP_ERR_WRONG_MODE => c"not available in this connection's event mode",
        acp_status::ACP_ERR_WRONG_THREAD => c"not allowed on this thread",
        acp_status::ACP_ERR_CANCELLED => c"the call was cancelled",
        acp_status::ACP_ERR_TIMEOUT => c"the call timed out",
        acp_status::ACP_ERR_IO => c"an I/O error occurred",
        acp_status::ACP_ERR_PANIC => c"internal error (a panic was caught)",
        acp_status::ACP_ERR_INVALID_RESULT => c"the peer's answer was malformed",
    };
    s.as_ptr()
}
