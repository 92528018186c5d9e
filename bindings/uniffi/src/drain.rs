//! Delivering a connection's inbox to the host's [`HostHandler`]: the
//! binding's "loop wake-up" (DESIGN.md, decision 9). The core's inbox holds
//! what the peer sent, in order, and the outcomes of the host's calls; two
//! tasks on libacp's runtime take it:
//!
//! * the **ordered** task drains the ordered lane in order: consecutive
//!   notifications go to the host as one batch
//!   ([`HostHandler::on_notifications`], awaited: one hop to the host's
//!   runtime per batch, not per notification), requests are started
//!   ([`serve_request`]: they run concurrently), and each call's outcome is
//!   handed to its caller only after the notifications before it were
//!   handled;
//! * the **urgent** task hands over at once the outcomes of calls made with
//!   `skip_barrier` (a notification handler awaiting one holds the ordered
//!   task), so it never waits on host code.
//!
//! Both end when the connection's close is delivered.

use std::sync::Arc;

use libacp_core::host::{Delivery, Inbox};
use libacp_core::{CallError, RawValue};
use tokio::sync::{Notify, oneshot};

use crate::handler::{HostHandler, Notification, serve_request};

/// Where a call's outcome goes: the future the host awaits.
pub(crate) type Tag = oneshot::Sender<Result<Box<RawValue>, CallError>>;

/// Notifications handed to the host in one batch, at most.
const BATCH: usize = 256;

/// The inbox's wake-up: one [`Notify`] per task (a permit is kept when no
/// task waits, so no wake is lost).
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    ordered: Notify,
    urgent: Notify,
}

impl Wakes {
    pub(crate) fn wake(&self) {
        self.ordered.notify_one();
        self.urgent.notify_one();
    }
}

/// Starts the two tasks on the current runtime.
pub(crate) fn start(inbox: &Arc<Inbox<Tag>>, wakes: &Arc<Wakes>, host: &Arc<dyn HostHandler>) {
    tokio::spawn(ordered(
        Arc::clone(inbox),
        Arc::clone(wakes),
        Arc::clone(host),
    ));
    tokio::spawn(urgent(Arc::clone(inbox), Arc::clone(wakes)));
}

async fn urgent(inbox: Arc<Inbox<Tag>>, wakes: Arc<Wakes>) {
    let mut items = Vec::new();
    loop {
        wakes.urgent.notified().await;
        inbox.take_urgent(&mut items);
        for item in items.drain(..) {
            if let Delivery::Result { tag, outcome } = item {
                let _ = tag.send(outcome);
            }
            // Signals are not armed (requests watch their responder's
            // tokens) and stderr goes to the host directly: nothing else
            // comes here.
        }
        if inbox.is_closed() && inbox.is_empty() {
            return;
        }
    }
}

async fn ordered(inbox: Arc<Inbox<Tag>>, wakes: Arc<Wakes>, host: Arc<dyn HostHandler>) {
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
                        flush(&host, &mut batch).await;
                        match other {
                            Delivery::Request(request) => serve_request(Arc::clone(&host), request),
                            Delivery::Result { tag, outcome } => {
                                let _ = tag.send(outcome);
                            }
                            Delivery::Closed(_) => {
                                // The urgent task ends on its next wake.
                                wakes.urgent.notify_one();
                                return;
                            }
                            _ => {}
                        }
                    }
                }
            }
            flush(&host, &mut batch).await;
        }
    }
}

/// Hands the pending notifications to the host and waits until it handled
/// them (its errors are its own: the batch is done either way).
async fn flush(host: &Arc<dyn HostHandler>, batch: &mut Vec<Notification>) {
    if !batch.is_empty() {
        let _ = host.on_notifications(std::mem::take(batch)).await;
    }
}
