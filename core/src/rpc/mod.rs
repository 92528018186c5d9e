//! The role-neutral JSON-RPC 2.0 connection engine.
//!
//! A [`Connection`] runs on a Tokio runtime: a reader, a dispatcher and a
//! writer task for Rust handlers; for a binding's inbox, a reader that
//! dispatches inline (or a [`HostReader`] the host's event loop drives) and
//! the writer, with answers and requests written directly by the sending
//! thread when the writer is idle (see `reader.rs` and `writer.rs` for
//! what each does and why). Hosts implement [`Handler`] for what the peer
//! sends and use [`Peer`] (or the [`Connection`] that derefs to it) to send.
//! The engine's own tasks are supervised: a panic in one of them closes the
//! connection ([`CloseReason::Internal`]) instead of leaving it hanging.
//!
//! Files, one part each: `reader.rs` (the reader, the dispatcher, the
//! host-driven reader), `responder.rs` (incoming requests and their one
//! answer), `call.rs` (outgoing calls and their cancellation), `writer.rs`
//! (the outgoing queue, the writer task, direct writes) and `shared.rs` (the
//! state they share: pending calls, requests in flight, the close).
//!
//! Guarantees (each has a test in `tests/`):
//! * notifications reach the handler in arrival order, one at a time;
//! * a response is delivered only after every notification received before
//!   it was handled; requests start in arrival order and run concurrently,
//!   so a handler may await a nested request to the peer;
//! * every incoming request is answered exactly once;
//! * when the connection closes, every pending call fails at once with
//!   [`ConnectionError::Closed`] and new calls fail immediately;
//! * queues are bounded: a fast sender or a slow handler waits instead of
//!   growing memory.

mod call;
mod reader;
mod responder;
mod shared;
mod writer;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

pub use call::{CallOptions, CallTimeout, CancelHandle, CancelMode, OutgoingCall};
pub use reader::{HostReader, PumpState};
pub use responder::{IncomingNotification, IncomingRequest, Responder};
pub use shared::{Signal, SignalSink};

use crate::error::{CallError, CloseReason, ConnectionError, RpcError};
use crate::framing::{DEFAULT_MAX_FRAME_SIZE, FrameReader, Framing};
use crate::message::{self, RequestId};
use crate::transport::process::{AgentCommand, ProcessStatus};
use crate::transport::{ReadHalf, Transport};
use shared::Shared;
pub(crate) use shared::{CallResult, Finisher, InflightState};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

tokio::task_local! {
    /// Set while a notification handler of the connection at this address runs.
    static NOTIFICATION_SCOPE: usize;
}

/// Locks a mutex, recovering from poisoning (a panicking host callback must
/// not wedge the connection).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Which way a traced frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// Sees every frame (without framing bytes) in both directions. Called on
/// the thread that reads (incoming: the reader task, or a host's loop
/// pumping) or writes (outgoing: the writer task, or the thread sending an
/// answer or a request directly); keep it quick. A panic in it is ignored.
pub type TraceHook = Arc<dyn Fn(Direction, &[u8]) + Send + Sync>;

/// Receives [`Event`]s. Called on the thread that handles the frame (the
/// connection's tasks, or a host's loop pumping a [`HostReader`]): keep it
/// quick. A panic in it is ignored.
pub type EventHook = Arc<dyn Fn(&Event) + Send + Sync>;

/// Things the engine handled on its own that a host may want to log. None of
/// them closes the connection except [`Event::Closed`], which reports it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event {
    /// A frame over `max_frame_size` was skipped; `answered` when an error
    /// was sent back to a request whose id could be read.
    OversizedFrame {
        /// Its size in bytes.
        size: usize,
        /// Its top-level id, when recovered.
        id: Option<RequestId>,
        /// Whether the peer was sent an error for it.
        answered: bool,
    },
    /// A frame that was not valid JSON-RPC (the error says why).
    InvalidFrame {
        /// The `-32700`/`-32600` error.
        error: RpcError,
        /// Whether it was sent to the peer (never for response-like frames).
        answered: bool,
    },
    /// A Content-Length header section that could not be understood.
    BadHeader(String),
    /// A response with no id, or an id we are not waiting for (for example
    /// a late answer to an abandoned or timed-out call).
    UnmatchedResponse {
        /// The id as received.
        id: Option<RequestId>,
        /// What it carried.
        result: Result<Box<RawValue>, RpcError>,
    },
    /// The peer reused the id of a request still in flight; the duplicate
    /// was answered `-32600` with `"id": null` (`data.id`: the reused id).
    DuplicateRequestId {
        /// The reused id.
        id: RequestId,
    },
    /// `$/cancel_request` for a request not in flight (answered already, or
    /// unknown). Ignored, as the protocol requires.
    CancelForUnknownRequest {
        /// The id named by the cancellation.
        id: RequestId,
    },
    /// `$/cancel_request` with params that do not name a request.
    InvalidCancel {
        /// The params as received.
        params: Option<String>,
    },
    /// The protocol layer ignored a message (the text says which and why).
    Ignored(String),
    /// A handler panicked; its request (if any) was answered `-32603`.
    HandlerPanicked {
        /// The panic message.
        message: String,
    },
    /// A client service of the core (`fs`, `terminal`) answered one of the
    /// peer's requests for the host, which never sees those requests.
    Served {
        /// The method (`fs/read_text_file`, `terminal/create`, ...).
        method: String,
        /// The request's id.
        id: RequestId,
        /// The params' members that say what was asked (`sessionId`,
        /// `path`, `command`, `terminalId`), when present.
        subject: serde_json::Value,
        /// The error it was answered with, if it failed.
        error: Option<RpcError>,
    },
    /// A payload capability rule (`protocol::payload::RULES`) was broken.
    /// `withheld`: this side removed the part from the host's own answer
    /// before sending it (the peer did not advertise it); otherwise the
    /// peer sent it, and it was delivered as received.
    PayloadRule {
        /// The rule's name (`"boolean_config_option"`, `"notice"`, ...).
        rule: &'static str,
        /// Removed from our answer (true) or received from the peer.
        withheld: bool,
        /// The message's method.
        method: String,
        /// JSON pointer of the member, in its params or result.
        field: String,
        /// The capability it needs (`clientCapabilities.session.notices`).
        capability: &'static str,
    },
    /// The connection closed.
    Closed(CloseReason),
}

fn rpc_error_json(e: &RpcError) -> serde_json::Value {
    serde_json::json!({ "code": e.code, "message": e.message, "data": e.data })
}

impl Event {
    /// The event as every binding reports it: a stable snake-case kind
    /// (`"oversized_frame"`, `"invalid_frame"`, `"bad_header"`,
    /// `"unmatched_response"`, `"duplicate_request_id"`,
    /// `"cancel_for_unknown_request"`, `"invalid_cancel"`, `"ignored"`,
    /// `"handler_panicked"`, `"served"`, `"payload_rule"`, `"closed"`, or
    /// `"other"`), a readable sentence,
    /// and the details as JSON.
    pub fn describe(&self) -> (&'static str, String, serde_json::Value) {
        let event = self;
        use serde_json::json;
        let id_of = |id: Option<&RequestId>| id.map_or(serde_json::Value::Null, id_json);
        match event {
            Event::OversizedFrame { size, id, answered } => (
                "oversized_frame",
                format!("skipped a frame of {size} bytes (over max_frame_size)"),
                json!({ "size": size, "id": id_of(id.as_ref()), "answered": answered }),
            ),
            Event::InvalidFrame { error, answered } => (
                "invalid_frame",
                format!("invalid frame: {error}"),
                json!({ "error": rpc_error_json(error), "answered": answered }),
            ),
            Event::BadHeader(detail) => (
                "bad_header",
                format!("bad Content-Length header: {detail}"),
                json!({ "detail": detail }),
            ),
            Event::UnmatchedResponse { id, result } => {
                let id = id_of(id.as_ref());
                let details = match result {
                    Ok(raw) => json!({
                        "id": id,
                        "result": serde_json::from_str::<serde_json::Value>(raw.get()).unwrap_or(serde_json::Value::Null),
                    }),
                    Err(e) => json!({ "id": id, "error": rpc_error_json(e) }),
                };
                (
                    "unmatched_response",
                    format!("a response for no pending request (id {id})"),
                    details,
                )
            }
            Event::DuplicateRequestId { id } => (
                "duplicate_request_id",
                format!(
                    "the peer reused the id {id} of a request in flight (answered -32600 with id null)"
                ),
                json!({ "id": id_json(id) }),
            ),
            Event::CancelForUnknownRequest { id } => (
                "cancel_for_unknown_request",
                format!("$/cancel_request for {id}, which is not in flight (ignored)"),
                json!({ "id": id_json(id) }),
            ),
            Event::InvalidCancel { params } => (
                "invalid_cancel",
                "$/cancel_request whose params name no request (ignored)".to_owned(),
                json!({ "params": params }),
            ),
            Event::Ignored(reason) => ("ignored", reason.clone(), json!({})),
            Event::HandlerPanicked { message } => (
                "handler_panicked",
                format!("a handler panicked: {message}"),
                json!({ "panic": message }),
            ),
            Event::Served {
                method,
                id,
                subject,
                error,
            } => (
                "served",
                match error {
                    None => format!("the core answered {method} for the host"),
                    Some(e) => format!(
                        "the core answered {method} for the host with error {}: {}",
                        e.code, e.message
                    ),
                },
                json!({
                    "method": method,
                    "id": id_json(id),
                    "subject": subject,
                    "error": error.as_ref().map(rpc_error_json),
                }),
            ),
            Event::PayloadRule {
                rule,
                withheld,
                method,
                field,
                capability,
            } => (
                "payload_rule",
                if *withheld {
                    format!(
                        "withheld {field} from the {method} answer: the peer did not advertise `{capability}`"
                    )
                } else {
                    format!("the peer sent {field} in {method} without `{capability}` advertised")
                },
                json!({
                    "rule": rule,
                    "withheld": withheld,
                    "method": method,
                    "field": field,
                    "capability": capability,
                }),
            ),
            Event::Closed(reason) => (
                "closed",
                format!("the connection closed: {reason}"),
                json!({ "reason": reason.to_string() }),
            ),
        }
    }
}

/// A request id as JSON (exact numbers kept when they parse).
fn id_json(id: &RequestId) -> serde_json::Value {
    serde_json::to_value(id).unwrap_or(serde_json::Value::Null)
}

/// Connection settings. `Default` gives NDJSON, 64 MiB frames, 1024-frame
/// queues and no timeout.
#[derive(Clone)]
pub struct ConnectionOptions {
    /// NDJSON or Content-Length.
    pub framing: Framing,
    /// Largest frame accepted from the peer, in bytes.
    pub max_frame_size: usize,
    /// Outgoing requests and notifications queued before senders wait.
    pub outgoing_queue: usize,
    /// Incoming messages queued for the dispatcher before the reader waits.
    pub incoming_queue: usize,
    /// Requests from the peer in flight (received, not yet answered) before
    /// the reader waits for one to be answered: back-pressure on a peer
    /// that floods a host which is not answering (at least 1).
    pub incoming_requests: usize,
    /// Default timeout of every outgoing request (`None`: wait forever).
    pub request_timeout: Option<Duration>,
    /// On close, how long queued frames may take to be written.
    pub flush_timeout: Duration,
    /// Sees every frame.
    pub trace: Option<TraceHook>,
    /// Receives [`Event`]s.
    pub events: Option<EventHook>,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        Self {
            framing: Framing::Ndjson,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            outgoing_queue: 1024,
            incoming_queue: 1024,
            incoming_requests: 1024,
            request_timeout: None,
            flush_timeout: Duration::from_secs(2),
            trace: None,
            events: None,
        }
    }
}

impl std::fmt::Debug for ConnectionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionOptions")
            .field("framing", &self.framing)
            .field("max_frame_size", &self.max_frame_size)
            .field("outgoing_queue", &self.outgoing_queue)
            .field("incoming_queue", &self.incoming_queue)
            .field("incoming_requests", &self.incoming_requests)
            .field("request_timeout", &self.request_timeout)
            .field("flush_timeout", &self.flush_timeout)
            .finish_non_exhaustive()
    }
}

/// What the peer sends, handled by the host.
///
/// Both methods are called on the connection's dispatcher task, one message
/// at a time, in arrival order.
pub trait Handler: Send + Sync + 'static {
    /// Starts handling a request. Must not block: start the work (spawn a
    /// task) and return; answer through `responder`, now or later, from any
    /// thread. The default answers `-32601`.
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let _ = responder.respond(Err(RpcError::method_not_found(&request.method)));
    }

    /// Handles a notification. The returned future is awaited before the
    /// next message is dispatched. It may make requests to the peer (their
    /// answers skip the ordering barrier); it must not wait for anything else
    /// the peer has yet to send. The default ignores the notification.
    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        drop(notification);
        Box::pin(async {})
    }
}

impl<H: Handler + ?Sized> Handler for Arc<H> {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        (**self).on_request(request, responder);
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        (**self).on_notification(notification)
    }
}

/// A [`Handler`] that answers every request `-32601` and ignores
/// notifications.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandler;

impl Handler for NoHandler {}

type RequestFn =
    dyn Fn(IncomingRequest) -> BoxFuture<'static, Result<Box<RawValue>, RpcError>> + Send + Sync;
type NotificationFn = dyn Fn(IncomingNotification) -> BoxFuture<'static, ()> + Send + Sync;

/// A [`Handler`] made of async closures. Each request's future is spawned on
/// the runtime. When its answer is superseded (the peer sent
/// `$/cancel_request` and the engine answered `-32800`, or the connection
/// closed) the future is dropped; otherwise it runs to completion and its
/// result is the answer (watch `IncomingRequest::cancellation` to stop early).
#[derive(Default)]
pub struct FnHandler {
    request: Option<Arc<RequestFn>>,
    notification: Option<Arc<NotificationFn>>,
}

impl std::fmt::Debug for FnHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnHandler").finish_non_exhaustive()
    }
}

impl FnHandler {
    /// A handler that answers `-32601` and ignores notifications until
    /// closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles requests with `f`, whose result is anything serializable
    /// (a `serde_json::Value`, a schema type, or a raw `Box<RawValue>`). A
    /// result that does not serialize is answered `-32603`.
    #[must_use]
    pub fn on_request<F, Fut, T>(mut self, f: F) -> Self
    where
        F: Fn(IncomingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, RpcError>> + Send + 'static,
        T: Serialize + 'static,
    {
        self.request = Some(Arc::new(move |r| {
            let fut = f(r);
            Box::pin(async move {
                let value = fut.await?;
                crate::json::to_raw(&value)
                    .map_err(|e| RpcError::internal_error(format!("result did not serialize: {e}")))
            })
        }));
        self
    }

    /// Handles notifications with `f`.
    #[must_use]
    pub fn on_notification<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(IncomingNotification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.notification = Some(Arc::new(move |n| Box::pin(f(n))));
        self
    }
}

impl Handler for FnHandler {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let Some(f) = &self.request else {
            let _ = responder.respond(Err(RpcError::method_not_found(&request.method)));
            return;
        };
        let token = responder.superseded().clone();
        let fut = f(request);
        tokio::spawn(async move {
            tokio::select! {
                result = fut => { let _ = responder.respond(result); }
                () = token.cancelled() => {}
            }
        });
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        match &self.notification {
            Some(f) => f(notification),
            None => Box::pin(async {}),
        }
    }
}

/// What [`Peer::try_notify_raw`] (and `AcpPeer::try_notify`) did.
#[derive(Debug)]
pub enum TryNotify {
    /// Queued for writing.
    Sent,
    /// Not sent: the outgoing queue is full (or the method needs the
    /// waiting path). The params are handed back, unchanged, for `notify`.
    Full(Option<Box<RawValue>>),
}

/// A handle for talking to the peer. Cheap to clone; does not keep the
/// connection open (only [`Connection`] handles do).
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("closed", &self.shared.close_reason())
            .finish()
    }
}

impl Peer {
    fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Sends a request with `params` serialized to JSON. It is queued for
    /// the peer now; await the returned call for the raw result.
    pub fn request<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> OutgoingCall {
        match crate::json::to_raw(params) {
            Ok(raw) => self.request_raw(method, Some(raw)),
            Err(e) => OutgoingCall::failed(
                Arc::clone(&self.shared),
                CallError::InvalidParams(e.to_string()),
            ),
        }
    }

    /// Sends a request with raw params (`None`: no `params` member). The
    /// params must be a JSON object or array; anything else fails locally
    /// with [`CallError::InvalidParams`] and nothing is sent.
    pub fn request_raw(&self, method: &str, params: Option<Box<RawValue>>) -> OutgoingCall {
        self.request_with(method, params, CallOptions::default())
    }

    /// [`Peer::request_raw`] with per-call options (timeout, skipping the
    /// ordering barrier), fixed now since the request is sent now.
    pub fn request_with(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
    ) -> OutgoingCall {
        self.request_mapped(method, params, options, None)
    }

    /// A request whose outcome passes through `map` before the future sees
    /// it (the protocol layer records what the answer means there, in
    /// dispatch order).
    pub(crate) fn request_mapped(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
        map: Option<Box<dyn FnOnce(CallResult) -> CallResult + Send>>,
    ) -> OutgoingCall {
        let params = match params.map(check_params).transpose() {
            Ok(p) => p,
            Err(e) => return OutgoingCall::failed(Arc::clone(&self.shared), e),
        };
        OutgoingCall::start(
            Arc::clone(&self.shared),
            method,
            params.as_deref(),
            options,
            map,
        )
    }

    /// Sends a request whose outcome is handed to `on_answer` instead of a
    /// future: the form bindings use. `on_answer` runs exactly once (on the
    /// thread that ends the call: the one reading the answer, closing the
    /// connection, cancelling or timing out), with no lock of the engine
    /// held; keep it quick. `Err` when the request could not be made (the
    /// connection is closed, params are not an object or array):
    /// `on_answer` is then dropped without being called.
    pub fn call(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: CallOptions,
        on_answer: impl FnOnce(Result<Box<RawValue>, CallError>) + Send + 'static,
    ) -> Result<CancelHandle, CallError> {
        let params = params.map(check_params).transpose()?;
        call::call(
            &self.shared,
            method,
            params.as_deref(),
            options,
            Box::new(on_answer),
        )
    }

    /// Sends a notification with `params` serialized to JSON. Waits while
    /// the outgoing queue is full.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), CallError> {
        let raw =
            crate::json::to_raw(params).map_err(|e| CallError::InvalidParams(e.to_string()))?;
        self.notify_raw(method, Some(raw)).await
    }

    /// Sends a notification with raw params (see [`Peer::request_raw`]).
    pub async fn notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), CallError> {
        let params = params.map(check_params).transpose()?;
        self.refuse_if_closed()?;
        let reserved = self
            .shared
            .outbox
            .reserve()
            .await
            .map_err(|_| self.shared.closed_error())?;
        self.push_notification(reserved, method, params.as_deref())
    }

    /// Refuses to send once the connection is closing: its reason is set
    /// before pending calls fail, so a host that saw a call fail with the
    /// close cannot get a later notification queued.
    fn refuse_if_closed(&self) -> Result<(), CallError> {
        match self.shared.close_reason() {
            Some(reason) => Err(ConnectionError::Closed(reason).into()),
            None => Ok(()),
        }
    }

    /// Encodes a notification into its reserved place in the outgoing queue.
    fn push_notification(
        &self,
        reserved: writer::Reserved,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), CallError> {
        let frame = message::encode_notification(method, params);
        self.shared
            .outbox
            .push_reserved(reserved, frame)
            .map_err(|_| self.shared.closed_error().into())
    }

    /// [`Peer::notify_raw`] without waiting: queues the notification if the
    /// outgoing queue has room now, or hands `params` back
    /// ([`TryNotify::Full`]) for the caller to send with `notify_raw`. For
    /// hosts that send from a thread that cannot block or await cheaply
    /// (the Python binding's event loop): the common case costs no task and
    /// no thread hop.
    pub fn try_notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<TryNotify, CallError> {
        let params = params.map(check_params).transpose()?;
        self.refuse_if_closed()?;
        let reserved = match self.shared.outbox.try_reserve() {
            Ok(Some(reserved)) => reserved,
            Ok(None) => return Ok(TryNotify::Full(params)),
            Err(_) => return Err(self.shared.closed_error().into()),
        };
        self.push_notification(reserved, method, params.as_deref())
            .map(|()| TryNotify::Sent)
    }

    /// Closes the connection (idempotent): pending calls fail with
    /// [`CloseReason::Local`], handlers are cancelled, queued frames are
    /// flushed (within `flush_timeout`), the write half is closed and a
    /// spawned agent is shut down. Returns when all of that is done.
    pub async fn close(&self) {
        self.shared.shutdown(CloseReason::Local);
        self.terminated().await;
    }

    /// Waits until the connection is closed and returns why.
    pub async fn closed(&self) -> CloseReason {
        let mut rx = self.shared.subscribe_reason();
        loop {
            if let Some(reason) = rx.borrow_and_update().clone() {
                return reason;
            }
            if rx.changed().await.is_err() {
                return CloseReason::Local;
            }
        }
    }

    /// Waits until the connection is closed, its writer finished and its
    /// agent process (if any) is gone.
    pub async fn terminated(&self) {
        let mut rx = self.shared.terminated.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Why the connection closed, if it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.close_reason()
    }

    /// Takes an incoming request's answer from its handler now, to send
    /// later (see `responder::claim_for_handler`).
    pub(crate) fn claim_for_handler(
        &self,
        id: &RequestId,
        result: Result<Box<RawValue>, RpcError>,
    ) -> Option<responder::Claimed> {
        responder::claim_for_handler(&self.shared, id, result)
    }

    /// The extension attached by the layer above (see `Shared::extension`).
    pub(crate) fn extension(&self) -> Option<&Arc<dyn std::any::Any + Send + Sync>> {
        self.shared.extension.as_ref()
    }

    /// Spawns a task on the connection's runtime.
    pub(crate) fn spawn(&self, fut: impl Future<Output = ()> + Send + 'static) {
        self.shared.runtime.spawn(fut);
    }

    /// Reports an event through the connection's event hook.
    pub(crate) fn report(&self, event: Event) {
        self.shared.event(event);
    }

    /// The spawned agent's status, for connections made by
    /// [`Connection::spawn`].
    pub fn process(&self) -> Option<&ProcessStatus> {
        self.shared.process_status.as_ref()
    }
}

fn check_params(raw: Box<RawValue>) -> Result<Box<RawValue>, CallError> {
    if matches!(raw.get().as_bytes().first(), Some(b'{' | b'[')) {
        Ok(crate::json::compact_if_needed(raw))
    } else {
        Err(CallError::InvalidParams(format!(
            "params must be a JSON object or array, not {}",
            raw.get()
        )))
    }
}

/// How a connection reads and dispatches (see `reader.rs`).
pub(crate) enum ReadMode {
    /// A reader task and a dispatcher task (Rust handlers).
    Task,
    /// A reader task dispatching inline (a binding's inbox).
    Inline,
    /// The host's loop reads (through a [`HostReader`]) when the transport
    /// is a descriptor; `Inline` otherwise. The function wakes the host.
    Host(Arc<dyn Fn() + Send + Sync>),
}

/// Closes the connection when the last [`Connection`] handle is dropped.
struct CloseOnDrop(Arc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.shutdown(CloseReason::Local);
    }
}

/// An open connection. Derefs to [`Peer`] for sending. Clones share the
/// connection; when the last clone is dropped the connection closes (as by
/// [`Peer::close`], without waiting).
#[derive(Clone)]
pub struct Connection {
    peer: Peer,
    _owner: Arc<CloseOnDrop>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.peer.fmt(f)
    }
}

impl std::ops::Deref for Connection {
    type Target = Peer;
    fn deref(&self) -> &Peer {
        &self.peer
    }
}

impl Connection {
    /// Starts a connection over `transport` on the current Tokio runtime.
    ///
    /// # Panics
    /// Outside a Tokio runtime (use [`Connection::start_on`]).
    pub fn start(
        transport: Transport,
        handler: impl Handler,
        options: ConnectionOptions,
    ) -> Connection {
        Self::start_on(
            &tokio::runtime::Handle::current(),
            transport,
            handler,
            options,
        )
    }

    /// Starts a connection whose tasks run on `runtime`.
    pub fn start_on(
        runtime: &tokio::runtime::Handle,
        transport: Transport,
        handler: impl Handler,
        options: ConnectionOptions,
    ) -> Connection {
        Self::start_with_extension(runtime, transport, handler, options, None)
    }

    pub(crate) fn start_with_extension(
        runtime: &tokio::runtime::Handle,
        transport: Transport,
        handler: impl Handler,
        options: ConnectionOptions,
        extension: Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Connection {
        Self::start_mode(
            runtime,
            transport,
            Arc::new(handler),
            options,
            extension,
            ReadMode::Task,
        )
        .0
    }

    /// Starts a connection reading in `mode`; returns the [`HostReader`]
    /// when the host is to drive the reading (and the transport allows it).
    pub(crate) fn start_mode(
        runtime: &tokio::runtime::Handle,
        transport: Transport,
        handler: Arc<dyn Handler>,
        options: ConnectionOptions,
        extension: Option<Arc<dyn std::any::Any + Send + Sync>>,
        mode: ReadMode,
    ) -> (Connection, Option<HostReader>) {
        let Transport {
            reader,
            writer,
            process,
        } = transport;
        let incoming_queue = options.incoming_queue.max(1);
        let framing = options.framing;
        let max_frame = options.max_frame_size;
        let shared = Arc::new(Shared::new(
            options,
            runtime.clone(),
            process.as_ref().map(|p| p.status()),
            extension,
        ));
        // A task dispatches for Rust handlers; a binding's inbox is
        // dispatched inline, by a reader task or by the host's own loop.
        let inline = !matches!(mode, ReadMode::Task);
        // A host-driven reader needs a descriptor nobody registered yet.
        let (reader, host_reader) = match (mode, reader) {
            (ReadMode::Host(wake), ReadHalf::Fd(r)) => {
                let io_mode = r.mode();
                match r.into_unregistered() {
                    Ok(fd) => {
                        let hr = HostReader::new(&shared, fd, io_mode, Arc::clone(&handler), wake);
                        (None, Some(hr))
                    }
                    Err(r) => (Some(ReadHalf::Fd(r)), None),
                }
            }
            (_, reader) => (Some(reader), None),
        };
        if let Some(reader) = reader {
            let frames = FrameReader::new(reader, framing, max_frame);
            if inline {
                let dispatch = reader::Dispatch::Inline(Arc::clone(&handler));
                runtime.spawn(reader::supervised(
                    Arc::clone(&shared),
                    "reader",
                    reader::run_reader(Arc::clone(&shared), frames, dispatch),
                ));
            } else {
                let (tx, rx) = mpsc::channel(incoming_queue);
                runtime.spawn(reader::supervised(
                    Arc::clone(&shared),
                    "reader",
                    reader::run_reader(Arc::clone(&shared), frames, reader::Dispatch::Task(tx)),
                ));
                runtime.spawn(reader::supervised(
                    Arc::clone(&shared),
                    "dispatcher",
                    reader::run_dispatcher(Arc::clone(&shared), Arc::clone(&handler), rx),
                ));
            }
        }
        let writer_task = runtime.spawn(reader::supervised(
            Arc::clone(&shared),
            "writer",
            writer::run_writer(Arc::clone(&shared), writer),
        ));
        let finisher = Arc::clone(&shared);
        runtime.spawn(async move {
            let _ = writer_task.await;
            // After a writer panic: no direct write may use its descriptor.
            finisher.outbox.retire_direct().await;
            if let Some(process) = process {
                process.shutdown().await;
            }
            // The writer ends only after `shutdown` began (it alone closes
            // the outbox, and a failed write calls it), which reports the
            // close last: wait for that report, so nothing the host hears
            // after `terminated` is lost (the host inbox refuses events
            // once it queued `Closed`).
            let _ = finisher
                .close_reported
                .subscribe()
                .wait_for(|reported| *reported)
                .await;
            finisher.terminated.send_replace(true);
        });
        (
            Connection {
                peer: Peer::new(Arc::clone(&shared)),
                _owner: Arc::new(CloseOnDrop(shared)),
            },
            host_reader,
        )
    }

    /// Spawns an agent process and starts a connection over its stdio (the
    /// client side). A spawn failure is returned at once. The connection
    /// closes when the agent's stdout ends or the agent exits (see
    /// [`crate::transport::process::spawn`]).
    pub fn spawn(
        command: &AgentCommand,
        handler: impl Handler,
        options: ConnectionOptions,
    ) -> Result<Connection, ConnectionError> {
        let transport = crate::transport::process::spawn(command)?;
        Ok(Self::start(transport, handler, options))
    }

    /// A non-owning handle (does not keep the connection open).
    pub fn peer(&self) -> Peer {
        self.peer.clone()
    }
}
