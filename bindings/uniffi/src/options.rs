//! The records the host passes to a connection's constructors, turned into
//! the core's `AcpOptions` and `AgentCommand`. Values out of range are
//! refused with [`AcpError::InvalidArgument`] naming the field; nothing is
//! started then. Durations are milliseconds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::session_model::SessionStore;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpOptions, AgentCommand as CoreCommand, CallTimeout, ClientServices, ConnectionOptions,
    Direction, Framing, Role, ShutdownGrace,
};

use crate::error::AcpError;
use crate::handler::HostHandler;

/// Which side of ACP this end plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum AcpRole {
    /// The editor: sends prompts, answers the `fs/` and `terminal/` methods and
    /// permission requests.
    Client,
    /// The agent: answers `initialize` and the `session/` methods; sends updates.
    Agent,
}

impl From<AcpRole> for Role {
    fn from(r: AcpRole) -> Self {
        match r {
            AcpRole::Client => Role::Client,
            AcpRole::Agent => Role::Agent,
        }
    }
}

/// How messages are delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum WireFraming {
    /// One JSON message per line (ACP's default).
    Ndjson,
    /// LSP-style `Content-Length` headers.
    ContentLength,
}

/// Connection settings. Every field is optional; `None`/`false` keeps the
/// core's default.
#[derive(Debug, Clone, Default, uniffi::Record)]
pub struct ConnectOptions {
    /// NDJSON (`None`, the default) or `Content-Length` framing.
    #[uniffi(default)]
    pub framing: Option<WireFraming>,
    /// Frames over this many bytes are skipped (default 64 MiB).
    #[uniffi(default)]
    pub max_frame_size: Option<u64>,
    /// Default timeout of outgoing calls (none by default).
    #[uniffi(default)]
    pub request_timeout_ms: Option<u64>,
    /// After the peer's end of stream: how long requests in flight get to
    /// answer.
    #[uniffi(default)]
    pub flush_timeout_ms: Option<u64>,
    /// Bounds of the outgoing and incoming queues (messages).
    #[uniffi(default)]
    pub outgoing_queue: Option<u32>,
    /// See `outgoing_queue`.
    #[uniffi(default)]
    pub incoming_queue: Option<u32>,
    /// Agent side: `session/new|load|resume` need `authenticate` first.
    #[uniffi(default)]
    pub require_auth: bool,
    /// Client side: fold `session/update`s into a session model
    /// (`Connection.session_snapshot`).
    #[uniffi(default)]
    pub session_model: bool,
    /// Client side: answer the `fs/` methods with files under each session's cwd.
    #[uniffi(default)]
    pub fs: bool,
    /// Client side: answer the `terminal/` methods with real processes.
    #[uniffi(default)]
    pub terminals: bool,
    /// Hand every frame, both ways, to `HostHandler.on_frame` (the wire
    /// trace: for debugging; costs one call into the host per frame).
    #[uniffi(default)]
    pub trace: bool,
    /// Hand what the engine reports (a frame skipped, a response to no
    /// request, a duplicate id...) to `HostHandler.on_engine_event`.
    #[uniffi(default)]
    pub engine_events: bool,
}

/// Which way a traced frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum WireDirection {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// Something the engine reports that is not a message: see
/// [`ConnectOptions::engine_events`].
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct EngineEvent {
    /// What happened, as a stable name (`"oversized_frame"`,
    /// `"invalid_frame"`, `"unmatched_response"`, `"duplicate_request_id"`,
    /// `"cancel_for_unknown_request"`, `"ignored"`, `"served"`, `"closed"`,
    /// ...).
    pub kind: String,
    /// A readable sentence.
    pub message: String,
    /// The details as JSON text (an object).
    pub details: String,
}

/// The agent process a client spawns.
#[derive(Debug, Clone, uniffi::Record)]
pub struct AgentCommand {
    /// The program (a path, or a name looked up in `PATH`).
    pub program: String,
    /// Its arguments.
    #[uniffi(default)]
    pub args: Vec<String>,
    /// Its working directory (this process's by default).
    #[uniffi(default)]
    pub cwd: Option<String>,
    /// Variables added to this process's environment (or the whole
    /// environment, with `clear_env`).
    #[uniffi(default)]
    pub env: HashMap<String, String>,
    /// Start from an empty environment.
    #[uniffi(default)]
    pub clear_env: bool,
    /// Send its stderr lines to `HostHandler.on_stderr` (otherwise they go
    /// to this process's stderr).
    #[uniffi(default)]
    pub stderr_to_host: bool,
    /// The shutdown ladder: after closing its stdin, wait this long before
    /// SIGTERM; after SIGTERM, this long before SIGKILL.
    #[uniffi(default)]
    pub grace_after_stdin_close_ms: Option<u64>,
    /// See `grace_after_stdin_close_ms`.
    #[uniffi(default)]
    pub grace_after_sigterm_ms: Option<u64>,
}

/// Per-call settings.
#[derive(Debug, Clone, Copy, Default, uniffi::Record)]
pub struct CallOptions {
    /// Give up after this long (the peer is sent `$/cancel_request`).
    #[uniffi(default)]
    pub timeout_ms: Option<u64>,
    /// No timeout, whatever the connection's default.
    #[uniffi(default)]
    pub no_timeout: bool,
    /// Deliver the answer ahead of the ordering barrier: set it for calls
    /// made inside a notification handler (which the next message waits
    /// for), or the answer would wait for that very handler.
    #[uniffi(default)]
    pub skip_barrier: bool,
}

fn millis(name: &str, value: Option<u64>) -> Result<Option<Duration>, AcpError> {
    match value {
        Some(ms) if ms > 1_000_000_000_000 => Err(AcpError::argument(format!(
            "{name} must be at most 10^12 milliseconds, not {ms}"
        ))),
        other => Ok(other.map(Duration::from_millis)),
    }
}

fn count(name: &str, value: Option<u64>) -> Result<Option<usize>, AcpError> {
    match value {
        Some(0) => Err(AcpError::argument(format!("{name} must be at least 1"))),
        Some(n) => usize::try_from(n)
            .map(Some)
            .map_err(|_| AcpError::argument(format!("{name} is too large: {n}"))),
        None => Ok(None),
    }
}

impl CallOptions {
    pub(crate) fn core(self) -> Result<libacp_core::CallOptions, AcpError> {
        let timeout = match (self.no_timeout, millis("timeout_ms", self.timeout_ms)?) {
            (true, Some(_)) => {
                return Err(AcpError::argument(
                    "timeout_ms and no_timeout cannot both be set",
                ));
            }
            (true, None) => CallTimeout::Never,
            (false, Some(t)) => CallTimeout::After(t),
            (false, None) => CallTimeout::Default,
        };
        Ok(libacp_core::CallOptions {
            timeout,
            skip_barrier: self.skip_barrier,
        })
    }
}

/// The core's options for a connection in `role`; the trace and the
/// engine's events go to `host` when asked.
pub(crate) fn acp_options(
    role: Role,
    o: &ConnectOptions,
    host: &Arc<dyn HostHandler>,
) -> Result<AcpOptions, AcpError> {
    let mut connection = ConnectionOptions::default();
    if o.trace {
        let host = Arc::clone(host);
        connection.trace = Some(Arc::new(move |direction, frame: &[u8]| {
            let direction = match direction {
                Direction::Incoming => WireDirection::Incoming,
                Direction::Outgoing => WireDirection::Outgoing,
            };
            // Errors thrown by the host's hook are ignored (see HostHandler).
            let _ = host.on_frame(direction, String::from_utf8_lossy(frame).into_owned());
        }));
    }
    if o.engine_events {
        let host = Arc::clone(host);
        connection.events = Some(Arc::new(move |event: &libacp_core::Event| {
            let (kind, message, details) = event.describe();
            let _ = host.on_engine_event(EngineEvent {
                kind: kind.to_owned(),
                message,
                details: details.to_string(),
            });
        }));
    }
    if o.framing == Some(WireFraming::ContentLength) {
        connection.framing = Framing::ContentLength;
    }
    if let Some(n) = count("max_frame_size", o.max_frame_size)? {
        connection.max_frame_size = n;
    }
    if let Some(n) = count("outgoing_queue", o.outgoing_queue.map(u64::from))? {
        connection.outgoing_queue = n;
    }
    if let Some(n) = count("incoming_queue", o.incoming_queue.map(u64::from))? {
        connection.incoming_queue = n;
    }
    if o.request_timeout_ms == Some(0) {
        return Err(AcpError::argument("request_timeout_ms must be above 0"));
    }
    connection.request_timeout = millis("request_timeout_ms", o.request_timeout_ms)?;
    if let Some(d) = millis("flush_timeout_ms", o.flush_timeout_ms)? {
        connection.flush_timeout = d;
    }
    if o.require_auth && role != Role::Agent {
        return Err(AcpError::argument("require_auth applies to the agent side"));
    }
    let mut services = ClientServices::default();
    for (name, on) in [
        ("session_model", o.session_model),
        ("fs", o.fs),
        ("terminals", o.terminals),
    ] {
        if !on {
            continue;
        }
        if role != Role::Client {
            return Err(AcpError::argument(format!(
                "{name} applies to the client side"
            )));
        }
        match name {
            "session_model" => services.sessions = Some(Arc::new(SessionStore::new())),
            "fs" => services.fs = Some(Arc::new(SandboxedFs::new())),
            _ => services.terminals = Some(Arc::new(TerminalManager::new())),
        }
    }
    Ok(AcpOptions {
        connection,
        require_auth: o.require_auth,
        services,
        ..AcpOptions::default()
    })
}

/// The core's command for `spec`; stderr goes to `host` when asked.
pub(crate) fn command(
    spec: &AgentCommand,
    host: &Arc<dyn HostHandler>,
) -> Result<CoreCommand, AcpError> {
    if spec.program.is_empty() {
        return Err(AcpError::argument("program is empty"));
    }
    let bad = |s: &str| s.contains('\0');
    if bad(&spec.program) || spec.args.iter().any(|a| bad(a)) {
        return Err(AcpError::argument("program and args may not hold NUL"));
    }
    let mut command = CoreCommand::new(&spec.program).args(&spec.args);
    if let Some(cwd) = spec.cwd.as_deref().filter(|c| !c.is_empty()) {
        command = command.cwd(cwd);
    }
    let mut env: Vec<_> = spec.env.iter().collect();
    env.sort();
    for (k, v) in env {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            return Err(AcpError::argument(format!(
                "env: {k:?} is not a valid environment variable name (or its value holds NUL)"
            )));
        }
        command = command.env(k, v);
    }
    command.clear_env = spec.clear_env;
    let mut grace = ShutdownGrace::default();
    if let Some(d) = millis(
        "grace_after_stdin_close_ms",
        spec.grace_after_stdin_close_ms,
    )? {
        grace.after_stdin_close = d;
    }
    if let Some(d) = millis("grace_after_sigterm_ms", spec.grace_after_sigterm_ms)? {
        grace.after_sigterm = d;
    }
    command = command.grace(grace);
    if spec.stderr_to_host {
        let host = Arc::clone(host);
        command = command.stderr(move |line| {
            let _ = host.on_stderr(line.to_owned());
        });
    }
    Ok(command)
}

/// Locks a mutex, recovering from poisoning.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
