//! The outgoing half of the protocol layer: checks a call against the ACP
//! rules before anything is sent (phase, direction, the peer's advertised
//! capabilities, sessions, one prompt turn per session, validation), and
//! records what the answer means (negotiated version, capabilities,
//! sessions opened and closed, turns ended).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use super::effect::Effect;
use super::methods::{self, SessionScope};
use super::payload::{self, Part};
use super::state::{Phase, State, Turn, session_id_of, tree};
use super::{Role, validate};
use crate::error::{CallError, Refusal};
use crate::rpc::{CallOptions, CallResult, CancelHandle, OutgoingCall, Peer, lock};

/// An outgoing ACP call: a future of the peer's answer. Refused calls
/// resolve at once to [`CallError::Refused`] or
/// [`CallError::InvalidParams`] without sending anything; others were
/// queued for the peer when the call was made.
#[must_use = "dropping the call abandons it (the peer is sent $/cancel_request)"]
pub struct AcpCall {
    inner: Result<OutgoingCall, Option<CallError>>,
}

impl std::fmt::Debug for AcpCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpCall").finish_non_exhaustive()
    }
}

impl AcpCall {
    pub(crate) fn refused(error: CallError) -> Self {
        Self {
            inner: Err(Some(error)),
        }
    }

    /// The error a refused call resolves to, known before it is awaited
    /// (`None` for a call that was sent).
    pub fn local_error(&self) -> Option<&CallError> {
        self.inner.as_ref().err().and_then(Option::as_ref)
    }

    /// A handle to cancel the call (`None` for a refused call).
    pub fn cancel_handle(&self) -> Option<CancelHandle> {
        self.inner.as_ref().ok().map(OutgoingCall::cancel_handle)
    }

    /// The request id on the wire (`None` for a refused call).
    pub fn id(&self) -> Option<crate::RequestId> {
        self.inner.as_ref().ok().map(OutgoingCall::id)
    }

    /// Sets a timeout (see [`OutgoingCall::timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        let inner = std::mem::replace(&mut self.inner, Err(None));
        self.inner = inner.map(|call| call.timeout(timeout));
        self
    }

    /// Awaits the answer and decodes it as `T`.
    pub async fn decode<T: serde::de::DeserializeOwned>(self) -> Result<T, CallError> {
        let raw = self.await?;
        serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(e.to_string()))
    }
}

impl Future for AcpCall {
    type Output = Result<Box<RawValue>, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.inner {
            Err(e) => Poll::Ready(Err(e.take().unwrap_or(CallError::Cancelled))),
            Ok(call) => Pin::new(call).poll(cx),
        }
    }
}

/// Records what a call's answer means in the protocol state. Run on the
/// thread that delivers the answer, in dispatch order (before the next
/// message is dispatched); dropped without being run (the call never went
/// out), it undoes what the call had reserved.
struct Settle {
    state: Arc<Mutex<State>>,
    peer: Peer,
    effect: Option<Effect>,
    /// The ACP request (`None` for an extension method): every v1 result
    /// is an object, so a `null` result reads as `{}`, and a result that
    /// breaks the schema's rules (a missing required member, a value
    /// outside an enum) is [`CallError::InvalidResult`].
    acp_method: Option<&'static str>,
    /// Payload rules apply to the answer (`payload::RULES`): breaches are
    /// reported.
    payload_rules: bool,
}

impl Settle {
    /// Settles the answer and closes the connection when it says so (an
    /// agent version this client cannot speak), at once.
    fn run(self, result: CallResult) -> CallResult {
        let (result, close) = self.settle(result);
        if let Some(peer) = close {
            close_later(peer);
        }
        result
    }

    /// Settles the answer; the peer to close once the caller has delivered
    /// the result, if the answer says to close (so that a host's inbox gets
    /// the call's outcome before the close).
    fn settle(mut self, result: CallResult) -> (CallResult, Option<Peer>) {
        let effect = self.effect.take().unwrap_or(Effect::None);
        let result = match (result, self.acp_method) {
            (Ok(raw), Some(method)) => {
                let raw = if raw.get() == "null" && methods::result_is_object(method) {
                    empty_object()
                } else {
                    raw
                };
                match validate::check_result(method, &raw) {
                    Ok(()) => {
                        if self.payload_rules {
                            report_breaches(&self.state, &self.peer, method, &raw);
                        }
                        Ok(raw)
                    }
                    Err(v) => Err(CallError::InvalidResult(format!(
                        "the answer to {method} breaks the schema: {v}"
                    ))),
                }
            }
            (other, _) => other,
        };
        apply(&self.state, &self.peer, effect, result)
    }
}

/// Reports what the peer's answer holds that this side did not advertise
/// (delivered as received).
fn report_breaches(state: &Arc<Mutex<State>>, peer: &Peer, method: &str, raw: &RawValue) {
    let found = {
        let st = lock(state);
        let sender = st.role.other();
        if !payload::may_match(
            sender,
            method,
            Part::Result,
            raw,
            &st.local_caps,
            st.features,
        ) {
            return;
        }
        payload::breaches(
            sender,
            method,
            Part::Result,
            &tree(Some(raw)),
            &st.local_caps,
            st.features,
        )
    };
    for breach in found {
        peer.report(breach.event(method, false));
    }
}

/// Closes the connection from a task: the spec says a client that cannot
/// speak the agent's version closes it.
fn close_later(peer: Peer) {
    let closer = peer.clone();
    peer.spawn(async move { closer.close().await });
}

impl Drop for Settle {
    fn drop(&mut self) {
        if let Some(effect) = self.effect.take() {
            let _ = apply(&self.state, &self.peer, effect, Err(CallError::Cancelled));
        }
    }
}

/// `{}`, the empty result object.
pub(crate) fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| Box::<RawValue>::default())
}

/// Records `result` in the protocol state; the second value is the peer to
/// close when the answer makes the connection unusable.
fn apply(
    state: &Arc<Mutex<State>>,
    peer: &Peer,
    effect: Effect,
    result: CallResult,
) -> (CallResult, Option<Peer>) {
    let mut state = lock(state);
    let Effect::Initialize { .. } = effect else {
        effect.record(&mut state, result.as_ref().ok().map(|raw| &**raw));
        return (result, None);
    };
    let Ok(raw) = result else {
        state.phase = Phase::AwaitingInitialize;
        return (result, None);
    };
    let answer = tree(Some(&raw));
    let version = answer.get("protocolVersion").and_then(Value::as_u64);
    let Some(version) = version
        .and_then(|v| u16::try_from(v).ok())
        .filter(|v| super::SUPPORTED_VERSIONS.contains(v))
    else {
        state.phase = Phase::AwaitingInitialize;
        drop(state);
        let refused = Err(CallError::Refused(Refusal::UnsupportedVersion {
            version: answer
                .get("protocolVersion")
                .map_or_else(|| "(none)".to_owned(), Value::to_string),
        }));
        return (refused, Some(peer.clone()));
    };
    state.version = Some(version);
    state.peer_caps = answer
        .get("agentCapabilities")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    state.auth_methods = answer
        .get("authMethods")
        .cloned()
        .unwrap_or_else(|| Value::Array(Vec::new()));
    state.phase = Phase::Ready;
    (Ok(raw), None)
}

/// A call that passed the checks: the params to send (rewritten for
/// `initialize`) and what settles its answer.
struct Prepared {
    params: Option<Box<RawValue>>,
    settle: Settle,
}

/// Checks an outgoing request against the rules and reserves what its
/// answer will settle.
fn prepare(
    state: &Arc<Mutex<State>>,
    peer: &Peer,
    method: &str,
    params: Option<Box<RawValue>>,
) -> Result<Prepared, CallError> {
    // Only the members the checks read (all of them for `initialize`,
    // rewritten below): large contents are not parsed again here.
    let params_tree = validate::params_tree(method, params.as_deref())
        .map_err(|v| CallError::InvalidParams(v.to_string()))?;
    let mut st = lock(state);
    refuse_breaches(&st, method, &params_tree)?;
    let effect = check(&mut st, method, &params_tree, false)?;
    let settle = Settle {
        state: Arc::clone(state),
        peer: peer.clone(),
        effect: Some(effect),
        acp_method: st
            .method(method, false, st.role.other())
            .filter(|info| !info.notification)
            .map(|info| info.name),
        payload_rules: payload::applies(st.role.other(), method, Part::Result, st.features),
    };
    // Enabled client services are advertised in `initialize`: its
    // `clientCapabilities` member is replaced, every other member is kept
    // as the host wrote it.
    let params = if methods::is_initialize(method) && st.services.any() {
        let mut caps = st.local_caps.clone();
        st.services.advertise(&mut caps);
        st.local_caps = caps.clone();
        drop(st);
        let mut members: std::collections::BTreeMap<String, Box<RawValue>> = params
            .as_deref()
            .map(|p| serde_json::from_str(p.get()))
            .transpose()
            .map_err(|e| CallError::InvalidParams(e.to_string()))?
            .unwrap_or_default();
        let caps =
            crate::json::to_raw(&caps).map_err(|e| CallError::InvalidParams(e.to_string()))?;
        members.insert("clientCapabilities".into(), caps);
        Some(crate::json::to_raw(&members).map_err(|e| CallError::InvalidParams(e.to_string()))?)
    } else {
        params
    };
    Ok(Prepared { params, settle })
}

/// Checks and starts an outgoing request (a future of its answer).
pub(crate) fn request(
    state: &Arc<Mutex<State>>,
    peer: &Peer,
    method: &str,
    params: Option<Box<RawValue>>,
    options: CallOptions,
) -> AcpCall {
    match prepare(state, peer, method, params) {
        Ok(Prepared { params, settle }) => AcpCall {
            inner: Ok(peer.request_mapped(
                method,
                params,
                options,
                Some(Box::new(move |r| settle.run(r))),
            )),
        },
        Err(e) => AcpCall::refused(e),
    }
}

/// Checks and starts an outgoing request whose answer goes to `on_answer`
/// (see [`crate::rpc::Peer::call`]).
pub(crate) fn call(
    state: &Arc<Mutex<State>>,
    peer: &Peer,
    method: &str,
    params: Option<Box<RawValue>>,
    options: CallOptions,
    on_answer: impl FnOnce(CallResult) + Send + 'static,
) -> Result<CancelHandle, CallError> {
    let Prepared { params, settle } = prepare(state, peer, method, params)?;
    peer.call(method, params, options, move |r| {
        // The outcome first: a host's inbox must have it before the close.
        let (result, close) = settle.settle(r);
        on_answer(result);
        if let Some(peer) = close {
            close_later(peer);
        }
    })
}

/// Checks an outgoing notification; `Err` means it must not be sent.
pub(crate) fn check_notification(
    state: &Arc<Mutex<State>>,
    method: &str,
    params: Option<&RawValue>,
) -> Result<(), CallError> {
    let mut st = lock(state);
    let Some(info) = st.method(method, true, st.role.other()) else {
        return Ok(());
    };
    if !info.notification {
        return Err(CallError::InvalidParams(format!(
            "`{method}` is a request, not a notification"
        )));
    }
    // Hot path (streaming updates): only tool-call updates are inspected in
    // depth; everything needs a known session.
    if method == "session/update" {
        let id = session_id_of(params)
            .ok_or_else(|| CallError::InvalidParams("/sessionId is required".into()))?;
        phase_and_direction(&st, info, method)?;
        if !st.session_known(&id) {
            return Err(CallError::Refused(Refusal::UnknownSession {
                session_id: id,
            }));
        }
        if let Some(p) = params
            && validate::update_needs_check(p)
        {
            validate::params_tree(method, Some(p))
                .and_then(|tree| validate::check(method, &tree))
                .map_err(|v| CallError::InvalidParams(v.to_string()))?;
        }
        if let Some(p) = params
            && payload::may_match(st.role, method, Part::Params, p, &st.peer_caps, st.features)
        {
            refuse_breaches(&st, method, &tree(Some(p)))?;
        }
        return Ok(());
    }
    let params_tree = validate::params_tree(method, params)
        .map_err(|v| CallError::InvalidParams(v.to_string()))?;
    refuse_breaches(&st, method, &params_tree)?;
    check(&mut st, method, &params_tree, true).map(|_| ())
}

/// Refuses params that hold what the peer did not advertise
/// (`payload::RULES`): nothing is sent.
fn refuse_breaches(st: &State, method: &str, params: &Value) -> Result<(), CallError> {
    let found = payload::breaches(
        st.role,
        method,
        Part::Params,
        params,
        &st.peer_caps,
        st.features,
    );
    match found.into_iter().next() {
        None => Ok(()),
        Some(breach) => Err(CallError::Refused(Refusal::CapabilityNotAdvertised {
            method: format!("{method} {}", breach.field),
            capability: breach.rule.capability.path().to_owned(),
        })),
    }
}

fn phase_and_direction(
    st: &State,
    info: &methods::MethodInfo,
    method: &str,
) -> Result<(), CallError> {
    if info.handled_by == st.role {
        return Err(CallError::Refused(Refusal::WrongDirection {
            method: method.to_owned(),
        }));
    }
    if methods::is_initialize(method) {
        return if st.phase == Phase::AwaitingInitialize {
            Ok(())
        } else {
            Err(CallError::Refused(Refusal::AlreadyInitialized))
        };
    }
    if st.phase != Phase::Ready && !(st.role == Role::Agent && st.phase == Phase::Initializing) {
        return Err(CallError::Refused(Refusal::NotInitialized {
            method: method.to_owned(),
        }));
    }
    Ok(())
}

fn check(
    st: &mut State,
    method: &str,
    params: &Value,
    notification: bool,
) -> Result<Effect, CallError> {
    let Some(info) = st.method(method, notification, st.role.other()) else {
        return Ok(Effect::None); // extension methods pass untouched
    };
    if info.notification != notification {
        return Err(CallError::InvalidParams(format!(
            "`{method}` is a {}",
            if info.notification {
                "notification"
            } else {
                "request"
            }
        )));
    }
    phase_and_direction(st, info, method)?;
    validate::check(method, params).map_err(|v| CallError::InvalidParams(v.to_string()))?;
    if let Some(cap) = info.capability
        && !cap.advertised_in(&st.peer_caps)
    {
        return Err(CallError::Refused(Refusal::CapabilityNotAdvertised {
            method: method.to_owned(),
            capability: cap.path().to_owned(),
        }));
    }
    let session_id = params
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if matches!(
        info.session,
        SessionScope::Required | SessionScope::Optional
    ) && let Some(id) = &session_id
        && !st.session_known(id)
    {
        return Err(CallError::Refused(Refusal::UnknownSession {
            session_id: id.clone(),
        }));
    }
    Ok(match method {
        "initialize" | "proxy/initialize" => {
            st.phase = Phase::Initializing;
            st.local_caps = params
                .get("clientCapabilities")
                .cloned()
                .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
            Effect::Initialize { requested: None }
        }
        "session/new" | "session/load" | "session/resume" | "session/fork" => {
            st.opening += 1;
            Effect::Open {
                session_id: if matches!(method, "session/new" | "session/fork") {
                    None
                } else {
                    session_id
                },
                cwd: params.get("cwd").and_then(Value::as_str).map(str::to_owned),
                additional: params
                    .get("additionalDirectories")
                    .and_then(Value::as_array)
                    .map(|dirs| {
                        dirs.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
                counted: true,
                registered: false,
            }
        }
        "session/close" | "session/delete" | "session/archive" => match session_id {
            Some(session_id) => Effect::Close { session_id },
            None => Effect::None,
        },
        "session/prompt" => {
            let Some(id) = session_id else {
                return Err(CallError::InvalidParams("/sessionId is required".into()));
            };
            let session = st.sessions.entry(id.clone()).or_default();
            if session.turn.is_some() {
                return Err(CallError::Refused(Refusal::PromptInProgress {
                    session_id: id,
                }));
            }
            session.turn = Some(Turn {
                id: crate::RequestId::Null,
                cancelled: false,
                signals: None,
            });
            Effect::Prompt {
                session_id: id,
                request_id: crate::RequestId::Null,
            }
        }
        "authenticate" => Effect::Auth(true),
        "logout" => Effect::Auth(false),
        _ => Effect::None,
    })
}
