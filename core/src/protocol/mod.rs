//! The ACP protocol layer, for both roles, over the connection engine.
//!
//! [`AcpConnection`] is the **dynamic API**: method names and raw JSON in and
//! out, the host's [`Handler`] for what the peer sends. It is the surface
//! every binding uses; the typed Rust API ([`crate::typed`]) is built on it,
//! so both enforce the same rules:
//!
//! * **Phases.** Nothing but `initialize` before `initialize`; a second
//!   `initialize` is refused. Agent side: requests pipelined right behind
//!   `initialize` are *queued* and handled, in order, once `initialize` has
//!   been answered (real clients do pipeline, and some agents wrongly reject
//!   that; libacp accepts it). Client side: calls other than `initialize` are
//!   refused locally until `initialize` has been answered, so libacp never
//!   pipelines towards agents that would reject it.
//! * **Versions.** The agent side answers the requested version if it speaks
//!   it, else the latest it speaks (written into the host's answer). The
//!   client side refuses an answer with a version it cannot speak
//!   ([`crate::Refusal::UnsupportedVersion`]) and closes the connection.
//! * **Capabilities, both ways.** A call the peer did not advertise is
//!   refused locally ([`crate::Refusal::CapabilityNotAdvertised`]) and never sent;
//!   an incoming call this side did not advertise is answered `-32601`.
//! * **Payload capabilities, both ways** ([`payload`]): what a message may
//!   contain given what the receiver advertised (a notice, a boolean config
//!   option, a form elicitation, a system prompt, ...). Ours: a request or
//!   notification is refused locally, an answer has the part removed and
//!   the host is told ([`crate::Event::PayloadRule`]). The peer's: refused
//!   for the stable prompt-content and `additionalDirectories` rules,
//!   otherwise delivered and reported ([`crate::Event::PayloadRule`]).
//! * **Unstable extensions** ([`unstable`], [`AcpOptions::unstable`]): off by
//!   default, their methods are extension methods to this layer; on, they
//!   follow every rule here like stable ones (`session/fork` opens the
//!   session its answer names, `session/archive` closes the one it names).
//! * **Sessions and turns.** Unknown session ids get `-32002` with
//!   `data.sessionId` (incoming) or [`crate::Refusal::UnknownSession`] (outgoing);
//!   one prompt turn per session.
//! * **Cancellation.** Client side: [`AcpPeer::cancel_session`] sends
//!   `session/cancel` and answers the session's pending permission requests
//!   `cancelled` and elicitations `cancel` (their handlers see their
//!   cancellation token fire before the notification is queued, so a late
//!   click is refused, never sent); those arriving after the cancel and
//!   before the prompt's answer are answered so by the core, never shown to
//!   the host. `session/close` stops a running turn as `session/cancel`
//!   does. Agent side: `session/cancel` fires the prompt handler's cancellation token,
//!   and the prompt's answer is `stopReason: "cancelled"` whatever the
//!   handler answers (even an error, even a dropped responder).
//! * **Validation** ([`validate`]): absolute paths, 1-based lines, required
//!   fields; `-32602` with `data.field` incoming, [`CallError::InvalidParams`]
//!   outgoing. Results too, tolerant of unknown members: a peer's result
//!   that breaks the schema's rules (a missing required member, a value
//!   outside an enum such as `stopReason: "done"`) is
//!   [`CallError::InvalidResult`]; the host's own such answer goes out as
//!   `-32603` with `data.field`, never as the bad result.
//! * **Authentication** (agent side, [`AcpOptions::require_auth`]):
//!   `session/new|load|resume` answer `-32000` with `data.authMethods` until
//!   `authenticate` succeeds.
//!
//! Where each rule lives: `incoming.rs` checks what the peer sends (its
//! `check` runs the named checks in order: kind and direction, phase,
//! validation, capability, authentication, session, then `reserve`),
//! `outgoing.rs` checks what this side sends (its `check`, the same
//! order); both return an `Effect` (`effect.rs`), what the answer changes
//! in the shared `State` (`state.rs`), recorded once when the answer goes
//! out or comes back. `methods.rs` is the method table, `validate.rs` the
//! field rules, `payload.rs` the payload capability rules, `unstable.rs`
//! the unstable features, `services.rs` the client services the core
//! answers for.

pub mod methods;
pub mod payload;
pub mod unstable;
pub mod validate;

mod effect;
mod incoming;
mod outgoing;
mod services;
mod state;

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use outgoing::AcpCall;
pub use services::ClientServices;
pub use state::Phase;

use crate::error::{CallError, CloseReason, ConnectionError};
use crate::rpc::{
    CallOptions, CancelHandle, Connection, ConnectionOptions, Handler, HostReader, Peer, ReadMode,
    TryNotify, lock,
};
use crate::transport::Transport;
use crate::transport::process::{AgentCommand, ProcessStatus};
use state::State;

/// Params for an outgoing request: compact, and an object or an array.
fn checked_params(params: Option<Box<RawValue>>) -> Result<Option<Box<RawValue>>, CallError> {
    match params.map(crate::json::compact_if_needed) {
        Some(p) if !p.get().starts_with('{') && !p.get().starts_with('[') => {
            Err(CallError::InvalidParams(format!(
                "params must be a JSON object or array, not {}",
                p.get()
            )))
        }
        p => Ok(p),
    }
}

/// Which side of the protocol this end plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The editor: sends prompts, serves files, terminals and permissions.
    Client,
    /// The agent: serves sessions and prompts.
    Agent,
}

impl Role {
    /// The peer's role.
    pub fn other(self) -> Self {
        match self {
            Self::Client => Self::Agent,
            Self::Agent => Self::Client,
        }
    }
}

/// Protocol versions this implementation speaks.
pub const SUPPORTED_VERSIONS: &[u16] = &[1];
/// The newest of them.
pub const LATEST_VERSION: u16 = 1;

/// Receives raw `session/update` params.
pub type UpdateHook = Arc<dyn Fn(&RawValue) + Send + Sync>;

/// Callbacks into the host from the protocol layer. Called on the
/// connection's tasks; keep them quick.
#[derive(Clone, Default)]
pub struct AcpHooks {
    /// Client side: every `session/update` params, before the host's handler
    /// sees it (used to feed a session model).
    pub on_update: Option<UpdateHook>,
    /// Agent side: `initialize` was answered successfully.
    pub on_initialized: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for AcpHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpHooks")
            .field("on_update", &self.on_update.is_some())
            .field("on_initialized", &self.on_initialized.is_some())
            .finish()
    }
}

/// Protocol-layer settings.
#[derive(Debug, Clone, Default)]
pub struct AcpOptions {
    /// The connection engine's settings.
    pub connection: ConnectionOptions,
    /// Agent side: sessions need `authenticate` first.
    pub require_auth: bool,
    /// The unstable v1 extensions turned on (none by default; see
    /// [`unstable`]).
    pub unstable: unstable::Features,
    /// Callbacks.
    pub hooks: AcpHooks,
    /// Client side: services the core runs for the host.
    pub services: ClientServices,
}

/// An ACP connection for one role: the dynamic (JSON) API. Derefs to
/// [`AcpPeer`] for sending. Cheap to clone; the connection closes when the
/// last clone is dropped.
#[derive(Clone)]
pub struct AcpConnection {
    peer: AcpPeer,
    /// Keeps the connection open while any clone lives.
    _owner: Connection,
}

impl std::fmt::Debug for AcpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.peer.fmt(f)
    }
}

impl std::ops::Deref for AcpConnection {
    type Target = AcpPeer;
    fn deref(&self) -> &AcpPeer {
        &self.peer
    }
}

/// Sends on an ACP connection under the protocol rules. Does not keep the
/// connection open. Handlers get one from any engine [`Peer`] with
/// [`AcpPeer::of`] (for example `AcpPeer::of(&request.peer)`).
#[derive(Clone)]
pub struct AcpPeer {
    role: Role,
    peer: Peer,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for AcpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpPeer")
            .field("role", &self.role)
            .field("phase", &self.phase())
            .finish()
    }
}

impl AcpConnection {
    /// Starts a connection playing `role` over `transport`, with `handler`
    /// receiving what the peer sends (only traffic that passed the rules).
    /// Must be called within a Tokio runtime.
    pub fn start(
        role: Role,
        transport: Transport,
        handler: impl Handler,
        options: AcpOptions,
    ) -> Self {
        Self::start_on(
            &tokio::runtime::Handle::current(),
            role,
            transport,
            handler,
            options,
        )
    }

    /// [`AcpConnection::start`] on a given runtime.
    pub fn start_on(
        runtime: &tokio::runtime::Handle,
        role: Role,
        transport: Transport,
        handler: impl Handler,
        options: AcpOptions,
    ) -> Self {
        Self::start_mode(
            runtime,
            role,
            transport,
            Arc::new(handler),
            options,
            ReadMode::Task,
        )
        .0
    }

    /// Starts a connection reading in `mode` (see `rpc/reader.rs`), with
    /// the host's handler already shared; returns the host reader when the
    /// host's loop is to read.
    pub(crate) fn start_mode(
        runtime: &tokio::runtime::Handle,
        role: Role,
        transport: Transport,
        handler: Arc<dyn Handler>,
        options: AcpOptions,
        mode: ReadMode,
    ) -> (Self, Option<HostReader>) {
        let mut initial = State::new(role);
        initial.features = options.unstable;
        if role == Role::Client {
            initial.services = options.services.clone();
        }
        let state = Arc::new(Mutex::new(initial));
        let wrapper = incoming::ProtocolHandler {
            state: Arc::clone(&state),
            host: handler,
            hooks: options.hooks,
            require_auth: options.require_auth,
        };
        let extension: Arc<dyn std::any::Any + Send + Sync> = Arc::clone(&state) as _;
        let (conn, reader) = Connection::start_mode(
            runtime,
            transport,
            Arc::new(wrapper),
            options.connection,
            Some(extension),
            mode,
        );
        if role == Role::Agent || options.services.any() {
            runtime.spawn(on_close(conn.peer(), Arc::clone(&state)));
        }
        (
            Self {
                peer: AcpPeer {
                    role,
                    peer: conn.peer(),
                    state,
                },
                _owner: conn,
            },
            reader,
        )
    }

    /// Client side: spawns the agent command and connects to its stdio. The
    /// connection closes when the agent's stdout ends or the agent exits
    /// (see [`crate::transport::process::spawn`]).
    pub fn spawn_agent(
        command: &AgentCommand,
        handler: impl Handler,
        options: AcpOptions,
    ) -> Result<Self, ConnectionError> {
        let transport = crate::transport::process::spawn(command)?;
        Ok(Self::start(Role::Client, transport, handler, options))
    }

    /// Agent side: serves on this process's stdin/stdout.
    pub fn serve_stdio(handler: impl Handler, options: AcpOptions) -> Self {
        Self::start(Role::Agent, Transport::stdio(), handler, options)
    }

    /// A non-owning handle.
    pub fn acp_peer(&self) -> AcpPeer {
        self.peer.clone()
    }
}

/// Client side: when the connection closes (the agent died, either side
/// closed it), every session it opened is closed in the client services,
/// so the terminals the agent started are stopped and reaped then, not
/// when the host drops its last handle on the connection (a host keeps it
/// to read why it closed). Holds no owning handle: the task ends with the
/// connection.
/// Once the connection has closed: drops the requests still queued behind
/// an unanswered `initialize` (they hold the connection, which holds this
/// state: kept, the three would keep each other alive), and releases the
/// client services' per-session resources.
async fn on_close(peer: Peer, state: Arc<Mutex<State>>) {
    peer.closed().await;
    let (deferred, services, sessions) = {
        let mut st = lock(&state);
        let ids: Vec<String> = if st.services.any() {
            st.sessions.keys().cloned().collect()
        } else {
            Vec::new()
        };
        (std::mem::take(&mut st.deferred), st.services.clone(), ids)
    };
    drop(deferred);
    for id in sessions {
        services.closed(&id);
    }
}

impl AcpPeer {
    /// The ACP peer of an engine connection started by [`AcpConnection`]
    /// (`None` for a plain engine connection).
    pub fn of(peer: &Peer) -> Option<AcpPeer> {
        let state = Arc::clone(peer.extension()?)
            .downcast::<Mutex<State>>()
            .ok()?;
        let role = lock(&state).role;
        Some(AcpPeer {
            role,
            peer: peer.clone(),
            state,
        })
    }

    /// The role this end plays.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Sends a request after checking it against the protocol rules. A
    /// call that passes is queued for the peer now; one that does not
    /// resolves to its refusal and sends nothing.
    pub fn request(&self, method: &str, params: Option<Box<RawValue>>) -> AcpCall {
        self.request_with(method, params, CallOptions::default())
    }

    /// [`AcpPeer::request`] with per-call options (timeout, skipping the
    /// ordering barrier).
    pub fn request_with(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
    ) -> AcpCall {
        match checked_params(params) {
            Ok(params) => outgoing::request(&self.state, &self.peer, method, params, options),
            Err(e) => AcpCall::refused(e),
        }
    }

    /// Sends a request after checking it against the protocol rules, with
    /// its outcome handed to `on_answer` (the form bindings use; see
    /// [`Peer::call`]). A refused call is `Err` at once: nothing was sent
    /// and `on_answer` is dropped unused. Otherwise `on_answer` runs exactly
    /// once, after the protocol state recorded what the answer means.
    pub fn call(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
        on_answer: impl FnOnce(Result<Box<RawValue>, CallError>) + Send + 'static,
    ) -> Result<CancelHandle, CallError> {
        let params = checked_params(params)?;
        outgoing::call(&self.state, &self.peer, method, params, options, on_answer)
    }

    /// [`AcpPeer::request`] with params serialized from `params`.
    pub fn request_json<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> AcpCall {
        match crate::json::to_raw(params) {
            Ok(raw) => self.request(method, Some(raw)),
            Err(e) => AcpCall::refused(CallError::InvalidParams(e.to_string())),
        }
    }

    /// Sends a notification after checking it against the protocol rules.
    /// `session/cancel` from a client goes through
    /// [`AcpPeer::cancel_session`] instead.
    pub async fn notify(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), CallError> {
        if self.role == Role::Client && method == "session/cancel" {
            let id = state::session_id_of(params.as_deref())
                .ok_or_else(|| CallError::InvalidParams("/sessionId is required".into()))?;
            return self.cancel_session(&id).await;
        }
        outgoing::check_notification(&self.state, method, params.as_deref())?;
        self.peer.notify_raw(method, params).await
    }

    /// [`AcpPeer::notify`] without waiting: checks the notification against
    /// the protocol rules and queues it if the outgoing queue has room now;
    /// otherwise hands the params back ([`TryNotify::Full`]) for
    /// [`AcpPeer::notify`]. A client's `session/cancel` always takes the
    /// waiting path (it also answers pending permission requests).
    pub fn try_notify(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<TryNotify, CallError> {
        if self.role == Role::Client && method == "session/cancel" {
            return Ok(TryNotify::Full(params));
        }
        outgoing::check_notification(&self.state, method, params.as_deref())?;
        self.peer.try_notify_raw(method, params)
    }

    /// [`AcpPeer::notify`] with params serialized from `params`.
    pub async fn notify_json<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), CallError> {
        let raw =
            crate::json::to_raw(params).map_err(|e| CallError::InvalidParams(e.to_string()))?;
        self.notify(method, Some(raw)).await
    }

    /// Client side: cancels the session's prompt turn. Sends
    /// `session/cancel`, and answers every `session/request_permission` of
    /// that session still pending with `outcome: cancelled`, and every
    /// `elicitation/create` naming it with `action: cancel` (the handlers of
    /// those requests see their cancellation token fire, so a UI can dismiss
    /// its dialog or form). Those requests are taken from their handlers before the
    /// notification is queued (a handler's answer from then on is refused
    /// with [`crate::RespondError::Cancelled`]); their answers follow the
    /// notification. Until the prompt is answered, new ones for the session
    /// are answered so without reaching the host.
    pub async fn cancel_session(&self, session_id: &str) -> Result<(), CallError> {
        let pending = {
            let mut st = lock(&self.state);
            if st.role != Role::Client {
                return Err(CallError::Refused(crate::Refusal::WrongDirection {
                    method: "session/cancel".into(),
                }));
            }
            if st.phase != Phase::Ready {
                return Err(CallError::Refused(crate::Refusal::NotInitialized {
                    method: "session/cancel".into(),
                }));
            }
            let Some(session) = st.sessions.get_mut(session_id) else {
                return Err(CallError::Refused(crate::Refusal::UnknownSession {
                    session_id: session_id.to_owned(),
                }));
            };
            if let Some(turn) = session.turn.as_mut() {
                turn.cancelled = true;
            }
            let pending = std::mem::take(&mut session.asks);
            st.services.turn_cancelled(session_id);
            pending
        };
        let peer = &self.peer;
        // The pending questions (permission requests, elicitations) are
        // taken from the host before the notification is queued, so no
        // answer of the host's can slip in between; their cancelled answers
        // follow the notification (and are sent even if this future is
        // dropped).
        let claimed: Vec<_> = pending
            .into_iter()
            .filter_map(|(id, ask)| peer.claim_for_handler(&id, Ok(ask.cancelled())))
            .collect();
        let sent = peer
            .notify(
                "session/cancel",
                &serde_json::json!({ "sessionId": session_id }),
            )
            .await;
        for claim in claimed {
            claim.send();
        }
        sent
    }

    /// Where the connection is in its lifecycle.
    pub fn phase(&self) -> Phase {
        lock(&self.state).phase
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<u16> {
        lock(&self.state).version
    }

    /// The capabilities the peer advertised (`{}` before `initialize`).
    pub fn peer_capabilities(&self) -> Value {
        lock(&self.state).peer_caps.clone()
    }

    /// The capabilities this side advertised.
    pub fn local_capabilities(&self) -> Value {
        lock(&self.state).local_caps.clone()
    }

    /// The agent's `authMethods` (from its `initialize` answer).
    pub fn auth_methods(&self) -> Value {
        lock(&self.state).auth_methods.clone()
    }

    /// The client services this connection runs (client role).
    pub fn services(&self) -> ClientServices {
        lock(&self.state).services.clone()
    }

    /// Ids of the sessions open on this connection.
    pub fn sessions(&self) -> Vec<String> {
        let mut ids: Vec<String> = lock(&self.state).sessions.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Whether the session has a prompt turn in progress.
    pub fn turn_in_progress(&self, session_id: &str) -> bool {
        lock(&self.state)
            .sessions
            .get(session_id)
            .is_some_and(|s| s.turn.is_some())
    }

    /// The underlying engine handle.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Closes the connection (see [`Peer::close`]).
    pub async fn close(&self) {
        self.peer.close().await;
    }

    /// Waits until the connection is closed.
    pub async fn closed(&self) -> CloseReason {
        self.peer.closed().await
    }

    /// Waits until the connection is closed, everything queued was written
    /// and a spawned agent is gone (what a process should await before it
    /// exits).
    pub async fn terminated(&self) {
        self.peer.terminated().await;
    }

    /// The spawned agent's status (client side, [`AcpConnection::spawn_agent`]).
    pub fn process(&self) -> Option<&ProcessStatus> {
        self.peer.process()
    }
}
