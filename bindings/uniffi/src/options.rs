//! The records the host passes to a connection's constructors, turned into
//! the core's settings and `AgentCommand`. [`ConnectOptions`] is generated
//! from the core's option table (`options_gen.rs`), and every value is
//! checked by the core (`Settings::set`): an unknown, out-of-range or
//! inapplicable option is refused with [`AcpError::InvalidArgument`] and the
//! core's message naming it; nothing is started then. Durations are
//! milliseconds.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use libacp_core::host::InboxHooks;
use libacp_core::options::{self, Kind, OptionError, Settings, Use, Value};
use libacp_core::{AgentCommand as CoreCommand, CallTimeout, Role};

use crate::error::AcpError;
use crate::handler::HostHandler;
pub use crate::options_record::ConnectOptions;

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

/// Which way a traced frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum WireDirection {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// Something the engine reports that is not a message: see
/// [`ConnectOptions::events`].
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

/// The agent process a client spawns. Its working directory, environment,
/// stderr and shutdown ladder are options (`ConnectOptions.cwd`, `env`,
/// `clear_env`, `stderr`, `grace_after_stdin_close_ms`,
/// `grace_after_sigterm_ms`), as in every binding.
#[derive(Debug, Clone, uniffi::Record)]
pub struct AgentCommand {
    /// The program (a path, or a name looked up in `PATH`).
    pub program: String,
    /// Its arguments.
    #[uniffi(default)]
    pub args: Vec<String>,
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

/// The core's settings for a connection in `role` made for `usage`, from
/// the host's record: each field set goes through the core's table
/// (`Settings::set`: its names, ranges, scopes and messages); the trace,
/// the engine's events and a spawned agent's stderr are flags for the
/// connection's handler (a server's: each connection's, see `remote.rs`).
pub(crate) fn settings(role: Role, usage: Use, o: &ConnectOptions) -> Result<Parsed, AcpError> {
    let mut parsed = Parsed {
        settings: Settings::new(role, usage),
        hooks: InboxHooks::default(),
        stderr: false,
    };
    for (name, value) in o.values() {
        let callback = options::spec(name).is_some_and(|s| s.kind == Kind::Callback);
        if !callback {
            parsed.settings.set(name, value).map_err(option_error)?;
            continue;
        }
        // The core says whether it applies here (Null changes nothing).
        parsed
            .settings
            .set(name, Value::Null)
            .map_err(option_error)?;
        if value != Value::Bool(true) {
            continue;
        }
        match name {
            "trace" => parsed.hooks.trace = true,
            "events" => parsed.hooks.events = true,
            _ => parsed.stderr = true,
        }
    }
    parsed.hooks.lane = parsed.settings.hooks;
    Ok(parsed)
}

/// What [`settings`] made: the core's settings, which hooks the host's
/// handler gets, and whether a spawned agent's stderr goes to it.
pub(crate) struct Parsed {
    pub(crate) settings: Settings,
    pub(crate) hooks: InboxHooks,
    pub(crate) stderr: bool,
}

fn option_error(e: OptionError) -> AcpError {
    AcpError::argument(e.message)
}

/// The core's command for `spec` with the spawn settings of `parsed`;
/// stderr goes to `host` when asked.
pub(crate) fn command(
    spec: &AgentCommand,
    parsed: &Parsed,
    host: &Arc<dyn HostHandler>,
) -> Result<CoreCommand, AcpError> {
    if spec.program.is_empty() {
        return Err(AcpError::argument("program is empty"));
    }
    let bad = |s: &str| s.contains('\0');
    if bad(&spec.program) || spec.args.iter().any(|a| bad(a)) {
        return Err(AcpError::argument("program and args may not hold NUL"));
    }
    let mut command = parsed
        .settings
        .spawn
        .apply(CoreCommand::new(&spec.program).args(&spec.args));
    if parsed.stderr {
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
