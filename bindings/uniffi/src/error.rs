//! The one error type of the binding, [`AcpError`]: what a failed call, a
//! refused argument or a closed connection throws in Swift (`AcpError`, an
//! `Error` enum) and Kotlin (`AcpException`, a sealed exception class), and
//! what a host's request handler throws to answer with a JSON-RPC error.
//!
//! The variants and their fields mirror the typed errors every binding
//! shares (`tests/scenarios/README.md`, "Typed errors"). No field is named
//! `message`: it would clash with `Throwable.message` in Kotlin; the text
//! is `detail`.

use std::fmt;

use libacp_core::remote::RemoteError;
use libacp_core::{CallError, CloseReason, ConnectionError, Refusal, RpcError};

/// Why a call or an operation failed.
#[derive(Debug, Clone, PartialEq, uniffi::Error)]
pub enum AcpError {
    /// The peer answered with a JSON-RPC error. A request handler throws it
    /// to answer with that error.
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// The error's message, as the peer sent it.
        detail: String,
        /// The error's `data` as JSON text, if any.
        data: Option<String>,
    },
    /// The protocol layer refused the call locally; nothing was sent.
    Refused {
        /// `NotInitialized`, `AlreadyInitialized`, `CapabilityNotAdvertised`,
        /// `UnknownSession`, `PromptInProgress`, `UnsupportedVersion` or
        /// `WrongDirection`.
        kind: String,
        /// The refused method, where the kind has one.
        method: Option<String>,
        /// The capability the peer did not advertise
        /// (`agentCapabilities.loadSession`, ...).
        capability: Option<String>,
        /// The session the call named.
        session_id: Option<String>,
        /// The protocol version the agent answered with (JSON text).
        version: Option<String>,
        /// A sentence saying why.
        detail: String,
    },
    /// The params of a call broke the spec's rules (a relative path, a
    /// missing field) or were not a JSON object; nothing was sent. Thrown
    /// by a handler it answers `-32603` (a local failure): a handler
    /// refuses the peer's params with an `Rpc` `-32602`.
    InvalidParams {
        /// What was wrong.
        detail: String,
    },
    /// The peer's result did not decode as the expected type.
    InvalidResult {
        /// What was wrong.
        detail: String,
    },
    /// The connection closed before the answer (or before sending).
    Closed {
        /// Why it closed.
        detail: String,
    },
    /// The call was cancelled by the caller (the peer was sent
    /// `$/cancel_request`). A request handler whose request the peer
    /// cancelled sees its task cancelled; the engine has answered it then
    /// (`-32800`, a prompt `stopReason: "cancelled"`).
    Cancelled {
        /// What cancelled it.
        detail: String,
    },
    /// No answer within the call's timeout (the peer was sent
    /// `$/cancel_request`).
    Timeout {
        /// Which timeout.
        detail: String,
    },
    /// The agent process could not be started.
    Spawn {
        /// The program that was to be run.
        program: String,
        /// The operating system's error text.
        detail: String,
    },
    /// An argument was out of range (an option, a descriptor, JSON text
    /// that does not parse); nothing was started or sent.
    InvalidArgument {
        /// Which argument, and why.
        detail: String,
    },
    /// A remote connection or server failed: connecting (DNS, refused, TLS,
    /// HTTP 401/403/404, the protocol version refused), or the transport
    /// later on, which closes the connection: calls then fail with this
    /// rather than `Closed` (handle both where a closed connection is
    /// expected; Python's and Node's `RemoteError` is a `ConnectionClosed`).
    Remote {
        /// `invalid_url`, `dns`, `refused`, `timeout`, `tls`,
        /// `unauthorized`, `forbidden`, `not_found`, `version_refused`,
        /// `http` or `io` (the core's names, as in every binding).
        kind: String,
        /// The HTTP status, when the server answered with one.
        status: Option<u16>,
        /// What happened.
        detail: String,
    },
    /// Something failed inside libacp or the host's handler threw something
    /// that is not an `AcpError` (answered `-32603`).
    Internal {
        /// What failed.
        detail: String,
    },
}

impl fmt::Display for AcpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rpc { code, detail, data } => match data {
                Some(data) => write!(f, "JSON-RPC error {code}: {detail} (data: {data})"),
                None => write!(f, "JSON-RPC error {code}: {detail}"),
            },
            Self::Refused { detail, .. } => write!(f, "refused locally: {detail}"),
            Self::InvalidParams { detail } => write!(f, "invalid params: {detail}"),
            Self::InvalidResult { detail } => write!(f, "unexpected result: {detail}"),
            Self::Closed { detail } => write!(f, "connection closed: {detail}"),
            Self::Cancelled { detail } => write!(f, "cancelled: {detail}"),
            Self::Timeout { detail } => write!(f, "timed out: {detail}"),
            Self::Spawn { program, detail } => write!(f, "could not start `{program}`: {detail}"),
            Self::InvalidArgument { detail } => write!(f, "invalid argument: {detail}"),
            Self::Remote {
                kind,
                status,
                detail,
            } => match status {
                Some(status) => write!(f, "remote error ({kind}, HTTP {status}): {detail}"),
                None => write!(f, "remote error ({kind}): {detail}"),
            },
            Self::Internal { detail } => write!(f, "internal error: {detail}"),
        }
    }
}

impl std::error::Error for AcpError {}

impl AcpError {
    pub(crate) fn argument(detail: impl Into<String>) -> Self {
        Self::InvalidArgument {
            detail: detail.into(),
        }
    }

    /// The JSON-RPC error a request handler's thrown error answers with,
    /// the rule of the core's `From<CallError> for RpcError` that every
    /// binding follows: `Rpc` is answered unchanged (code, message, data),
    /// so a nested call's error that escapes a Kotlin or Swift handler
    /// reaches the caller as the peer sent it, a `-32601` too (it keeps
    /// naming the nested method); every other kind is a local failure (of a
    /// call the handler made: refused, invalid params, timed out, cancelled,
    /// closed) and answers `-32603` with its text as `data`, never a code
    /// that blames the caller's request. A handler refuses its own params
    /// with an `Rpc` `-32602` (Kotlin `AcpErrors.invalidParams`, Swift
    /// `AcpError.invalidParams`). The peer's cancellation is answered by the
    /// engine, not here.
    pub(crate) fn to_rpc(&self) -> RpcError {
        match self {
            Self::Rpc { code, detail, data } => {
                let error = RpcError::new(*code, detail.clone());
                match data
                    .as_deref()
                    .map(serde_json::from_str::<serde_json::Value>)
                {
                    None => error,
                    Some(Ok(value)) => error.with_data(value),
                    // Not JSON: sent as a string rather than dropped.
                    Some(Err(_)) => error.with_data(data.clone().unwrap_or_default()),
                }
            }
            other => RpcError::internal_error(other.to_string()),
        }
    }
}

impl From<ConnectionError> for AcpError {
    fn from(e: ConnectionError) -> Self {
        match e {
            // Closed because the remote transport failed (a 401 to the
            // initialize POST, the server gone): typed as at connect time,
            // as Python's and Node's `RemoteError` (a `ConnectionClosed`).
            ConnectionError::Closed(CloseReason::Remote(e)) => e.into(),
            ConnectionError::Closed(reason) => Self::Closed {
                detail: reason.to_string(),
            },
            ConnectionError::Spawn { program, error } => Self::Spawn {
                program,
                detail: error,
            },
            ConnectionError::Remote(e) => e.into(),
            // A kind the core adds later: the connection is unusable.
            other => Self::Closed {
                detail: other.to_string(),
            },
        }
    }
}

impl From<RemoteError> for AcpError {
    fn from(e: RemoteError) -> Self {
        Self::Remote {
            kind: e.kind.name().to_owned(),
            status: e.status,
            detail: e.message,
        }
    }
}

impl From<CallError> for AcpError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Rpc(e) => Self::Rpc {
                code: e.code,
                detail: e.message,
                data: e.data.map(|d| d.to_string()),
            },
            CallError::Connection(e) => e.into(),
            e @ CallError::Cancelled => Self::Cancelled {
                detail: e.to_string(),
            },
            e @ CallError::Timeout => Self::Timeout {
                detail: e.to_string(),
            },
            CallError::InvalidParams(detail) => Self::InvalidParams { detail },
            CallError::InvalidResult(detail) => Self::InvalidResult { detail },
            CallError::Refused(r) => refused(&r),
            // A kind the core adds later, until it gets its own variant.
            other => Self::Internal {
                detail: other.to_string(),
            },
        }
    }
}

fn refused(r: &Refusal) -> AcpError {
    let json = r.to_json();
    let field = |name: &str| {
        json.get(name).map(|v| match v {
            serde_json::Value::String(s) if name != "version" => s.clone(),
            other => other.to_string(),
        })
    };
    AcpError::Refused {
        kind: r.kind().to_owned(),
        method: field("method"),
        capability: field("capability"),
        session_id: field("sessionId"),
        version: field("version"),
        detail: r.to_string(),
    }
}

/// A host handler threw something that is not an [`AcpError`] (Kotlin: any
/// other exception; Swift: any other `Error`).
impl From<uniffi::UnexpectedUniFFICallbackError> for AcpError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Internal { detail: e.reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpc_errors_keep_code_and_data() {
        let e = AcpError::from(CallError::Rpc(
            RpcError::new(-32002, "nope").with_data(serde_json::json!({"sessionId": "s"})),
        ));
        assert_eq!(
            e,
            AcpError::Rpc {
                code: -32002,
                detail: "nope".into(),
                data: Some(r#"{"sessionId":"s"}"#.into())
            }
        );
        let back = e.to_rpc();
        assert_eq!(back.code, -32002);
        assert_eq!(back.data, Some(serde_json::json!({"sessionId": "s"})));
    }

    /// A nested call's error, thrown on by a handler, is its answer
    /// unchanged: a `-32601` too, with or without data.
    #[test]
    fn a_nested_rpc_error_round_trips_unchanged() {
        for error in [
            RpcError::new(-32601, "probe: not supported")
                .with_data(serde_json::json!({"probe": true})),
            RpcError::new(-32601, "no data"),
            RpcError::method_not_found("session/request_permission"),
        ] {
            let thrown = AcpError::from(CallError::Rpc(error.clone()));
            assert_eq!(thrown.to_rpc(), error);
        }
    }

    #[test]
    fn data_that_is_not_json_is_sent_as_a_string() {
        let e = AcpError::Rpc {
            code: 1,
            detail: "x".into(),
            data: Some("not json".into()),
        };
        assert_eq!(e.to_rpc().data, Some(serde_json::json!("not json")));
    }

    #[test]
    fn refusals_carry_their_fields() {
        let e = AcpError::from(CallError::Refused(Refusal::CapabilityNotAdvertised {
            method: "session/load".into(),
            capability: "agentCapabilities.loadSession".into(),
        }));
        let AcpError::Refused {
            kind,
            method,
            capability,
            session_id,
            ..
        } = e
        else {
            panic!("not a refusal: {e:?}");
        };
        assert_eq!(kind, "CapabilityNotAdvertised");
        assert_eq!(method.as_deref(), Some("session/load"));
        assert_eq!(capability.as_deref(), Some("agentCapabilities.loadSession"));
        assert_eq!(session_id, None);
        let e = AcpError::from(CallError::Refused(Refusal::UnsupportedVersion {
            version: "99".into(),
        }));
        assert!(matches!(e, AcpError::Refused { version: Some(v), .. } if v == "99"));
    }

    /// A nested call's local failure, thrown on by a handler, answers
    /// `-32603` as the core's `From<CallError> for RpcError` does (the same
    /// answer as a Rust handler's `?`), never `-32602` or `-32800`, which
    /// would blame the caller's request.
    #[test]
    fn a_nested_local_failure_answers_internal_error() {
        let refusal = CallError::Refused(Refusal::CapabilityNotAdvertised {
            method: "terminal/create".into(),
            capability: "clientCapabilities.terminal".into(),
        });
        let params = CallError::InvalidParams("/path must be an absolute path".into());
        for local in [refusal, params] {
            let thrown = AcpError::from(local.clone());
            assert_eq!(thrown.to_rpc(), RpcError::from(local));
        }
        for thrown in [
            AcpError::from(CallError::Cancelled),
            AcpError::from(CallError::Timeout),
            AcpError::from(CallError::InvalidResult("stopReason".into())),
            AcpError::Closed { detail: "x".into() },
        ] {
            let answer = thrown.to_rpc();
            assert_eq!(
                answer.code,
                libacp_core::codes::INTERNAL_ERROR,
                "{thrown:?}"
            );
            assert_eq!(answer.data, Some(serde_json::json!(thrown.to_string())));
        }
    }
}
