//! Outgoing requests: [`OutgoingCall`] (a future of the answer), the
//! callback form for bindings ([`super::Peer::call`]), and [`CancelHandle`].
//!
//! A request is queued for the peer when it is created, so requests and
//! notifications leave in the order they were made (`writer.rs`). Its
//! outcome is delivered exactly once through its [`Completion`]: the answer,
//! the close, a cancellation, a timeout, or the caller giving up.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Sleep;

use super::shared::{CallResult, Completion, PendingEntry, Shared};
use super::{NOTIFICATION_SCOPE, lock};
use crate::error::{CallError, ConnectionError};
use crate::message::{self, RequestId};

/// How [`CancelHandle::cancel`] treats the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelMode {
    /// Send `$/cancel_request` and keep waiting for the peer's answer
    /// (usually `-32800`, or a result if it finished first).
    KeepWaiting,
    /// Send `$/cancel_request` and resolve the call with
    /// [`CallError::Cancelled`] at once; a late answer is dropped.
    Abandon,
}

/// A request's timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CallTimeout {
    /// The connection's `request_timeout`.
    #[default]
    Default,
    /// None, whatever the connection's default.
    Never,
    /// This long after the request was made.
    After(Duration),
}

/// Per-call settings, fixed when the call is made (it is sent at once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// When to give up waiting (the peer is then sent `$/cancel_request`
    /// and the call fails with [`CallError::Timeout`]).
    pub timeout: CallTimeout,
    /// Deliver the answer as soon as it is read, ahead of the ordering
    /// barrier, as calls made inside a notification handler get
    /// automatically. For hosts whose notification handlers run outside the
    /// dispatcher (a binding's event loop): a call such a handler awaits
    /// must not wait for the handler to finish.
    pub skip_barrier: bool,
}

impl CallOptions {
    fn timeout_for(&self, shared: &Shared) -> Option<Duration> {
        match self.timeout {
            CallTimeout::Default => shared.options.request_timeout,
            CallTimeout::Never => None,
            CallTimeout::After(t) => Some(t),
        }
    }
}

/// Registers a request and queues it. `Err` (the completion unused) when
/// the connection is already closed; `Ok` means the completion will be run,
/// exactly once (it may have run already, if the connection closed while
/// the request was being queued).
fn start(
    shared: &Arc<Shared>,
    method: &str,
    params: Option<&RawValue>,
    options: CallOptions,
    completion: Completion,
) -> Result<i64, CallError> {
    let id = shared.next_id();
    let bypass_barrier = options.skip_barrier
        || NOTIFICATION_SCOPE
            .try_with(|conn| *conn == Arc::as_ptr(shared) as usize)
            .unwrap_or(false);
    {
        let mut table = lock(&shared.pending);
        if let Some(reason) = table.closed.clone().or_else(|| shared.close_reason()) {
            return Err(ConnectionError::Closed(reason).into());
        }
        table.map.insert(
            id,
            PendingEntry {
                completion,
                bypass_barrier,
                timer: None,
            },
        );
    }
    let frame = message::encode_request(&RequestId::Number(id), method, params);
    if shared.outbox.push_request(frame).is_err()
        && let Some(entry) = shared.take_pending(id)
    {
        // Closed meanwhile (otherwise the close completed it already).
        entry.complete(Err(shared.closed_error().into()));
    }
    Ok(id)
}

/// Starts a request whose outcome goes to `on_answer` (see
/// [`super::Peer::call`]).
pub(crate) fn call(
    shared: &Arc<Shared>,
    method: &str,
    params: Option<&RawValue>,
    options: CallOptions,
    on_answer: Box<dyn FnOnce(CallResult) + Send>,
) -> Result<CancelHandle, CallError> {
    let id = start(
        shared,
        method,
        params,
        options,
        Completion::Callback(on_answer),
    )?;
    if let Some(t) = options.timeout_for(shared) {
        let timer_shared = Arc::clone(shared);
        let timer = shared.runtime.spawn(async move {
            tokio::time::sleep(t).await;
            if let Some(entry) = timer_shared.take_pending(id) {
                timer_shared.send_cancel(id);
                entry.completion.complete(Err(CallError::Timeout));
            }
        });
        // The call may have ended already: then the timer stops at once.
        match lock(&shared.pending).map.get_mut(&id) {
            Some(entry) => entry.timer = Some(timer.abort_handle()),
            None => timer.abort(),
        }
    }
    Ok(CancelHandle {
        shared: Arc::clone(shared),
        id,
    })
}

enum State {
    /// Queued; waiting for the answer.
    Waiting(oneshot::Receiver<CallResult>),
    /// Failed before anything was sent.
    Failed(Option<CallError>),
    Done,
}

/// An outgoing request; resolves to the peer's result or a [`CallError`].
///
/// The request is queued for the peer when it is created (calls and
/// notifications leave in the order they are made) and its id is fixed
/// then. Dropping it before the answer abandons it: the peer is sent
/// `$/cancel_request`.
#[must_use = "dropping the call abandons it (the peer is sent $/cancel_request)"]
pub struct OutgoingCall {
    shared: Arc<Shared>,
    id: i64,
    state: State,
    timeout: Option<Duration>,
    created: tokio::time::Instant,
    deadline: Option<Pin<Box<Sleep>>>,
}

impl std::fmt::Debug for OutgoingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingCall")
            .field("id", &self.id)
            .finish()
    }
}

impl OutgoingCall {
    /// Starts a request; its outcome passes through `map` (on the thread
    /// that ends the call) before the future sees it.
    pub(crate) fn start(
        shared: Arc<Shared>,
        method: &str,
        params: Option<&RawValue>,
        options: CallOptions,
        map: Option<Box<dyn FnOnce(CallResult) -> CallResult + Send>>,
    ) -> Self {
        let (tx, rx) = oneshot::channel();
        let completion = match map {
            None => Completion::Channel(tx),
            Some(map) => Completion::Callback(Box::new(move |r| {
                let _ = tx.send(map(r));
            })),
        };
        let timeout = options.timeout_for(&shared);
        let created = tokio::time::Instant::now();
        match start(&shared, method, params, options, completion) {
            Ok(id) => Self {
                shared,
                id,
                state: State::Waiting(rx),
                timeout,
                created,
                deadline: None,
            },
            Err(e) => Self::failed(shared, e),
        }
    }

    pub(crate) fn failed(shared: Arc<Shared>, error: CallError) -> Self {
        let id = shared.next_id();
        Self {
            shared,
            id,
            state: State::Failed(Some(error)),
            timeout: None,
            created: tokio::time::Instant::now(),
            deadline: None,
        }
    }

    /// The request's id on the wire.
    pub fn id(&self) -> RequestId {
        RequestId::Number(self.id)
    }

    /// Fails the call with [`CallError::Timeout`] (and sends
    /// `$/cancel_request`) if no answer arrives within `timeout` of its
    /// creation. Overrides the connection's default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self.deadline = None;
        self
    }

    /// Removes any timeout, including the connection's default.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self.deadline = None;
        self
    }

    /// Awaits the answer and decodes it as `T`; a result that does not
    /// decode is [`CallError::InvalidResult`].
    pub async fn decode<T: serde::de::DeserializeOwned>(self) -> Result<T, CallError> {
        let raw = self.await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }

    /// A handle that cancels this call from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle {
            shared: Arc::clone(&self.shared),
            id: self.id,
        }
    }

    fn on_timeout(&mut self) -> Option<CallError> {
        let entry = self.shared.take_pending(self.id)?;
        self.shared.send_cancel(self.id);
        // The outcome goes through the completion (its map sees it too);
        // this future answers with the timeout directly.
        entry.complete(Err(CallError::Timeout));
        Some(CallError::Timeout)
    }
}

impl Future for OutgoingCall {
    type Output = CallResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallResult> {
        let this = &mut *self;
        match &mut this.state {
            State::Failed(e) => {
                let e = e.take().unwrap_or(CallError::Cancelled);
                this.state = State::Done;
                return Poll::Ready(Err(e));
            }
            State::Done => {
                return Poll::Ready(Err(CallError::InvalidParams(
                    "OutgoingCall polled after completion".into(),
                )));
            }
            State::Waiting(rx) => {
                if let Poll::Ready(result) = Pin::new(rx).poll(cx) {
                    this.state = State::Done;
                    return Poll::Ready(
                        result.unwrap_or_else(|_| Err(this.shared.closed_error().into())),
                    );
                }
            }
        }
        if this.deadline.is_none()
            && let Some(t) = this.timeout
        {
            this.deadline = Some(Box::pin(tokio::time::sleep_until(this.created + t)));
        }
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
            && let Some(e) = this.on_timeout()
        {
            this.state = State::Done;
            return Poll::Ready(Err(e));
        }
        Poll::Pending
    }
}

impl Drop for OutgoingCall {
    fn drop(&mut self) {
        if !matches!(self.state, State::Waiting(_)) {
            return;
        }
        if let Some(entry) = self.shared.take_pending(self.id) {
            self.shared.send_cancel(self.id);
            entry.complete(Err(CallError::Cancelled));
        }
    }
}

/// Cancels an outgoing call from any thread. Cheap to clone.
#[derive(Clone)]
pub struct CancelHandle {
    shared: Arc<Shared>,
    id: i64,
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("id", &self.id)
            .finish()
    }
}

impl CancelHandle {
    /// The id of the request this cancels.
    pub fn id(&self) -> RequestId {
        RequestId::Number(self.id)
    }

    /// Cancels the call (see [`CancelMode`]). Returns `false` when the call
    /// had already ended (answered, failed or abandoned).
    pub fn cancel(&self, mode: CancelMode) -> bool {
        match mode {
            CancelMode::KeepWaiting => {
                if !lock(&self.shared.pending).map.contains_key(&self.id) {
                    return false;
                }
                self.shared.send_cancel(self.id);
                true
            }
            CancelMode::Abandon => {
                let Some(entry) = self.shared.take_pending(self.id) else {
                    return false;
                };
                self.shared.send_cancel(self.id);
                entry.complete(Err(CallError::Cancelled));
                true
            }
        }
    }
}
