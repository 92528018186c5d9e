//! Incoming requests and notifications, and the [`Responder`] that answers a
//! request exactly once.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::shared::{ANSWERED, CANCELLED, InflightState, OPEN, Shared, SignalSink};
use super::{Event, Peer, lock};
use crate::error::{RespondError, RpcError};
use crate::message::RequestId;

/// A request from the peer. Answer it through its [`Responder`].
#[derive(Debug)]
pub struct IncomingRequest {
    /// The id the peer chose (echoed in the answer by the responder).
    pub id: RequestId,
    /// The method name, untouched.
    pub method: String,
    /// The params as raw JSON; `None` when absent.
    pub params: Option<Box<RawValue>>,
    /// Cancelled when the peer sends `$/cancel_request` for this request (the
    /// engine has then answered `-32800`) or the connection closes.
    pub cancellation: CancellationToken,
    /// The connection it came on, for nested requests to the peer.
    pub peer: Peer,
    /// Its cancellation state (the protocol layer fires it for
    /// `session/cancel`).
    pub(crate) signals: Arc<InflightState>,
}

impl IncomingRequest {
    /// Decodes the params as `T`; missing params decode as `null`.
    /// A failure is the `-32602` error to answer with.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, RpcError> {
        decode_params(self.params.as_deref())
    }
}

/// A notification from the peer.
#[derive(Debug)]
pub struct IncomingNotification {
    /// The method name, untouched.
    pub method: String,
    /// The params as raw JSON; `None` when absent.
    pub params: Option<Box<RawValue>>,
    /// The connection it came on.
    pub peer: Peer,
}

impl IncomingNotification {
    /// Decodes the params as `T`.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, RpcError> {
        decode_params(self.params.as_deref())
    }
}

fn decode_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, RpcError> {
    let text = params.map_or("null", RawValue::get);
    serde_json::from_str(text).map_err(|e| {
        // Past serde_json's depth limit the error names wherever the
        // decoder gave up (or a later token, where a member swallows
        // errors): name the limit instead.
        let limit = crate::json::DECODE_DEPTH_LIMIT;
        if crate::json::nests_deeper_than(text, limit) {
            RpcError::invalid_params(format!(
                "params nest arrays and objects deeper than {limit} levels, the most they may"
            ))
        } else {
            RpcError::invalid_params(e.to_string())
        }
    })
}

/// Answers one incoming request. Thread-safe; may be moved to any thread and
/// used after the handler returned.
///
/// * The first answer is sent; any later one is refused with
///   [`RespondError::AlreadyAnswered`].
/// * If the peer cancels first, the engine answers `-32800` and a later
///   answer gets [`RespondError::Cancelled`].
/// * Dropping an unanswered responder answers `-32603` ("the handler ended
///   without answering"), so the peer never waits forever.
pub struct Responder {
    shared: Arc<Shared>,
    id: RequestId,
    state: Arc<InflightState>,
}

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Responder").field("id", &self.id).finish()
    }
}

impl Responder {
    pub(crate) fn new(shared: Arc<Shared>, id: RequestId, state: Arc<InflightState>) -> Self {
        Self { shared, id, state }
    }

    /// The id of the request this answers.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Whether an answer (the handler's or the engine's) was sent.
    pub fn is_answered(&self) -> bool {
        self.state.answer.load(Ordering::SeqCst) != OPEN
    }

    /// The request's cancellation token (the same as
    /// [`IncomingRequest::cancellation`]).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.state.token
    }

    /// Fires when the answer is no longer the handler's to give: the engine
    /// answered on its behalf (`$/cancel_request`, a client cancelling a
    /// permission request) or the connection closed. Unlike
    /// [`Responder::cancellation`], it does not fire for `session/cancel`,
    /// after which a prompt handler is expected to wind down and answer.
    pub fn superseded(&self) -> &CancellationToken {
        &self.state.superseded
    }

    /// Sends the answer: a raw JSON result or an error. An answer that
    /// goes out while the writer is idle is written by the calling thread
    /// (see `writer.rs`).
    pub fn respond(&self, result: Result<Box<RawValue>, RpcError>) -> Result<(), RespondError> {
        if let Err(state) =
            self.state
                .answer
                .compare_exchange(OPEN, ANSWERED, Ordering::SeqCst, Ordering::SeqCst)
        {
            return Err(
                if state == CANCELLED && self.shared.close_reason().is_none() {
                    RespondError::Cancelled
                } else if state == CANCELLED {
                    RespondError::Closed
                } else {
                    RespondError::AlreadyAnswered
                },
            );
        }
        if send_answer(&self.shared, &self.id, &self.state, result) {
            Ok(())
        } else {
            Err(RespondError::Closed)
        }
    }

    /// Installs a finisher (see [`super::shared::Finisher`]). Replaces any
    /// earlier one.
    pub(crate) fn set_finisher(&self, finisher: super::shared::Finisher) {
        self.state.set_finisher(finisher);
    }

    /// Installs a hook run once the answer (whoever gives it) is queued for
    /// the peer.
    pub(crate) fn set_after_send(&self, hook: Box<dyn FnOnce() + Send>) {
        self.state.set_after_send(hook);
    }

    /// Tells `sink` about this request's later [`super::Signal`]s and
    /// returns them as they stand, `(cancelled, superseded)`: each is either
    /// in the returned state or given to the sink, never both, never lost.
    /// Replaces any earlier sink; the sink is dropped once the request is
    /// answered.
    pub(crate) fn arm(&self, sink: SignalSink) -> (bool, bool) {
        self.state.arm(sink)
    }

    /// The request's signals as they stand, `(cancelled, superseded)`.
    pub(crate) fn signals(&self) -> (bool, bool) {
        self.state.signals()
    }

    /// Serializes `result` and sends it; a value that does not serialize is
    /// answered `-32603` and reported as [`RespondError::Serialize`].
    pub fn respond_with<T: Serialize>(
        &self,
        result: Result<T, RpcError>,
    ) -> Result<(), RespondError> {
        match result.map(|v| crate::json::to_raw(&v)) {
            Ok(Ok(raw)) => self.respond(Ok(raw)),
            Ok(Err(e)) => {
                self.respond(Err(RpcError::internal_error(format!(
                    "result did not serialize: {e}"
                ))))?;
                Err(RespondError::Serialize)
            }
            Err(e) => self.respond(Err(e)),
        }
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        if self.state.answer.load(Ordering::SeqCst) == OPEN {
            let _ = self.respond(Err(RpcError::internal_error(
                "the request handler ended without answering",
            )));
        }
    }
}

/// Sends the answer of an incoming request whose answer state was just
/// claimed (by its handler or by the engine): applies the finisher, queues
/// the answer, runs the after-send hook, removes the request from the
/// in-flight table and stops telling its sink. Returns whether it was queued.
fn send_answer(
    shared: &Arc<Shared>,
    id: &RequestId,
    state: &Arc<InflightState>,
    result: Result<Box<RawValue>, RpcError>,
) -> bool {
    // Whatever text a host answered with, a frame never holds a raw newline.
    let result = state.finish(result).map(crate::json::compact_if_needed);
    let sent = match &result {
        Ok(raw) => shared.send_response(Some(id), Ok(raw)),
        Err(e) => shared.send_response(Some(id), Err(e)),
    };
    state.sent();
    {
        let mut table = lock(&shared.inflight);
        if table.get(id).is_some_and(|s| Arc::ptr_eq(s, state)) {
            table.remove(id);
        }
    }
    shared.request_left();
    state.disarm();
    shared.close_if_idle();
    sent
}

/// Registers an incoming request as in flight. `None` when a request with
/// the same id is already in flight: the duplicate is answered `-32600`
/// with `"id": null` and the reused id in `data.id`, so the peer cannot
/// take the refusal for the answer to its first request (which is still
/// answered normally, once, under its id).
pub(crate) fn register(shared: &Arc<Shared>, id: &RequestId) -> Option<Arc<InflightState>> {
    let state = Arc::new(InflightState::new());
    {
        let mut table = lock(&shared.inflight);
        if table.contains_key(id) {
            drop(table);
            shared.event(Event::DuplicateRequestId { id: id.clone() });
            let refusal = RpcError::invalid_request(format!(
                "request id {id} is already in use by a request in flight"
            ))
            .with_data(serde_json::json!({ "id": id }));
            shared.send_response(None, Err(&refusal));
            return None;
        }
        table.insert(id.clone(), Arc::clone(&state));
    }
    Some(state)
}

/// Handles `$/cancel_request` from the peer: cancels the handler's token and
/// answers `-32800` unless the request was answered already.
pub(crate) fn cancel_from_peer(shared: &Arc<Shared>, params: Option<&RawValue>) {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CancelParams {
        request_id: RequestId,
    }
    let Some(Ok(CancelParams { request_id })) =
        params.map(|p| serde_json::from_str::<CancelParams>(p.get()))
    else {
        shared.event(Event::InvalidCancel {
            params: params.map(|p| p.get().to_owned()),
        });
        return;
    };
    if !answer_for_handler(shared, &request_id, Err(RpcError::request_cancelled())) {
        shared.event(Event::CancelForUnknownRequest { id: request_id });
    }
}

/// Answers an incoming request on its handler's behalf because it was
/// cancelled: fires its signals (cancelled, then superseded) and sends
/// `result` (through its finisher). The handler's own later answer is
/// refused with [`RespondError::Cancelled`]. Returns `false` when the
/// request is not in flight (answered already, or unknown).
pub(crate) fn answer_for_handler(
    shared: &Arc<Shared>,
    id: &RequestId,
    result: Result<Box<RawValue>, RpcError>,
) -> bool {
    claim_for_handler(shared, id, result)
        .map(Claimed::send)
        .is_some()
}

/// The first half of [`answer_for_handler`]: takes the answer away from
/// the handler now (its signals fire, its own answer is refused from here
/// on) and returns the claim, whose [`Claimed::send`] sends `result` later;
/// a claim dropped unsent sends it then. `None` when the request is not in
/// flight.
pub(crate) fn claim_for_handler(
    shared: &Arc<Shared>,
    id: &RequestId,
    result: Result<Box<RawValue>, RpcError>,
) -> Option<Claimed> {
    let state = lock(&shared.inflight).get(id).cloned()?;
    state
        .answer
        .compare_exchange(OPEN, CANCELLED, Ordering::SeqCst, Ordering::SeqCst)
        .ok()?;
    state.supersede();
    Some(Claimed {
        shared: Arc::clone(shared),
        id: id.clone(),
        state,
        result: Some(result),
    })
}

/// A request whose answer libacp took from its handler (see
/// [`claim_for_handler`]): sent by [`Claimed::send`], or when dropped.
pub(crate) struct Claimed {
    shared: Arc<Shared>,
    id: RequestId,
    state: Arc<InflightState>,
    result: Option<Result<Box<RawValue>, RpcError>>,
}

impl Claimed {
    /// Sends the answer; whether it was queued.
    pub(crate) fn send(mut self) -> bool {
        self.result
            .take()
            .is_some_and(|result| send_answer(&self.shared, &self.id, &self.state, result))
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        if let Some(result) = self.result.take() {
            send_answer(&self.shared, &self.id, &self.state, result);
        }
    }
}
