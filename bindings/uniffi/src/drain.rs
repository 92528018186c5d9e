//! Delivering a connection's inbox to the host's [`HostHandler`]: the
//! binding's "loop wake-up" (DESIGN.md, decision 9). The core's inbox holds
//! what the peer sent, in order, and the outcomes of the host's calls; one
//! task on libacp's runtime takes it:
//!
//! * the **ordered** lane in order: consecutive notifications go to the
//!   host as one batch ([`HostHandler::on_notifications`], awaited: one hop
//!   to the host's runtime per batch, not per notification), requests are
//!   started ([`Requests::start`]: they run concurrently), and each call's
//!   outcome is handed to its caller only after the notifications before it
//!   were handled;
//! * the **urgent** lane at each wake-up, and also while the task awaits a
//!   batch of notifications (the outcomes of calls made with
//!   `skip_barrier`, which a notification handler may be awaiting, and the
//!   requests' cancellation signals), so it never waits on host code.
//!
//! One task, not one per lane: waking two tasks per message made tokio wake
//! its second worker thread to steal the one that had nothing to do (`perf`,
//! Swift W2: both runtime threads switched about 1.45 times per round trip
//! each). It also keeps the urgent lane's deliveries in order with the
//! requests they concern.
//!
//! The trace and engine events (`on_frame`, `on_engine_event`) come
//! through the inbox too: in the ordered lane, between the notifications
//! (the batch before them is handled first) and before the answers that
//! follow them on the wire; in the urgent lane with `ordered_hooks` off.
//!
//! After the connection's close is delivered the task goes on with the
//! urgent lane until the `Connection` is freed: the core accepts a call's
//! outcome after the close (a timeout or an answer racing the close), in the
//! urgent lane, and it must still reach its caller.

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

/// The inbox's wake-up ([`Notify`] keeps a permit when the task is not
/// waiting, so no wake is lost).
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    inbox: Notify,
    /// The `Connection` was freed: the task ends once the close was
    /// delivered.
    freed: AtomicBool,
}

impl Wakes {
    pub(crate) fn wake(&self) {
        self.inbox.notify_one();
    }

    /// The `Connection` is being freed: nobody can wait for an outcome any
    /// more, so the task may end.
    pub(crate) fn freed(&self) {
        self.freed.store(true, Ordering::Release);
        self.inbox.notify_one();
    }
}

/// What the task delivers to: the host's handler and the requests it was
/// handed.
#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) handler: Arc<dyn HostHandler>,
    pub(crate) requests: Arc<Requests>,
}

/// Starts the task on the current runtime.
pub(crate) fn start(inbox: &Arc<Inbox<Tag>>, wakes: &Arc<Wakes>, host: &Host) {
    tokio::spawn(drain(Arc::clone(inbox), Arc::clone(wakes), host.clone()));
}

async fn drain(inbox: Arc<Inbox<Tag>>, wakes: Arc<Wakes>, host: Host) {
    let mut items = Vec::new();
    let mut urgent = Vec::new();
    let mut batch = Vec::new();
    'open: loop {
        wakes.inbox.notified().await;
        take_urgent(&inbox, &host, &mut urgent);
        while inbox.take_ordered(&mut items, BATCH) {
            for item in items.drain(..) {
                match item {
                    Delivery::Notification { method, params } => batch.push(Notification {
                        method,
                        params: params.map(|p| p.get().to_owned()),
                    }),
                    other => {
                        flush(&inbox, &wakes, &host, &mut batch, &mut urgent).await;
                        match other {
                            Delivery::Request(request) => {
                                host.requests.start(&*host.handler, request);
                            }
                            Delivery::Result { tag, outcome } => tag.deliver(outcome),
                            Delivery::Closed(_) => break 'open,
                            hook => deliver_hook(&host.handler, hook),
                        }
                    }
                }
            }
            flush(&inbox, &wakes, &host, &mut batch, &mut urgent).await;
        }
    }
    // Closed: late outcomes still come, in the urgent lane.
    loop {
        take_urgent(&inbox, &host, &mut urgent);
        if wakes.freed.load(Ordering::Acquire) {
            return;
        }
        wakes.inbox.notified().await;
    }
}

/// Hands what the urgent lane holds over at once.
fn take_urgent(inbox: &Inbox<Tag>, host: &Host, items: &mut Vec<Delivery<Tag>>) {
    inbox.take_urgent(items);
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
/// them (its errors are its own: the batch is done either way), taking the
/// urgent lane meanwhile at each wake-up (what comes in the ordered lane
/// meanwhile waits: that lane is still being drained, so it does not wake).
async fn flush(
    inbox: &Inbox<Tag>,
    wakes: &Wakes,
    host: &Host,
    batch: &mut Vec<Notification>,
    urgent: &mut Vec<Delivery<Tag>>,
) {
    if batch.is_empty() {
        return;
    }
    let handled = host.handler.on_notifications(std::mem::take(batch));
    tokio::pin!(handled);
    loop {
        tokio::select! {
            biased;
            _ = &mut handled => return,
            () = wakes.inbox.notified() => take_urgent(inbox, host, urgent),
        }
    }
}
