//! What the answer to a request changes in the protocol state, in both
//! directions. The checks decide it when the request is admitted
//! (`incoming::admit`, the peer's requests) or checked (`outgoing::check`,
//! ours), reserving what must be reserved at once (a prompt turn, a
//! session being opened); [`Effect::record`] applies it exactly once, when
//! the answer goes out (incoming) or comes back (outgoing), or when the
//! request ends without one.

use std::path::PathBuf;

use serde_json::Value;
use serde_json::value::RawValue;

use super::state::{State, tree};
use crate::message::RequestId;

/// What the answer to one request changes.
#[derive(Debug)]
pub(crate) enum Effect {
    /// Nothing to record.
    None,
    /// `initialize`: each side records it itself (the agent negotiates the
    /// version into its answer, the client checks the agent's), so
    /// [`Effect::record`] leaves it alone. `requested`: the version the
    /// client asked for (agent side).
    Initialize {
        /// The client's `protocolVersion`.
        requested: Option<u64>,
    },
    /// `session/new` (the id comes with the result) or `session/load` /
    /// `session/resume` (the id is in the params).
    Open {
        /// The session, when the params name it.
        session_id: Option<String>,
        /// The session's working directory.
        cwd: Option<String>,
        /// The `additionalDirectories` the client granted (client side:
        /// roots of its fs service too).
        additional: Vec<String>,
        /// Counted in [`State::opening`] (our own call, in flight).
        counted: bool,
        /// Registered when admitted (the peer's load, so that its replay
        /// can name the session): removed again if it fails.
        registered: bool,
    },
    /// `session/close`, `session/delete`.
    Close {
        /// The session.
        session_id: String,
    },
    /// `session/prompt`: the answer ends the turn.
    Prompt {
        /// The session.
        session_id: String,
        /// The turn's request id (`Null` for our own calls).
        request_id: RequestId,
    },
    /// `authenticate` (true) or `logout` (false).
    Auth(bool),
    /// Client side: the agent's question to the user
    /// (`session/request_permission`, `elicitation/create`), pending until
    /// answered.
    Ask {
        /// The session.
        session_id: String,
        /// The request.
        request_id: RequestId,
    },
}

impl Effect {
    /// Records the request's end in `state`: `answer` is the result, or
    /// `None` when it failed or ended unanswered. Returns whether a prompt
    /// turn it ends had been cancelled by `session/cancel` (the agent side
    /// then answers `stopReason: "cancelled"`).
    pub(crate) fn record(self, state: &mut State, answer: Option<&RawValue>) -> bool {
        match self {
            Effect::None | Effect::Initialize { .. } => false,
            Effect::Open {
                session_id,
                cwd,
                additional,
                counted,
                registered,
            } => {
                if counted {
                    state.opening = state.opening.saturating_sub(1);
                }
                match answer {
                    Some(raw) => {
                        let id = session_id.or_else(|| {
                            tree(Some(raw))
                                .get("sessionId")
                                .and_then(Value::as_str)
                                .map(str::to_owned)
                        });
                        if let Some(id) = id {
                            let cwd: Option<PathBuf> = cwd.map(Into::into);
                            state.services.opened(&id, cwd.as_deref(), &additional);
                            state.sessions.entry(id).or_default().cwd = cwd;
                        }
                    }
                    None => {
                        if let (true, Some(id)) = (registered, session_id) {
                            state.sessions.remove(&id);
                        }
                    }
                }
                false
            }
            Effect::Close { session_id } => {
                if answer.is_some() {
                    state.sessions.remove(&session_id);
                    state.services.closed(&session_id);
                }
                false
            }
            Effect::Prompt {
                session_id,
                request_id,
            } => {
                let cancelled = match state.sessions.get_mut(&session_id) {
                    Some(session) if session.turn.as_ref().is_some_and(|t| t.id == request_id) => {
                        session.turn.take().is_some_and(|t| t.cancelled)
                    }
                    Some(_) => false,
                    // Closed (or deleted) while its turn ran: the turn was
                    // stopped, so it ends `cancelled`.
                    None => true,
                };
                // The session model marks the turn's tool calls cancelled.
                if state.services.any()
                    && let Some(raw) = answer
                    && tree(Some(raw)).get("stopReason").and_then(Value::as_str)
                        == Some("cancelled")
                {
                    state.services.turn_cancelled(&session_id);
                }
                cancelled
            }
            Effect::Auth(login) => {
                if answer.is_some() {
                    state.authenticated = login;
                }
                false
            }
            Effect::Ask {
                session_id,
                request_id,
            } => {
                if let Some(session) = state.sessions.get_mut(&session_id) {
                    session.asks.remove(&request_id);
                }
                false
            }
        }
    }
}
