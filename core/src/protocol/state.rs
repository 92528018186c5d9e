//! The protocol state of one connection: phase, negotiated version,
//! capabilities both ways, authentication, sessions and prompt turns.
//! Shared by the incoming side (the handler wrapper) and the outgoing side
//! (the call checks); one mutex, never held across an await or host code.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Weak;

use super::Role;
use crate::message::RequestId;
use crate::rpc::{IncomingRequest, InflightState, Responder};

/// Where the connection is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing but `initialize` yet.
    AwaitingInitialize,
    /// `initialize` is in flight (sent, or being handled).
    Initializing,
    /// `initialize` succeeded.
    Ready,
}

/// A prompt turn in progress.
#[derive(Debug)]
pub(crate) struct Turn {
    /// The `session/prompt` request's id.
    pub(crate) id: RequestId,
    /// Set by `session/cancel`.
    pub(crate) cancelled: bool,
    /// Agent side: the prompt request's cancellation signals (fired by
    /// `session/cancel`: the handler's token and the binding's sink). Weak:
    /// the request's finisher holds this state.
    pub(crate) signals: Option<Weak<InflightState>>,
}

/// A question the agent asks the client's user during a turn: answered
/// for the host when the client cancels the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// `session/request_permission`: answered `outcome: cancelled`.
    Permission,
    /// `elicitation/create`: answered `action: cancel`.
    Elicitation,
}

impl Ask {
    /// What the question is, by method (`None`: not a question).
    pub(crate) fn of(method: &str) -> Option<Self> {
        match method {
            "session/request_permission" => Some(Self::Permission),
            "elicitation/create" => Some(Self::Elicitation),
            _ => None,
        }
    }

    /// Its answer when the turn is cancelled.
    pub(crate) fn cancelled(self) -> Box<RawValue> {
        let text = match self {
            Self::Permission => r#"{"outcome":{"outcome":"cancelled"}}"#,
            Self::Elicitation => r#"{"action":"cancel"}"#,
        };
        RawValue::from_string(text.to_owned()).unwrap_or_else(|_| Box::<RawValue>::default())
    }
}

/// A session open on this connection.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) turn: Option<Turn>,
    /// Client side: the agent's questions to the user about this session
    /// (`session/request_permission`, `elicitation/create`) still
    /// unanswered; each answer removes its own in O(1).
    pub(crate) asks: HashMap<RequestId, Ask>,
}

#[derive(Debug)]
pub(crate) struct State {
    pub(crate) role: Role,
    pub(crate) phase: Phase,
    pub(crate) version: Option<u16>,
    /// What this side advertised (`clientCapabilities` or `agentCapabilities`).
    pub(crate) local_caps: Value,
    /// What the peer advertised.
    pub(crate) peer_caps: Value,
    /// The agent's `authMethods` (from its `initialize` answer).
    pub(crate) auth_methods: Value,
    pub(crate) authenticated: bool,
    pub(crate) sessions: HashMap<String, Session>,
    /// `session/new|load|resume` calls in flight.
    pub(crate) opening: usize,
    /// Agent side: requests that arrived while `initialize` was being
    /// handled, dispatched in order once it is answered.
    pub(crate) deferred: Vec<(IncomingRequest, Responder)>,
    /// Client side: services the core runs for the host.
    pub(crate) services: super::ClientServices,
    /// The unstable extensions turned on.
    pub(crate) features: super::unstable::Features,
}

impl State {
    pub(crate) fn new(role: Role) -> Self {
        Self {
            role,
            phase: Phase::AwaitingInitialize,
            version: None,
            local_caps: Value::Object(serde_json::Map::new()),
            peer_caps: Value::Object(serde_json::Map::new()),
            auth_methods: Value::Array(Vec::new()),
            authenticated: false,
            sessions: HashMap::new(),
            opening: 0,
            deferred: Vec::new(),
            services: super::ClientServices::default(),
            features: super::unstable::Features::NONE,
        }
    }

    /// Whether `session_id` may be used: open, or (client side) a session
    /// may be in the middle of being opened (updates and requests can
    /// arrive before the `session/new` answer).
    /// The method `name` of the kind asked, handled by `handled_by` (this
    /// side for what arrives, the peer for what we send; see
    /// [`super::methods::lookup`]), with the features of this connection.
    pub(crate) fn method(
        &self,
        name: &str,
        notification: bool,
        handled_by: super::Role,
    ) -> Option<&'static super::methods::MethodInfo> {
        super::methods::lookup(name, self.features, notification, handled_by)
    }

    pub(crate) fn session_known(&self, session_id: &str) -> bool {
        self.sessions.contains_key(session_id) || self.opening > 0
    }

    /// Agent side: marks the session's prompt turn cancelled and returns
    /// the prompt request's signals, to fire once the lock is released
    /// (they reach host code). `None` when no turn is running.
    pub(crate) fn cancel_turn(
        &mut self,
        session_id: &str,
    ) -> Option<std::sync::Arc<InflightState>> {
        let turn = self.sessions.get_mut(session_id)?.turn.as_mut()?;
        turn.cancelled = true;
        turn.signals.as_ref().and_then(Weak::upgrade)
    }
}

/// The `sessionId` of some params, read without building a tree: the
/// members walked by the scanner, values skipped unparsed (a serde pass
/// over the params, which also skipped every other member's text, was 2-4 %
/// of each side's samples on a stream of updates: bench/README.md, W1).
/// `None` when absent, not a string, or given twice, as serde's derive
/// reads it; a member name with an escape goes through serde itself.
pub(crate) fn session_id_of(params: Option<&RawValue>) -> Option<String> {
    let params = params?.get();
    let mut found: Option<&str> = None;
    let mut twice = false;
    let mut escaped_name = false;
    crate::json::scan::each_member(params, |name, value| {
        if name.contains('\\') {
            escaped_name = true;
            return None;
        }
        if name == "\"sessionId\"" {
            twice |= found.replace(value).is_some();
        }
        Some(())
    });
    if escaped_name {
        return session_id_by_serde(params);
    }
    let raw = found.filter(|_| !twice)?;
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        return serde_json::from_str(raw).ok();
    }
    Some(inner.to_owned())
}

/// [`session_id_of`] by serde's derive (member names with escapes).
fn session_id_by_serde(params: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct SessionRef<'a> {
        #[serde(rename = "sessionId", borrow, default)]
        session_id: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<SessionRef<'_>>(params)
        .ok()?
        .session_id
        .map(std::borrow::Cow::into_owned)
}

/// Parses raw params into a tree for checks; `null` when absent.
pub(crate) fn tree(params: Option<&RawValue>) -> Value {
    params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scanner's reading of `sessionId` gives what serde's derive gives.
    #[test]
    fn the_session_id_is_read_as_serde_reads_it() {
        let cases = [
            r#"{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"q\" \\ "}}}"#,
            r#"{"update":{"sessionId":"inner"},"sessionId":"s2"}"#,
            r#"{"update":{"sessionId":"inner"}}"#,
            r#"{ "sessionId" : "s 3" }"#,
            r#"{"sessionId":"a\"b\u0041"}"#,
            r#"{"sessionId":7}"#,
            r#"{"sessionId":null}"#,
            r#"{"sessionId":{"x":1}}"#,
            r#"{"sessionId":"a","sessionId":"b"}"#,
            r#"{"session\u0049d":"escaped name"}"#,
            r#"{"session\u0049d":"a","other":"\"x\""}"#,
            r#"{}"#,
            r#"[]"#,
            r#""sessionId""#,
            r#"{"sessionIdx":"no","sessionI":"no"}"#,
        ];
        for text in cases {
            let raw = RawValue::from_string(text.to_owned()).expect("valid JSON");
            assert_eq!(
                session_id_of(Some(&raw)),
                session_id_by_serde(text),
                "{text}"
            );
        }
        assert_eq!(session_id_of(None), None);
    }
}
