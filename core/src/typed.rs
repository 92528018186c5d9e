//! The typed Rust API, built on the dynamic API ([`AcpConnection`]) so both
//! follow the same rules.
//!
//! * A client implements [`Client`] (what the agent may ask of it) and
//!   drives the agent through a [`ClientConnection`].
//! * An agent implements [`Agent`] (what the client may ask of it) and
//!   talks back to the client through an [`AgentConnection`].
//!
//! Every trait method has a default: requests answer `-32601` ("method not
//! found"), notifications are ignored, so a host implements only what it
//! supports (and advertises only that: the protocol layer answers `-32601`
//! for unadvertised capabilities before the trait is called).
//!
//! Handlers run as tasks on the connection's runtime, concurrently with each
//! other (notifications excepted: one at a time, in order). The
//! [`RequestContext`] they receive carries the connection back to the peer
//! for nested calls, the raw params (unknown fields included), and the
//! request's cancellation token (fired by `$/cancel_request`, by
//! `session/cancel` for a prompt, or when the connection closes).
//!
//! A handler's `Err(RpcError)` is the answer as it is. A nested call's
//! failure returned with `?` converts through `From<CallError> for
//! RpcError`: the peer's error unchanged (code, message, data), anything
//! else `-32603`. So a `-32601` from a nested call reaches the caller as the
//! peer sent it; only the defaults answer `-32601` for the handler's own
//! method.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::error::{CallError, ConnectionError, RpcError};
use crate::protocol::{AcpConnection, AcpOptions, AcpPeer, Role};
use crate::rpc::{BoxFuture, Handler, IncomingNotification, IncomingRequest, Responder};
use crate::schema::{Tolerant, v1};
use crate::transport::Transport;
use crate::transport::process::AgentCommand;

/// What a typed handler gets with each request.
#[derive(Debug, Clone)]
pub struct RequestContext<C> {
    /// The connection back to the peer, for nested calls.
    pub connection: C,
    /// The request's params exactly as received.
    pub raw_params: Option<Arc<RawValue>>,
    /// Fired when the peer cancels (see the module docs).
    pub cancellation: CancellationToken,
}

fn not_found<T>(method: &str) -> impl Future<Output = Result<T, RpcError>> + Send + use<T> {
    let e = RpcError::method_not_found(method);
    async move { Err(e) }
}

/// Decodes the params, spawns the handler's future and answers with its
/// result, unless the answer is superseded first (then the future is
/// dropped).
fn serve<Req, Resp, Fut, C>(
    request: IncomingRequest,
    responder: Responder,
    connection: C,
    call: impl FnOnce(RequestContext<C>, Req) -> Fut,
) where
    Req: DeserializeOwned,
    Resp: Serialize + Send + 'static,
    Fut: Future<Output = Result<Resp, RpcError>> + Send + 'static,
{
    let args: Req = match request.params_as() {
        Ok(args) => args,
        Err(e) => {
            let _ = responder.respond(Err(e));
            return;
        }
    };
    let cx = RequestContext {
        connection,
        raw_params: request.params.map(Arc::from),
        cancellation: request.cancellation,
    };
    let fut = call(cx, args);
    let superseded = responder.superseded().clone();
    tokio::spawn(async move {
        tokio::select! {
            result = fut => { let _ = responder.respond_with(result); }
            () = superseded.cancelled() => {}
        }
    });
}

fn serve_ext<C, Fut>(
    request: IncomingRequest,
    responder: Responder,
    connection: C,
    call: impl FnOnce(RequestContext<C>, String) -> Fut,
) where
    Fut: Future<Output = Result<Box<RawValue>, RpcError>> + Send + 'static,
{
    let cx = RequestContext {
        connection,
        raw_params: request.params.map(Arc::from),
        cancellation: request.cancellation,
    };
    let fut = call(cx, request.method);
    let superseded = responder.superseded().clone();
    tokio::spawn(async move {
        tokio::select! {
            result = fut => { let _ = responder.respond(result); }
            () = superseded.cancelled() => {}
        }
    });
}

// ---------------------------------------------------------------- agent side

/// What an agent serves. See the module docs.
#[allow(unused_variables)]
pub trait Agent: Send + Sync + 'static {
    /// `initialize`. The protocol layer writes the negotiated version into
    /// the answer and records the capabilities advertised in it.
    fn initialize(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::InitializeRequest,
    ) -> impl Future<Output = Result<v1::InitializeResponse, RpcError>> + Send;

    /// `authenticate`.
    fn authenticate(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::AuthenticateRequest,
    ) -> impl Future<Output = Result<v1::AuthenticateResponse, RpcError>> + Send {
        not_found("authenticate")
    }

    /// `logout` (advertise `agentCapabilities.auth.logout`).
    fn logout(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::LogoutRequest,
    ) -> impl Future<Output = Result<v1::LogoutResponse, RpcError>> + Send {
        not_found("logout")
    }

    /// `session/new`.
    fn new_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::NewSessionRequest,
    ) -> impl Future<Output = Result<v1::NewSessionResponse, RpcError>> + Send;

    /// `session/load` (advertise `loadSession`). Replay the history with
    /// `session_update` before answering.
    fn load_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::LoadSessionRequest,
    ) -> impl Future<Output = Result<v1::LoadSessionResponse, RpcError>> + Send {
        not_found("session/load")
    }

    /// `session/resume` (advertise `sessionCapabilities.resume`).
    fn resume_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ResumeSessionRequest,
    ) -> impl Future<Output = Result<v1::ResumeSessionResponse, RpcError>> + Send {
        not_found("session/resume")
    }

    /// `session/list` (advertise `sessionCapabilities.list`).
    fn list_sessions(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ListSessionsRequest,
    ) -> impl Future<Output = Result<v1::ListSessionsResponse, RpcError>> + Send {
        not_found("session/list")
    }

    /// `session/close` (advertise `sessionCapabilities.close`).
    fn close_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::CloseSessionRequest,
    ) -> impl Future<Output = Result<v1::CloseSessionResponse, RpcError>> + Send {
        not_found("session/close")
    }

    /// `session/delete` (advertise `sessionCapabilities.delete`).
    fn delete_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::DeleteSessionRequest,
    ) -> impl Future<Output = Result<v1::DeleteSessionResponse, RpcError>> + Send {
        not_found("session/delete")
    }

    /// `session/set_mode`.
    fn set_session_mode(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetSessionModeRequest,
    ) -> impl Future<Output = Result<v1::SetSessionModeResponse, RpcError>> + Send {
        not_found("session/set_mode")
    }

    /// `session/set_config_option`.
    fn set_session_config_option(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetSessionConfigOptionRequest,
    ) -> impl Future<Output = Result<v1::SetSessionConfigOptionResponse, RpcError>> + Send {
        not_found("session/set_config_option")
    }

    /// `session/prompt`: one turn. `cx.cancellation` fires on
    /// `session/cancel`; wind down and answer (any answer then becomes
    /// `stopReason: "cancelled"`).
    fn prompt(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::PromptRequest,
    ) -> impl Future<Output = Result<v1::PromptResponse, RpcError>> + Send;

    /// `session/cancel`, after the protocol layer fired the turn's token.
    fn cancel(
        &self,
        connection: AgentConnection,
        args: v1::CancelNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// `session/fork` (advertise `sessionCapabilities.fork`; unstable: cargo feature and option
    /// `unstable_session_fork`).
    #[cfg(feature = "unstable_session_fork")]
    fn fork_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ForkSessionRequest,
    ) -> impl Future<Output = Result<v1::ForkSessionResponse, RpcError>> + Send {
        not_found("session/fork")
    }

    /// `session/archive` (advertise `sessionCapabilities.archive`; unstable: cargo feature and option
    /// `unstable_session_archive`).
    #[cfg(feature = "unstable_session_archive")]
    fn archive_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ArchiveSessionRequest,
    ) -> impl Future<Output = Result<v1::ArchiveSessionResponse, RpcError>> + Send {
        not_found("session/archive")
    }

    /// `session/unarchive` (advertise `sessionCapabilities.archive`; unstable: cargo feature and option
    /// `unstable_session_archive`).
    #[cfg(feature = "unstable_session_archive")]
    fn unarchive_session(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::UnarchiveSessionRequest,
    ) -> impl Future<Output = Result<v1::UnarchiveSessionResponse, RpcError>> + Send {
        not_found("session/unarchive")
    }

    /// `session/status` (advertise `sessionCapabilities.status`; unstable: cargo feature and option
    /// `unstable_session_status`).
    #[cfg(feature = "unstable_session_status")]
    fn session_status(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SessionStatusRequest,
    ) -> impl Future<Output = Result<v1::SessionStatusResponse, RpcError>> + Send {
        not_found("session/status")
    }

    /// `session/set_title` (advertise `sessionCapabilities.title`; unstable: cargo feature and option
    /// `unstable_session_set_title`).
    #[cfg(feature = "unstable_session_set_title")]
    fn set_session_title(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetSessionTitleRequest,
    ) -> impl Future<Output = Result<v1::SetSessionTitleResponse, RpcError>> + Send {
        not_found("session/set_title")
    }

    /// `auth/status` (advertise `auth.status`; unstable: cargo feature and option
    /// `unstable_auth_status`).
    #[cfg(feature = "unstable_auth_status")]
    fn auth_status(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::AuthStatusRequest,
    ) -> impl Future<Output = Result<v1::AuthStatusResponse, RpcError>> + Send {
        not_found("auth/status")
    }

    /// `providers/list` (advertise `providers`; unstable: cargo feature and option
    /// `unstable_llm_providers`).
    #[cfg(feature = "unstable_llm_providers")]
    fn list_providers(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ListProvidersRequest,
    ) -> impl Future<Output = Result<v1::ListProvidersResponse, RpcError>> + Send {
        not_found("providers/list")
    }

    /// `providers/set` (advertise `providers`; unstable: cargo feature and option
    /// `unstable_llm_providers`).
    #[cfg(feature = "unstable_llm_providers")]
    fn set_provider(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::SetProviderRequest,
    ) -> impl Future<Output = Result<v1::SetProviderResponse, RpcError>> + Send {
        not_found("providers/set")
    }

    /// `providers/disable` (advertise `providers`; unstable: cargo feature and option
    /// `unstable_llm_providers`).
    #[cfg(feature = "unstable_llm_providers")]
    fn disable_provider(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::DisableProviderRequest,
    ) -> impl Future<Output = Result<v1::DisableProviderResponse, RpcError>> + Send {
        not_found("providers/disable")
    }

    /// `mcp/message` notifications from the client (MCP over ACP;
    /// unstable: cargo feature and option `unstable_mcp_over_acp`).
    #[cfg(feature = "unstable_mcp_over_acp")]
    fn mcp_message(
        &self,
        connection: AgentConnection,
        args: v1::MessageMcpNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// `proxy/initialize`: the conductor initializes this agent as a proxy
    /// (unstable: cargo feature and option `unstable_proxy_chains`). The
    /// same params and answer as `initialize`; before answering, a proxy
    /// forwards an `initialize` to its successor with
    /// [`AgentConnection::proxy_successor`]. The default answers `-32601`:
    /// this agent is not a proxy.
    #[cfg(feature = "unstable_proxy_chains")]
    fn proxy_initialize(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::InitializeProxyRequest,
    ) -> impl Future<Output = Result<v1::InitializeProxyResponse, RpcError>> + Send {
        not_found("proxy/initialize")
    }

    /// `proxy/successor` from the conductor: a request of this proxy's
    /// successor, delivered wrapped; answer with its result (unstable:
    /// `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    fn proxy_successor(
        &self,
        cx: RequestContext<AgentConnection>,
        args: v1::ProxySuccessorRequest,
    ) -> impl Future<Output = Result<v1::ProxySuccessorResponse, RpcError>> + Send {
        not_found("proxy/successor")
    }

    /// `proxy/successor` notifications from the conductor: a notification
    /// of the successor, delivered wrapped (unstable:
    /// `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    fn proxy_successor_notification(
        &self,
        connection: AgentConnection,
        args: v1::ProxySuccessorNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Extension requests (`_vendor/...`) and methods this crate does not know.
    fn ext_method(
        &self,
        cx: RequestContext<AgentConnection>,
        method: String,
    ) -> impl Future<Output = Result<Box<RawValue>, RpcError>> + Send {
        async move { Err(RpcError::method_not_found(&method)) }
    }

    /// Extension notifications.
    fn ext_notification(
        &self,
        connection: AgentConnection,
        method: String,
        params: Option<Box<RawValue>>,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }
}

struct AgentHandler<A>(Arc<A>);

/// The ACP peer of a request's connection. The typed handlers are only
/// installed by the typed constructors, which always start an ACP
/// connection, so this is `None` only through misuse; the request is then
/// answered `-32603` rather than panicking.
fn acp_of(peer: &crate::rpc::Peer) -> Option<AcpPeer> {
    AcpPeer::of(peer)
}

fn not_acp() -> RpcError {
    RpcError::internal_error("typed handler used outside an ACP connection")
}

macro_rules! route {
    ($self:ident, $request:ident, $responder:ident, $conn:ident, { $($(#[$attr:meta])* $method:literal => $fn:ident,)* }) => {
        match $request.method.as_str() {
            $($(#[$attr])* $method => {
                let h = Arc::clone(&$self.0);
                serve($request, $responder, $conn, move |cx, args| async move { h.$fn(cx, args).await });
            })*
            _ => {
                let h = Arc::clone(&$self.0);
                serve_ext($request, $responder, $conn, move |cx, m| async move { h.ext_method(cx, m).await });
            }
        }
    };
}

impl<A: Agent> Handler for AgentHandler<A> {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let Some(peer) = acp_of(&request.peer) else {
            let _ = responder.respond(Err(not_acp()));
            return;
        };
        let conn = AgentConnection { peer, owner: None };
        route!(self, request, responder, conn, {
            "initialize" => initialize,
            "authenticate" => authenticate,
            "logout" => logout,
            "session/new" => new_session,
            "session/load" => load_session,
            "session/resume" => resume_session,
            "session/list" => list_sessions,
            "session/close" => close_session,
            "session/delete" => delete_session,
            "session/set_mode" => set_session_mode,
            "session/set_config_option" => set_session_config_option,
            "session/prompt" => prompt,
            #[cfg(feature = "unstable_session_fork")]
            "session/fork" => fork_session,
            #[cfg(feature = "unstable_session_archive")]
            "session/archive" => archive_session,
            #[cfg(feature = "unstable_session_archive")]
            "session/unarchive" => unarchive_session,
            #[cfg(feature = "unstable_session_status")]
            "session/status" => session_status,
            #[cfg(feature = "unstable_session_set_title")]
            "session/set_title" => set_session_title,
            #[cfg(feature = "unstable_auth_status")]
            "auth/status" => auth_status,
            #[cfg(feature = "unstable_llm_providers")]
            "providers/list" => list_providers,
            #[cfg(feature = "unstable_llm_providers")]
            "providers/set" => set_provider,
            #[cfg(feature = "unstable_llm_providers")]
            "providers/disable" => disable_provider,
            #[cfg(feature = "unstable_proxy_chains")]
            "proxy/initialize" => proxy_initialize,
            #[cfg(feature = "unstable_proxy_chains")]
            "proxy/successor" => proxy_successor,
        });
    }

    fn on_notification(&self, n: IncomingNotification) -> BoxFuture<'static, ()> {
        let h = Arc::clone(&self.0);
        let Some(peer) = acp_of(&n.peer) else {
            return Box::pin(async {});
        };
        let conn = AgentConnection { peer, owner: None };
        if n.method == "session/cancel" {
            return match n.params_as::<v1::CancelNotification>() {
                Ok(args) => Box::pin(async move { h.cancel(conn, args).await }),
                Err(_) => Box::pin(async {}),
            };
        }
        #[cfg(feature = "unstable_proxy_chains")]
        if n.method == "proxy/successor" {
            return match n.params_as::<v1::ProxySuccessorNotification>() {
                Ok(args) => {
                    Box::pin(async move { h.proxy_successor_notification(conn, args).await })
                }
                Err(_) => Box::pin(async {}),
            };
        }
        #[cfg(feature = "unstable_mcp_over_acp")]
        if n.method == "mcp/message" {
            return match n.params_as::<v1::MessageMcpNotification>() {
                Ok(args) => Box::pin(async move { h.mcp_message(conn, args).await }),
                Err(_) => Box::pin(async {}),
            };
        }
        Box::pin(async move { h.ext_notification(conn, n.method, n.params).await })
    }
}

/// The agent's connection to its client: serve an [`Agent`], call the
/// client. Cheap to clone; the clone made by a constructor keeps the
/// connection open, those in handler contexts do not.
#[derive(Debug, Clone)]
pub struct AgentConnection {
    peer: AcpPeer,
    owner: Option<AcpConnection>,
}

impl AgentConnection {
    /// Serves `agent` on this process's stdin/stdout.
    pub fn serve_stdio(agent: impl Agent, options: AcpOptions) -> Self {
        Self::start(Transport::stdio(), agent, options)
    }

    /// Serves `agent` over `transport`. Must be called within a Tokio runtime.
    pub fn start(transport: Transport, agent: impl Agent, options: AcpOptions) -> Self {
        let conn = AcpConnection::start(
            Role::Agent,
            transport,
            AgentHandler(Arc::new(agent)),
            options,
        );
        Self {
            peer: conn.acp_peer(),
            owner: Some(conn),
        }
    }

    /// The dynamic API underneath.
    pub fn acp(&self) -> &AcpPeer {
        &self.peer
    }

    /// Whether this handle keeps the connection open.
    pub fn is_owner(&self) -> bool {
        self.owner.is_some()
    }

    /// Sends a `session/update` notification.
    pub async fn session_update(
        &self,
        notification: &v1::SessionNotification,
    ) -> Result<(), CallError> {
        self.peer.notify_json("session/update", notification).await
    }

    /// Sends `elicitation/complete`.
    pub async fn elicitation_complete(
        &self,
        notification: &v1::CompleteElicitationNotification,
    ) -> Result<(), CallError> {
        self.peer
            .notify_json("elicitation/complete", notification)
            .await
    }

    /// Sends `auth/status_update` (advertise `auth.status`; unstable:
    /// cargo feature and option `unstable_auth_status`).
    #[cfg(feature = "unstable_auth_status")]
    pub async fn auth_status_update(
        &self,
        notification: &v1::AuthStatusUpdateNotification,
    ) -> Result<(), CallError> {
        self.peer
            .notify_json("auth/status_update", notification)
            .await
    }

    /// Sends `mcp/message` to an MCP server the client provides over ACP
    /// (unstable: cargo feature and option `unstable_mcp_over_acp`).
    #[cfg(feature = "unstable_mcp_over_acp")]
    pub async fn mcp_message(
        &self,
        args: &v1::MessageMcpRequest,
    ) -> Result<v1::MessageMcpResponse, CallError> {
        self.peer.request_json("mcp/message", args).decode().await
    }

    /// A proxy forwards a request to its successor through the conductor
    /// (`proxy/successor`); the answer is the successor's result, unchanged
    /// (unstable: cargo feature and option `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    pub async fn proxy_successor(
        &self,
        args: &v1::ProxySuccessorRequest,
    ) -> Result<v1::ProxySuccessorResponse, CallError> {
        self.peer
            .request_json("proxy/successor", args)
            .decode()
            .await
    }

    /// A proxy forwards a notification to its successor
    /// (`proxy/successor`; unstable: `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    pub async fn proxy_successor_notification(
        &self,
        args: &v1::ProxySuccessorNotification,
    ) -> Result<(), CallError> {
        self.peer.notify_json("proxy/successor", args).await
    }
}

macro_rules! calls {
    ($conn:ident { $( $(#[$doc:meta])* $name:ident($method:literal, $req:ty) -> $resp:ty; )* }) => {
        impl $conn {
            $(
                $(#[$doc])*
                pub async fn $name(&self, args: &$req) -> Result<$resp, CallError> {
                    self.peer.request_json($method, args).decode().await
                }
            )*
        }
    };
}

calls!(AgentConnection {
    /// `session/request_permission`.
    request_permission("session/request_permission", v1::RequestPermissionRequest) -> v1::RequestPermissionResponse;
    /// `fs/read_text_file` (needs `clientCapabilities.fs.readTextFile`).
    read_text_file("fs/read_text_file", v1::ReadTextFileRequest) -> v1::ReadTextFileResponse;
    /// `fs/write_text_file` (needs `clientCapabilities.fs.writeTextFile`).
    write_text_file("fs/write_text_file", v1::WriteTextFileRequest) -> v1::WriteTextFileResponse;
    /// `terminal/create` (needs `clientCapabilities.terminal`).
    create_terminal("terminal/create", v1::CreateTerminalRequest) -> v1::CreateTerminalResponse;
    /// `terminal/output`.
    terminal_output("terminal/output", v1::TerminalOutputRequest) -> v1::TerminalOutputResponse;
    /// `terminal/wait_for_exit`.
    wait_for_terminal_exit("terminal/wait_for_exit", v1::WaitForTerminalExitRequest) -> v1::WaitForTerminalExitResponse;
    /// `terminal/kill`.
    kill_terminal("terminal/kill", v1::KillTerminalRequest) -> v1::KillTerminalResponse;
    /// `terminal/release`.
    release_terminal("terminal/release", v1::ReleaseTerminalRequest) -> v1::ReleaseTerminalResponse;
    /// `elicitation/create` (needs `clientCapabilities.elicitation`).
    create_elicitation("elicitation/create", v1::CreateElicitationRequest) -> v1::CreateElicitationResponse;
});

// --------------------------------------------------------------- client side

/// What a client serves. See the module docs.
#[allow(unused_variables)]
pub trait Client: Send + Sync + 'static {
    /// `session/request_permission`. `cx.cancellation` fires if the client
    /// cancels the turn (the core has then answered `cancelled`).
    fn request_permission(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::RequestPermissionRequest,
    ) -> impl Future<Output = Result<v1::RequestPermissionResponse, RpcError>> + Send;

    /// `session/update`, in arrival order. `update.raw()` always has the
    /// notification as received; `update.typed()` is `None` for variants
    /// newer than the schema crate.
    fn session_update(
        &self,
        connection: ClientConnection,
        update: Tolerant<v1::SessionNotification>,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// `fs/read_text_file` (advertise `fs.readTextFile`).
    fn read_text_file(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::ReadTextFileRequest,
    ) -> impl Future<Output = Result<v1::ReadTextFileResponse, RpcError>> + Send {
        not_found("fs/read_text_file")
    }

    /// `fs/write_text_file` (advertise `fs.writeTextFile`).
    fn write_text_file(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::WriteTextFileRequest,
    ) -> impl Future<Output = Result<v1::WriteTextFileResponse, RpcError>> + Send {
        not_found("fs/write_text_file")
    }

    /// `terminal/create` (advertise `terminal`).
    fn create_terminal(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::CreateTerminalRequest,
    ) -> impl Future<Output = Result<v1::CreateTerminalResponse, RpcError>> + Send {
        not_found("terminal/create")
    }

    /// `terminal/output`.
    fn terminal_output(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::TerminalOutputRequest,
    ) -> impl Future<Output = Result<v1::TerminalOutputResponse, RpcError>> + Send {
        not_found("terminal/output")
    }

    /// `terminal/wait_for_exit`.
    fn wait_for_terminal_exit(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::WaitForTerminalExitRequest,
    ) -> impl Future<Output = Result<v1::WaitForTerminalExitResponse, RpcError>> + Send {
        not_found("terminal/wait_for_exit")
    }

    /// `terminal/kill`.
    fn kill_terminal(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::KillTerminalRequest,
    ) -> impl Future<Output = Result<v1::KillTerminalResponse, RpcError>> + Send {
        not_found("terminal/kill")
    }

    /// `terminal/release`.
    fn release_terminal(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::ReleaseTerminalRequest,
    ) -> impl Future<Output = Result<v1::ReleaseTerminalResponse, RpcError>> + Send {
        not_found("terminal/release")
    }

    /// `elicitation/create` (advertise `elicitation`).
    fn create_elicitation(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::CreateElicitationRequest,
    ) -> impl Future<Output = Result<v1::CreateElicitationResponse, RpcError>> + Send {
        not_found("elicitation/create")
    }

    /// `elicitation/complete`.
    fn elicitation_complete(
        &self,
        connection: ClientConnection,
        args: v1::CompleteElicitationNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// `mcp/message` to an MCP server this client provides over ACP
    /// (unstable: cargo feature and option `unstable_mcp_over_acp`).
    #[cfg(feature = "unstable_mcp_over_acp")]
    fn mcp_message(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::MessageMcpRequest,
    ) -> impl Future<Output = Result<v1::MessageMcpResponse, RpcError>> + Send {
        not_found("mcp/message")
    }

    /// `proxy/successor` from a proxy: a request it forwards to its
    /// successor; answer with the successor's result (this client is the
    /// proxy's conductor; unstable: `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    fn proxy_successor(
        &self,
        cx: RequestContext<ClientConnection>,
        args: v1::ProxySuccessorRequest,
    ) -> impl Future<Output = Result<v1::ProxySuccessorResponse, RpcError>> + Send {
        not_found("proxy/successor")
    }

    /// `proxy/successor` notifications from a proxy: a notification it
    /// forwards to its successor (unstable: `unstable_proxy_chains`).
    #[cfg(feature = "unstable_proxy_chains")]
    fn proxy_successor_notification(
        &self,
        connection: ClientConnection,
        args: v1::ProxySuccessorNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// `auth/status_update` (unstable: cargo feature and option
    /// `unstable_auth_status`).
    #[cfg(feature = "unstable_auth_status")]
    fn auth_status_update(
        &self,
        connection: ClientConnection,
        args: v1::AuthStatusUpdateNotification,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Extension requests and methods this crate does not know.
    fn ext_method(
        &self,
        cx: RequestContext<ClientConnection>,
        method: String,
    ) -> impl Future<Output = Result<Box<RawValue>, RpcError>> + Send {
        async move { Err(RpcError::method_not_found(&method)) }
    }

    /// Extension notifications.
    fn ext_notification(
        &self,
        connection: ClientConnection,
        method: String,
        params: Option<Box<RawValue>>,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }
}

struct ClientHandler<C>(Arc<C>);

impl<C: Client> Handler for ClientHandler<C> {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let Some(peer) = acp_of(&request.peer) else {
            let _ = responder.respond(Err(not_acp()));
            return;
        };
        let conn = ClientConnection { peer, owner: None };
        route!(self, request, responder, conn, {
            "session/request_permission" => request_permission,
            "fs/read_text_file" => read_text_file,
            "fs/write_text_file" => write_text_file,
            "terminal/create" => create_terminal,
            "terminal/output" => terminal_output,
            "terminal/wait_for_exit" => wait_for_terminal_exit,
            "terminal/kill" => kill_terminal,
            "terminal/release" => release_terminal,
            "elicitation/create" => create_elicitation,
            #[cfg(feature = "unstable_mcp_over_acp")]
            "mcp/message" => mcp_message,
            #[cfg(feature = "unstable_proxy_chains")]
            "proxy/successor" => proxy_successor,
        });
    }

    fn on_notification(&self, n: IncomingNotification) -> BoxFuture<'static, ()> {
        let h = Arc::clone(&self.0);
        let Some(peer) = acp_of(&n.peer) else {
            return Box::pin(async {});
        };
        let conn = ClientConnection { peer, owner: None };
        match n.method.as_str() {
            "session/update" => {
                let raw = n.params.unwrap_or_default();
                let update = Tolerant::decode(raw);
                Box::pin(async move { h.session_update(conn, update).await })
            }
            "elicitation/complete" => match n.params_as::<v1::CompleteElicitationNotification>() {
                Ok(args) => Box::pin(async move { h.elicitation_complete(conn, args).await }),
                Err(_) => Box::pin(async {}),
            },
            #[cfg(feature = "unstable_proxy_chains")]
            "proxy/successor" => match n.params_as::<v1::ProxySuccessorNotification>() {
                Ok(args) => {
                    Box::pin(async move { h.proxy_successor_notification(conn, args).await })
                }
                Err(_) => Box::pin(async {}),
            },
            #[cfg(feature = "unstable_auth_status")]
            "auth/status_update" => match n.params_as::<v1::AuthStatusUpdateNotification>() {
                Ok(args) => Box::pin(async move { h.auth_status_update(conn, args).await }),
                Err(_) => Box::pin(async {}),
            },
            _ => Box::pin(async move { h.ext_notification(conn, n.method, n.params).await }),
        }
    }
}

/// The client's connection to an agent: serve a [`Client`], call the agent.
/// Cheap to clone; the clone made by a constructor keeps the connection
/// open (dropping the last one shuts a spawned agent down), those in
/// handler contexts do not.
#[derive(Debug, Clone)]
pub struct ClientConnection {
    peer: AcpPeer,
    owner: Option<AcpConnection>,
}

impl ClientConnection {
    /// Spawns `command` and connects to it. The connection closes when the
    /// agent's stdout ends or the agent exits (see
    /// [`crate::transport::process::spawn`]).
    pub fn spawn(
        command: &AgentCommand,
        client: impl Client,
        options: AcpOptions,
    ) -> Result<Self, ConnectionError> {
        let transport = crate::transport::process::spawn(command)?;
        Ok(Self::start(transport, client, options))
    }

    /// Connects over `transport`. Must be called within a Tokio runtime.
    pub fn start(transport: Transport, client: impl Client, options: AcpOptions) -> Self {
        let conn = AcpConnection::start(
            Role::Client,
            transport,
            ClientHandler(Arc::new(client)),
            options,
        );
        Self {
            peer: conn.acp_peer(),
            owner: Some(conn),
        }
    }

    /// The dynamic API underneath.
    pub fn acp(&self) -> &AcpPeer {
        &self.peer
    }

    /// Whether this handle keeps the connection open.
    pub fn is_owner(&self) -> bool {
        self.owner.is_some()
    }

    /// Cancels the session's prompt turn (see [`AcpPeer::cancel_session`]).
    pub async fn cancel(&self, session_id: &str) -> Result<(), CallError> {
        self.peer.cancel_session(session_id).await
    }

    /// Closes the connection (shutting a spawned agent down).
    pub async fn close(&self) {
        self.peer.close().await;
    }
}

calls!(ClientConnection {
    /// `initialize`.
    initialize("initialize", v1::InitializeRequest) -> v1::InitializeResponse;
    /// `authenticate`.
    authenticate("authenticate", v1::AuthenticateRequest) -> v1::AuthenticateResponse;
    /// `logout` (needs `agentCapabilities.auth.logout`).
    logout("logout", v1::LogoutRequest) -> v1::LogoutResponse;
    /// `session/new`.
    new_session("session/new", v1::NewSessionRequest) -> v1::NewSessionResponse;
    /// `session/load` (needs `loadSession`); the replay arrives as
    /// `session_update` calls before this returns.
    load_session("session/load", v1::LoadSessionRequest) -> v1::LoadSessionResponse;
    /// `session/resume` (needs `sessionCapabilities.resume`).
    resume_session("session/resume", v1::ResumeSessionRequest) -> v1::ResumeSessionResponse;
    /// `session/list` (needs `sessionCapabilities.list`).
    list_sessions("session/list", v1::ListSessionsRequest) -> v1::ListSessionsResponse;
    /// `session/close` (needs `sessionCapabilities.close`).
    close_session("session/close", v1::CloseSessionRequest) -> v1::CloseSessionResponse;
    /// `session/delete` (needs `sessionCapabilities.delete`).
    delete_session("session/delete", v1::DeleteSessionRequest) -> v1::DeleteSessionResponse;
    /// `session/set_mode`.
    set_session_mode("session/set_mode", v1::SetSessionModeRequest) -> v1::SetSessionModeResponse;
    /// `session/set_config_option`.
    set_session_config_option("session/set_config_option", v1::SetSessionConfigOptionRequest) -> v1::SetSessionConfigOptionResponse;
    /// `session/prompt`: returns after every `session/update` of the turn
    /// was handled.
    prompt("session/prompt", v1::PromptRequest) -> v1::PromptResponse;
});

#[cfg(feature = "unstable_session_fork")]
calls!(ClientConnection {
    /// `session/fork` (needs `sessionCapabilities.fork`; unstable: cargo feature and
    /// option `unstable_session_fork`).
    fork_session("session/fork", v1::ForkSessionRequest) -> v1::ForkSessionResponse;
});

#[cfg(feature = "unstable_session_archive")]
calls!(ClientConnection {
    /// `session/archive` (needs `sessionCapabilities.archive`; unstable: cargo feature and
    /// option `unstable_session_archive`).
    archive_session("session/archive", v1::ArchiveSessionRequest) -> v1::ArchiveSessionResponse;
});

#[cfg(feature = "unstable_session_archive")]
calls!(ClientConnection {
    /// `session/unarchive` (needs `sessionCapabilities.archive`; unstable: cargo feature and
    /// option `unstable_session_archive`).
    unarchive_session("session/unarchive", v1::UnarchiveSessionRequest) -> v1::UnarchiveSessionResponse;
});

#[cfg(feature = "unstable_session_status")]
calls!(ClientConnection {
    /// `session/status` (needs `sessionCapabilities.status`; unstable: cargo feature and
    /// option `unstable_session_status`).
    session_status("session/status", v1::SessionStatusRequest) -> v1::SessionStatusResponse;
});

#[cfg(feature = "unstable_session_set_title")]
calls!(ClientConnection {
    /// `session/set_title` (needs `sessionCapabilities.title`; unstable: cargo feature and
    /// option `unstable_session_set_title`).
    set_session_title("session/set_title", v1::SetSessionTitleRequest) -> v1::SetSessionTitleResponse;
});

#[cfg(feature = "unstable_auth_status")]
calls!(ClientConnection {
    /// `auth/status` (needs `auth.status`; unstable: cargo feature and
    /// option `unstable_auth_status`).
    auth_status("auth/status", v1::AuthStatusRequest) -> v1::AuthStatusResponse;
});

#[cfg(feature = "unstable_llm_providers")]
calls!(ClientConnection {
    /// `providers/list` (needs `providers`; unstable: cargo feature and
    /// option `unstable_llm_providers`).
    list_providers("providers/list", v1::ListProvidersRequest) -> v1::ListProvidersResponse;
});

#[cfg(feature = "unstable_llm_providers")]
calls!(ClientConnection {
    /// `providers/set` (needs `providers`; unstable: cargo feature and
    /// option `unstable_llm_providers`).
    set_provider("providers/set", v1::SetProviderRequest) -> v1::SetProviderResponse;
});

#[cfg(feature = "unstable_llm_providers")]
calls!(ClientConnection {
    /// `providers/disable` (needs `providers`; unstable: cargo feature and
    /// option `unstable_llm_providers`).
    disable_provider("providers/disable", v1::DisableProviderRequest) -> v1::DisableProviderResponse;
});

#[cfg(feature = "unstable_mcp_over_acp")]
impl ClientConnection {
    /// Sends `mcp/message` to an MCP server the agent provides over ACP
    /// (unstable: cargo feature and option `unstable_mcp_over_acp`).
    pub async fn mcp_message(&self, args: &v1::MessageMcpNotification) -> Result<(), CallError> {
        self.peer.notify_json("mcp/message", args).await
    }
}

#[cfg(feature = "unstable_proxy_chains")]
impl ClientConnection {
    /// `proxy/initialize`: this client, a conductor, initializes the agent
    /// it spawned or connected to as a proxy (the same rules as
    /// `initialize`; unstable: cargo feature and option
    /// `unstable_proxy_chains`).
    pub async fn proxy_initialize(
        &self,
        args: &v1::InitializeProxyRequest,
    ) -> Result<v1::InitializeProxyResponse, CallError> {
        self.peer
            .request_json("proxy/initialize", args)
            .decode()
            .await
    }

    /// The conductor delivers a request of the proxy's successor
    /// (`proxy/successor`); the answer is the proxy's result for it.
    pub async fn proxy_successor(
        &self,
        args: &v1::ProxySuccessorRequest,
    ) -> Result<v1::ProxySuccessorResponse, CallError> {
        self.peer
            .request_json("proxy/successor", args)
            .decode()
            .await
    }

    /// The conductor delivers a notification of the proxy's successor
    /// (`proxy/successor`).
    pub async fn proxy_successor_notification(
        &self,
        args: &v1::ProxySuccessorNotification,
    ) -> Result<(), CallError> {
        self.peer.notify_json("proxy/successor", args).await
    }
}
