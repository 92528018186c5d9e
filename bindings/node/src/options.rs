//! The options object the JavaScript layer passes to the constructors
//! (already type-checked there: `ts/options.ts`), turned into the core's
//! `AcpOptions` and `AgentCommand`. Values out of range are refused here
//! with a `RangeError` naming the option; nothing is started then.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::session_model::SessionStore;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{
    AcpOptions, AgentCommand, ClientServices, ConnectionOptions, Framing, Role, ShutdownGrace,
};

/// Connection and spawn settings (camelCase in JavaScript). Durations are
/// milliseconds.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeOptions {
    /// `"ndjson"` (default) or `"content-length"`.
    pub framing: Option<String>,
    /// Largest frame accepted from the peer, in bytes.
    pub max_frame_size: Option<f64>,
    /// Default timeout of every outgoing call (none by default).
    pub request_timeout_ms: Option<f64>,
    /// On close, how long queued frames may take to be written.
    pub flush_timeout_ms: Option<f64>,
    /// Outgoing frames queued before `notify` waits.
    pub outgoing_queue: Option<f64>,
    /// Incoming frames queued for dispatch before the reader waits.
    pub incoming_queue: Option<f64>,
    /// Agent side: `session/*` needs `authenticate` first.
    pub require_auth: Option<bool>,
    /// Client side: fold `session/update`s into a session model.
    pub session_model: Option<bool>,
    /// Client side: answer `fs/*` in the core, within each session's cwd.
    pub fs: Option<bool>,
    /// Client side: answer `terminal/*` in the core.
    pub terminals: Option<bool>,
    /// Spawned agents: working directory, environment (added to this
    /// process's unless `clearEnv`), the shutdown ladder's waits.
    pub cwd: Option<String>,
    /// Environment variables for the agent.
    pub env: Option<HashMap<String, String>>,
    /// Start the agent with only `env`.
    pub clear_env: Option<bool>,
    /// How long the agent gets to exit after its stdin is closed.
    pub grace_after_stdin_close_ms: Option<f64>,
    /// How long the agent gets to exit after SIGTERM (then SIGKILL).
    pub grace_after_sigterm_ms: Option<f64>,
    /// Deliver the agent's stderr lines to JavaScript (else they go to this
    /// process's stderr).
    pub stderr: Option<bool>,
    /// Read a descriptor transport on the JavaScript thread (default);
    /// `false`: an engine thread reads (`LIBACP_NODE_DRIVE_READS=0`, for
    /// tests of that path).
    pub drive_reads: Option<bool>,
}

fn range(name: &str, why: &str) -> Error {
    Error::new(Status::InvalidArg, format!("RangeError: {name} {why}"))
}

fn count(name: &str, value: Option<f64>, max: f64) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (1.0..=max).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(range(
            name,
            &format!("must be a whole number from 1 to {max}, not {v}"),
        )),
    }
}

fn millis(name: &str, value: Option<f64>, zero_ok: bool) -> Result<Option<Duration>> {
    match value {
        None => Ok(None),
        Some(v) if v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) && v < 1e12 => {
            Ok(Some(Duration::from_secs_f64(v / 1000.0)))
        }
        Some(v) => Err(range(
            name,
            &format!("must be a finite number of milliseconds above 0, not {v}"),
        )),
    }
}

/// The core's options for a connection in `role`.
pub(crate) fn acp_options(role: Role, o: &NativeOptions) -> Result<AcpOptions> {
    let mut connection = ConnectionOptions::default();
    match o.framing.as_deref() {
        None | Some("ndjson") => {}
        Some("content-length") => connection.framing = Framing::ContentLength,
        Some(other) => {
            return Err(range(
                "framing",
                &format!("must be \"ndjson\" or \"content-length\", not {other:?}"),
            ));
        }
    }
    if let Some(n) = count("maxFrameSize", o.max_frame_size, 9_007_199_254_740_991.0)? {
        connection.max_frame_size = n;
    }
    if let Some(n) = count("outgoingQueue", o.outgoing_queue, 1_048_576.0)? {
        connection.outgoing_queue = n;
    }
    if let Some(n) = count("incomingQueue", o.incoming_queue, 1_048_576.0)? {
        connection.incoming_queue = n;
    }
    connection.request_timeout = millis("requestTimeout", o.request_timeout_ms, false)?;
    if let Some(d) = millis("flushTimeout", o.flush_timeout_ms, true)? {
        connection.flush_timeout = d;
    }
    let require_auth = o.require_auth.unwrap_or(false);
    if require_auth && role != Role::Agent {
        return Err(range("requireAuth", "applies to the agent side"));
    }
    let mut services = ClientServices::default();
    for (name, on) in [
        ("sessionModel", o.session_model),
        ("fs", o.fs),
        ("terminals", o.terminals),
    ] {
        if on != Some(true) {
            continue;
        }
        if role != Role::Client {
            return Err(range(name, "applies to the client side"));
        }
        match name {
            "sessionModel" => services.sessions = Some(Arc::new(SessionStore::new())),
            "fs" => services.fs = Some(Arc::new(SandboxedFs::new())),
            _ => services.terminals = Some(Arc::new(TerminalManager::new())),
        }
    }
    Ok(AcpOptions {
        connection,
        require_auth,
        services,
        ..AcpOptions::default()
    })
}

/// The agent command to spawn (its stderr hook is set by the caller).
pub(crate) fn command(program: &str, args: &[String], o: &NativeOptions) -> Result<AgentCommand> {
    if program.is_empty() {
        return Err(range("command", "is empty"));
    }
    let mut command = AgentCommand::new(program).args(args);
    if let Some(cwd) = o.cwd.as_deref().filter(|c| !c.is_empty()) {
        command = command.cwd(cwd);
    }
    for (k, v) in o.env.iter().flatten() {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            return Err(range(
                "env",
                &format!("{k:?} is not a valid environment variable name (or its value holds NUL)"),
            ));
        }
        command = command.env(k, v);
    }
    command.clear_env = o.clear_env.unwrap_or(false);
    let mut grace = ShutdownGrace::default();
    if let Some(d) = millis("shutdownGrace", o.grace_after_stdin_close_ms, true)? {
        grace.after_stdin_close = d;
    }
    if let Some(d) = millis("shutdownGrace", o.grace_after_sigterm_ms, true)? {
        grace.after_sigterm = d;
    }
    Ok(command.grace(grace))
}
