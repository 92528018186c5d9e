//! `libacp.<platform>.node`: the native half of the Node binding (npm
//! package `libacp`).
//!
//! Thin by design: it converts values (JSON text both ways: JavaScript
//! parses and stringifies, which V8 does faster than building objects
//! through Node-API) and hands the core's deliveries to the JavaScript
//! thread. Every protocol rule, the ordered inbox, cancellation signals and
//! the call queue are the core's (`libacp_core::host`). The JavaScript API
//! (`ts/`, compiled to `lib/`) wraps this module; nothing here is public.
//!
//! * `connection`: `NativeConnection` (and `NativeCall`), over
//!   `HostConnection`;
//! * `deliveries`: the batch format JavaScript parses;
//! * `options`: the constructors' options into the core's;
//! * `runtime`: libacp's tokio runtime.

mod connection;
mod deliveries;
mod options;
mod runtime;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use libacp_core::{Role, Transport};

pub use connection::{NativeCall, NativeConnection};
pub use options::NativeOptions;

use napi::threadsafe_function::{ThreadsafeFunction, UnknownReturnValue};

use connection::{Source, start};

/// A constructor's result: the connection, or the error (JSON) it failed
/// with (nothing was started).
fn made(
    result: std::result::Result<NativeConnection, serde_json::Value>,
) -> Either<NativeConnection, String> {
    match result {
        Ok(conn) => Either::A(conn),
        Err(e) => Either::B(e.to_string()),
    }
}

fn invalid(message: String) -> Either<NativeConnection, String> {
    Either::B(serde_json::json!({"kind": "invalid_options", "message": message}).to_string())
}

/// Client side: spawns `command` with `args` (in its own process group) and
/// connects to its stdio.
// The threadsafe functions' types are spelled out (not the aliases of
// `connection`): napi-rs writes the TypeScript signatures from these tokens.
#[allow(clippy::type_complexity)]
#[napi]
pub fn spawn_agent(
    command: String,
    args: Vec<String>,
    options: NativeOptions,
    wake: ThreadsafeFunction<(), UnknownReturnValue, (), Status, false>,
    trace: Option<
        ThreadsafeFunction<
            (String, String),
            UnknownReturnValue,
            (String, String),
            Status,
            false,
            true,
        >,
    >,
    events: Option<
        ThreadsafeFunction<
            (String, String, String),
            UnknownReturnValue,
            (String, String, String),
            Status,
            false,
            true,
        >,
    >,
) -> Either<NativeConnection, String> {
    let cmd = match options::command(&command, &args, &options) {
        Ok(c) => c,
        Err(e) => return invalid(e.reason.to_string()),
    };
    made(start(
        Source::Spawn(cmd),
        Role::Client,
        &options,
        wake,
        trace,
        events,
    ))
}

/// Agent side: serves on this process's stdin and stdout.
#[allow(clippy::type_complexity)]
#[napi]
pub fn serve_stdio(
    options: NativeOptions,
    wake: ThreadsafeFunction<(), UnknownReturnValue, (), Status, false>,
    trace: Option<
        ThreadsafeFunction<
            (String, String),
            UnknownReturnValue,
            (String, String),
            Status,
            false,
            true,
        >,
    >,
    events: Option<
        ThreadsafeFunction<
            (String, String, String),
            UnknownReturnValue,
            (String, String, String),
            Status,
            false,
            true,
        >,
    >,
) -> Either<NativeConnection, String> {
    made(start(
        Source::Transport(Role::Agent, Transport::stdio()),
        Role::Agent,
        &options,
        wake,
        trace,
        events,
    ))
}

/// Either role over descriptors this call takes ownership of: a read end
/// and a write end, or one stream socket as both (the core's
/// `Transport::from_fds` contract). On an `invalid_fds` error nothing was
/// taken over.
#[allow(clippy::type_complexity)]
#[napi]
pub fn from_fds(
    role: String,
    read_fd: i32,
    write_fd: i32,
    options: NativeOptions,
    wake: ThreadsafeFunction<(), UnknownReturnValue, (), Status, false>,
    trace: Option<
        ThreadsafeFunction<
            (String, String),
            UnknownReturnValue,
            (String, String),
            Status,
            false,
            true,
        >,
    >,
    events: Option<
        ThreadsafeFunction<
            (String, String, String),
            UnknownReturnValue,
            (String, String, String),
            Status,
            false,
            true,
        >,
    >,
) -> Either<NativeConnection, String> {
    let role = match role.as_str() {
        "client" => Role::Client,
        "agent" => Role::Agent,
        other => {
            return invalid(format!(
                "role must be \"client\" or \"agent\", not {other:?}"
            ));
        }
    };
    if let Err(e) = options::acp_options(role, &options) {
        return invalid(e.reason.to_string());
    }
    // SAFETY: JavaScript gives up open descriptors; every check is made
    // before anything is taken over.
    let transport = match unsafe { Transport::from_raw_fds(read_fd, write_fd) } {
        Ok(t) => t,
        Err(e) => {
            let kind = if e.kind() == std::io::ErrorKind::InvalidInput {
                "invalid_fds"
            } else {
                "io"
            };
            return Either::B(
                serde_json::json!({"kind": kind, "message": e.to_string()}).to_string(),
            );
        }
    };
    made(start(
        Source::Transport(role, transport),
        role,
        &options,
        wake,
        trace,
        events,
    ))
}

/// A connected pair of Unix stream sockets (close-on-exec), as two
/// descriptors the caller owns: both roles in one process (tests), or one
/// end for `fromFds` and the other for `new net.Socket({ fd })`.
#[napi]
pub fn socket_pair() -> Result<Vec<i32>> {
    use std::os::fd::IntoRawFd;
    let (a, b) = std::os::unix::net::UnixStream::pair()
        .map_err(|e| Error::new(Status::GenericFailure, format!("socketpair failed: {e}")))?;
    Ok(vec![a.into_raw_fd(), b.into_raw_fd()])
}
