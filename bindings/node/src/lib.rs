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
//! * `options`: the constructors' options, set through the core's option
//!   table (`Settings::set`);
//! * `remote`: connecting by URL and serving remote clients (the core's
//!   `remote`), as transports JavaScript starts connections on;
//! * `runtime`: libacp's tokio runtime.

mod connection;
mod deliveries;
mod options;
mod remote;
mod runtime;
mod watcher;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use libacp_core::options::Use;
use libacp_core::{Role, Transport};

pub use connection::{NativeCall, NativeConnection};
pub use options::NativeOption;
pub use remote::{NativeServer, connect_remote, serve};

use napi::threadsafe_function::{ThreadsafeFunction, UnknownReturnValue};

use connection::{How, Source, start};

/// What a connection runs over (the JavaScript constructors fill it in).
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeSource {
    /// `"spawn"` (client side: `command` with `args`), `"stdio"` (agent
    /// side: this process's stdin and stdout), `"fds"` (`role` over
    /// `readFd` and `writeFd`, taken over: the core's `Transport::from_fds`
    /// contract; on an `invalid_fds` error nothing was taken over) or
    /// `"remote"` (`role` over the remote transport `id`: a client's from
    /// `connectRemote`, an agent's from a server's `onConnection`).
    pub kind: String,
    /// `"spawn"`: the agent's program.
    pub command: Option<String>,
    /// `"spawn"`: its arguments.
    pub args: Option<Vec<String>>,
    /// `"fds"`: `"client"` or `"agent"`.
    pub role: Option<String>,
    /// `"fds"`: the descriptor to read.
    pub read_fd: Option<i32>,
    /// `"fds"`: the descriptor to write (may equal `readFd` for a socket).
    pub write_fd: Option<i32>,
    /// `"remote"`: the parked transport.
    pub id: Option<u32>,
    /// Deliver a spawned agent's stderr lines to JavaScript (else they go to
    /// this process's stderr).
    pub stderr: Option<bool>,
    /// Deliver the wire trace to JavaScript, as `[6, direction, frame]`
    /// items (in the lane of the `orderedHooks` option).
    pub trace: Option<bool>,
    /// Deliver the engine's events to JavaScript, as `[7, kind, message,
    /// details]` items (in the lane of the `orderedHooks` option).
    pub events: Option<bool>,
    /// Read a descriptor transport on the JavaScript thread (default);
    /// `false`: an engine thread reads (`LIBACP_NODE_DRIVE_READS=0`, for
    /// tests of that path).
    pub drive_reads: Option<bool>,
}

fn role_of(role: Option<&str>) -> std::result::Result<Role, String> {
    match role {
        Some("client") => Ok(Role::Client),
        Some("agent") => Ok(Role::Agent),
        other => Err(failed_text(
            "invalid_options",
            format!("TypeError: role must be \"client\" or \"agent\", not {other:?}"),
        )),
    }
}

fn failed_text(kind: &str, message: String) -> String {
    serde_json::json!({"kind": kind, "message": message}).to_string()
}

fn failed(kind: &str, message: String) -> Either<NativeConnection, String> {
    Either::B(failed_text(kind, message))
}

/// Opens a connection: the connection, or the error (JSON) it failed with
/// (then nothing was started). `wake` is called from any thread when a
/// batch waits in the inbox.
// The threadsafe function's type is spelled out (not the alias of
// `connection`): napi-rs writes the TypeScript signature from these tokens.
#[napi]
pub fn connect(
    source: NativeSource,
    options: Vec<NativeOption>,
    wake: ThreadsafeFunction<(), UnknownReturnValue, (), Status, false>,
) -> Either<NativeConnection, String> {
    let (role, usage) = match source.kind.as_str() {
        "spawn" => (Role::Client, Use::Spawn),
        "stdio" => (Role::Agent, Use::Local),
        "fds" | "remote" => {
            let role = match role_of(source.role.as_deref()) {
                Ok(r) => r,
                Err(e) => return Either::B(e),
            };
            let usage = match (source.kind.as_str(), role) {
                ("fds", _) => Use::Local,
                (_, Role::Client) => Use::Connect,
                _ => Use::Serve,
            };
            (role, usage)
        }
        other => return failed("invalid_options", format!("unknown source kind {other:?}")),
    };
    let how = How {
        drive_reads: source.drive_reads.unwrap_or(true),
        stderr: source.stderr.unwrap_or(false),
        trace: source.trace.unwrap_or(false),
        events: source.events.unwrap_or(false),
    };
    // Every option is checked before anything is started or taken over.
    let settings = match options::settings(role, usage, options) {
        Ok(s) => s,
        Err(e) => return Either::B(e.to_string()),
    };
    let source = match source.kind.as_str() {
        "spawn" => {
            let command = source.command.clone().unwrap_or_default();
            let args = source.args.clone().unwrap_or_default();
            match options::command(&command, &args, &settings) {
                Ok(c) => Source::Spawn(c),
                Err(e) => return Either::B(e.to_string()),
            }
        }
        "stdio" => Source::Transport(Transport::stdio()),
        "remote" => match source.id.and_then(remote::unpark) {
            Some(t) => Source::Transport(t),
            // The remote connection ended (or its server closed) before
            // JavaScript took it.
            None => {
                return failed(
                    "gone",
                    "the remote connection ended before it was served".into(),
                );
            }
        },
        _ => {
            let (read_fd, write_fd) = (source.read_fd.unwrap_or(-1), source.write_fd.unwrap_or(-1));
            // SAFETY: JavaScript gives up open descriptors; every check is
            // made before anything is taken over.
            match unsafe { Transport::from_raw_fds(read_fd, write_fd) } {
                Ok(t) => Source::Transport(t),
                Err(e) => {
                    let kind = if e.kind() == std::io::ErrorKind::InvalidInput {
                        "invalid_fds"
                    } else {
                        "io"
                    };
                    return failed(kind, e.to_string());
                }
            }
        }
    };
    match start(source, role, settings.acp, settings.hooks, how, wake) {
        Ok(conn) => Either::A(conn),
        Err(e) => Either::B(e.to_string()),
    }
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
