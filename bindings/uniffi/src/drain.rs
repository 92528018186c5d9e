//! Delivering a connection's inbox to the host's [`HostHandler`]: the
//! binding's "loop wake-up" (DESIGN.md, decision 9). The core's inbox holds
//! what the peer sent, in order, and the outcomes of the host's calls; two
//! tasks on libacp's runtime take it:
//!
//! * the **ordered** task drains the ordered lane in order: consecutive
//!   notifications go to the host as one batch
//!   ([`HostHandler::on_notifications`], awaited: one hop to the host's
//!   runtime per batch, not per notification), requests are started
//!   ([`Requests::start`]: they run concurrently), and each call's outcome is
//!   handed to its caller only after the notifications before it were
//!   handled;
//! * the **urgent** task hands over at once the outcomes of calls made with
//!   `skip_barrier` (a notification handler awaiting one holds the ordered
//!   task) and the requests' cancellation signals, so it never waits on
//!   host code.
//!
//! The trace and engine events (`on_frame`, `on_engine_event`) come
//! through the inbox too: in the ordered lane, between the notifications
//! (the batch before them is handled first) and before the answers that
//! follow them on the wire; in the urgent lane with `ordered_hooks` off.
//!
//! The ordered task ends when the connection's close is delivered. The
//! urgent task goes on until the `Connection` is freed: the core accepts a
//! call's outcome after the close (a timeout or an answer racing the
//! close), in the urgent lane, and it must still reach its caller.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use libacp_core::host::{Delivery, Inbox};
use libacp_core::{Direction, Signal};
use tokio::sync::Notify;

use crate::calls::Tag;
use crate::handler::{HostHandler, Notification, Requests};
use crate::options::{EngineEvent, WireDirection};

/// Notifications handed to the host in one batch, at most.
const BATCH: usize = 256;

/// The inbox's wake-up: one [`Notify`] per task (a permit is kept when no
/// task waits, so no wake is lost).
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    ordered: Notify,
    urgent: Notify,
    /// The `Connection` was freed: the urgent task ends.
    freed: AtomicBool,
}

impl Wakes {
    pub(crate) fn wake(&self) {
        self.ordered.notify_one();
        self.urgent.notify_one();
    }

    /// The `Connection` is being freed: nobody can wait for an outcome any
    /// more, so the urgent task may end.
    pub(crate) fn freed(&self) {
        self.freed.store(true, Ordering::Release);
        self.urgent.notify_one();
    }
}

/// What both tasks deliver to: the host's handler and the requests it was
/// handed.
#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) handler: Arc<dyn HostHandler>,
    pub(crate) requests: Arc<Requests>,
}

/// Starts the two tasks on the current runtime.
pub(crate) fn start(inbox: &Arc<Inbox<Tag>>, wakes: &Arc<Wakes>, host: &Host) {
    tokio::spawn(ordered(Arc::clone(inbox), Arc::clone(wakes), host.clone()));
    tokio::spawn(urgent(Arc::clone(inbox), Arc::clone(wakes), host.clone()));
}

async fn urgent(inbox: Arc<Inbox<Tag>>, wakes: Arc<Wakes>, host: Host) {
    let mut items = Vec::new();
    loop {
        wakes.urgent.notified().await;
        inbox.take_urgent(&mut items);
        for item in items.drain(..) {
            match item {
                Delivery::Result { tag, outcome } => tag.deliver(outcome),
                Delivery::Signal {
                    key,
                    signal: Signal::Cancelled,
                    ..
                } => {
                    let _ = host.handler.on_cancel(key);
                }
                Delivery::Signal {
                    key,
                    signal: Signal::Superseded,
                    ..
                } => host.requests.forget(key),
                // The hooks with `ordered_hooks` off.
                hook @ (Delivery::Trace { .. } | Delivery::Engine { .. }) => {
                    deliver_hook(&host.handler, hook);
                }
                // Stderr goes to the host directly: nothing else comes here.
                _ => {}
            }
        }
        if wakes.freed.load(Ordering::Acquire) {
            return;
        }
    }
}

async fn ordered(inbox: Arc<Inbox<Tag>>, wakes: Arc<Wakes>, host: Host) {
    let mut items = Vec::new();
    let mut batch = Vec::new();
    loop {
        wakes.ordered.notified().await;
        while inbox.take_ordered(&mut items, BATCH) {
            for item in items.drain(..) {
                match item {
                    Delivery::Notification { method, params } => batch.push(Notification {
                        method,
                        params: params.map(|p| p.get().to_owned()),
                    }),
                    other => {
                        flush(&host.handler, &mut batch).await;
                        match other {
                            Delivery::Request(request) => {
                                host.requests.start(&*host.handler, request);
                            }
                            Delivery::Result { tag, outcome } => tag.deliver(outcome),
                            Delivery::Closed(_) => return,
                            hook => deliver_hook(&host.handler, hook),
                        }
                    }
                }
            }
            flush(&host.handler, &mut batch).await;
        }
    }
}

/// A traced frame or an engine event to the host's `on_frame` /
/// `on_engine_event` (its errors are ignored, as documented there).
fn deliver_hook(host: &Arc<dyn HostHandler>, delivery: Delivery<Tag>) {
    match delivery {
        Delivery::Trace { direction, frame } => {
            let direction = match direction {
                Direction::Incoming => WireDirection::Incoming,
                Direction::Outgoing => WireDirection::Outgoing,
            };
            let _ = host.on_frame(direction, frame);
        }
        Delivery::Engine {
            kind,
            message,
            details,
        } => {
            let _ = host.on_engine_event(EngineEvent {
                kind: kind.to_owned(),
                message,
                details: details.to_string(),
            });
        }
        _ => {}
    }
}

/// Hands the pending notifications to the host and waits until it handled
/// them (its errors are its own: the batch is done either way).
async fn flush(host: &Arc<dyn HostHandler>, batch: &mut Vec<Notification>) {
    if !batch.is_empty() {
        let _ = host.on_notifications(std::mem::take(batch)).await;
    }
}
