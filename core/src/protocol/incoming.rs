//! The incoming half of the protocol layer: a [`Handler`] that stands
//! between the engine and the host's handler and enforces the ACP rules on
//! what the peer sends (phases, capabilities, sessions, turns, validation),
//! answering violations itself so the host only sees valid traffic.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use serde_json::value::RawValue;

use super::effect::Effect;
use super::methods::{self, MethodInfo, SessionScope};
use super::payload::{self, Part, Receipt};
use super::state::{Ask, Phase, State, Turn, session_id_of, tree};
use super::{AcpHooks, Role, validate};
use crate::error::{RpcError, codes};
use crate::rpc::{
    BoxFuture, Event, Finisher, Handler, IncomingNotification, IncomingRequest, Responder, lock,
};

/// Wraps the host's handler; see the module docs.
#[derive(Clone)]
pub(crate) struct ProtocolHandler {
    pub(crate) state: Arc<Mutex<State>>,
    pub(crate) host: Arc<dyn Handler>,
    pub(crate) hooks: AcpHooks,
    pub(crate) require_auth: bool,
}

enum Decision {
    /// To the host (or a client service).
    Pass(IncomingRequest, Responder),
    /// Answered by the protocol layer: a refusal, or an answer the rules
    /// give without the host.
    Answer(Responder, Result<Box<RawValue>, RpcError>),
    /// Pipelined behind `initialize`.
    Deferred,
}

/// What the checks decided for an admissible request.
enum Admission {
    /// Dispatch it; its answer records the effect.
    Pass(Effect),
    /// Answer it without the host.
    Answer(Box<RawValue>),
    /// Wait until `initialize` is answered.
    Defer,
}

impl Handler for ProtocolHandler {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        match self.admit(request, responder, false) {
            Decision::Pass(request, responder) => self.pass(request, responder),
            Decision::Answer(responder, answer) => {
                let _ = responder.respond(answer);
            }
            Decision::Deferred => {}
        }
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        if let Some(reason) = self.admit_notification(&notification) {
            notification.peer.report(Event::Ignored(reason));
            return Box::pin(async {});
        }
        self.host.on_notification(notification)
    }
}

fn not_initialized(method: &str) -> RpcError {
    RpcError::new(
        codes::INVALID_REQUEST,
        format!(
            "Invalid request: `{method}` was sent before `initialize`; send `initialize` first"
        ),
    )
    .with_data(serde_json::json!({ "method": method }))
}

fn unknown_session(session_id: &str) -> RpcError {
    RpcError::new(
        codes::RESOURCE_NOT_FOUND,
        "Resource not found: unknown session",
    )
    .with_data(serde_json::json!({ "sessionId": session_id }))
}

fn not_advertised(method: &str, capability: &str) -> RpcError {
    RpcError::new(codes::METHOD_NOT_FOUND, "Method not found").with_data(serde_json::json!({
        "method": method,
        "reason": format!("`{capability}` was not advertised"),
    }))
}

impl ProtocolHandler {
    /// Hands an admitted request to a client service, or to the host.
    fn pass(&self, request: IncomingRequest, responder: Responder) {
        let routed = {
            let state = lock(&self.state);
            if state.role == Role::Client {
                state.services.route(&request)
            } else {
                None
            }
        };
        match routed {
            Some(answer) => {
                let superseded = responder.superseded().clone();
                let peer = request.peer.clone();
                let (method, id) = (request.method.clone(), request.id.clone());
                let subject = served_subject(request.params.as_deref());
                request.peer.spawn(async move {
                    tokio::select! {
                        result = answer => {
                            // The host sees what the core did for it, before
                            // the answer goes out: whatever the peer sends
                            // after reading it comes after the event.
                            let error = result.as_ref().err().cloned();
                            peer.report(Event::Served { method, id, subject, error });
                            let _ = responder.respond(result);
                        }
                        () = superseded.cancelled() => {}
                    }
                });
            }
            None => self.host.on_request(request, responder),
        }
    }

    /// Applies the rules to one request. `draining`: the request was
    /// pipelined behind `initialize` and is dispatched now that it is answered.
    fn admit(&self, request: IncomingRequest, responder: Responder, draining: bool) -> Decision {
        let mut state = lock(&self.state);
        // Extension and unknown methods (unstable ones whose feature is
        // off included): the host decides (default -32601).
        let Some(info) = state.method(&request.method, false, state.role) else {
            drop(state);
            return Decision::Pass(request, responder);
        };
        match self.check(&mut state, info, &request, draining) {
            Err(error) => Decision::Answer(responder, Err(error)),
            Ok(Admission::Answer(answer)) => Decision::Answer(responder, Ok(answer)),
            Ok(Admission::Defer) => {
                // Pipelined behind `initialize`: handled once it is answered.
                state.deferred.push((request, responder));
                Decision::Deferred
            }
            Ok(Admission::Pass(effect)) => {
                // `session/close` cancels the session's running turn (the
                // spec: the agent stops its work), as `session/cancel` does.
                // `session/archive` frees it as `session/close` does.
                let stopped = match (&effect, info.name) {
                    (Effect::Close { session_id }, "session/close" | "session/archive") => {
                        state.cancel_turn(session_id)
                    }
                    _ => None,
                };
                let withholds =
                    payload::applies(state.role, info.name, Part::Result, state.features);
                drop(state);
                if let Some(signals) = stopped {
                    signals.cancel();
                }
                self.on_answer(info.name, effect, withholds, &request, &responder);
                Decision::Pass(request, responder)
            }
        }
    }

    /// The checks, in order: what the request is, the phase, its params,
    /// the capabilities this side advertised, authentication, its session;
    /// then what its answer will change (reserving a prompt turn, a loading
    /// session).
    fn check(
        &self,
        state: &mut State,
        info: &MethodInfo,
        request: &IncomingRequest,
        draining: bool,
    ) -> Result<Admission, RpcError> {
        let method = request.method.as_str();
        kind_and_direction(state, info, method)?;
        if phase(state, method, draining)? == Gate::Defer {
            return Ok(Admission::Defer);
        }
        // Required fields, absolute paths, 1-based lines, on a tree of only
        // the members read here: large contents are left to the host's own
        // decode.
        let params = validate::params_tree(method, request.params.as_deref())
            .and_then(|params| validate::check(method, &params).map(|()| params))
            .map_err(|v| v.into_rpc(method))?;
        capability(state, info, method)?;
        payload(state, method, &params, &request.peer)?;
        authentication(state, self.require_auth, method)?;
        let session_id = session(state, info, &params)?;
        reserve(state, method, &params, session_id, request)
    }

    /// Installs what runs when the answer goes out: `null` read as `{}`
    /// (every ACP v1 result is an object; a handler that returned nothing
    /// answers `{}`), the schema's rules for results ([`valid_answer`]),
    /// then the effect.
    fn on_answer(
        &self,
        method: &'static str,
        effect: Effect,
        withholds: bool,
        request: &IncomingRequest,
        responder: &Responder,
    ) {
        let peer = request.peer.clone();
        // The answer's payload rules (`payload::RULES`), applied when it
        // goes out.
        let rules = withholds.then(|| (Arc::clone(&self.state), request.peer.clone()));
        let with_rules = move |result: Result<Box<RawValue>, RpcError>| match &rules {
            Some((state, peer)) => withhold(state, method, peer, result),
            None => result,
        };
        let finisher: Finisher = match effect {
            Effect::None => Box::new(move |result| with_rules(valid_answer(method, &peer, result))),
            Effect::Initialize { requested } => {
                // The negotiation writes `protocolVersion` into the answer.
                let (finisher, after_send) = self.finish_initialize(requested, request);
                responder.set_after_send(after_send);
                Box::new(move |result| finisher(with_rules(null_as_empty(result))))
            }
            effect => {
                let state = Arc::clone(&self.state);
                Box::new(move |result| {
                    let result = with_rules(valid_answer(method, &peer, result));
                    let answer = result.as_ref().ok().map(|raw| &**raw);
                    if effect.record(&mut lock(&state), answer) {
                        // `session/cancel` came first: the turn ends
                        // `cancelled`, whatever the handler returned.
                        return answer_cancelled(&result);
                    }
                    result
                })
            }
        };
        responder.set_finisher(finisher);
    }

    /// Agent side: once the host answers `initialize`, negotiate the
    /// version into the answer, record what we advertised, and dispatch the
    /// requests that were pipelined behind it.
    /// Returns the finisher (negotiation, bookkeeping) and the after-send
    /// hook (dispatching the pipelined requests only once the `initialize`
    /// answer is queued, so none of theirs can overtake it).
    fn finish_initialize(
        &self,
        requested: Option<u64>,
        request: &IncomingRequest,
    ) -> (Finisher, Box<dyn FnOnce() + Send>) {
        let state = Arc::clone(&self.state);
        let this = self.clone();
        let peer = request.peer.clone();
        let hooks = self.hooks.clone();
        let succeeded = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let after_send: Box<dyn FnOnce() + Send> = {
            let succeeded = Arc::clone(&succeeded);
            let state = Arc::clone(&state);
            Box::new(move || {
                if !succeeded.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                // Dispatch what was pipelined, in order, then open the gate.
                // Requests arriving meanwhile keep queueing behind them.
                peer.spawn(async move {
                    loop {
                        let batch = {
                            let mut s = lock(&state);
                            let batch = std::mem::take(&mut s.deferred);
                            if batch.is_empty() {
                                s.phase = Phase::Ready;
                                break;
                            }
                            batch
                        };
                        for (request, responder) in batch {
                            match this.admit(request, responder, true) {
                                Decision::Pass(request, responder) => this.pass(request, responder),
                                Decision::Answer(responder, answer) => {
                                    let _ = responder.respond(answer);
                                }
                                Decision::Deferred => {}
                            }
                        }
                    }
                });
            })
        };
        let finisher: Finisher = Box::new(move |result| {
            let Ok(raw) = result else {
                let mut s = lock(&state);
                s.phase = Phase::AwaitingInitialize;
                let deferred = std::mem::take(&mut s.deferred);
                drop(s);
                for (_req, responder) in deferred {
                    let _ = responder.respond(Err(RpcError::invalid_request(
                        "`initialize` failed; send `initialize` first",
                    )));
                }
                return result;
            };
            let mut answer = tree(Some(&raw));
            // Same version if we speak it, else the latest we speak.
            let negotiated = match requested {
                Some(v) if super::SUPPORTED_VERSIONS.iter().any(|s| u64::from(*s) == v) => v,
                _ => u64::from(super::LATEST_VERSION),
            };
            if let Some(obj) = answer.as_object_mut() {
                obj.insert("protocolVersion".into(), Value::from(negotiated));
            }
            {
                let mut s = lock(&state);
                s.version = u16::try_from(negotiated).ok();
                s.local_caps = answer
                    .get("agentCapabilities")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                s.auth_methods = answer
                    .get("authMethods")
                    .cloned()
                    .unwrap_or_else(|| Value::Array(Vec::new()));
            }
            succeeded.store(true, std::sync::atomic::Ordering::SeqCst);
            if let Some(on_ready) = &hooks.on_initialized {
                on_ready();
            }
            crate::json::to_raw(&answer)
                .map_err(|e| RpcError::internal_error(format!("initialize answer: {e}")))
        });
        (finisher, after_send)
    }

    /// Returns why a notification is dropped, if it is.
    fn admit_notification(&self, n: &IncomingNotification) -> Option<String> {
        let mut state = lock(&self.state);
        let info = state.method(&n.method, true, state.role)?;
        if !info.notification || info.handled_by != state.role {
            return Some(format!(
                "`{}` is not a notification this side handles",
                n.method
            ));
        }
        // The phases of requests (`phase`): a client takes the agent's
        // messages once its initialize is in flight (a proxy forwards its
        // successor's traffic while it answers `proxy/initialize`); an
        // agent takes notifications once it has answered.
        let early = match state.role {
            Role::Client => state.phase == Phase::AwaitingInitialize,
            Role::Agent => state.phase != Phase::Ready,
        };
        if early {
            return Some(format!(
                "`{}` arrived before initialization completed",
                n.method
            ));
        }
        // Validation: notifications cannot be answered, so a violation drops
        // the notification (reported). `session/update` is the hot path:
        // only tool-call updates are parsed in depth.
        let params = n.params.as_deref();
        let deep = n.method != "session/update" || params.is_some_and(validate::update_needs_check);
        if deep {
            let checked = validate::params_tree(&n.method, params)
                .and_then(|tree| validate::check(&n.method, &tree));
            if let Err(v) = checked {
                return Some(format!("`{}` dropped: invalid params: {v}", n.method));
            }
        }
        // Payload rules: breaches are reported, the notification delivered.
        let sender = state.role.other();
        if let Some(raw) = params
            && payload::may_match(
                sender,
                &n.method,
                Part::Params,
                raw,
                &state.local_caps,
                state.features,
            )
        {
            let found = payload::breaches(
                sender,
                &n.method,
                Part::Params,
                &tree(Some(raw)),
                &state.local_caps,
                state.features,
            );
            for breach in found {
                n.peer.report(breach.event(&n.method, false));
            }
        }
        if info.session == SessionScope::Required {
            let Some(id) = session_id_of(params) else {
                return Some(format!("`{}` dropped: /sessionId is required", n.method));
            };
            if !state.session_known(&id) {
                return Some(format!("`{}` dropped: unknown session `{id}`", n.method));
            }
        }
        match (state.role, n.method.as_str()) {
            (Role::Agent, "session/cancel") => {
                let id = session_id_of(params).unwrap_or_default();
                let signals = state.cancel_turn(&id);
                // Fired without the state lock: the signal reaches host code.
                drop(state);
                if let Some(signals) = signals {
                    signals.cancel();
                }
                None
            }
            (Role::Client, "session/update") => {
                let store = state.services.sessions.clone();
                drop(state);
                if let (Some(store), Some(params)) = (store, n.params.as_deref())
                    && let Err(e) = store.apply(params)
                {
                    n.peer.report(Event::Ignored(format!(
                        "session model could not fold an update: {e}"
                    )));
                }
                if let (Some(sink), Some(params)) = (&self.hooks.on_update, n.params.as_deref()) {
                    sink(params);
                }
                None
            }
            _ => None,
        }
    }
}

/// Whether a request may be dispatched now or waits for `initialize`.
#[derive(Debug, PartialEq, Eq)]
enum Gate {
    Open,
    Defer,
}

/// A request (not a notification) that this side handles.
fn kind_and_direction(state: &State, info: &MethodInfo, method: &str) -> Result<(), RpcError> {
    if info.notification {
        return Err(RpcError::invalid_request(format!(
            "`{method}` is a notification, not a request"
        )));
    }
    if info.handled_by != state.role {
        return Err(
            RpcError::method_not_found(method).with_data(serde_json::json!({
                "method": method,
                "reason": format!("`{method}` is handled by the other side"),
            })),
        );
    }
    Ok(())
}

/// `initialize` first, once; the agent defers what is pipelined behind it.
fn phase(state: &State, method: &str, draining: bool) -> Result<Gate, RpcError> {
    match (state.role, state.phase, method) {
        (Role::Agent, Phase::AwaitingInitialize, m) if methods::is_initialize(m) => Ok(Gate::Open),
        (Role::Agent, _, m) if methods::is_initialize(m) => Err(RpcError::new(
            codes::INVALID_REQUEST,
            "Invalid request: the connection is already initialized",
        )),
        (Role::Agent, Phase::Initializing, _) if !draining => Ok(Gate::Defer),
        (_, Phase::AwaitingInitialize, _) if !draining => Err(not_initialized(method)),
        _ => Ok(Gate::Open),
    }
}

/// The capability the method needs, advertised by this side.
fn capability(state: &State, info: &MethodInfo, method: &str) -> Result<(), RpcError> {
    if let Some(cap) = info.capability
        && !cap.advertised_in(&state.local_caps)
    {
        return Err(not_advertised(method, cap.path()));
    }
    Ok(())
}

/// The payload rules of the peer's params (`payload::RULES`) against what
/// this side advertised: a [`Receipt::Refuse`] breach is answered `-32602`
/// naming the member; the others are reported and the request goes on.
fn payload(
    state: &State,
    method: &str,
    params: &Value,
    peer: &crate::rpc::Peer,
) -> Result<(), RpcError> {
    let sender = state.role.other();
    let found = payload::breaches(
        sender,
        method,
        Part::Params,
        params,
        &state.local_caps,
        state.features,
    );
    for breach in &found {
        let needed = breach.rule.capability.path();
        if breach.rule.receipt == Receipt::Refuse {
            return Err(RpcError::new(
                codes::INVALID_PARAMS,
                format!(
                    "{} needs `{needed}`, which was not advertised",
                    breach.field
                ),
            )
            .with_data(serde_json::json!({
                "field": breach.field,
                "message": format!("needs {needed}"),
            })));
        }
    }
    for breach in found {
        peer.report(breach.event(method, false));
    }
    Ok(())
}

/// The host's answer with what the peer did not advertise removed (each
/// removal reported as [`Event::PayloadRule`]).
fn withhold(
    state: &Arc<Mutex<State>>,
    method: &'static str,
    peer: &crate::rpc::Peer,
    result: Result<Box<RawValue>, RpcError>,
) -> Result<Box<RawValue>, RpcError> {
    let Ok(raw) = &result else {
        return result;
    };
    let (role, caps, features) = {
        let s = lock(state);
        (s.role, s.peer_caps.clone(), s.features)
    };
    if !payload::may_match(role, method, Part::Result, raw, &caps, features) {
        return result;
    }
    let mut answer = tree(Some(raw));
    let found = payload::breaches(role, method, Part::Result, &answer, &caps, features);
    if found.is_empty() {
        return result;
    }
    payload::strip(&mut answer, &found);
    for breach in found {
        peer.report(breach.event(method, true));
    }
    crate::json::to_raw(&answer)
        .map_err(|e| RpcError::internal_error(format!("{method} answer: {e}")))
}

/// Agent side, when the host requires it: sessions after `authenticate`.
fn authentication(state: &State, required: bool, method: &str) -> Result<(), RpcError> {
    let opens_session = matches!(method, "session/new" | "session/load" | "session/resume");
    if state.role == Role::Agent && required && !state.authenticated && opens_session {
        return Err(
            RpcError::new(codes::AUTH_REQUIRED, "Authentication required")
                .with_data(serde_json::json!({ "authMethods": state.auth_methods.clone() })),
        );
    }
    Ok(())
}

/// The session the params name, which must be open when the method is
/// about one.
fn session(state: &State, info: &MethodInfo, params: &Value) -> Result<Option<String>, RpcError> {
    let session_id = params
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match (info.session, &session_id) {
        (SessionScope::Required | SessionScope::Optional, Some(id)) if !state.session_known(id) => {
            Err(unknown_session(id))
        }
        _ => Ok(session_id),
    }
}

/// What the answer will change, and what is reserved now: the phase for
/// `initialize`, the prompt turn (one per session, with prompt content
/// this side advertised), the session a load registers, a pending
/// permission request. Client side, a permission request for a session
/// whose turn this side cancelled (`cancel_session`) is answered
/// `cancelled` at once: the host never sees it.
fn reserve(
    state: &mut State,
    method: &str,
    params: &Value,
    session_id: Option<String>,
    request: &IncomingRequest,
) -> Result<Admission, RpcError> {
    let cwd = || params.get("cwd").and_then(Value::as_str).map(str::to_owned);
    Ok(Admission::Pass(match (state.role, method) {
        (Role::Agent, "initialize" | "proxy/initialize") => {
            state.phase = Phase::Initializing;
            state.peer_caps = params
                .get("clientCapabilities")
                .cloned()
                .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
            Effect::Initialize {
                requested: params.get("protocolVersion").and_then(Value::as_u64),
            }
        }
        (Role::Agent, "session/prompt") => {
            let id = session_id.ok_or_else(|| RpcError::invalid_params("sessionId"))?;
            let busy = state.sessions.get(&id).is_some_and(|s| s.turn.is_some());
            if busy {
                let reason = format!(
                    "session `{id}` already has a prompt turn in progress; \
                     send session/cancel, or wait for its answer"
                );
                return Err(RpcError::invalid_request(reason.clone())
                    .with_data(serde_json::json!({ "sessionId": id, "reason": reason })));
            }
            state.sessions.entry(id.clone()).or_default().turn = Some(Turn {
                id: request.id.clone(),
                cancelled: false,
                signals: Some(Arc::downgrade(&request.signals)),
            });
            Effect::Prompt {
                session_id: id,
                request_id: request.id.clone(),
            }
        }
        (Role::Agent, "session/new" | "session/fork") => Effect::Open {
            session_id: None,
            cwd: cwd(),
            additional: Vec::new(),
            counted: false,
            registered: false,
        },
        (Role::Agent, "session/load" | "session/resume") => {
            // Registered now, so that the replay sent while loading can
            // name it; removed again if the load fails.
            let id = session_id.ok_or_else(|| RpcError::invalid_params("sessionId"))?;
            let registered = !state.sessions.contains_key(&id);
            state.sessions.entry(id.clone()).or_default().cwd = cwd().map(Into::into);
            Effect::Open {
                session_id: Some(id),
                cwd: cwd(),
                additional: Vec::new(),
                counted: false,
                registered,
            }
        }
        (Role::Agent, "session/close" | "session/delete" | "session/archive") => match session_id {
            Some(session_id) => Effect::Close { session_id },
            None => Effect::None,
        },
        (Role::Agent, "authenticate") => Effect::Auth(true),
        (Role::Agent, "logout") => Effect::Auth(false),
        // A question to the user about a session (an elicitation may name
        // none: it is then not tied to a turn).
        (Role::Client, "session/request_permission" | "elicitation/create")
            if method == "session/request_permission" || session_id.is_some() =>
        {
            let ask = Ask::of(method).unwrap_or(Ask::Permission);
            let id = session_id.unwrap_or_default();
            let session = state.sessions.entry(id.clone()).or_default();
            if session.turn.as_ref().is_some_and(|t| t.cancelled) {
                return Ok(Admission::Answer(ask.cancelled()));
            }
            session.asks.insert(request.id.clone(), ask);
            Effect::Ask {
                session_id: id,
                request_id: request.id.clone(),
            }
        }
        _ => Effect::None,
    }))
}

/// What a request to a client service was about, for [`Event::Served`]:
/// its `sessionId`, `path`, `command` and `terminalId` members (never file
/// content).
fn served_subject(params: Option<&RawValue>) -> Value {
    #[derive(serde::Deserialize, serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Subject {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        terminal_id: Option<String>,
    }
    params
        .and_then(|p| serde_json::from_str::<Subject>(p.get()).ok())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()))
}

/// The host's answer to `method` as it goes out: `null` read as `{}`, and
/// an answer that breaks the schema's rules for its result (a missing
/// required member, a value outside an enum such as `stopReason: "done"`)
/// replaced by `-32603` saying why (and reported as an event), so the peer
/// never decodes a result the schema forbids.
fn valid_answer(
    method: &str,
    peer: &crate::rpc::Peer,
    result: Result<Box<RawValue>, RpcError>,
) -> Result<Box<RawValue>, RpcError> {
    let result = if methods::result_is_object(method) {
        null_as_empty(result)
    } else {
        result
    };
    let Ok(raw) = &result else {
        return result;
    };
    let Err(v) = validate::check_result(method, raw) else {
        return result;
    };
    let reason = format!("the answer to {method} breaks the schema: {v}");
    peer.report(Event::Ignored(format!(
        "answer replaced with -32603: {reason}"
    )));
    Err(RpcError::internal_error(reason)
        .with_data(serde_json::json!({ "field": v.field, "message": v.message })))
}

/// A prompt's answer once `session/cancel` came first: the handler's
/// result (or `{}` for an error) with `stopReason: "cancelled"`.
fn answer_cancelled(result: &Result<Box<RawValue>, RpcError>) -> Result<Box<RawValue>, RpcError> {
    let mut answer = match result {
        Ok(raw) => tree(Some(raw)),
        Err(_) => Value::Null,
    };
    if !answer.is_object() {
        answer = Value::Object(serde_json::Map::new());
    }
    if let Some(obj) = answer.as_object_mut() {
        obj.insert("stopReason".into(), Value::from("cancelled"));
    }
    crate::json::to_raw(&answer).map_err(|e| RpcError::internal_error(e.to_string()))
}

/// `Ok(null)` becomes `Ok({})` (see `admit`).
fn null_as_empty(result: Result<Box<RawValue>, RpcError>) -> Result<Box<RawValue>, RpcError> {
    match result {
        Ok(raw) if raw.get() == "null" => Ok(super::outgoing::empty_object()),
        other => other,
    }
}
