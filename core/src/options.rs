//! Every option a host can set, declared once: its name, type, default,
//! range and doc ([`OPTIONS`]), and one setter that checks and applies it
//! ([`Settings::set`]).
//!
//! Bindings do not write their own conversions: each turns a host value
//! into a [`Value`] and calls [`Settings::set`] by name, so every language
//! takes the same names (snake_case here and in C, Python, Kotlin and
//! Swift; camelCase in JavaScript, see [`OptionSpec::camel_name`]), the
//! same units (durations in milliseconds, sizes in bytes) and the same
//! ranges, and refuses the same mistakes with the same [`OptionError`].
//!
//! What an option applies to is part of its declaration ([`Scope`]): a
//! constructor builds [`Settings`] for its [`Use`] and role, and an option
//! that does not apply there (a TLS file for a spawned agent, `fs` on an
//! agent) is refused rather than ignored.
//!
//! Callbacks (wire trace, engine events, stderr lines) are host functions,
//! set by each binding in its own way; they are listed in [`OPTIONS`]
//! (kind [`Kind::Callback`]) so that their names agree too.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::framing::Framing;
use crate::protocol::unstable::{Feature, Features};
use crate::protocol::{AcpOptions, Role};
use crate::remote::{ClientOptions, ServerOptions};
use crate::services::fs::SandboxedFs;
use crate::services::session_model::SessionStore;
use crate::services::terminal::TerminalManager;
use crate::transport::process::{AgentCommand, ShutdownGrace};

/// What a value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// A whole number from `min` to `max`.
    Count {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A duration in milliseconds (a whole or fractional number), finite;
    /// 0 only when `zero_ok`.
    Millis {
        /// Whether 0 is accepted.
        zero_ok: bool,
    },
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A non-empty string.
    Text,
    /// A file system path (a non-empty string).
    Path,
    /// A list of non-empty strings.
    Texts,
    /// Name and value pairs (headers, environment variables).
    Pairs,
    /// A host function (set by the binding itself).
    Callback,
}

/// Where an option applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every connection, either role.
    Connection,
    /// Connections in the agent role.
    Agent,
    /// Connections in the client role.
    Client,
    /// A client spawning its agent.
    Spawn,
    /// A byte stream: a spawned agent, stdio, descriptors (not a remote
    /// transport, which carries one message per frame or event).
    Stream,
    /// A client connecting to a remote agent by URL.
    Remote,
    /// A remote server.
    Server,
}

/// How a connection is being made: decides which scopes apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A client spawning its agent process.
    Spawn,
    /// Stdio, descriptors, an in-memory pair: no process, no network.
    Local,
    /// A client connecting by URL.
    Connect,
    /// A server serving agents.
    Serve,
}

/// One option's declaration.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// The canonical name (snake_case).
    pub name: &'static str,
    /// What its value must be.
    pub kind: Kind,
    /// Where it applies (any of these).
    pub scopes: &'static [Scope],
    /// Its default, as documentation shows it.
    pub default: &'static str,
    /// One sentence for each binding's docs.
    pub doc: &'static str,
}

impl OptionSpec {
    /// The name in camelCase (`max_frame_size` to `maxFrameSize`), for
    /// JavaScript.
    pub fn camel_name(&self) -> String {
        let mut out = String::with_capacity(self.name.len());
        let mut upper = false;
        for c in self.name.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Whether the option applies to a connection made for `usage` in
    /// `role`.
    pub fn applies(&self, usage: Use, role: Role) -> bool {
        self.scopes.iter().any(|scope| match scope {
            Scope::Connection => true,
            Scope::Agent => role == Role::Agent,
            Scope::Client => role == Role::Client,
            Scope::Spawn => usage == Use::Spawn,
            Scope::Stream => matches!(usage, Use::Spawn | Use::Local),
            Scope::Remote => usage == Use::Connect,
            Scope::Server => usage == Use::Serve,
        })
    }
}

const BIG: u64 = 1 << 53; // the largest whole number every host represents
const QUEUE: u64 = 1 << 24;

const CONNECTION: &[Scope] = &[Scope::Connection];
const REMOTE_AND_SERVER: &[Scope] = &[Scope::Remote, Scope::Server];

/// Every option, in the order docs list them.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "framing",
        kind: Kind::Choice(&["ndjson", "content-length"]),
        scopes: &[Scope::Stream],
        default: "ndjson",
        doc: "How messages are delimited on a byte stream: one per line, or LSP-style Content-Length headers (remote transports carry one message per frame or event).",
    },
    OptionSpec {
        name: "max_frame_size",
        kind: Kind::Count { min: 1, max: BIG },
        scopes: CONNECTION,
        default: "67108864 (64 MiB)",
        doc: "Largest message accepted from the peer, in bytes; a larger one is answered or reported and skipped.",
    },
    OptionSpec {
        name: "request_timeout_ms",
        kind: Kind::Millis { zero_ok: false },
        scopes: CONNECTION,
        default: "none",
        doc: "Default timeout of every outgoing request; the peer is sent $/cancel_request when it passes.",
    },
    OptionSpec {
        name: "flush_timeout_ms",
        kind: Kind::Millis { zero_ok: true },
        scopes: CONNECTION,
        default: "2000",
        doc: "After the peer's end of stream, how long requests in flight get to answer, and queued messages to be written.",
    },
    OptionSpec {
        name: "outgoing_queue",
        kind: Kind::Count { min: 1, max: QUEUE },
        scopes: CONNECTION,
        default: "1024",
        doc: "Outgoing messages queued before a notify waits.",
    },
    OptionSpec {
        name: "incoming_queue",
        kind: Kind::Count { min: 1, max: QUEUE },
        scopes: CONNECTION,
        default: "1024",
        doc: "Incoming messages queued for the host before the reader waits.",
    },
    OptionSpec {
        name: "incoming_requests",
        kind: Kind::Count { min: 1, max: QUEUE },
        scopes: CONNECTION,
        default: "1024",
        doc: "Requests from the peer in flight (received, not answered) before the reader waits.",
    },
    OptionSpec {
        name: "trace",
        kind: Kind::Callback,
        scopes: CONNECTION,
        default: "off",
        doc: "Sees every message, both ways (for debugging).",
    },
    OptionSpec {
        name: "events",
        kind: Kind::Callback,
        scopes: CONNECTION,
        default: "off",
        doc: "Receives what the engine reports that is not a message (a frame skipped, a response to no request, ...).",
    },
    OptionSpec {
        name: "ordered_hooks",
        kind: Kind::Bool,
        scopes: CONNECTION,
        default: "true",
        doc: "The trace and events callbacks run in wire order with the handlers, before the answer that follows what they report (true), or as soon as the engine sees it, possibly after that answer (false).",
    },
    OptionSpec {
        name: "require_auth",
        kind: Kind::Bool,
        scopes: &[Scope::Agent],
        default: "false",
        doc: "Agent side: session/new, session/load and session/resume need authenticate first.",
    },
    OptionSpec {
        name: "unstable",
        kind: Kind::Texts,
        scopes: CONNECTION,
        default: "[] (none)",
        doc: "The unstable ACP v1 extensions to speak: [\"all\"] or feature names as the Rust SDK names them (\"unstable_session_fork\" or \"session_fork\"); off, their methods are extension methods to the core.",
    },
    OptionSpec {
        name: "session_model",
        kind: Kind::Bool,
        scopes: &[Scope::Client],
        default: "false",
        doc: "Client side: fold session/update notifications into a session model the host can read.",
    },
    OptionSpec {
        name: "fs",
        kind: Kind::Bool,
        scopes: &[Scope::Client],
        default: "false",
        doc: "Client side: answer fs/read_text_file and fs/write_text_file in the core, within each session's directories.",
    },
    OptionSpec {
        name: "terminals",
        kind: Kind::Bool,
        scopes: &[Scope::Client],
        default: "false",
        doc: "Client side: answer the terminal/ methods in the core with real processes.",
    },
    OptionSpec {
        name: "cwd",
        kind: Kind::Path,
        scopes: &[Scope::Spawn],
        default: "this process's",
        doc: "The spawned agent's working directory.",
    },
    OptionSpec {
        name: "env",
        kind: Kind::Pairs,
        scopes: &[Scope::Spawn],
        default: "none",
        doc: "Environment variables for the spawned agent, added to this process's unless clear_env.",
    },
    OptionSpec {
        name: "clear_env",
        kind: Kind::Bool,
        scopes: &[Scope::Spawn],
        default: "false",
        doc: "Start the spawned agent with only env.",
    },
    OptionSpec {
        name: "grace_after_stdin_close_ms",
        kind: Kind::Millis { zero_ok: true },
        scopes: &[Scope::Spawn],
        default: "2000",
        doc: "On close, how long the agent gets to exit after its stdin is closed, before SIGTERM.",
    },
    OptionSpec {
        name: "grace_after_sigterm_ms",
        kind: Kind::Millis { zero_ok: true },
        scopes: &[Scope::Spawn],
        default: "2000",
        doc: "On close, how long the agent gets to exit after SIGTERM, before SIGKILL.",
    },
    OptionSpec {
        name: "stderr",
        kind: Kind::Callback,
        scopes: &[Scope::Spawn],
        default: "this process's stderr",
        doc: "Receives the spawned agent's stderr, line by line.",
    },
    OptionSpec {
        name: "headers",
        kind: Kind::Pairs,
        scopes: &[Scope::Remote],
        default: "none",
        doc: "Extra HTTP headers sent on the handshake and every request (for example Authorization).",
    },
    OptionSpec {
        name: "ca_file",
        kind: Kind::Path,
        scopes: &[Scope::Remote],
        default: "none",
        doc: "A PEM file of CA certificates trusted beside the platform's roots (wss://, https://).",
    },
    OptionSpec {
        name: "connect_timeout_ms",
        kind: Kind::Millis { zero_ok: false },
        scopes: &[Scope::Remote],
        default: "10000",
        doc: "Name resolution and TCP connect.",
    },
    OptionSpec {
        name: "handshake_timeout_ms",
        kind: Kind::Millis { zero_ok: false },
        scopes: &[Scope::Remote],
        default: "10000",
        doc: "TLS and the HTTP or WebSocket handshake.",
    },
    OptionSpec {
        name: "prefer_websocket",
        kind: Kind::Bool,
        scopes: &[Scope::Remote],
        default: "false",
        doc: "For http(s):// URLs: try a WebSocket upgrade first, fall back to Streamable HTTP.",
    },
    OptionSpec {
        name: "http2_prior_knowledge",
        kind: Kind::Bool,
        scopes: &[Scope::Remote],
        default: "false",
        doc: "Speak HTTP/2 without TLS (h2c) on http:// (over TLS, ALPN decides).",
    },
    OptionSpec {
        name: "keepalive_interval_ms",
        kind: Kind::Millis { zero_ok: false },
        scopes: REMOTE_AND_SERVER,
        default: "20000",
        doc: "WebSocket pings (and, on a server, SSE keep-alive comments); a client whose server answers no ping for twice this long is disconnected.",
    },
    OptionSpec {
        name: "max_message_size",
        kind: Kind::Count { min: 1, max: BIG },
        scopes: REMOTE_AND_SERVER,
        default: "67108864 (64 MiB)",
        doc: "Largest WebSocket message, POST body or event accepted, in bytes (a server answers 413).",
    },
    OptionSpec {
        name: "queue",
        kind: Kind::Count { min: 1, max: QUEUE },
        scopes: REMOTE_AND_SERVER,
        default: "1024",
        doc: "Messages queued per direction (and per event stream) between the network and the engine.",
    },
    OptionSpec {
        name: "path",
        kind: Kind::Text,
        scopes: &[Scope::Server],
        default: "/acp",
        doc: "The endpoint's path.",
    },
    OptionSpec {
        name: "tls_cert",
        kind: Kind::Path,
        scopes: &[Scope::Server],
        default: "none (plain TCP)",
        doc: "A PEM certificate chain; with tls_key the server speaks TLS only.",
    },
    OptionSpec {
        name: "tls_key",
        kind: Kind::Path,
        scopes: &[Scope::Server],
        default: "none",
        doc: "The PEM private key of tls_cert.",
    },
    OptionSpec {
        name: "allowed_origins",
        kind: Kind::Texts,
        scopes: &[Scope::Server],
        default: "none (browsers refused)",
        doc: "Origin values allowed (* for any); requests without an Origin are always allowed.",
    },
    OptionSpec {
        name: "bearer_tokens",
        kind: Kind::Texts,
        scopes: &[Scope::Server],
        default: "none (no token needed)",
        doc: "Tokens accepted in Authorization: Bearer; when set, other requests get 401 before any agent code runs.",
    },
    OptionSpec {
        name: "max_connections",
        kind: Kind::Count { min: 1, max: QUEUE },
        scopes: &[Scope::Server],
        default: "4096",
        doc: "Remote connections served at once; one more gets 503.",
    },
    OptionSpec {
        name: "idle_timeout_ms",
        kind: Kind::Millis { zero_ok: false },
        scopes: &[Scope::Server],
        default: "60000",
        doc: "A connection from which nothing arrived for this long (no message, no pong, no open event stream) is closed.",
    },
    OptionSpec {
        name: "shutdown_grace_ms",
        kind: Kind::Millis { zero_ok: true },
        scopes: &[Scope::Server],
        default: "10000",
        doc: "On shutdown, how long connections with requests in flight get to answer them.",
    },
    OptionSpec {
        name: "websocket",
        kind: Kind::Bool,
        scopes: &[Scope::Server],
        default: "true",
        doc: "Serve WebSocket upgrades.",
    },
    OptionSpec {
        name: "streamable_http",
        kind: Kind::Bool,
        scopes: &[Scope::Server],
        default: "true",
        doc: "Serve Streamable HTTP.",
    },
];

/// The declaration of `name` (canonical snake_case, or camelCase).
pub fn spec(name: &str) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|o| o.name == name)
        .or_else(|| OPTIONS.iter().find(|o| o.camel_name() == name))
}

/// A host value, as a binding hands it over.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value: the default stays.
    Null,
    /// A boolean.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number with a fraction (JavaScript's numbers, Python's floats).
    Float(f64),
    /// A string.
    Text(String),
    /// A list of strings.
    Texts(Vec<String>),
    /// Name and value pairs.
    Pairs(Vec<(String, String)>),
}

impl Value {
    fn describe(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "a boolean",
            Self::Int(_) | Self::Float(_) => "a number",
            Self::Text(_) => "a string",
            Self::Texts(_) => "a list of strings",
            Self::Pairs(_) => "name and value pairs",
        }
    }
}

/// Why an option was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionErrorKind {
    /// No option has that name.
    Unknown,
    /// The value is of the wrong type (a binding raises its type error).
    Type,
    /// The value is out of range or not one of the choices.
    Range,
    /// The option does not apply to this connection (role or use).
    NotApplicable,
}

/// An option refused by [`Settings::set`]; `message` names the option and
/// says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError {
    /// Why.
    pub kind: OptionErrorKind,
    /// The option's name as given.
    pub name: String,
    /// A sentence for people.
    pub message: String,
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OptionError {}

/// What a spawned agent is started with, besides its command line.
#[derive(Debug, Clone, Default)]
pub struct SpawnSettings {
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Variables added (or, with `clear_env`, the whole environment).
    pub env: Vec<(String, String)>,
    /// Start from an empty environment.
    pub clear_env: bool,
    /// The shutdown ladder's waits.
    pub grace: ShutdownGrace,
}

impl SpawnSettings {
    /// `command` with these settings.
    pub fn apply(&self, mut command: AgentCommand) -> AgentCommand {
        if let Some(cwd) = &self.cwd {
            command = command.cwd(cwd);
        }
        for (k, v) in &self.env {
            command = command.env(k, v);
        }
        command.clear_env = self.clear_env;
        command.grace(self.grace)
    }
}

/// Everything a constructor's options set, starting from the defaults.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The connection's role.
    pub role: Role,
    /// How it is made.
    pub usage: Use,
    /// The connection (and, for a client, its services).
    pub acp: AcpOptions,
    /// A spawned agent's settings ([`Use::Spawn`]).
    pub spawn: SpawnSettings,
    /// A remote client's settings ([`Use::Connect`]).
    pub remote: ClientOptions,
    /// A server's settings ([`Use::Serve`]).
    pub server: ServerOptions,
    /// Where the host's trace and events callbacks are delivered (the
    /// `ordered_hooks` option; bindings whose host runs its own loop
    /// install [`crate::host::Inbox::trace_hook`] and
    /// [`crate::host::Inbox::events_hook`] in this lane).
    pub hooks: crate::host::HookLane,
}

impl Settings {
    /// The defaults for a connection in `role` made for `usage`.
    pub fn new(role: Role, usage: Use) -> Self {
        Self {
            role,
            usage,
            acp: AcpOptions::default(),
            spawn: SpawnSettings::default(),
            remote: ClientOptions::default(),
            server: ServerOptions::default(),
            hooks: crate::host::HookLane::Ordered,
        }
    }

    /// Sets option `name` (snake_case, or camelCase) to `value`, checked
    /// against its declaration. [`Value::Null`] keeps the default.
    /// Callbacks are refused here (`NotApplicable`): bindings set them.
    pub fn set(&mut self, name: &str, value: Value) -> Result<(), OptionError> {
        let Some(spec) = spec(name) else {
            return Err(OptionError {
                kind: OptionErrorKind::Unknown,
                name: name.to_owned(),
                message: format!(
                    "unknown option `{name}` (the options are: {})",
                    OPTIONS
                        .iter()
                        .map(|o| o.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        };
        let err = |kind, message: String| OptionError {
            kind,
            name: name.to_owned(),
            message,
        };
        if !spec.applies(self.usage, self.role) {
            return Err(err(
                OptionErrorKind::NotApplicable,
                format!("`{name}` does not apply here: {}", where_it_applies(spec)),
            ));
        }
        if value == Value::Null {
            return Ok(());
        }
        let checked =
            check(spec, value).map_err(|(kind, why)| err(kind, format!("`{name}` {why}")))?;
        self.apply(spec.name, checked);
        Ok(())
    }

    fn apply(&mut self, name: &str, v: Checked) {
        let c = &mut self.acp.connection;
        match (name, v) {
            ("framing", Checked::Text(t)) => {
                c.framing = if t == "content-length" {
                    Framing::ContentLength
                } else {
                    Framing::Ndjson
                };
            }
            ("max_frame_size", Checked::Count(n)) => c.max_frame_size = n,
            ("request_timeout_ms", Checked::Duration(d)) => c.request_timeout = Some(d),
            ("flush_timeout_ms", Checked::Duration(d)) => c.flush_timeout = d,
            ("outgoing_queue", Checked::Count(n)) => c.outgoing_queue = n,
            ("incoming_queue", Checked::Count(n)) => c.incoming_queue = n,
            ("incoming_requests", Checked::Count(n)) => c.incoming_requests = n,
            ("require_auth", Checked::Bool(b)) => self.acp.require_auth = b,
            ("ordered_hooks", Checked::Bool(b)) => self.hooks = crate::host::HookLane::of(b),
            ("unstable", Checked::Texts(names)) => {
                // Checked in `check`.
                self.acp.unstable = Features::parse(&names).unwrap_or_default();
            }
            ("session_model", Checked::Bool(b)) => {
                self.acp.services.sessions = b.then(|| Arc::new(SessionStore::new()));
            }
            ("fs", Checked::Bool(b)) => {
                self.acp.services.fs = b.then(|| Arc::new(SandboxedFs::new()));
            }
            ("terminals", Checked::Bool(b)) => {
                self.acp.services.terminals = b.then(|| Arc::new(TerminalManager::new()));
            }
            ("cwd", Checked::Text(t)) => self.spawn.cwd = Some(PathBuf::from(t)),
            ("env", Checked::Pairs(p)) => self.spawn.env = p,
            ("clear_env", Checked::Bool(b)) => self.spawn.clear_env = b,
            ("grace_after_stdin_close_ms", Checked::Duration(d)) => {
                self.spawn.grace.after_stdin_close = d;
            }
            ("grace_after_sigterm_ms", Checked::Duration(d)) => self.spawn.grace.after_sigterm = d,
            ("headers", Checked::Pairs(p)) => self.remote.headers = p,
            ("ca_file", Checked::Text(t)) => self.remote.ca_file = Some(PathBuf::from(t)),
            ("connect_timeout_ms", Checked::Duration(d)) => self.remote.connect_timeout = d,
            ("handshake_timeout_ms", Checked::Duration(d)) => self.remote.handshake_timeout = d,
            ("prefer_websocket", Checked::Bool(b)) => self.remote.prefer_websocket = b,
            ("http2_prior_knowledge", Checked::Bool(b)) => self.remote.http2_prior_knowledge = b,
            ("keepalive_interval_ms", Checked::Duration(d)) => {
                self.remote.keepalive_interval = d;
                self.server.keepalive_interval = d;
            }
            ("max_message_size", Checked::Count(n)) => {
                self.remote.max_message_size = n;
                self.server.max_message_size = n;
            }
            ("queue", Checked::Count(n)) => {
                self.remote.queue = n;
                self.server.queue = n;
            }
            ("path", Checked::Text(t)) => self.server.path = t,
            ("tls_cert", Checked::Text(t)) => self.server.tls_cert = Some(PathBuf::from(t)),
            ("tls_key", Checked::Text(t)) => self.server.tls_key = Some(PathBuf::from(t)),
            ("allowed_origins", Checked::Texts(l)) => self.server.allowed_origins = l,
            ("bearer_tokens", Checked::Texts(l)) => self.server.bearer_tokens = l,
            ("max_connections", Checked::Count(n)) => self.server.max_connections = n,
            ("idle_timeout_ms", Checked::Duration(d)) => self.server.idle_timeout = d,
            ("shutdown_grace_ms", Checked::Duration(d)) => self.server.shutdown_grace = d,
            ("websocket", Checked::Bool(b)) => self.server.websocket = b,
            ("streamable_http", Checked::Bool(b)) => self.server.streamable_http = b,
            // Every declared option is applied above; `check` only returns
            // the shape its kind declares.
            _ => {}
        }
    }
}

/// Says where an option applies, for a refusal.
fn where_it_applies(spec: &OptionSpec) -> String {
    let places: Vec<&str> = spec
        .scopes
        .iter()
        .map(|s| match s {
            Scope::Connection => "every connection",
            Scope::Agent => "agent connections",
            Scope::Client => "client connections",
            Scope::Spawn => "a client spawning its agent",
            Scope::Stream => "byte streams (a spawned agent, stdio, descriptors)",
            Scope::Remote => "a client connecting by URL",
            Scope::Server => "a remote server",
        })
        .collect();
    if spec.kind == Kind::Callback {
        return format!(
            "it is a callback, set by the binding, for {}",
            places.join(" or ")
        );
    }
    format!("it applies to {}", places.join(" or "))
}

/// A value that passed its declaration.
enum Checked {
    Bool(bool),
    Count(usize),
    Duration(Duration),
    Text(String),
    Texts(Vec<String>),
    Pairs(Vec<(String, String)>),
}

fn check(spec: &OptionSpec, value: Value) -> Result<Checked, (OptionErrorKind, String)> {
    let wrong = |want: &str, got: &Value| {
        (
            OptionErrorKind::Type,
            format!("must be {want}, not {}", got.describe()),
        )
    };
    let range = |why: String| (OptionErrorKind::Range, why);
    match spec.kind {
        Kind::Bool => match value {
            Value::Bool(b) => Ok(Checked::Bool(b)),
            other => Err(wrong("a boolean", &other)),
        },
        Kind::Count { min, max } => {
            let n = match value {
                Value::Int(n) => i128::from(n),
                Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e18 => f as i128,
                Value::Float(f) => {
                    return Err(range(format!(
                        "must be a whole number from {min} to {max}, not {f}"
                    )));
                }
                other => return Err(wrong("a whole number", &other)),
            };
            if n < i128::from(min) || n > i128::from(max) {
                return Err(range(format!("must be from {min} to {max}, not {n}")));
            }
            usize::try_from(n)
                .map(Checked::Count)
                .map_err(|_| range(format!("{n} is too large for this machine")))
        }
        Kind::Millis { zero_ok } => {
            let ms = match value {
                Value::Int(n) => n as f64,
                Value::Float(f) => f,
                other => return Err(wrong("a number of milliseconds", &other)),
            };
            let ok = ms.is_finite() && ms >= 0.0 && (zero_ok || ms > 0.0) && ms < 1e15;
            if !ok {
                let wanted = if zero_ok { "0 or more" } else { "more than 0" };
                return Err(range(format!(
                    "must be a finite number of milliseconds, {wanted}, not {ms}"
                )));
            }
            Ok(Checked::Duration(Duration::from_secs_f64(ms / 1000.0)))
        }
        Kind::Choice(choices) => match value {
            Value::Text(t) if choices.contains(&t.as_str()) => Ok(Checked::Text(t)),
            Value::Text(t) => Err(range(format!(
                "must be one of {}, not {t:?}",
                choices
                    .iter()
                    .map(|c| format!("{c:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            other => Err(wrong("a string", &other)),
        },
        Kind::Text | Kind::Path => match value {
            Value::Text(t) if !t.is_empty() && !t.contains('\0') => Ok(Checked::Text(t)),
            Value::Text(_) => Err(range("must be a non-empty string without NUL".into())),
            other => Err(wrong("a string", &other)),
        },
        Kind::Texts => match value {
            Value::Texts(list) if spec.name == "unstable" => match Features::parse(&list) {
                Ok(_) => Ok(Checked::Texts(list)),
                Err(bad) => Err(range(format!(
                    "names no unstable feature {bad:?} (the features: \"all\", {})",
                    Feature::ALL
                        .iter()
                        .map(|f| format!("{:?}", f.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
            Value::Texts(list) if list.iter().all(|t| !t.is_empty() && !t.contains('\0')) => {
                Ok(Checked::Texts(list))
            }
            Value::Texts(_) => Err(range("must hold non-empty strings without NUL".into())),
            other => Err(wrong("a list of strings", &other)),
        },
        Kind::Pairs => match value {
            Value::Pairs(pairs) => {
                for (k, v) in &pairs {
                    let bad_name = k.is_empty() || k.contains(['\0', '=', '\r', '\n']);
                    if bad_name || v.contains(['\0', '\r', '\n']) {
                        return Err(range(format!(
                            "holds {k:?}, which is not a valid name (or its value holds NUL or a line break)"
                        )));
                    }
                }
                Ok(Checked::Pairs(pairs))
            }
            other => Err(wrong("name and value pairs", &other)),
        },
        Kind::Callback => Err((
            OptionErrorKind::NotApplicable,
            "is a callback: the binding sets it".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_applied_and_named_once() {
        let mut names: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len(), "a name is declared twice");
        for o in OPTIONS {
            assert!(
                o.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
                "{} is not snake_case",
                o.name
            );
            assert!(!o.doc.is_empty(), "{} has no doc", o.name);
        }
    }

    /// A sample value of each kind, set on settings where it applies: a
    /// declared option that `apply` forgot leaves the settings unchanged,
    /// which the debug text shows.
    #[test]
    fn setting_each_option_changes_the_settings() {
        for o in OPTIONS.iter().filter(|o| o.kind != Kind::Callback) {
            let (usage, role) = [
                (Use::Spawn, Role::Client),
                (Use::Local, Role::Agent),
                (Use::Connect, Role::Client),
                (Use::Serve, Role::Agent),
            ]
            .into_iter()
            .find(|(u, r)| o.applies(*u, *r))
            .unwrap_or_else(|| panic!("{} applies nowhere", o.name));
            let value = match o.kind {
                Kind::Bool => Value::Bool(o.default != "true"),
                Kind::Count { min, .. } => Value::Int(min as i64 + 7),
                Kind::Millis { .. } => Value::Int(1234),
                Kind::Choice(c) => Value::Text(c[c.len() - 1].to_owned()),
                Kind::Text | Kind::Path => Value::Text("/x/y".into()),
                Kind::Texts if o.name == "unstable" => Value::Texts(vec!["all".into()]),
                Kind::Texts => Value::Texts(vec!["a".into()]),
                Kind::Pairs => Value::Pairs(vec![("A".into(), "b".into())]),
                Kind::Callback => unreachable!(),
            };
            let before = Settings::new(role, usage);
            let mut after = Settings::new(role, usage);
            after.set(o.name, value).unwrap_or_else(|e| panic!("{e}"));
            let services = |s: &Settings| {
                let v = &s.acp.services;
                (v.sessions.is_some(), v.fs.is_some(), v.terminals.is_some())
            };
            let changed = format!(
                "{:?}{:?}{:?}{:?}{:?}",
                before.acp, before.spawn, before.remote, before.server, before.hooks
            ) != format!(
                "{:?}{:?}{:?}{:?}{:?}",
                after.acp, after.spawn, after.remote, after.server, after.hooks
            ) || services(&before) != services(&after);
            assert!(changed, "setting {} changed nothing", o.name);
        }
    }

    #[test]
    fn unstable_takes_all_or_feature_names() {
        let mut s = Settings::new(Role::Agent, Use::Local);
        s.set("unstable", Value::Texts(vec!["session_fork".into()]))
            .expect("a name");
        assert_eq!(
            s.acp.unstable.iter().collect::<Vec<_>>(),
            [Feature::SessionFork]
        );
        let e = s
            .set("unstable", Value::Texts(vec!["forks".into()]))
            .expect_err("a typo");
        assert_eq!(e.kind, OptionErrorKind::Range);
        assert!(e.message.contains("unstable_session_fork"), "{e}");
        s.set("unstable", Value::Texts(vec!["all".into()]))
            .expect("all");
        assert_eq!(s.acp.unstable, Features::all());
    }

    #[test]
    fn mistakes_are_refused_by_kind() {
        let mut s = Settings::new(Role::Client, Use::Spawn);
        let kind = |r: Result<(), OptionError>| r.map_err(|e| e.kind);
        assert_eq!(
            kind(s.set("nope", Value::Bool(true))),
            Err(OptionErrorKind::Unknown)
        );
        assert_eq!(kind(s.set("fs", Value::Int(1))), Err(OptionErrorKind::Type));
        assert_eq!(
            kind(s.set("outgoing_queue", Value::Int(0))),
            Err(OptionErrorKind::Range)
        );
        assert_eq!(
            kind(s.set("outgoing_queue", Value::Float(1.5))),
            Err(OptionErrorKind::Range)
        );
        assert_eq!(
            kind(s.set("request_timeout_ms", Value::Int(0))),
            Err(OptionErrorKind::Range)
        );
        assert_eq!(
            kind(s.set("framing", Value::Text("xml".into()))),
            Err(OptionErrorKind::Range)
        );
        assert_eq!(
            kind(s.set("require_auth", Value::Bool(true))),
            Err(OptionErrorKind::NotApplicable)
        );
        assert_eq!(
            kind(s.set("ca_file", Value::Text("/ca.pem".into()))),
            Err(OptionErrorKind::NotApplicable)
        );
        assert_eq!(
            kind(s.set("trace", Value::Bool(true))),
            Err(OptionErrorKind::NotApplicable)
        );
        let e = s
            .set("env", Value::Pairs(vec![("A=B".into(), "c".into())]))
            .expect_err("bad name");
        assert!(e.message.contains("A=B"), "{e}");
        // camelCase names are the same options; Null keeps the default.
        s.set("maxFrameSize", Value::Float(4096.0))
            .expect("camelCase");
        assert_eq!(s.acp.connection.max_frame_size, 4096);
        s.set("request_timeout_ms", Value::Null).expect("null");
        assert_eq!(s.acp.connection.request_timeout, None);
        s.set("request_timeout_ms", Value::Float(1.5))
            .expect("fractional ms");
        assert_eq!(
            s.acp.connection.request_timeout,
            Some(Duration::from_micros(1500))
        );
    }
}
