//! `NativeConnection`: the handle the JavaScript `Connection` holds, over the
//! core's `HostConnection` (`libacp_core::host`).
//!
//! Threads: every method is called on the JavaScript thread. The engine's
//! threads only ever call the `wake` threadsafe function (once per batch);
//! JavaScript then takes the batch (`takeUrgent`/`takeOrdered`) and
//! dispatches it. Everything that completes later (calls, notifications
//! waiting for room, close, waits) completes through the inbox too, as
//! `[2, tag, ok, value]` with the tag JavaScript chose, so there is one path
//! from Rust to JavaScript. Answers and requests sent from the JavaScript
//! thread while the writer is idle are written by that thread (the core's
//! direct writes): a request handled and answered costs no thread hop back.
//!
//! The `wake` function keeps Node's event loop alive while the connection
//! is open (an agent serving stdio, a client waiting for its agent) or a
//! promise JavaScript handed out is pending, and is unref'd otherwise
//! (`keepAlive`), so nothing of libacp keeps a process alive after
//! `close()`.

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi_derive::napi;
use serde_json::value::RawValue;

use libacp_core::host::{HookLane, HostConnection, HostOptions, HostRequest, Inbox, InboxHooks};
use libacp_core::{
    AcpPeer, CallError, CallOptions, CallTimeout, CancelHandle, CancelMode, HostReader, PumpState,
    Role, RpcError, Transport, TryNotify,
};

use crate::deliveries::{self, call_error};
use crate::runtime;
use crate::watcher::Watcher;

/// The wake-up: called from any thread, runs on the JavaScript thread.
pub(crate) type WakeFn = ThreadsafeFunction<(), UnknownReturnValue, (), Status, false>;

/// A handle that cancels one call (made with `callCancellable`).
#[napi]
#[derive(Debug)]
pub struct NativeCall {
    handle: CancelHandle,
}

#[napi]
impl NativeCall {
    /// Cancels the call: `keepWaiting` sends `$/cancel_request` and waits for
    /// the peer's answer; otherwise the call ends `cancelled` at once.
    /// `false` when it had already ended.
    #[napi]
    pub fn cancel(&self, keep_waiting: bool) -> bool {
        self.handle.cancel(if keep_waiting {
            CancelMode::KeepWaiting
        } else {
            CancelMode::Abandon
        })
    }
}

/// An ACP connection in one role, delivering to JavaScript through its inbox.
#[napi]
pub struct NativeConnection {
    /// Keeps the connection open; `None` after `release()`.
    conn: Option<HostConnection<u32>>,
    peer: AcpPeer,
    inbox: Arc<Inbox<u32>>,
    /// Requests JavaScript has taken and not answered yet, by key.
    requests: HashMap<u64, HostRequest>,
    wake: Arc<WakeFn>,
    /// Whether `wake` holds the event loop (see `keep_alive`).
    wake_ref: bool,
    /// The transport's read side, pumped on this thread (`pump`) when it is
    /// a descriptor; `None` when an engine task reads (or once finished).
    reader: Option<HostReader>,
    /// The poll handle on `reader`'s descriptor (`startReading`).
    watcher: Option<Watcher>,
}

impl std::fmt::Debug for NativeConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeConnection")
            .field("peer", &self.peer)
            .field("requests", &self.requests.len())
            .finish_non_exhaustive()
    }
}

impl Drop for NativeConnection {
    fn drop(&mut self) {
        // The poll handle stops before the reader's descriptor closes.
        self.release_reader();
    }
}

/// Where a connection's bytes come from.
pub(crate) enum Source {
    Spawn(libacp_core::AgentCommand),
    Transport(Transport),
}

/// How JavaScript takes a connection's deliveries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct How {
    /// Read a descriptor transport on the JavaScript thread.
    pub(crate) drive_reads: bool,
    /// Deliver a spawned agent's stderr lines to JavaScript.
    pub(crate) stderr: bool,
    /// Deliver the wire trace to JavaScript.
    pub(crate) trace: bool,
    /// Deliver the engine's events to JavaScript.
    pub(crate) events: bool,
}

/// Starts a connection with the core's options (from `Settings`): its
/// inbox waking JavaScript, then the core's connection (a spawn failure is
/// returned at once).
pub(crate) fn start(
    source: Source,
    role: Role,
    acp: libacp_core::AcpOptions,
    lane: HookLane,
    how: How,
    wake: WakeFn,
) -> std::result::Result<NativeConnection, serde_json::Value> {
    let wake = Arc::new(wake);
    let waker = Arc::clone(&wake);
    let inbox: Arc<Inbox<u32>> = Inbox::new(
        HIGH_WATER,
        Arc::new(move || {
            waker.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }),
    );
    let rt = runtime::handle().map_err(|e| serde_json::json!({"kind": "io", "message": e}))?;
    let host = HostOptions {
        acp,
        drive_reads: how.drive_reads,
        hooks: InboxHooks {
            trace: how.trace,
            events: how.events,
            lane,
        },
    };
    let conn = match source {
        Source::Spawn(mut command) => {
            if how.stderr {
                command = inbox.forward_stderr(command);
            }
            HostConnection::spawn_agent(rt, &command, Arc::clone(&inbox), host)
                .map_err(|e| deliveries::connection_error(&e))?
        }
        Source::Transport(transport) => {
            HostConnection::start(rt, role, transport, Arc::clone(&inbox), host)
        }
    };
    Ok(NativeConnection {
        peer: conn.acp_peer(),
        reader: conn.take_reader(),
        conn: Some(conn),
        inbox,
        requests: HashMap::new(),
        wake,
        wake_ref: true,
        watcher: None,
    })
}

/// Items waiting in the ordered lane beyond which notifications wait.
pub(crate) const HIGH_WATER: usize = 256;

/// Ordered items `pump` hands over with its state, at most (as many as
/// one `takeOrdered(64)` of the drain).
const PUMP_BATCH: usize = 64;

/// JSON text handed in by the JavaScript layer, always `JSON.stringify`
/// output (valid, compact JSON): taken as it is, not parsed a second time;
/// the core's checks read what the ACP rules need
/// (`libacp_core::json::trusted_host_json`).
fn params_of(text: Option<String>) -> Option<Box<RawValue>> {
    text.map(libacp_core::json::trusted_host_json)
}

fn options_of(skip_barrier: bool, timeout_ms: Option<f64>) -> CallOptions {
    CallOptions {
        timeout: match timeout_ms {
            Some(ms) if ms.is_finite() && ms > 0.0 => {
                CallTimeout::After(std::time::Duration::from_secs_f64(ms / 1000.0))
            }
            Some(_) => CallTimeout::Never,
            None => CallTimeout::Default,
        },
        skip_barrier,
    }
}

impl NativeConnection {
    /// Runs `fut` on libacp's runtime; its outcome comes back as
    /// `[2, tag, ...]` in the urgent lane.
    fn complete_later<F>(&self, tag: u32, fut: F)
    where
        F: std::future::Future<Output = std::result::Result<Box<RawValue>, CallError>>
            + Send
            + 'static,
    {
        let inbox = Arc::clone(&self.inbox);
        match runtime::handle() {
            Ok(rt) => {
                rt.spawn(async move {
                    let outcome = fut.await;
                    inbox.push_result(tag, outcome, true);
                });
            }
            Err(e) => self
                .inbox
                .push_result(tag, Err(CallError::InvalidParams(e)), true),
        }
    }

    fn answer(&mut self, key: i64, result: std::result::Result<Box<RawValue>, RpcError>) -> bool {
        let Some(request) = u64::try_from(key)
            .ok()
            .and_then(|k| self.requests.remove(&k))
        else {
            return false;
        };
        request.respond(result).is_ok()
    }
}

fn json(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| Box::<RawValue>::default())
}

#[napi]
impl NativeConnection {
    /// `"client"` or `"agent"`.
    #[napi(getter)]
    pub fn role(&self) -> &'static str {
        match self.peer.role() {
            Role::Client => "client",
            Role::Agent => "agent",
        }
    }

    /// Sends a request (checked against the protocol first). `null`: sent,
    /// its outcome comes back with `tag`; a string: the error (JSON) it was
    /// refused with, nothing sent.
    #[napi]
    pub fn call(
        &self,
        method: String,
        params: Option<String>,
        tag: u32,
        skip_barrier: bool,
        timeout_ms: Option<f64>,
    ) -> Option<String> {
        self.call_inner(method, params, tag, skip_barrier, timeout_ms)
            .err()
    }

    /// `call`, returning a handle that cancels it (or the refusal, JSON).
    #[napi]
    pub fn call_cancellable(
        &self,
        method: String,
        params: Option<String>,
        tag: u32,
        skip_barrier: bool,
        timeout_ms: Option<f64>,
    ) -> Either<NativeCall, String> {
        match self.call_inner(method, params, tag, skip_barrier, timeout_ms) {
            Ok(handle) => Either::A(NativeCall { handle }),
            Err(e) => Either::B(e),
        }
    }

    fn call_inner(
        &self,
        method: String,
        params: Option<String>,
        tag: u32,
        skip_barrier: bool,
        timeout_ms: Option<f64>,
    ) -> std::result::Result<CancelHandle, String> {
        let params = params_of(params);
        let inbox = Arc::clone(&self.inbox);
        let options = options_of(skip_barrier, timeout_ms);
        self.peer
            .call(&method, params, options, move |outcome| {
                inbox.push_result(tag, outcome, skip_barrier);
            })
            .map_err(|e| call_error(&e).to_string())
    }

    /// Sends a notification if the outgoing queue has room: `0` sent, `1`
    /// full (send it with `notifyWait`), or the refusal (JSON).
    #[napi]
    pub fn notify(&self, method: String, params: Option<String>) -> Either<u32, String> {
        match self.peer.try_notify(&method, params_of(params)) {
            Ok(TryNotify::Sent) => Either::A(0),
            Ok(TryNotify::Full(_)) => Either::A(1),
            Err(e) => Either::B(call_error(&e).to_string()),
        }
    }

    /// Sends a notification once the outgoing queue has room (and
    /// `session/cancel` with its client-side semantics); completes `tag`.
    #[napi]
    pub fn notify_wait(&self, method: String, params: Option<String>, tag: u32) {
        let params = params_of(params);
        let peer = self.peer.clone();
        self.complete_later(tag, async move {
            peer.notify(&method, params)
                .await
                .map(|()| json("null".into()))
        });
    }

    /// Client side: `session/cancel` (the core also answers the session's
    /// pending permission requests `cancelled`); completes `tag`.
    #[napi]
    pub fn cancel_session(&self, session_id: String, tag: u32) {
        let peer = self.peer.clone();
        self.complete_later(tag, async move {
            peer.cancel_session(&session_id)
                .await
                .map(|()| json("null".into()))
        });
    }

    /// Answers a request with a result (`JSON.stringify` text; absent:
    /// `null`, which the core sends as `{}` for ACP methods). `true` when
    /// sent (`false`: answered already, or closed).
    #[napi]
    pub fn respond(&mut self, key: i64, result: Option<String>) -> bool {
        let raw = libacp_core::json::trusted_host_json(result.unwrap_or_else(|| "null".into()));
        self.answer(key, Ok(raw))
    }

    /// Answers a request with a JSON-RPC error (`data`: JSON text).
    #[napi]
    pub fn respond_error(
        &mut self,
        key: i64,
        code: i64,
        message: String,
        data: Option<String>,
    ) -> bool {
        let mut error = RpcError::new(code, message);
        if let Some(data) = data
            && let Ok(value) = serde_json::from_str::<serde_json::Value>(&data)
        {
            error = error.with_data(value);
        }
        self.answer(key, Err(error))
    }

    /// Answers the core's `-32601` for the request's method.
    #[napi]
    pub fn respond_method_not_found(&mut self, key: i64) -> bool {
        let method = u64::try_from(key)
            .ok()
            .and_then(|k| self.requests.get(&k))
            .map(|r| r.method.clone())
            .unwrap_or_default();
        self.answer(key, Err(RpcError::method_not_found(&method)))
    }

    /// Answers the core's `-32800`.
    #[napi]
    pub fn respond_cancelled(&mut self, key: i64) -> bool {
        self.answer(key, Err(RpcError::request_cancelled()))
    }

    /// Answers the core's `-32603` with `detail`.
    #[napi]
    pub fn respond_internal_error(&mut self, key: i64, detail: String) -> bool {
        self.answer(key, Err(RpcError::internal_error(detail)))
    }

    /// Forgets a request without answering (the engine answers `-32603`).
    #[napi]
    pub fn drop_request(&mut self, key: i64) {
        if let Ok(k) = u64::try_from(key) {
            self.requests.remove(&k);
        }
    }

    /// From now on the request's signals come as `[3, key, cancelled]`;
    /// returns them as they stand: bit 0 cancelled, bit 1 superseded.
    #[napi]
    pub fn arm(&self, key: i64) -> u32 {
        let Some(request) = u64::try_from(key).ok().and_then(|k| self.requests.get(&k)) else {
            return 3;
        };
        let (cancelled, superseded) = request.arm();
        u32::from(cancelled) | (u32::from(superseded) << 1)
    }

    /// The urgent lane as a batch (JSON text), or `null` when empty.
    #[napi]
    pub fn take_urgent(&mut self) -> Option<String> {
        let mut batch = Vec::new();
        self.inbox.take_urgent(&mut batch);
        self.encode(batch)
    }

    /// Up to `max` ordered items as a batch (JSON text) whose last element
    /// says whether more wait (`1`) or the lane was emptied (`0`: it is
    /// unscheduled, so the next item wakes JavaScript even while it handles
    /// this batch: a wake during a drain means "take again"), or `null`
    /// when the lane was empty. One call per batch
    /// (`Inbox::take_ordered_batch`).
    #[napi]
    pub fn take_ordered(&mut self, max: u32) -> Option<String> {
        let mut batch = Vec::new();
        let more = self.inbox.take_ordered_batch(&mut batch, max as usize);
        if batch.is_empty() {
            return None;
        }
        Some(self.encode_with(batch, if more { ",1]" } else { ",0]" }))
    }

    fn encode(&mut self, batch: Vec<libacp_core::host::Delivery<u32>>) -> Option<String> {
        if batch.is_empty() {
            return None;
        }
        Some(self.encode_with(batch, "]"))
    }

    /// `[` + the items + `end` (which closes the array).
    fn encode_with(&mut self, batch: Vec<libacp_core::host::Delivery<u32>>, end: &str) -> String {
        let mut out = String::with_capacity(64 * batch.len() + end.len());
        out.push('[');
        for delivery in batch {
            deliveries::append(&mut out, delivery, &mut self.requests);
        }
        if out.len() == 1 {
            // Nothing JavaScript sees (all dropped): the trailer alone.
            out.push_str(end.trim_start_matches(','));
        } else {
            out.push_str(end);
        }
        out
    }

    /// Whether the wake-up keeps Node's event loop alive (it does from the
    /// start). JavaScript keeps it alive while the connection is open or an
    /// operation it started has not completed, and lets go otherwise, so a
    /// closed connection never holds the process. Idempotent.
    #[napi]
    pub fn keep_alive(&mut self, env: Env, keep: bool) {
        if keep == self.wake_ref {
            return;
        }
        self.wake_ref = keep;
        // SAFETY: on the JavaScript thread, with the env of this call, on a
        // live threadsafe function (held by `self.wake`).
        unsafe {
            if keep {
                napi::sys::napi_ref_threadsafe_function(env.raw(), self.wake.raw());
            } else {
                napi::sys::napi_unref_threadsafe_function(env.raw(), self.wake.raw());
            }
        }
    }

    /// Closes the connection; completes `tag` once everything is done.
    #[napi]
    pub fn close(&self, tag: u32) {
        let peer = self.peer.clone();
        self.complete_later(tag, async move {
            peer.close().await;
            Ok(json("null".into()))
        });
    }

    /// Completes `tag` with the close reason (a string) once closed.
    #[napi]
    pub fn closed(&self, tag: u32) {
        let peer = self.peer.clone();
        self.complete_later(tag, async move {
            let reason = peer.closed().await.to_string();
            Ok(json(
                serde_json::to_string(&reason).unwrap_or_else(|_| "\"\"".into()),
            ))
        });
    }

    /// Completes `tag` once closed, written out and the agent gone.
    #[napi]
    pub fn terminated(&self, tag: u32) {
        let peer = self.peer.clone();
        self.complete_later(tag, async move {
            peer.terminated().await;
            Ok(json("null".into()))
        });
    }

    /// Completes `tag` with `{code, signal}` once the spawned agent exits.
    /// `false` when no agent was spawned.
    #[napi]
    pub fn wait_exit(&self, tag: u32) -> bool {
        let Some(process) = self.peer.process().cloned() else {
            return false;
        };
        self.complete_later(tag, async move {
            let info = process.wait().await;
            Ok(json(
                serde_json::json!({"code": info.code, "signal": info.signal}).to_string(),
            ))
        });
        true
    }

    /// Why the connection closed, or `null` while open.
    #[napi(getter)]
    pub fn close_reason(&self) -> Option<String> {
        self.peer.peer().close_reason().map(|r| r.to_string())
    }

    /// The negotiated protocol version, once initialized.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<u32> {
        self.peer.protocol_version().map(u32::from)
    }

    /// The spawned agent's process id.
    #[napi(getter)]
    pub fn pid(&self) -> Option<u32> {
        self.peer.process().map(libacp_core::ProcessStatus::pid)
    }

    /// `{code, signal}` (JSON) once the spawned agent exited.
    #[napi(getter)]
    pub fn exit_status(&self) -> Option<String> {
        self.peer
            .process()
            .and_then(libacp_core::ProcessStatus::try_exit)
            .map(|i| serde_json::json!({"code": i.code, "signal": i.signal}).to_string())
    }

    /// The peer's capabilities (JSON).
    #[napi]
    pub fn peer_capabilities(&self) -> String {
        self.peer.peer_capabilities().to_string()
    }

    /// Ids of the open sessions.
    #[napi]
    pub fn sessions(&self) -> Vec<String> {
        self.peer.sessions()
    }

    /// The session model's snapshot (JSON), `null` for an unknown session;
    /// an error when the model is off.
    #[napi]
    pub fn session_snapshot(&self, session_id: String) -> Result<Option<String>> {
        let Some(store) = self.peer.services().sessions else {
            return Err(Error::new(
                Status::GenericFailure,
                "the session model is not enabled (pass sessionModel: true)",
            ));
        };
        Ok(store.snapshot_json(&session_id).map(|v| v.to_string()))
    }

    /// Kills the spawned agent's process group at once (the host process is
    /// exiting and cannot wait for the shutdown ladder).
    #[napi]
    pub fn kill_now(&self) {
        if let Some(process) = self.peer.process() {
            process.kill_now();
        }
    }

    /// Drops this handle's ownership: the connection closes (without
    /// waiting) and unanswered requests are answered `-32603`.
    #[napi]
    pub fn release(&mut self) {
        self.release_reader();
        self.requests.clear();
        self.conn.take();
    }

    /// When the transport is a descriptor, makes the poll handle that calls
    /// `onReadable()` on this thread when it is readable (stopped: `watch`
    /// starts it) and returns `true`: JavaScript then pumps (`pump`) as the
    /// core's `PumpState` says. `false`: an engine task reads.
    #[napi]
    pub fn start_reading(&mut self, env: Env, on_readable: Function<(), ()>) -> Result<bool> {
        let Some(reader) = self.reader.as_ref() else {
            return Ok(false);
        };
        if self.watcher.is_none() {
            let watcher = Watcher::new(env.raw(), on_readable.raw(), reader.fd())
                .map_err(|e| Error::new(Status::GenericFailure, e))?;
            self.watcher = Some(watcher);
        }
        Ok(true)
    }

    /// Reads what is available and dispatches it into the inbox, on this
    /// thread. A number: bits 0-1 say what next (0 reading: watch the
    /// descriptor; 1 again: pump again soon; 2 waiting: stop watching until
    /// woken with a pump request; 3 finished: `releaseReader()`); bit 2:
    /// take the urgent lane; bit 3: drain the ordered lane. With `take`
    /// (JavaScript is not draining) and ordered items to drain, a string
    /// instead: the first batch of the drain as `takeOrdered` gives it,
    /// followed by that number (one call, not two).
    #[napi]
    pub fn pump(&mut self, take: bool) -> Either<u32, String> {
        let (Some(conn), Some(reader)) = (self.conn.as_ref(), self.reader.as_ref()) else {
            return Either::A(3);
        };
        // The core's pump: the inbox's wakes held while the reader runs here.
        let (state, pending) = conn.pump(reader);
        let next = match state {
            PumpState::Reading => 0,
            PumpState::Again => 1,
            PumpState::Waiting => 2,
            PumpState::Finished => 3,
        };
        let bits = next | (u32::from(pending.urgent) << 2);
        if !pending.ordered {
            return Either::A(bits);
        }
        if !take {
            return Either::A(bits | 8);
        }
        let mut batch = Vec::new();
        let more = self.inbox.take_ordered_batch(&mut batch, PUMP_BATCH);
        if batch.is_empty() {
            return Either::A(bits);
        }
        let end = format!(",{},{bits}]", u8::from(more));
        Either::B(self.encode_with(batch, &end))
    }

    /// Whether the reader asked to be pumped since the last pump (cleared).
    #[napi]
    pub fn take_pump_request(&self) -> bool {
        self.reader
            .as_ref()
            .is_some_and(HostReader::take_pump_request)
    }

    /// Starts or stops watching the descriptor for readability.
    #[napi]
    pub fn watch(&mut self, on: bool) -> Result<()> {
        match self.watcher.as_mut() {
            Some(watcher) => watcher
                .watch(on)
                .map_err(|e| Error::new(Status::GenericFailure, e)),
            None => Ok(()),
        }
    }

    /// Stops watching and drops the reader (its descriptor closes): after
    /// the pump said finished, or on release.
    #[napi]
    pub fn release_reader(&mut self) {
        if let Some(mut watcher) = self.watcher.take() {
            watcher.close();
        }
        self.reader.take();
    }
}
