//! [`Connection`]: one ACP connection, in either role, for Swift and Kotlin.
//! A thin shell over the core's `AcpConnection`: the constructors convert
//! the host's records into the core's options and transport, the methods
//! convert JSON text and errors. Every protocol rule, the ordering and the
//! cancellation machinery are the core's.
//!
//! **Lifetime.** The connection stays open until `shutdown()` is awaited, the
//! peer closes it, or the object is freed (Kotlin `close()`/`destroy()` or
//! the garbage collector's cleaner, Swift `deinit`), which closes it without
//! waiting. Closing fails pending calls with [`AcpError::Closed`], ends the
//! handlers' requests and shuts a spawned agent down (stdin closed, then
//! SIGTERM, then SIGKILL to its process group); nothing of libacp's is left
//! behind.
//!
//! **Threads.** Every method may be called from any thread. The async ones
//! are driven by the host's runtime; the engine runs on libacp's own
//! runtime (`runtime.rs`).

use std::os::fd::IntoRawFd;
use std::sync::{Arc, Mutex, Weak};

use libacp_core::host::{HostConnection, HostOptions, Inbox, InboxHooks};
use libacp_core::options::Use;
use libacp_core::rpc::TryNotify;
use libacp_core::{AcpPeer, CallError, CancelHandle, CancelMode, RawValue, Role, Transport};
use tokio::sync::oneshot;

use crate::batch::{BatchError, BatchOutcome, OutgoingNotification};
use crate::calls::{Calls, Tag};
use crate::cancel::CallCanceller;
use crate::drain::{self, Host, Wakes};
use crate::error::AcpError;
use crate::handler::{HostHandler, Requests};
use crate::jni::{Routed, Slot};
use crate::options::{self, AcpRole, AgentCommand, CallOptions, ConnectOptions};
use crate::runtime::{self, InRuntime};

/// How many notifications may wait in the inbox before the reader stops
/// reading (the peer's writes then block).
const INBOX_CAPACITY: usize = 1024;

/// How a spawned agent process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct ExitStatus {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

/// One ACP connection (see the module docs).
#[derive(uniffi::Object)]
pub struct Connection {
    runtime: &'static tokio::runtime::Handle,
    peer: AcpPeer,
    /// Keeps the connection open; taken by `shutdown()`.
    owner: Mutex<Option<HostConnection<Tag>>>,
    /// The peer's requests the host has not answered yet.
    requests: Arc<Requests>,
    /// The calls started with `start_call` still in flight.
    calls: Arc<Calls>,
    /// The inbox task's wake-up: told when this is freed (`drain.rs`).
    wakes: Arc<Wakes>,
    /// Where Kotlin's JNI fast path is installed (`jni/`); owned by the
    /// handler libacp's tasks hold, so it goes with them.
    jni: Weak<Slot>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.wakes.freed();
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn start(
        runtime: &'static tokio::runtime::Handle,
        role: Role,
        transport: Transport,
        handler: Arc<dyn HostHandler>,
        options: libacp_core::AcpOptions,
        hooks: InboxHooks,
    ) -> Arc<Self> {
        let jni = Arc::new(Slot::new());
        let handler: Arc<dyn HostHandler> = Arc::new(Routed::new(handler, Arc::clone(&jni)));
        let wakes = Arc::new(Wakes::default());
        let waker = Arc::clone(&wakes);
        let inbox = Inbox::new(INBOX_CAPACITY, Arc::new(move || waker.wake()));
        let requests = Arc::new(Requests::default());
        let calls = Arc::new(Calls::new(Arc::clone(&handler)));
        {
            let _entered = runtime.enter();
            let host = Host {
                handler,
                requests: Arc::clone(&requests),
            };
            drain::start(&inbox, &wakes, &host);
        }
        let host = HostOptions {
            acp: options,
            drive_reads: false,
            hooks,
        };
        let conn = HostConnection::start(runtime, role, transport, inbox, host);
        Arc::new(Self {
            runtime,
            peer: conn.acp_peer(),
            owner: Mutex::new(Some(conn)),
            requests,
            calls,
            wakes,
            jni: Arc::downgrade(&jni),
        })
    }

    /// Sends the fast path's deliveries to `host` from now on (`jni/`);
    /// `false` when the connection's tasks have ended or a host is
    /// installed already.
    pub(crate) fn use_jni(&self, host: crate::jni::host::JniHost) -> bool {
        self.jni
            .upgrade()
            .is_some_and(|slot| slot.set(host).is_ok())
    }

    /// [`Connection::respond`] with the result as UTF-8 bytes (the JNI
    /// path); bytes that are not UTF-8 answer `-32603`, as text that is not
    /// JSON does.
    pub(crate) fn respond_utf8(&self, key: u64, result: Vec<u8>) -> bool {
        self.answer_text(key, String::from_utf8(result).map_err(|e| e.to_string()))
    }

    /// Answers `key` with `result`, JSON text; text that is not JSON (or
    /// not text: `Err`) answers `-32603` saying why.
    fn answer_text(&self, key: u64, result: Result<String, String>) -> bool {
        let answer = result
            .and_then(|text| libacp_core::json::raw_from_string(text).map_err(|e| e.to_string()))
            .map_err(|e| {
                libacp_core::RpcError::internal_error(format!(
                    "the handler's result is not JSON: {e}"
                ))
            });
        self.requests.answer(key, answer)
    }

    /// [`Connection::start_call`] with the params as UTF-8 bytes (the JNI
    /// path); bytes that are not UTF-8 are refused as text that is not JSON
    /// is.
    pub(crate) fn start_call_utf8(
        &self,
        method: String,
        params: Option<Vec<u8>>,
        token: u64,
        timeout_ms: u64,
        no_timeout: bool,
        skip_barrier: bool,
    ) -> Result<(), AcpError> {
        let params =
            params
                .map(String::from_utf8)
                .transpose()
                .map_err(|e| AcpError::InvalidParams {
                    detail: format!("params are not JSON: {e}"),
                })?;
        self.start_call(method, params, token, timeout_ms, no_timeout, skip_barrier)
    }

    async fn in_runtime<F: std::future::Future>(&self, f: F) -> F::Output {
        InRuntime::new(self.runtime, f).await
    }
}

/// JSON text to raw params: `None` stays absent; text that does not parse
/// is refused (nothing is sent).
fn raw_params(params: Option<String>) -> Result<Option<Box<RawValue>>, AcpError> {
    params
        .map(|text| {
            libacp_core::json::raw_from_string(text).map_err(|e| AcpError::InvalidParams {
                detail: format!("params are not JSON: {e}"),
            })
        })
        .transpose()
}

impl Connection {
    fn closed_error(&self) -> AcpError {
        let reason = self
            .peer
            .peer()
            .close_reason()
            .unwrap_or(libacp_core::CloseReason::Local);
        CallError::Connection(libacp_core::ConnectionError::Closed(reason)).into()
    }
}

impl Connection {
    /// [`Connection::call`] and [`Connection::call_cancellable`]: sends the
    /// call and waits for its outcome, or for `canceller` if there is one.
    async fn call_until(
        &self,
        method: String,
        params: Option<String>,
        options: CallOptions,
        canceller: Option<Arc<CallCanceller>>,
    ) -> Result<String, AcpError> {
        let params = raw_params(params)?;
        let options = options.core()?;
        if canceller.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(AcpError::Cancelled {
                detail: format!("{method} was cancelled before it was sent"),
            });
        }
        let (tag, answer) = oneshot::channel();
        let cancel = {
            let owner = options::lock(&self.owner);
            let Some(conn) = owner.as_ref() else {
                return Err(self.closed_error());
            };
            let _entered = self.runtime.enter();
            conn.call(&method, params, options, Tag::Future(tag))?
        };
        // Dropped before the answer (the caller's coroutine or task was
        // cancelled, or the canceller fired): the call is abandoned and the
        // peer is sent `$/cancel_request`.
        let guard = AbandonOnDrop(Some(cancel));
        let outcome = match canceller {
            None => answer.await,
            Some(canceller) => tokio::select! {
                biased;
                outcome = answer => outcome,
                () = canceller.fired() => {
                    drop(guard);
                    return Err(AcpError::Cancelled {
                        detail: format!("{method} was cancelled by the caller"),
                    });
                }
            },
        };
        drop(guard.disarm());
        match outcome {
            Ok(result) => Ok(result?.get().to_owned()),
            Err(_) => Err(self.closed_error()),
        }
    }
}

/// Abandons a call when dropped (unless disarmed).
struct AbandonOnDrop(Option<CancelHandle>);

impl AbandonOnDrop {
    fn disarm(mut self) -> Self {
        self.0 = None;
        self
    }
}

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take() {
            cancel.cancel(CancelMode::Abandon);
        }
    }
}

#[uniffi::export]
impl Connection {
    /// Client side: spawns the agent `command` and talks ACP over its stdio.
    /// A program that cannot be started throws [`AcpError::Spawn`] at once.
    #[uniffi::constructor]
    pub fn spawn(
        command: AgentCommand,
        handler: Arc<dyn HostHandler>,
        options: ConnectOptions,
    ) -> Result<Arc<Self>, AcpError> {
        let runtime = runtime::handle()?;
        let parsed = options::settings(Role::Client, Use::Spawn, &options)?;
        let command = options::command(&command, &parsed, &handler)?;
        let transport = {
            let _entered = runtime.enter();
            libacp_core::transport::process::spawn(&command)?
        };
        Ok(Self::start(
            runtime,
            Role::Client,
            transport,
            handler,
            parsed.settings.acp,
            parsed.hooks,
        ))
    }

    /// Agent side: serves on this process's stdin and stdout (nothing else
    /// may write to stdout afterwards: log to stderr).
    #[uniffi::constructor]
    pub fn serve_stdio(
        handler: Arc<dyn HostHandler>,
        options: ConnectOptions,
    ) -> Result<Arc<Self>, AcpError> {
        let runtime = runtime::handle()?;
        let parsed = options::settings(Role::Agent, Use::Local, &options)?;
        Ok(Self::start(
            runtime,
            Role::Agent,
            Transport::stdio(),
            handler,
            parsed.settings.acp,
            parsed.hooks,
        ))
    }

    /// Either role over file descriptors the caller gives up (pipes, or one
    /// stream socket for both: `read_fd == write_fd`). A descriptor that is
    /// not open or not usable throws [`AcpError::InvalidArgument`], and the
    /// caller still owns both then.
    #[uniffi::constructor]
    pub fn from_fds(
        role: AcpRole,
        read_fd: i32,
        write_fd: i32,
        handler: Arc<dyn HostHandler>,
        options: ConnectOptions,
    ) -> Result<Arc<Self>, AcpError> {
        let runtime = runtime::handle()?;
        let role = Role::from(role);
        let parsed = options::settings(role, Use::Local, &options)?;
        // SAFETY: the caller gives the descriptors up (documented above);
        // from_raw_fds checks them before taking anything over.
        let transport = unsafe { Transport::from_raw_fds(read_fd, write_fd) }
            .map_err(|e| AcpError::argument(format!("descriptors {read_fd}/{write_fd}: {e}")))?;
        Ok(Self::start(
            runtime,
            role,
            transport,
            handler,
            parsed.settings.acp,
            parsed.hooks,
        ))
    }

    /// Sends request `method` with `params` (JSON text) and returns the
    /// peer's result as JSON text. Checked against the protocol first: a
    /// refused call throws [`AcpError::Refused`] and nothing is sent.
    /// Cancelling the caller's coroutine or task abandons the call: the peer
    /// is sent `$/cancel_request`.
    pub async fn call(
        &self,
        method: String,
        params: Option<String>,
        options: CallOptions,
    ) -> Result<String, AcpError> {
        self.call_until(method, params, options, None).await
    }

    /// [`Connection::call`], which `canceller` can also cancel: the call then
    /// throws [`AcpError::Cancelled`] and the peer is sent `$/cancel_request`.
    /// For hosts whose task cancellation does not drop the Rust future
    /// (Swift: the LibACP layer calls `canceller.cancel()` from
    /// `withTaskCancellationHandler`).
    pub async fn call_cancellable(
        &self,
        method: String,
        params: Option<String>,
        options: CallOptions,
        canceller: Arc<CallCanceller>,
    ) -> Result<String, AcpError> {
        self.call_until(method, params, options, Some(canceller))
            .await
    }

    /// Starts request `method` with `params` (JSON text) and returns once it
    /// is sent: its outcome comes to the handler's
    /// [`HostHandler::on_call_result`] or [`HostHandler::on_call_error`]
    /// under `token` (the host's choice, unique among its calls in flight),
    /// exactly once. Checked like [`Connection::call`]: a refused call
    /// throws here, and the handler hears nothing of it. The callback form
    /// of `call`, for hosts where awaiting a Rust future costs more than a
    /// call back (Kotlin). Its options are plain values (a record would cost
    /// Kotlin one more call across the FFI per call): `timeout_ms` 0 for the
    /// connection's default, `no_timeout` for none, `skip_barrier` as in
    /// [`CallOptions`].
    pub fn start_call(
        &self,
        method: String,
        params: Option<String>,
        token: u64,
        timeout_ms: u64,
        no_timeout: bool,
        skip_barrier: bool,
    ) -> Result<(), AcpError> {
        let params = raw_params(params)?;
        let options = CallOptions {
            timeout_ms: (timeout_ms > 0).then_some(timeout_ms),
            no_timeout,
            skip_barrier,
        }
        .core()?;
        let owner = options::lock(&self.owner);
        let Some(conn) = owner.as_ref() else {
            return Err(self.closed_error());
        };
        let _entered = self.runtime.enter();
        self.calls.start(token, |tag| {
            conn.call(&method, params, options, tag).map_err(Into::into)
        })
    }

    /// Abandons the call started under `token`: the peer is sent
    /// `$/cancel_request` and the call ends with `AcpError.Cancelled` (a
    /// late answer is dropped). `false` when it had already ended.
    pub fn abandon_call(&self, token: u64) -> bool {
        self.calls.abandon(token)
    }

    /// Answers the peer's request `key` (see [`HostHandler::on_request`])
    /// with `result`, JSON text (`"null"` for a null result); text that is
    /// not JSON answers `-32603` instead. `false` when the request was not
    /// the host's to answer any more: answered already, or answered by the
    /// engine (cancelled, the connection closed). A prompt answered after
    /// `session/cancel` is answered `stopReason: "cancelled"`.
    pub fn respond(&self, key: u64, result: String) -> bool {
        self.answer_text(key, Ok(result))
    }

    /// Answers the peer's request `key` with an error: [`AcpError::Rpc`]
    /// unchanged (its code, message and data: `-32602` for params the
    /// handler refuses is an `Rpc` error); any other kind is `-32603`
    /// `"Internal error"` with the error's text as `data`, as every binding
    /// answers a nested call's local failure (refused, invalid params of the
    /// call, timed out, cancelled, closed) that escapes a handler. A request
    /// the peer cancelled was answered by the engine (`-32800`, a prompt
    /// `stopReason: "cancelled"`) and this returns `false`, as it does for
    /// [`Connection::respond`].
    pub fn respond_error(&self, key: u64, error: AcpError) -> bool {
        self.requests.answer(key, Err(error.to_rpc()))
    }

    /// Sends notification `method` if the outgoing queue has room now:
    /// `true` when it was queued, `false` when the queue is full (then use
    /// [`Connection::notify`], which waits). Checked against the protocol
    /// like `notify`. Never blocks: the fast path for streaming updates.
    pub fn try_notify(&self, method: String, params: Option<String>) -> Result<bool, AcpError> {
        let params = raw_params(params)?;
        match self.peer.try_notify(&method, params)? {
            TryNotify::Sent => Ok(true),
            TryNotify::Full(_) => Ok(false),
        }
    }

    /// Queues `batch`'s notifications for the peer, in order, each as
    /// [`Connection::try_notify`] would, with one call across the FFI. Stops
    /// at the first that finds the outgoing queue full (see
    /// [`BatchOutcome::handled`]); a refused notification is reported in
    /// [`BatchOutcome::errors`] and the next ones are still sent, as
    /// separate `notify` calls would be. Never blocks.
    pub fn try_notify_batch(&self, batch: Vec<OutgoingNotification>) -> BatchOutcome {
        let mut errors = Vec::new();
        let mut handled: u32 = 0;
        for n in batch {
            let sent = raw_params(n.params)
                .and_then(|params| Ok(self.peer.try_notify(&n.method, params)?));
            match sent {
                Ok(TryNotify::Sent) => {}
                Ok(TryNotify::Full(_)) => break,
                Err(error) => errors.push(BatchError {
                    index: handled,
                    error,
                }),
            }
            handled = handled.saturating_add(1);
        }
        BatchOutcome { handled, errors }
    }

    /// Sends notification `method` with `params` (JSON text); returns once
    /// it is queued for the peer (waiting while the outgoing queue is full).
    /// On the client side `session/cancel` is [`Connection::cancel_session`].
    pub async fn notify(&self, method: String, params: Option<String>) -> Result<(), AcpError> {
        let params = raw_params(params)?;
        let peer = self.peer.clone();
        self.in_runtime(async move { peer.notify(&method, params).await })
            .await
            .map_err(Into::into)
    }

    /// Client side: cancels the session's prompt turn: sends
    /// `session/cancel` and answers the session's pending permission
    /// requests `cancelled` (their handlers see the cancellation).
    pub async fn cancel_session(&self, session_id: String) -> Result<(), AcpError> {
        let peer = self.peer.clone();
        self.in_runtime(async move { peer.cancel_session(&session_id).await })
            .await
            .map_err(Into::into)
    }

    /// Closes the connection and waits until it is closed, written out and
    /// a spawned agent is gone. Idempotent.
    pub async fn shutdown(&self) {
        let peer = self.peer.clone();
        self.in_runtime(async move {
            peer.close().await;
            peer.terminated().await;
        })
        .await;
        let owner = options::lock(&self.owner).take();
        drop(owner);
    }

    /// Closes the connection without waiting (what freeing the object does;
    /// [`Connection::shutdown`] waits). Pending calls fail with
    /// [`AcpError::Closed`], the handlers' requests end, and the handler
    /// given to the constructor is released once libacp's tasks have ended
    /// (which breaks a reference cycle through a handler that holds the
    /// connection). Idempotent.
    pub fn close_now(&self) {
        let owner = options::lock(&self.owner).take();
        let _entered = self.runtime.enter();
        drop(owner);
    }

    /// Waits until the connection is closed; returns why.
    pub async fn closed(&self) -> String {
        let peer = self.peer.clone();
        self.in_runtime(async move { peer.closed().await.to_string() })
            .await
    }

    /// Waits until the connection is closed, everything queued was written
    /// and a spawned agent is gone (what an agent process awaits before it
    /// exits).
    pub async fn terminated(&self) {
        let peer = self.peer.clone();
        self.in_runtime(async move { peer.terminated().await })
            .await;
    }

    /// Why the connection closed; `None` while it is open.
    pub fn close_reason(&self) -> Option<String> {
        self.peer.peer().close_reason().map(|r| r.to_string())
    }

    /// The role this end plays.
    pub fn role(&self) -> AcpRole {
        match self.peer.role() {
            Role::Client => AcpRole::Client,
            Role::Agent => AcpRole::Agent,
        }
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<u16> {
        self.peer.protocol_version()
    }

    /// The capabilities the peer advertised (JSON text; `{}` before
    /// `initialize`).
    pub fn peer_capabilities(&self) -> String {
        self.peer.peer_capabilities().to_string()
    }

    /// The capabilities this side advertised (JSON text).
    pub fn local_capabilities(&self) -> String {
        self.peer.local_capabilities().to_string()
    }

    /// Ids of the open sessions.
    pub fn sessions(&self) -> Vec<String> {
        self.peer.sessions()
    }

    /// Whether the session has a prompt turn in progress.
    pub fn turn_in_progress(&self, session_id: String) -> bool {
        self.peer.turn_in_progress(&session_id)
    }

    /// Client side, with `session_model`: the session's folded state (JSON
    /// text), `None` for an unknown session.
    pub fn session_snapshot(&self, session_id: String) -> Result<Option<String>, AcpError> {
        let Some(store) = self.peer.services().sessions else {
            return Err(AcpError::argument(
                "the session model is not enabled (ConnectOptions.session_model)",
            ));
        };
        Ok(store.snapshot_json(&session_id).map(|v| v.to_string()))
    }

    /// The spawned agent's process id.
    pub fn pid(&self) -> Option<u32> {
        self.peer.process().map(libacp_core::ProcessStatus::pid)
    }

    /// How the spawned agent ended, once it has.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.peer
            .process()
            .and_then(libacp_core::ProcessStatus::try_exit)
            .map(|i| ExitStatus {
                code: i.code,
                signal: i.signal,
            })
    }

    /// Waits until the spawned agent exits (`None` when none was spawned).
    pub async fn wait_exit(&self) -> Option<ExitStatus> {
        let process = self.peer.process().cloned()?;
        let info = self.in_runtime(async move { process.wait().await }).await;
        Some(ExitStatus {
            code: info.code,
            signal: info.signal,
        })
    }

    /// Kills the spawned agent's process group at once (the host is exiting
    /// and cannot wait for the shutdown ladder).
    pub fn kill_now(&self) {
        if let Some(process) = self.peer.process() {
            process.kill_now();
        }
    }
}

/// A connected pair of Unix stream sockets (close-on-exec), as two
/// descriptors the caller owns: both roles in one process
/// ([`Connection::from_fds`] with `read_fd == write_fd`), or a test's
/// scripted peer on one end.
#[uniffi::export]
pub fn socket_pair() -> Result<Vec<i32>, AcpError> {
    let (a, b) = std::os::unix::net::UnixStream::pair().map_err(|e| AcpError::Internal {
        detail: format!("socketpair failed: {e}"),
    })?;
    Ok(vec![a.into_raw_fd(), b.into_raw_fd()])
}

/// One row of the core's method table (`protocol_methods`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ProtocolMethod {
    /// The wire name (`session/fork`).
    pub name: String,
    /// Whether it is a notification (`mcp/message` has a row of each kind:
    /// a request the client handles, a notification the agent handles).
    pub notification: bool,
    /// The unstable feature that turns it on, as the option `unstable`
    /// names it (`unstable_session_fork`); `None` for a stable method.
    pub feature: Option<String>,
}

/// The methods of the protocol handled by `side` (requests and
/// notifications, stable and unstable, the proxy chain's included: a proxy
/// is an agent, a conductor a client), from the core's method table: the
/// typed Kotlin and Swift layers check their routing tables against it, so
/// a method the core learns cannot be missing from them unnoticed.
#[uniffi::export]
pub fn protocol_methods(side: AcpRole) -> Vec<ProtocolMethod> {
    use libacp_core::protocol::methods::{METHODS, PROXY_ROWS};
    let side = Role::from(side);
    METHODS
        .iter()
        .chain(PROXY_ROWS)
        .filter(|m| m.handled_by == side)
        .map(|m| ProtocolMethod {
            name: m.name.to_owned(),
            notification: m.notification,
            feature: m.feature.map(|f| f.name().to_owned()),
        })
        .collect()
}

/// libacp's version.
#[uniffi::export]
pub fn libacp_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
