//! The inbox: everything a connection delivers to a host whose code runs on
//! its own event loop (C poll or callback mode, Python's asyncio, Node's
//! libuv, Swift and Kotlin runtimes), in one ordered, bounded queue.
//!
//! **Two lanes.**
//! * The **ordered** lane holds notifications, requests and the outcomes of
//!   ordinary calls, in the order the engine dispatched them, then
//!   [`Delivery::Closed`], always last. A call's outcome therefore comes
//!   after every notification received before its answer: the host drains
//!   the lane in order (awaiting each notification's handler before the
//!   next item), so `await prompt()` returns after every `session/update` of
//!   the turn was handled.
//! * The **urgent** lane holds what must not wait behind a suspended
//!   handler: the outcomes of calls made with
//!   [`crate::CallOptions::skip_barrier`] (calls a notification handler
//!   awaits: the ordered lane is waiting for that very handler), requests'
//!   [`Signal`]s and stderr lines. A host takes it whenever it is woken.
//! * The engine's hooks go through the inbox for hosts that take them on
//!   their loop ([`Inbox::trace_hook`], [`Inbox::events_hook`]): in the
//!   ordered lane by default ([`HookLane`]), so a traced frame or an event
//!   such as `served` reaches the host in wire order, before the answer
//!   that follows it (DESIGN.md, Ordering); in the urgent lane for a host
//!   that asked for them at once (the `ordered_hooks` option off).
//!
//! **Wake-ups.** `wake` (given at creation) is called from any thread when
//! a lane goes from "nothing scheduled" to "something to do": once per
//! batch, not per item. The ordered lane stays scheduled until the host
//! finds it empty ([`Inbox::take_ordered`] returns `false`), so items pushed
//! while the host drains (or while its drain is suspended in a handler) wake
//! nobody; the urgent lane is unscheduled by each [`Inbox::take_urgent`].
//! [`Inbox::pop`] (one item at a time, urgent first) unschedules both once
//! it has emptied the inbox. While the host itself pushes (pumping a
//! [`crate::HostReader`] on its thread) wakes are held
//! ([`Inbox::hold_wakes`]) and reported to it instead.
//!
//! **Back-pressure.** Notifications wait (the reader stops reading, and the
//! peer's writes block) while the ordered lane holds `capacity` items.
//! Requests, outcomes and the close are always accepted, each bounded by
//! something else: requests by the engine (the reader waits while
//! `ConnectionOptions::incoming_requests` of them are unanswered, whether
//! the host took them or not), outcomes by the host's own calls. A spawned
//! agent's stderr lines forwarded by [`Inbox::forward_stderr`] wait while
//! both lanes together hold `capacity` items (the agent's stderr is read no
//! further, so a flooding agent is slowed down, and no line is lost);
//! lines pushed with [`Inbox::push_log`] alone are dropped over capacity
//! and counted, as are engine events ([`Inbox::push_engine`]: the engine
//! reports them under its locks, so they cannot wait).
//!
//! **Signals.** A request's cancellation reaches the host as a
//! [`Delivery::Signal`] in the urgent lane, never before the host has the
//! request: [`HostRequest::arm`] (batch hosts call it when they start the
//! request's handler; [`Inbox::pop`] does it when it hands a request out)
//! returns the state as it stands and sends later changes to the lane. No
//! task per request watches anything.
//!
//! **Threads.** Every method may be called from any thread; no lock is held
//! while `wake` or host code runs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::value::RawValue;
use tokio::sync::Notify;

use crate::error::{CallError, CloseReason, RespondError, RpcError};
use crate::message::RequestId;
use crate::rpc::{
    BoxFuture, Direction, Event, EventHook, Handler, IncomingNotification, IncomingRequest,
    Responder, Signal, TraceHook, lock,
};
use crate::transport::process::AgentCommand;

/// Calls the host's wake-up (from any thread).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// One thing for the host.
#[derive(Debug)]
#[non_exhaustive]
pub enum Delivery<T> {
    /// A notification from the peer (ordered).
    Notification {
        /// The method name.
        method: String,
        /// The params, raw; `None` when absent.
        params: Option<Box<RawValue>>,
    },
    /// A request from the peer (ordered): answer it through the request.
    Request(HostRequest),
    /// The outcome of one of the host's calls (ordered, or urgent for calls
    /// that skip the barrier).
    Result {
        /// What the host gave [`super::HostConnection::call`].
        tag: T,
        /// The peer's result, or why the call failed.
        outcome: Result<Box<RawValue>, CallError>,
    },
    /// A request's cancellation state changed (urgent), after the host got
    /// the request.
    Signal {
        /// [`HostRequest::key`] of the request.
        key: u64,
        /// The request's id, as the peer sent it.
        id: RequestId,
        /// What happened.
        signal: Signal,
    },
    /// A line of the spawned agent's stderr (urgent; see
    /// [`Inbox::push_log`]).
    Log(String),
    /// Something the engine reports that is not a message (an [`Event`]
    /// as [`Event::describe`] puts it; in the lane [`Inbox::events_hook`]
    /// was given, see [`Inbox::push_engine`]).
    Engine {
        /// The stable snake-case kind (`"payload_rule"`, `"invalid_frame"`,
        /// ...; `"events_dropped"` when the inbox was full).
        kind: &'static str,
        /// A readable sentence.
        message: String,
        /// The details, as JSON.
        details: serde_json::Value,
    },
    /// A frame on the wire, as the engine's trace hook saw it (in the lane
    /// [`Inbox::trace_hook`] was given): incoming before it is dispatched,
    /// outgoing as it is written.
    Trace {
        /// Which way it went.
        direction: Direction,
        /// The frame's text (invalid UTF-8 replaced), without its framing.
        frame: String,
    },
    /// The connection closed (ordered, always the last delivery): its
    /// writer finished, its agent process is gone, and every call's outcome
    /// was delivered before.
    Closed(CloseReason),
}

/// Where the engine's hooks ([`Inbox::trace_hook`], [`Inbox::events_hook`])
/// queue what they see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HookLane {
    /// The ordered lane (the default): in wire order with the messages, so
    /// a traced frame or an engine event reaches the host after the
    /// notifications received before it and before the messages (answers
    /// included) that follow it on the wire.
    #[default]
    Ordered,
    /// The urgent lane: at once, never behind a suspended notification
    /// handler, and so possibly after the answer that followed it.
    Urgent,
}

impl HookLane {
    /// [`HookLane::Ordered`] when `ordered` (the `ordered_hooks` option).
    pub fn of(ordered: bool) -> Self {
        if ordered { Self::Ordered } else { Self::Urgent }
    }

    fn urgent(self) -> bool {
        self == Self::Urgent
    }
}

/// Which lanes need the host, after [`Inbox::release_wakes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pending {
    /// Take the urgent lane.
    pub urgent: bool,
    /// Drain the ordered lane (unless already draining).
    pub ordered: bool,
}

struct Lanes<T> {
    ordered: VecDeque<Delivery<T>>,
    urgent: VecDeque<Delivery<T>>,
    ordered_scheduled: bool,
    urgent_scheduled: bool,
    /// `Closed` was queued: only late call outcomes are accepted after it.
    closed: bool,
    /// The host is gone ([`Inbox::discard`]): nothing is queued any more.
    discarded: bool,
    /// stderr lines dropped because the inbox was full.
    dropped_logs: usize,
    /// Engine events dropped because the inbox was full.
    dropped_events: u64,
    /// The host is pushing itself: wakes are held and reported.
    holding: bool,
    held: Pending,
}

/// The inbox between a connection and a host's loop. See the module docs.
pub struct Inbox<T> {
    lanes: Mutex<Lanes<T>>,
    /// Signalled whenever the host takes items (or on close).
    room: Notify,
    capacity: usize,
    wake: Wake,
    /// Called, with the inbox locked, when `pop` emptied it (a poll-mode
    /// host resets its wake-up descriptor there).
    idle: Option<Wake>,
    next_key: AtomicU64,
}

impl<T> std::fmt::Debug for Inbox<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lanes = lock(&self.lanes);
        f.debug_struct("Inbox")
            .field("ordered", &lanes.ordered.len())
            .field("urgent", &lanes.urgent.len())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> Inbox<T> {
    /// An inbox holding back notifications beyond `capacity` waiting items,
    /// calling `wake` when the host has something to do.
    pub fn new(capacity: usize, wake: Wake) -> Arc<Self> {
        Self::build(capacity, wake, None)
    }

    /// [`Inbox::new`] for a host that takes one item at a time with
    /// [`Inbox::pop`]: `idle` is called (under the inbox's lock: keep it to
    /// a syscall) when a pop empties the inbox; the next push wakes again.
    /// `wake` is then called under the lock too (the same rule), so the two
    /// stay in the order of what the inbox holds: the host's descriptor is
    /// readable exactly while something waits.
    pub fn with_idle(capacity: usize, wake: Wake, idle: Wake) -> Arc<Self> {
        Self::build(capacity, wake, Some(idle))
    }

    fn build(capacity: usize, wake: Wake, idle: Option<Wake>) -> Arc<Self> {
        Arc::new(Self {
            lanes: Mutex::new(Lanes {
                ordered: VecDeque::new(),
                urgent: VecDeque::new(),
                ordered_scheduled: false,
                urgent_scheduled: false,
                closed: false,
                discarded: false,
                dropped_logs: 0,
                dropped_events: 0,
                holding: false,
                held: Pending::default(),
            }),
            room: Notify::new(),
            capacity: capacity.max(1),
            wake,
            idle,
            next_key: AtomicU64::new(1),
        })
    }

    /// Queues `delivery` in a lane and wakes the host if that lane was not
    /// scheduled. `Err` gives it back when the inbox is closed (a dropped
    /// request is then answered `-32603` by the engine).
    #[allow(clippy::result_large_err)]
    fn push(&self, delivery: Delivery<T>, urgent: bool) -> Result<(), Delivery<T>> {
        let wake = {
            let mut lanes = lock(&self.lanes);
            if lanes.discarded || (lanes.closed && !matches!(delivery, Delivery::Result { .. })) {
                return Err(delivery);
            }
            // A late call outcome still comes before `Closed`.
            let urgent = urgent || lanes.closed;
            if matches!(delivery, Delivery::Closed(_)) {
                lanes.closed = true;
            }
            let newly = if urgent {
                lanes.urgent.push_back(delivery);
                !std::mem::replace(&mut lanes.urgent_scheduled, true)
            } else {
                lanes.ordered.push_back(delivery);
                !std::mem::replace(&mut lanes.ordered_scheduled, true)
            };
            if newly && lanes.holding {
                if urgent {
                    lanes.held.urgent = true;
                } else {
                    lanes.held.ordered = true;
                }
                false
            } else if newly && self.idle.is_some() {
                // Woken under the lock, like `idle` runs under it: a wake
                // issued after the lock is released could land after a pop
                // that already took this item and ran `idle`, leaving the
                // host's descriptor readable over an empty inbox.
                (self.wake)();
                false
            } else {
                newly
            }
        };
        if wake {
            (self.wake)();
        }
        Ok(())
    }

    /// Queues an ordered notification; `false` when the inbox is closed.
    /// Does not wait: the caller waits for [`Inbox::room`].
    pub fn push_notification(&self, method: String, params: Option<Box<RawValue>>) -> bool {
        self.push(Delivery::Notification { method, params }, false)
            .is_ok()
    }

    /// Waits until the ordered lane holds fewer than `capacity` items (or
    /// the inbox is closed).
    pub async fn room(&self) {
        self.room_below(|lanes| lanes.ordered.len()).await;
    }

    /// Waits until `held` (what counts against `capacity`) is below
    /// `capacity`, or the inbox is closed. Every take notifies `room`.
    async fn room_below(&self, held: impl Fn(&Lanes<T>) -> usize) {
        loop {
            let taken = self.room.notified();
            {
                let lanes = lock(&self.lanes);
                if lanes.closed || held(&lanes) < self.capacity {
                    return;
                }
            }
            taken.await;
        }
    }

    /// Queues a call's outcome: in the urgent lane when the call skipped the
    /// barrier. Always accepted.
    pub fn push_result(&self, tag: T, outcome: Result<Box<RawValue>, CallError>, urgent: bool) {
        let _ = self.push(Delivery::Result { tag, outcome }, urgent);
    }

    /// Queues a line of the agent's stderr in the urgent lane, unless the
    /// inbox already holds `capacity` items: then it is dropped, and the
    /// next line that fits says how many were. (A spawned agent's stderr
    /// goes through [`Inbox::forward_stderr`], which waits for room
    /// instead.)
    pub fn push_log(&self, line: &str) {
        self.push_log_line(line, true);
    }

    /// `command` with its stderr forwarded to this inbox line by line, as
    /// [`Delivery::Log`]s. Before each line the forwarder waits until both
    /// lanes together hold fewer than `capacity` items (or the inbox is
    /// closed): a host that is not taking its deliveries slows the agent's
    /// stderr down, as it slows a peer's notifications, and every line
    /// arrives. Only the forwarder pushes lines, so the inbox holds at most
    /// one line over `capacity`.
    pub fn forward_stderr(self: &Arc<Self>, command: AgentCommand) -> AgentCommand
    where
        T: Send + 'static,
    {
        let sink = Arc::clone(self);
        let room = Arc::clone(self);
        command
            .stderr(move |line| sink.push_log_line(line, false))
            .stderr_room(move || {
                let inbox = Arc::clone(&room);
                Box::pin(async move { inbox.log_room().await })
            })
    }

    /// Waits until both lanes together hold fewer than `capacity` items, or
    /// the inbox is closed.
    async fn log_room(&self) {
        self.room_below(|lanes| lanes.ordered.len() + lanes.urgent.len())
            .await;
    }

    fn push_log_line(&self, line: &str, drop_when_full: bool) {
        let text = {
            let mut lanes = lock(&self.lanes);
            if lanes.closed {
                return;
            }
            if drop_when_full && lanes.ordered.len() + lanes.urgent.len() >= self.capacity {
                lanes.dropped_logs += 1;
                return;
            }
            match std::mem::take(&mut lanes.dropped_logs) {
                0 => line.to_owned(),
                n => format!("[{n} stderr lines dropped: the host was not taking them]\n{line}"),
            }
        };
        let _ = self.push(Delivery::Log(text), true);
    }

    /// Queues an engine event in `lane`, unless the inbox already holds
    /// `capacity` items: then it is dropped (never waited for: the engine
    /// reports events under its locks), and before the next event that fits
    /// comes one of kind `events_dropped` saying how many were
    /// (`details.count`). Nothing after the close.
    pub fn push_engine(&self, event: &Event, lane: HookLane) {
        let (kind, message, details) = event.describe();
        let dropped = {
            let mut lanes = lock(&self.lanes);
            if lanes.closed {
                return;
            }
            if lanes.ordered.len() + lanes.urgent.len() >= self.capacity {
                lanes.dropped_events += 1;
                return;
            }
            std::mem::take(&mut lanes.dropped_events)
        };
        if dropped > 0 {
            let _ = self.push(
                Delivery::Engine {
                    kind: "events_dropped",
                    message: format!(
                        "{dropped} engine events were dropped (the host was not taking them)"
                    ),
                    details: serde_json::json!({ "count": dropped }),
                },
                lane.urgent(),
            );
        }
        let _ = self.push(
            Delivery::Engine {
                kind,
                message,
                details,
            },
            lane.urgent(),
        );
    }

    /// The engine's [`EventHook`] (`ConnectionOptions::events`) for a host
    /// that takes engine events through this inbox: each event goes to
    /// [`Inbox::push_engine`] in `lane`. The hook holds the inbox weakly.
    pub fn events_hook(self: &Arc<Self>, lane: HookLane) -> EventHook {
        let inbox = Arc::downgrade(self);
        Arc::new(move |event: &Event| {
            if let Some(inbox) = inbox.upgrade() {
                inbox.push_engine(event, lane);
            }
        })
    }

    /// The engine's [`TraceHook`] (`ConnectionOptions::trace`) for a host
    /// that takes traced frames through this inbox, as
    /// [`Delivery::Trace`] in `lane`. Every frame is queued (none is
    /// dropped: their number is bounded by the messages themselves, which
    /// the engine bounds); nothing after the close. The hook holds the
    /// inbox weakly and never waits.
    pub fn trace_hook(self: &Arc<Self>, lane: HookLane) -> TraceHook {
        let inbox = Arc::downgrade(self);
        Arc::new(move |direction, frame: &[u8]| {
            if let Some(inbox) = inbox.upgrade() {
                let frame = String::from_utf8_lossy(frame).into_owned();
                let _ = inbox.push(Delivery::Trace { direction, frame }, lane.urgent());
            }
        })
    }

    /// Queues [`Delivery::Closed`], last; nothing but late call outcomes is
    /// accepted afterwards. Idempotent.
    pub fn close(&self, reason: CloseReason) {
        if self.push(Delivery::Closed(reason), false).is_ok() {
            self.room.notify_waiters();
        }
    }

    /// The host is gone for good (its connection object was freed): drops
    /// what waits and everything queued from now on, so nothing is left
    /// holding the connection. A queued request holds the engine's state,
    /// which holds this inbox (through the handler): a host that stopped
    /// taking (a C poll-mode connection freed before it polled) would leave
    /// that cycle alive, the connection and its socket with it. A dropped
    /// request is answered `-32603` by the engine if it can still write;
    /// dropped calls' outcomes have no caller left. Call it once the
    /// connection was told to close.
    pub fn discard(&self) {
        let (ordered, urgent) = {
            let mut lanes = lock(&self.lanes);
            lanes.discarded = true;
            lanes.closed = true;
            lanes.ordered_scheduled = false;
            lanes.urgent_scheduled = false;
            (
                std::mem::take(&mut lanes.ordered),
                std::mem::take(&mut lanes.urgent),
            )
        };
        // Dropped outside the lock: a request's drop answers it.
        drop((ordered, urgent));
        self.room.notify_waiters();
    }

    /// Whether [`Delivery::Closed`] was queued.
    pub fn is_closed(&self) -> bool {
        lock(&self.lanes).closed
    }

    /// Items waiting in both lanes.
    pub fn len(&self) -> usize {
        let lanes = lock(&self.lanes);
        lanes.ordered.len() + lanes.urgent.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves the urgent lane into `out` (unscheduling it: the next urgent
    /// push wakes the host again).
    pub fn take_urgent(&self, out: &mut Vec<Delivery<T>>) {
        {
            let mut lanes = lock(&self.lanes);
            out.extend(lanes.urgent.drain(..));
            lanes.urgent_scheduled = false;
        }
        self.room.notify_waiters();
    }

    /// Moves up to `max` ordered items into `out`, in order. `false` when
    /// the lane was empty: it is unscheduled, and the next ordered push
    /// wakes the host again.
    pub fn take_ordered(&self, out: &mut Vec<Delivery<T>>, max: usize) -> bool {
        let took = {
            let mut lanes = lock(&self.lanes);
            if lanes.ordered.is_empty() {
                lanes.ordered_scheduled = false;
                return false;
            }
            let n = max.max(1).min(lanes.ordered.len());
            out.extend(lanes.ordered.drain(..n));
            true
        };
        self.room.notify_waiters();
        took
    }

    /// [`Inbox::take_ordered`] without the call that finds the lane empty:
    /// moves up to `max` ordered items into `out`, in order, and returns
    /// whether the lane still holds more. When it returns `false` the lane
    /// was emptied and is unscheduled at once, so the next ordered push
    /// wakes the host even while it is still handling these items: a host
    /// using this must remember a wake that comes while it drains and take
    /// again afterwards. (Node: one native call per batch, not two.)
    pub fn take_ordered_batch(&self, out: &mut Vec<Delivery<T>>, max: usize) -> bool {
        let more = {
            let mut lanes = lock(&self.lanes);
            let n = max.max(1).min(lanes.ordered.len());
            out.extend(lanes.ordered.drain(..n));
            let more = !lanes.ordered.is_empty();
            if !more {
                lanes.ordered_scheduled = false;
            }
            more
        };
        self.room.notify_waiters();
        more
    }

    /// The next item, urgent first, for hosts that take one at a time. A
    /// request handed out is armed: its signals follow it in the urgent
    /// lane (if it is cancelled already, a signal is queued now). When this
    /// empties the inbox both lanes are unscheduled and `idle` runs.
    pub fn pop(self: &Arc<Self>) -> Option<Delivery<T>> {
        let item = {
            let mut lanes = lock(&self.lanes);
            let item = match lanes.urgent.pop_front() {
                Some(item) => Some(item),
                None => lanes.ordered.pop_front(),
            };
            if lanes.urgent.is_empty() && lanes.ordered.is_empty() {
                lanes.urgent_scheduled = false;
                lanes.ordered_scheduled = false;
                if let Some(idle) = &self.idle {
                    idle();
                }
            }
            item
        };
        self.room.notify_waiters();
        if let Some(Delivery::Request(request)) = &item {
            let (cancelled, superseded) = request.arm();
            for (on, signal) in [
                (cancelled, Signal::Cancelled),
                (superseded, Signal::Superseded),
            ] {
                if on {
                    let _ = self.push(
                        Delivery::Signal {
                            key: request.key,
                            id: request.id.clone(),
                            signal,
                        },
                        true,
                    );
                }
            }
        }
        item
    }

    /// Calls the host's wake-up unconditionally (the reader wants a pump).
    pub(crate) fn wake_host(&self) {
        (self.wake)();
    }

    /// Holds wakes while the host pushes into its own inbox (pumping on its
    /// thread); [`Inbox::release_wakes`] reports what they would have been.
    pub fn hold_wakes(&self) {
        lock(&self.lanes).holding = true;
    }

    /// Ends [`Inbox::hold_wakes`]: which lanes were scheduled meanwhile.
    pub fn release_wakes(&self) -> Pending {
        let mut lanes = lock(&self.lanes);
        lanes.holding = false;
        std::mem::take(&mut lanes.held)
    }

    fn signal_sink(self: &Arc<Self>, key: u64, id: RequestId) -> crate::rpc::SignalSink {
        let inbox = Arc::downgrade(self);
        Box::new(move |signal| {
            if let Some(inbox) = inbox.upgrade() {
                let _ = inbox.push(
                    Delivery::Signal {
                        key,
                        id: id.clone(),
                        signal,
                    },
                    true,
                );
            }
        })
    }
}

/// Lets a [`HostRequest`] arm itself on its inbox without knowing `T`.
trait SignalLane: Send + Sync {
    fn sink(self: Arc<Self>, key: u64, id: RequestId) -> crate::rpc::SignalSink;
}

impl<T: Send + 'static> SignalLane for Inbox<T> {
    fn sink(self: Arc<Self>, key: u64, id: RequestId) -> crate::rpc::SignalSink {
        self.signal_sink(key, id)
    }
}

/// A request from the peer, delivered through an inbox. Answer it with
/// [`HostRequest::respond`] (from any thread); dropping it unanswered makes
/// the engine answer `-32603`.
pub struct HostRequest {
    /// The id the peer chose.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params, raw; `None` when absent.
    pub params: Option<Box<RawValue>>,
    key: u64,
    responder: Responder,
    inbox: Weak<dyn SignalLane>,
}

impl std::fmt::Debug for HostRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRequest")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl HostRequest {
    /// A number unique within the inbox, naming the request in its
    /// [`Delivery::Signal`]s (ids are the peer's and may repeat over time).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Sends the answer (see [`Responder::respond`]).
    pub fn respond(&self, result: Result<Box<RawValue>, RpcError>) -> Result<(), RespondError> {
        self.responder.respond(result)
    }

    /// The engine's responder, for what [`HostRequest::respond`] does not
    /// cover.
    pub fn responder(&self) -> &Responder {
        &self.responder
    }

    /// Whether the request was answered (by the host or by the engine).
    pub fn is_answered(&self) -> bool {
        self.responder.is_answered()
    }

    /// Sends this request's later signals to the inbox's urgent lane and
    /// returns them as they stand, `(cancelled, superseded)`: each is either
    /// returned here or delivered later, never both, never lost. Hosts that
    /// take batches call it when they start the request's handler.
    pub fn arm(&self) -> (bool, bool) {
        match self.inbox.upgrade() {
            Some(inbox) => self.responder.arm(inbox.sink(self.key, self.id.clone())),
            None => self.responder.signals(),
        }
    }

    /// The request's signals as they stand, `(cancelled, superseded)`.
    pub fn signals(&self) -> (bool, bool) {
        self.responder.signals()
    }
}

/// The engine [`Handler`] of an inbox connection: queues what the peer
/// sends. Notification futures wait only for room, never for the peer, so
/// the engine dispatches inline (`rpc/reader.rs`).
pub(crate) struct InboxHandler<T> {
    pub(crate) inbox: Arc<Inbox<T>>,
}

impl<T: Send + 'static> Handler for InboxHandler<T> {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let key = self.inbox.next_key.fetch_add(1, Ordering::Relaxed);
        let lane: Arc<dyn SignalLane> = Arc::clone(&self.inbox) as _;
        let request = HostRequest {
            id: request.id,
            method: request.method,
            params: request.params,
            key,
            responder,
            inbox: Arc::downgrade(&lane),
        };
        // Closed: the dropped request is answered -32603 by the engine.
        let _ = self.inbox.push(Delivery::Request(request), false);
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        self.inbox
            .push_notification(notification.method, notification.params);
        let inbox = Arc::clone(&self.inbox);
        Box::pin(async move { inbox.room().await })
    }
}

#[cfg(test)]
mod tests;
