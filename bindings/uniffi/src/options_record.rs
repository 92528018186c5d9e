// @generated from the core's option table (core/src/options.rs) by
// src/options_gen.rs: do not edit. Regenerate with
// `LIBACP_REGENERATE=1 cargo test -p libacp-uniffi options_record`.

use std::collections::HashMap;

use libacp_core::options::Value;

/// The settings of a connection or a server: every option of the core's
/// one table (the same names, units and ranges in every binding;
/// durations in milliseconds, sizes in bytes). Every field is optional:
/// `None` keeps the default. Which apply depends on how the connection
/// is made (spawned, local, connected by URL, served); setting one that
/// does not apply throws `InvalidArgument` naming it, as does a value
/// out of range.
#[derive(Debug, Clone, Default, PartialEq, uniffi::Record)]
pub struct ConnectOptions {
    /// How messages are delimited on a byte stream: one per line, or LSP-style
    /// Content-Length headers (remote transports carry one message per frame or
    /// event). One of `ndjson`, `content-length`. Default: ndjson.
    #[uniffi(default)]
    pub framing: Option<String>,
    /// Largest message accepted from the peer, in bytes; a larger one is
    /// answered or reported and skipped. Default: 67108864 (64 MiB).
    #[uniffi(default)]
    pub max_frame_size: Option<u64>,
    /// Default timeout of every outgoing request; the peer is sent
    /// $/cancel_request when it passes. Default: none.
    #[uniffi(default)]
    pub request_timeout_ms: Option<u64>,
    /// After the peer's end of stream, how long requests in flight get to
    /// answer, and queued messages to be written. Default: 2000.
    #[uniffi(default)]
    pub flush_timeout_ms: Option<u64>,
    /// Outgoing messages queued before a notify waits. Default: 1024.
    #[uniffi(default)]
    pub outgoing_queue: Option<u64>,
    /// Incoming messages queued for the host before the reader waits. Default:
    /// 1024.
    #[uniffi(default)]
    pub incoming_queue: Option<u64>,
    /// Requests from the peer in flight (received, not answered) before the
    /// reader waits. Default: 1024.
    #[uniffi(default)]
    pub incoming_requests: Option<u64>,
    /// Sees every message, both ways (for debugging). Here a flag: `true` hands
    /// them to `HostHandler.on_frame`. Default: off.
    #[uniffi(default)]
    pub trace: Option<bool>,
    /// Receives what the engine reports that is not a message (a frame skipped,
    /// a response to no request, ...). Here a flag: `true` hands them to
    /// `HostHandler.on_engine_event`. Default: off.
    #[uniffi(default)]
    pub events: Option<bool>,
    /// The trace and events callbacks run in wire order with the handlers,
    /// before the answer that follows what they report (true), or as soon as
    /// the engine sees it, possibly after that answer (false). Default: true.
    #[uniffi(default)]
    pub ordered_hooks: Option<bool>,
    /// Agent side: session/new, session/load and session/resume need
    /// authenticate first. Default: false.
    #[uniffi(default)]
    pub require_auth: Option<bool>,
    /// The unstable ACP v1 extensions to speak: ["all"] or feature names as the
    /// Rust SDK names them ("unstable_session_fork" or "session_fork"); off,
    /// their methods are extension methods to the core. Default: [] (none).
    #[uniffi(default)]
    pub unstable: Option<Vec<String>>,
    /// Client side: fold session/update notifications into a session model the
    /// host can read. Default: false.
    #[uniffi(default)]
    pub session_model: Option<bool>,
    /// Client side: answer fs/read_text_file and fs/write_text_file in the
    /// core, within each session's directories. Default: false.
    #[uniffi(default)]
    pub fs: Option<bool>,
    /// Client side: answer the terminal/ methods in the core with real
    /// processes. Default: false.
    #[uniffi(default)]
    pub terminals: Option<bool>,
    /// The spawned agent's working directory. Default: this process's.
    #[uniffi(default)]
    pub cwd: Option<String>,
    /// Environment variables for the spawned agent, added to this process's
    /// unless clear_env. Default: none.
    #[uniffi(default)]
    pub env: Option<HashMap<String, String>>,
    /// Start the spawned agent with only env. Default: false.
    #[uniffi(default)]
    pub clear_env: Option<bool>,
    /// On close, how long the agent gets to exit after its stdin is closed,
    /// before SIGTERM. Default: 2000.
    #[uniffi(default)]
    pub grace_after_stdin_close_ms: Option<u64>,
    /// On close, how long the agent gets to exit after SIGTERM, before SIGKILL.
    /// Default: 2000.
    #[uniffi(default)]
    pub grace_after_sigterm_ms: Option<u64>,
    /// Receives the spawned agent's stderr, line by line. Here a flag: `true`
    /// hands them to `HostHandler.on_stderr`. Default: this process's stderr.
    #[uniffi(default)]
    pub stderr: Option<bool>,
    /// Extra HTTP headers sent on the handshake and every request (for example
    /// Authorization). Default: none.
    #[uniffi(default)]
    pub headers: Option<HashMap<String, String>>,
    /// A PEM file of CA certificates trusted beside the platform's roots
    /// (wss://, https://). Default: none.
    #[uniffi(default)]
    pub ca_file: Option<String>,
    /// Name resolution and TCP connect. Default: 10000.
    #[uniffi(default)]
    pub connect_timeout_ms: Option<u64>,
    /// TLS and the HTTP or WebSocket handshake. Default: 10000.
    #[uniffi(default)]
    pub handshake_timeout_ms: Option<u64>,
    /// For http(s):// URLs: try a WebSocket upgrade first, fall back to
    /// Streamable HTTP. Default: false.
    #[uniffi(default)]
    pub prefer_websocket: Option<bool>,
    /// Speak HTTP/2 without TLS (h2c) on http:// (over TLS, ALPN decides).
    /// Default: false.
    #[uniffi(default)]
    pub http2_prior_knowledge: Option<bool>,
    /// WebSocket pings (and, on a server, SSE keep-alive comments); a client
    /// whose server answers no ping for twice this long is disconnected.
    /// Default: 20000.
    #[uniffi(default)]
    pub keepalive_interval_ms: Option<u64>,
    /// Largest WebSocket message, POST body or event accepted, in bytes (a
    /// server answers 413). Default: 67108864 (64 MiB).
    #[uniffi(default)]
    pub max_message_size: Option<u64>,
    /// Messages queued per direction (and per event stream) between the network
    /// and the engine. Default: 1024.
    #[uniffi(default)]
    pub queue: Option<u64>,
    /// The endpoint's path. Default: /acp.
    #[uniffi(default)]
    pub path: Option<String>,
    /// A PEM certificate chain; with tls_key the server speaks TLS only.
    /// Default: none (plain TCP).
    #[uniffi(default)]
    pub tls_cert: Option<String>,
    /// The PEM private key of tls_cert. Default: none.
    #[uniffi(default)]
    pub tls_key: Option<String>,
    /// Origin values allowed (* for any); requests without an Origin are always
    /// allowed. Default: none (browsers refused).
    #[uniffi(default)]
    pub allowed_origins: Option<Vec<String>>,
    /// Tokens accepted in Authorization: Bearer; when set, other requests get
    /// 401 before any agent code runs. Default: none (no token needed).
    #[uniffi(default)]
    pub bearer_tokens: Option<Vec<String>>,
    /// Remote connections served at once; one more gets 503. Default: 4096.
    #[uniffi(default)]
    pub max_connections: Option<u64>,
    /// A connection from which nothing arrived for this long (no message, no
    /// pong, no open event stream) is closed. Default: 60000.
    #[uniffi(default)]
    pub idle_timeout_ms: Option<u64>,
    /// On shutdown, how long connections with requests in flight get to answer
    /// them. Default: 10000.
    #[uniffi(default)]
    pub shutdown_grace_ms: Option<u64>,
    /// Serve WebSocket upgrades. Default: true.
    #[uniffi(default)]
    pub websocket: Option<bool>,
    /// Serve Streamable HTTP. Default: true.
    #[uniffi(default)]
    pub streamable_http: Option<bool>,
}

impl ConnectOptions {
    /// The options set, by name, as the core's values.
    pub(crate) fn values(&self) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        if let Some(v) = &self.framing {
            out.push(("framing", Value::Text(v.clone())));
        }
        if let Some(v) = &self.max_frame_size {
            out.push(("max_frame_size", count(*v)));
        }
        if let Some(v) = &self.request_timeout_ms {
            out.push(("request_timeout_ms", count(*v)));
        }
        if let Some(v) = &self.flush_timeout_ms {
            out.push(("flush_timeout_ms", count(*v)));
        }
        if let Some(v) = &self.outgoing_queue {
            out.push(("outgoing_queue", count(*v)));
        }
        if let Some(v) = &self.incoming_queue {
            out.push(("incoming_queue", count(*v)));
        }
        if let Some(v) = &self.incoming_requests {
            out.push(("incoming_requests", count(*v)));
        }
        if let Some(v) = &self.trace {
            out.push(("trace", Value::Bool(*v)));
        }
        if let Some(v) = &self.events {
            out.push(("events", Value::Bool(*v)));
        }
        if let Some(v) = &self.ordered_hooks {
            out.push(("ordered_hooks", Value::Bool(*v)));
        }
        if let Some(v) = &self.require_auth {
            out.push(("require_auth", Value::Bool(*v)));
        }
        if let Some(v) = &self.unstable {
            out.push(("unstable", Value::Texts(v.clone())));
        }
        if let Some(v) = &self.session_model {
            out.push(("session_model", Value::Bool(*v)));
        }
        if let Some(v) = &self.fs {
            out.push(("fs", Value::Bool(*v)));
        }
        if let Some(v) = &self.terminals {
            out.push(("terminals", Value::Bool(*v)));
        }
        if let Some(v) = &self.cwd {
            out.push(("cwd", Value::Text(v.clone())));
        }
        if let Some(v) = &self.env {
            out.push(("env", pairs(v)));
        }
        if let Some(v) = &self.clear_env {
            out.push(("clear_env", Value::Bool(*v)));
        }
        if let Some(v) = &self.grace_after_stdin_close_ms {
            out.push(("grace_after_stdin_close_ms", count(*v)));
        }
        if let Some(v) = &self.grace_after_sigterm_ms {
            out.push(("grace_after_sigterm_ms", count(*v)));
        }
        if let Some(v) = &self.stderr {
            out.push(("stderr", Value::Bool(*v)));
        }
        if let Some(v) = &self.headers {
            out.push(("headers", pairs(v)));
        }
        if let Some(v) = &self.ca_file {
            out.push(("ca_file", Value::Text(v.clone())));
        }
        if let Some(v) = &self.connect_timeout_ms {
            out.push(("connect_timeout_ms", count(*v)));
        }
        if let Some(v) = &self.handshake_timeout_ms {
            out.push(("handshake_timeout_ms", count(*v)));
        }
        if let Some(v) = &self.prefer_websocket {
            out.push(("prefer_websocket", Value::Bool(*v)));
        }
        if let Some(v) = &self.http2_prior_knowledge {
            out.push(("http2_prior_knowledge", Value::Bool(*v)));
        }
        if let Some(v) = &self.keepalive_interval_ms {
            out.push(("keepalive_interval_ms", count(*v)));
        }
        if let Some(v) = &self.max_message_size {
            out.push(("max_message_size", count(*v)));
        }
        if let Some(v) = &self.queue {
            out.push(("queue", count(*v)));
        }
        if let Some(v) = &self.path {
            out.push(("path", Value::Text(v.clone())));
        }
        if let Some(v) = &self.tls_cert {
            out.push(("tls_cert", Value::Text(v.clone())));
        }
        if let Some(v) = &self.tls_key {
            out.push(("tls_key", Value::Text(v.clone())));
        }
        if let Some(v) = &self.allowed_origins {
            out.push(("allowed_origins", Value::Texts(v.clone())));
        }
        if let Some(v) = &self.bearer_tokens {
            out.push(("bearer_tokens", Value::Texts(v.clone())));
        }
        if let Some(v) = &self.max_connections {
            out.push(("max_connections", count(*v)));
        }
        if let Some(v) = &self.idle_timeout_ms {
            out.push(("idle_timeout_ms", count(*v)));
        }
        if let Some(v) = &self.shutdown_grace_ms {
            out.push(("shutdown_grace_ms", count(*v)));
        }
        if let Some(v) = &self.websocket {
            out.push(("websocket", Value::Bool(*v)));
        }
        if let Some(v) = &self.streamable_http {
            out.push(("streamable_http", Value::Bool(*v)));
        }
        out
    }
}

/// A count or a duration: beyond `i64` it is out of every range, which
/// the core says.
fn count(n: u64) -> Value {
    i64::try_from(n).map_or(Value::Float(f64::INFINITY), Value::Int)
}

/// Name and value pairs, in name order (a map has none of its own).
fn pairs(map: &HashMap<String, String>) -> Value {
    let mut pairs: Vec<(String, String)> =
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    pairs.sort();
    Value::Pairs(pairs)
}
