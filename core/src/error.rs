//! Error types. Three families, never mixed:
//!
//! * [`RpcError`]: a JSON-RPC error object, sent to or received from the peer
//!   (`code`, `message`, `data`). The connection is fine.
//! * [`ConnectionError`]: the connection itself is gone or could not be made.
//! * [`CallError`]: everything an outgoing request can end with: a peer's
//!   [`RpcError`], a [`ConnectionError`], a local cancellation or a timeout.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::remote::RemoteError;
use crate::transport::process::ExitInfo;

/// Standard JSON-RPC and ACP error codes.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The request was cancelled (`$/cancel_request`).
    pub const REQUEST_CANCELLED: i64 = -32800;
    /// ACP: authentication is required before this operation.
    pub const AUTH_REQUIRED: i64 = -32000;
    /// ACP: a resource (session, file, ...) was not found.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// A JSON-RPC error object, as it travels on the wire.
///
/// Decoding is tolerant: a peer that omits `message` still produces an
/// `RpcError` (with an empty message), and `data` is kept as-is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short human-readable description.
    #[serde(default)]
    pub message: String,
    /// Additional information, as sent by the peer or the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// Builds an error with the given code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data` to the error.
    #[must_use]
    pub fn with_data(mut self, data: impl Into<Value>) -> Self {
        self.data = Some(data.into());
        self
    }

    /// `-32700`: the frame was not valid JSON.
    pub fn parse_error(detail: impl Into<String>) -> Self {
        Self::new(codes::PARSE_ERROR, "Parse error").with_data(detail.into())
    }

    /// `-32600`: the frame was JSON but not a valid JSON-RPC message, or a
    /// request that cannot be taken now. The reason is in the message
    /// (`Invalid request: <detail>`) and, as a string, in `data` (which a
    /// caller may replace with structured data; the message keeps it).
    pub fn invalid_request(detail: impl Into<String>) -> Self {
        let detail = detail.into();
        Self::new(codes::INVALID_REQUEST, format!("Invalid request: {detail}")).with_data(detail)
    }

    /// `-32601` with `data: {"method": method}`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, "Method not found")
            .with_data(serde_json::json!({ "method": method }))
    }

    /// `-32602` with a precise description in `data`.
    pub fn invalid_params(detail: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, "Invalid params").with_data(detail.into())
    }

    /// `-32603` with a description in `data`.
    pub fn internal_error(detail: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, "Internal error").with_data(detail.into())
    }

    /// `-32800`: the request was cancelled by the peer.
    pub fn request_cancelled() -> Self {
        Self::new(codes::REQUEST_CANCELLED, "Request cancelled")
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)?;
        if let Some(data) = &self.data {
            write!(f, " ({data})")?;
        }
        Ok(())
    }
}

impl std::error::Error for RpcError {}

/// Why a connection ended. Cheap to clone; every pending call that fails
/// because of the close carries the same reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The host called `close()` or dropped the last connection handle.
    Local,
    /// The peer closed its end (end of stream).
    PeerClosed,
    /// The spawned agent process exited, but its stdout stayed open (a
    /// process it started holds it): after a short drain
    /// ([`AGENT_EXIT_DRAIN`](crate::transport::process::AGENT_EXIT_DRAIN))
    /// the connection closed as at end of stream. Carries the exit status.
    AgentExited(ExitInfo),
    /// Reading from or writing to the transport failed.
    Io(Arc<str>),
    /// One of the engine's own tasks failed (a bug in libacp; the text
    /// says which task and how).
    Internal(Arc<str>),
    /// The remote transport failed: the server went away mid-turn, refused
    /// the `initialize` POST (401, 404, ...), or stopped answering pings.
    Remote(RemoteError),
}

impl CloseReason {
    /// The reason a failed read gives: a remote transport's own error when
    /// it carried one, otherwise the I/O error's text.
    pub(crate) fn from_read_error(e: &std::io::Error) -> Self {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<RemoteError>())
        {
            Some(remote) => Self::Remote(remote.clone()),
            None => Self::Io(format!("read failed: {e}").into()),
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local => f.write_str("closed locally"),
            Self::PeerClosed => f.write_str("the peer closed the connection"),
            Self::AgentExited(exit) => write!(
                f,
                "the agent process exited ({exit}) while a process it started held its output open"
            ),
            Self::Io(e) => write!(f, "transport error: {e}"),
            Self::Internal(e) => write!(f, "internal error: {e}"),
            Self::Remote(e) => write!(f, "remote transport: {e}"),
        }
    }
}

/// The connection is gone, or could not be established.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The connection is closed; the reason says why.
    Closed(CloseReason),
    /// A remote agent could not be reached (see [`RemoteError::kind`]).
    Remote(RemoteError),
    /// The agent process could not be started.
    Spawn {
        /// The program that was to be run.
        program: String,
        /// The operating system's error text.
        error: String,
    },
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed(reason) => write!(f, "connection closed: {reason}"),
            Self::Spawn { program, error } => write!(f, "could not start `{program}`: {error}"),
            Self::Remote(e) => write!(f, "could not connect: {e}"),
        }
    }
}

impl std::error::Error for ConnectionError {}

/// How an outgoing request failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The connection closed before the answer arrived (or before sending).
    Connection(ConnectionError),
    /// The caller abandoned the request (the peer was sent `$/cancel_request`).
    Cancelled,
    /// No answer within the request's timeout (the peer was sent `$/cancel_request`).
    Timeout,
    /// The request could not be built locally (params did not serialize, or
    /// were not a JSON object/array). Nothing was sent.
    InvalidParams(String),
    /// The peer answered, but the result did not decode as the expected type
    /// (see [`crate::OutgoingCall::decode`]).
    InvalidResult(String),
    /// The protocol layer refused the call locally; nothing was sent.
    Refused(Refusal),
}

/// Why the protocol layer refused an outgoing call without sending it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Only `initialize` may be sent before the connection is initialized.
    NotInitialized {
        /// The refused method.
        method: String,
    },
    /// `initialize` was already sent (or answered).
    AlreadyInitialized,
    /// The peer did not advertise the capability this call needs.
    CapabilityNotAdvertised {
        /// The refused method (or content type, for prompts).
        method: String,
        /// The capability, as a path into the peer's capabilities
        /// (for example `agentCapabilities.loadSession`).
        capability: String,
    },
    /// The call names a session this connection does not know.
    UnknownSession {
        /// The session id.
        session_id: String,
    },
    /// The session already has a prompt turn in progress.
    PromptInProgress {
        /// The session id.
        session_id: String,
    },
    /// The agent answered `initialize` with a protocol version libacp does
    /// not speak; the connection was closed.
    UnsupportedVersion {
        /// The version the agent answered with.
        version: String,
    },
    /// The method is handled by this side, so it cannot be sent to the peer
    /// (for example an agent sending `session/prompt`).
    WrongDirection {
        /// The refused method.
        method: String,
    },
}

impl Refusal {
    /// The variant's name (`"CapabilityNotAdvertised"`, ...), stable across
    /// bindings.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotInitialized { .. } => "NotInitialized",
            Self::AlreadyInitialized => "AlreadyInitialized",
            Self::CapabilityNotAdvertised { .. } => "CapabilityNotAdvertised",
            Self::UnknownSession { .. } => "UnknownSession",
            Self::PromptInProgress { .. } => "PromptInProgress",
            Self::UnsupportedVersion { .. } => "UnsupportedVersion",
            Self::WrongDirection { .. } => "WrongDirection",
        }
    }

    /// The refusal as JSON, the shape every binding exposes:
    /// `{"kind": <kind>, ...fields}` with fields `method`, `capability`,
    /// `sessionId`, `version` as they apply.
    pub fn to_json(&self) -> Value {
        let mut v = match self {
            Self::NotInitialized { method } | Self::WrongDirection { method } => {
                serde_json::json!({ "method": method })
            }
            Self::AlreadyInitialized => serde_json::json!({}),
            Self::CapabilityNotAdvertised { method, capability } => {
                serde_json::json!({ "method": method, "capability": capability })
            }
            Self::UnknownSession { session_id } | Self::PromptInProgress { session_id } => {
                serde_json::json!({ "sessionId": session_id })
            }
            Self::UnsupportedVersion { version } => serde_json::json!({
                "version": serde_json::from_str::<Value>(version)
                    .unwrap_or_else(|_| Value::String(version.clone()))
            }),
        };
        if let Some(obj) = v.as_object_mut() {
            obj.insert("kind".into(), Value::from(self.kind()));
        }
        v
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInitialized { method } => {
                write!(f, "`{method}` cannot be sent before `initialize` completed")
            }
            Self::AlreadyInitialized => f.write_str("`initialize` was already sent"),
            Self::CapabilityNotAdvertised { method, capability } => write!(
                f,
                "`{method}` needs `{capability}`, which the peer did not advertise"
            ),
            Self::UnknownSession { session_id } => write!(f, "unknown session `{session_id}`"),
            Self::PromptInProgress { session_id } => {
                write!(
                    f,
                    "session `{session_id}` already has a prompt turn in progress"
                )
            }
            Self::UnsupportedVersion { version } => write!(
                f,
                "the agent answered with protocol version {version}, which libacp does not speak"
            ),
            Self::WrongDirection { method } => {
                write!(
                    f,
                    "`{method}` is handled by this side and cannot be sent to the peer"
                )
            }
        }
    }
}

impl CallError {
    /// The JSON-RPC code when the peer answered with an error.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            Self::Rpc(e) => Some(e.code),
            _ => None,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rpc(e) => e.fmt(f),
            Self::Connection(e) => e.fmt(f),
            Self::Cancelled => f.write_str("request cancelled by the caller"),
            Self::Timeout => f.write_str("request timed out"),
            Self::InvalidParams(e) => write!(f, "invalid params: {e}"),
            Self::InvalidResult(e) => write!(f, "unexpected result from the peer: {e}"),
            Self::Refused(r) => write!(f, "refused locally: {r}"),
        }
    }
}

impl std::error::Error for CallError {}

impl From<RpcError> for CallError {
    fn from(e: RpcError) -> Self {
        Self::Rpc(e)
    }
}

/// Lets a handler answer with the failure of a nested call (`?`): the
/// peer's error is passed on as it is (the same code, message and data, a
/// `-32601` too: it names the nested method, not the handler's); anything
/// else becomes `-32603`. Every binding answers an RPC error that escapes a
/// handler this way, unchanged.
impl From<CallError> for RpcError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Rpc(inner) => inner,
            other => RpcError::internal_error(other.to_string()),
        }
    }
}

impl From<ConnectionError> for CallError {
    fn from(e: ConnectionError) -> Self {
        Self::Connection(e)
    }
}

/// Why [`crate::Responder::respond`] refused an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RespondError {
    /// This request was answered already; the second answer was not sent.
    AlreadyAnswered,
    /// The peer cancelled the request and the engine answered `-32800` for
    /// the handler; this answer was not sent.
    Cancelled,
    /// The connection is closed; nothing can be sent.
    Closed,
    /// The result did not serialize to JSON; `-32603` was sent instead.
    Serialize,
}

impl fmt::Display for RespondError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::AlreadyAnswered => "the request was already answered",
            Self::Cancelled => "the request was cancelled by the peer and answered -32800",
            Self::Closed => "the connection is closed",
            Self::Serialize => "the result did not serialize; -32603 was sent instead",
        })
    }
}

impl std::error::Error for RespondError {}
