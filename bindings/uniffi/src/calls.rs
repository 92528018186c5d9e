//! Where a call's outcome goes ([`Tag`]): the future of
//! [`Connection::call`](crate::Connection::call), or the host's
//! [`HostHandler::on_call_result`]/[`HostHandler::on_call_error`] for calls
//! started with [`Connection::start_call`](crate::Connection::start_call).
//!
//! Why the callback form: in Kotlin, awaiting a UniFFI future costs two
//! polls, a completion and a free (each a JNA call) plus a continuation
//! called from Rust; a started call costs one call into Rust and one back.
//! Measured on W2 (sequential `fs/read_text_file` round trips).
//!
//! [`Calls`] keeps each started call's [`CancelHandle`] under the host's
//! token until its outcome is delivered, for
//! [`Connection::abandon_call`](crate::Connection::abandon_call).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use libacp_core::{CallError, CancelHandle, CancelMode, RawValue};
use tokio::sync::oneshot;

use crate::error::AcpError;
use crate::handler::HostHandler;
use crate::options::lock;

/// A call's outcome, as the inbox carries it.
pub(crate) type Outcome = Result<Box<RawValue>, CallError>;

/// Where a call's outcome goes.
pub(crate) enum Tag {
    /// The future of `Connection::call` awaits it.
    Future(oneshot::Sender<Outcome>),
    /// The host's `on_call_result`/`on_call_error`, under this token.
    Callback(Callback),
}

impl Tag {
    /// Hands `outcome` over (on a libacp runtime thread).
    pub(crate) fn deliver(self, outcome: Outcome) {
        match self {
            // The caller stopped waiting: nothing to do.
            Self::Future(tx) => drop(tx.send(outcome)),
            Self::Callback(callback) => callback.deliver(outcome),
        }
    }
}

/// A started call's token and where its outcome goes. Dropped undelivered
/// (the inbox freed with the outcome still in it, after the connection
/// closed), it tells the host the call failed: a started call always ends.
pub(crate) struct Callback {
    token: u64,
    calls: Arc<Calls>,
    delivered: bool,
}

impl Callback {
    fn deliver(mut self, outcome: Outcome) {
        self.delivered = true;
        self.calls.finish(self.token, outcome);
    }
}

impl Drop for Callback {
    fn drop(&mut self) {
        if !self.delivered {
            self.calls.dropped(self.token);
        }
    }
}

/// A started call's entry in [`Calls`].
enum Entry {
    /// `Calls::start` is sending it.
    Starting,
    /// Sent; its handle abandons it.
    Sent(CancelHandle),
    /// Its tag was dropped while `Calls::start` was sending it: refused
    /// (start returns the error) or, if sent, failed.
    Dropped,
}

/// The calls started with `Connection::start_call` whose outcome was not
/// delivered yet, by the host's token.
pub(crate) struct Calls {
    host: Arc<dyn HostHandler>,
    entries: Mutex<HashMap<u64, Entry>>,
}

impl Calls {
    pub(crate) fn new(host: Arc<dyn HostHandler>) -> Self {
        Self {
            host,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Starts a call with `start`, which gets the tag for its outcome. A
    /// token already in flight is refused. When `start` fails the error is
    /// returned and the host's callbacks are not called for the token.
    pub(crate) fn start(
        self: &Arc<Self>,
        token: u64,
        start: impl FnOnce(Tag) -> Result<CancelHandle, AcpError>,
    ) -> Result<(), AcpError> {
        {
            let mut entries = lock(&self.entries);
            if entries.contains_key(&token) {
                return Err(AcpError::argument(format!(
                    "call token {token} is already in flight"
                )));
            }
            entries.insert(token, Entry::Starting);
        }
        let tag = Tag::Callback(Callback {
            token,
            calls: Arc::clone(self),
            delivered: false,
        });
        // Not under the table's lock: a refused call drops its tag here.
        let started = start(tag);
        let mut entries = lock(&self.entries);
        match (started, entries.remove(&token)) {
            (Ok(handle), Some(Entry::Starting)) => {
                entries.insert(token, Entry::Sent(handle));
                Ok(())
            }
            // Delivered already (answered at once): done.
            (Ok(_), None) => Ok(()),
            (Ok(_), Some(_)) => {
                drop(entries);
                self.tell(token, Err(closed()));
                Ok(())
            }
            (Err(e), _) => Err(e),
        }
    }

    /// Abandons the call started under `token` (its outcome, `Cancelled`,
    /// is still delivered); `false` if it had ended.
    pub(crate) fn abandon(&self, token: u64) -> bool {
        let handle = match lock(&self.entries).get(&token) {
            Some(Entry::Sent(handle)) => handle.clone(),
            _ => return false,
        };
        handle.cancel(CancelMode::Abandon)
    }

    fn finish(&self, token: u64, outcome: Outcome) {
        let _ = lock(&self.entries).remove(&token);
        self.tell(token, outcome);
    }

    /// A tag dropped undelivered: while starting, `start` decides; after,
    /// the call failed with the connection.
    fn dropped(&self, token: u64) {
        {
            let mut entries = lock(&self.entries);
            if let Some(entry @ Entry::Starting) = entries.get_mut(&token) {
                *entry = Entry::Dropped;
                return;
            }
            entries.remove(&token);
        }
        self.tell(token, Err(closed()));
    }

    fn tell(&self, token: u64, outcome: Outcome) {
        let _ = match outcome {
            Ok(result) => self.host.on_call_result(token, result.get().to_owned()),
            Err(e) => self.host.on_call_error(token, e.into()),
        };
    }
}

/// The outcome of a call whose answer was dropped with the closed
/// connection.
fn closed() -> CallError {
    CallError::Connection(libacp_core::ConnectionError::Closed(
        libacp_core::CloseReason::Local,
    ))
}
