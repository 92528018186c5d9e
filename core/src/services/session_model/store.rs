//! The store: [`SessionStore`], which holds the sessions by id, runs each
//! update through the parser and the fold, and delivers the resulting
//! [`Change`]s to subscribers in mutation order.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::fold::SessionState;
use super::parse::parse_notification;
use super::snapshot::{
    CompactionState, Entry, PlanByIdState, SessionSnapshot, SubagentState, ToolCallState,
    ToolCallStatus,
};
use crate::error::RpcError;

// ---------------------------------------------------------------------------
// Change
// ---------------------------------------------------------------------------

/// What one mutation of a [`SessionStore`] changed, so that a UI can redraw
/// only that. Indices are into [`SessionSnapshot::entries`]; tool calls,
/// compactions, plans by id and subagents are named by id (look them up with
/// [`SessionStore::tool_call`], [`SessionStore::compaction`],
/// [`SessionStore::plan_by_id`], [`SessionStore::subagent`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Change {
    /// The session concerned.
    pub session_id: String,
    /// This update was the first the store saw for the session.
    pub session_added: bool,
    /// The session was removed ([`SessionStore::remove`]).
    pub session_removed: bool,
    /// A new conversation entry was appended at this index.
    pub entry_appended: Option<usize>,
    /// The conversation entry at this index grew (a chunk joined it).
    pub entry_updated: Option<usize>,
    /// These tool calls were created or changed.
    pub tool_calls: Vec<String>,
    /// The plan was replaced.
    pub plan: bool,
    /// The current mode changed.
    pub mode: bool,
    /// The available commands were replaced.
    pub commands: bool,
    /// The config options were replaced.
    pub config: bool,
    /// The session info changed.
    pub info: bool,
    /// The usage was replaced.
    pub usage: bool,
    /// These compactions were created or changed.
    pub compactions: Vec<String>,
    /// A notice was appended to [`SessionSnapshot::notices`] (it is the
    /// last one).
    pub notices: bool,
    /// These plans by id were created, replaced or removed.
    pub plans: Vec<String>,
    /// These subagents were created or changed.
    pub subagents: Vec<String>,
    /// An unknown update was appended to [`SessionSnapshot::unknown`].
    pub unknown: bool,
}

impl Change {
    fn new(session_id: String) -> Self {
        Self {
            session_id,
            ..Self::default()
        }
    }

    /// `true` when nothing changed (for example
    /// [`SessionStore::mark_turn_cancelled`] with no unfinished tool call).
    /// Subscribers are never called with an empty change.
    pub fn is_empty(&self) -> bool {
        !(self.session_added
            || self.session_removed
            || self.entry_appended.is_some()
            || self.entry_updated.is_some()
            || !self.tool_calls.is_empty()
            || self.plan
            || self.mode
            || self.commands
            || self.config
            || self.info
            || self.usage
            || !self.compactions.is_empty()
            || self.notices
            || !self.plans.is_empty()
            || !self.subagents.is_empty()
            || self.unknown)
    }

    /// The change in its stable JSON shape (see the module docs).
    pub fn to_json(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "sessionAdded": self.session_added,
            "sessionRemoved": self.session_removed,
            "entryAppended": self.entry_appended,
            "entryUpdated": self.entry_updated,
            "toolCalls": self.tool_calls,
            "plan": self.plan,
            "mode": self.mode,
            "commands": self.commands,
            "config": self.config,
            "info": self.info,
            "usage": self.usage,
            "compactions": self.compactions,
            "notices": self.notices,
            "plans": self.plans,
            "subagents": self.subagents,
            "unknown": self.unknown,
        })
    }
}

/// Serializes as [`Change::to_json`].
impl Serialize for Change {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

// ---------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------

/// Identifies a subscription, for [`SessionStore::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

type Callback = Arc<dyn Fn(&Change) + Send + Sync>;

/// Many sessions' state, folded from `session/update` notifications.
///
/// `Send + Sync`; every method takes `&self` and holds an internal lock only
/// briefly (never while calling back into host code). Share it with
/// `Arc<SessionStore>`.
pub struct SessionStore {
    inner: Mutex<Inner>,
}

struct Inner {
    sessions: HashMap<String, SessionState>,
    subscribers: Arc<Vec<(SubscriptionId, Callback)>>,
    next_subscription: u64,
    /// Changes not yet delivered to the subscribers, in mutation order.
    pending: VecDeque<Change>,
    /// Some thread is running the delivery loop.
    delivering: bool,
}

impl fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        let mut ids: Vec<&String> = inner.sessions.keys().collect();
        ids.sort();
        f.debug_struct("SessionStore")
            .field("sessions", &ids)
            .field("subscribers", &inner.subscribers.len())
            .finish()
    }
}

impl Default for SessionStore {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            inner: Mutex::new(Inner {
                sessions: HashMap::new(),
                subscribers: Arc::new(Vec::new()),
                next_subscription: 0,
                pending: VecDeque::new(),
                delivering: false,
            }),
        }
    }

    /// Folds one `session/update` notification, given its raw params
    /// (`{"sessionId": ..., "update": {"sessionUpdate": ..., ...}}`), into
    /// its session, creating the session if this is its first update.
    ///
    /// Returns what changed (also delivered to subscribers). Fails with
    /// `-32602` (see the module docs), changing nothing, when the params are
    /// not a `SessionNotification` envelope or a known variant lacks a field
    /// the fold needs. Unknown variants and fields are kept, never an error.
    pub fn apply(&self, params: &RawValue) -> Result<Change, RpcError> {
        let (session_id, update) = parse_notification(params)?;
        let mut inner = self.lock();
        let mut change = Change::new(session_id.clone());
        let state = match inner.sessions.entry(session_id) {
            MapEntry::Occupied(e) => e.into_mut(),
            MapEntry::Vacant(e) => {
                change.session_added = true;
                let id = e.key().clone();
                e.insert(SessionState::new(id))
            }
        };
        state.fold(update, &mut change);
        self.publish(inner, &change);
        Ok(change)
    }

    /// Marks every tool call of the session that is not `completed`,
    /// `failed` or already `cancelled` as [`ToolCallStatus::Cancelled`] (call
    /// it when the prompt turn ends with `stopReason: "cancelled"`, or when
    /// the client sends `session/cancel`).
    ///
    /// A later `tool_call_update` from the agent still overwrites the
    /// status. Returns the ids changed; an unknown session, or one with no
    /// unfinished tool call, gives an empty [`Change`] and no notification.
    pub fn mark_turn_cancelled(&self, session_id: &str) -> Change {
        let mut inner = self.lock();
        let mut change = Change::new(session_id.to_owned());
        if let Some(state) = inner.sessions.get_mut(session_id) {
            for tool_call in &mut state.snap.tool_calls {
                if !tool_call.status.is_finished() {
                    tool_call.status = ToolCallStatus::Cancelled;
                    change.tool_calls.push(tool_call.tool_call_id.clone());
                }
            }
        }
        self.publish(inner, &change);
        change
    }

    /// Forgets a session. Returns `false` if it was unknown; otherwise
    /// subscribers get a [`Change`] with `session_removed`. A later update
    /// for the same id starts a new, empty session.
    pub fn remove(&self, session_id: &str) -> bool {
        let mut inner = self.lock();
        if inner.sessions.remove(session_id).is_none() {
            return false;
        }
        let mut change = Change::new(session_id.to_owned());
        change.session_removed = true;
        self.publish(inner, &change);
        true
    }

    /// A copy of the session's state.
    pub fn snapshot(&self, session_id: &str) -> Option<SessionSnapshot> {
        self.lock()
            .sessions
            .get(session_id)
            .map(|state| state.snap.clone())
    }

    /// The session's state in the stable JSON shape of the module docs.
    pub fn snapshot_json(&self, session_id: &str) -> Option<Value> {
        self.lock()
            .sessions
            .get(session_id)
            .map(|state| state.snap.to_json())
    }

    /// One conversation entry (cheaper than a whole snapshot when a
    /// [`Change`] names it).
    pub fn entry(&self, session_id: &str, index: usize) -> Option<Entry> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.snap.entries.get(index).cloned())
    }

    /// One conversation entry in the snapshot's JSON shape.
    pub fn entry_json(&self, session_id: &str, index: usize) -> Option<Value> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.snap.entries.get(index).map(Entry::to_json))
    }

    /// One tool call (cheaper than a whole snapshot when a [`Change`] names
    /// it).
    pub fn tool_call(&self, session_id: &str, tool_call_id: &str) -> Option<ToolCallState> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.tool_call(tool_call_id).cloned())
    }

    /// One tool call in the snapshot's JSON shape.
    pub fn tool_call_json(&self, session_id: &str, tool_call_id: &str) -> Option<Value> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.tool_call(tool_call_id).map(ToolCallState::to_json))
    }

    /// One compaction (cheaper than a whole snapshot when a [`Change`] names
    /// it).
    pub fn compaction(&self, session_id: &str, compaction_id: &str) -> Option<CompactionState> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.compaction(compaction_id).cloned())
    }

    /// One compaction in the snapshot's JSON shape.
    pub fn compaction_json(&self, session_id: &str, compaction_id: &str) -> Option<Value> {
        self.lock().sessions.get(session_id).and_then(|state| {
            state
                .compaction(compaction_id)
                .map(CompactionState::to_json)
        })
    }

    /// One plan by id (cheaper than a whole snapshot when a [`Change`] names
    /// it).
    pub fn plan_by_id(&self, session_id: &str, plan_id: &str) -> Option<PlanByIdState> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.snap.plan_by_id(plan_id).cloned())
    }

    /// One plan by id in the snapshot's JSON shape.
    pub fn plan_by_id_json(&self, session_id: &str, plan_id: &str) -> Option<Value> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.snap.plan_by_id(plan_id).map(PlanByIdState::to_json))
    }

    /// One subagent, by its child session id (cheaper than a whole snapshot
    /// when a [`Change`] names it).
    pub fn subagent(&self, session_id: &str, child_session_id: &str) -> Option<SubagentState> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.subagent(child_session_id).cloned())
    }

    /// One subagent in the snapshot's JSON shape.
    pub fn subagent_json(&self, session_id: &str, child_session_id: &str) -> Option<Value> {
        self.lock()
            .sessions
            .get(session_id)
            .and_then(|state| state.subagent(child_session_id).map(SubagentState::to_json))
    }

    /// The ids of every session in the store, sorted.
    pub fn session_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().sessions.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Calls `callback` with every non-empty [`Change`] from now on, until
    /// [`SessionStore::unsubscribe`].
    ///
    /// **Threads.** The callback runs synchronously on the thread that made
    /// the change ([`apply`](Self::apply),
    /// [`mark_turn_cancelled`](Self::mark_turn_cancelled),
    /// [`remove`](Self::remove)), after the store's lock is released, before
    /// that method returns; except when another thread is delivering changes
    /// at that moment: that thread then delivers this change as well, right
    /// after its own, and the mutating method returns at once. Either way,
    /// callbacks are never run concurrently with each other and see changes
    /// in exactly the order they were made.
    ///
    /// **What it may do.** Read the store ([`snapshot`](Self::snapshot),
    /// [`entry`](Self::entry), ...). Even mutate it: the nested change is
    /// queued and delivered after the current callback returns. It must
    /// **not block** or do slow work: in a client it runs on the connection's
    /// notification path, which is ordered, so a blocked callback stalls
    /// every later notification of every session. Hand slow work to another
    /// thread or task (for example through a channel). A panic propagates to
    /// the caller of the mutating method; queued changes are delivered by the
    /// next mutation.
    pub fn subscribe(&self, callback: impl Fn(&Change) + Send + Sync + 'static) -> SubscriptionId {
        let mut inner = self.lock();
        let id = SubscriptionId(inner.next_subscription);
        inner.next_subscription = inner.next_subscription.wrapping_add(1);
        let mut subscribers = inner.subscribers.as_ref().clone();
        subscribers.push((id, Arc::new(callback)));
        inner.subscribers = Arc::new(subscribers);
        id
    }

    /// Stops a subscription. Returns `false` if it was unknown. A delivery
    /// already under way on another thread may still call it once.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut inner = self.lock();
        let before = inner.subscribers.len();
        let subscribers: Vec<_> = inner
            .subscribers
            .iter()
            .filter(|(sid, _)| *sid != id)
            .cloned()
            .collect();
        let removed = subscribers.len() != before;
        inner.subscribers = Arc::new(subscribers);
        removed
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Host callbacks never run under this lock; should anything else
        // ever panic while holding it, keep serving the state as it is
        // rather than failing every later call.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `change` for the subscribers and, unless another thread is
    /// delivering, delivers the queue. Takes the guard so that the change is
    /// queued in mutation order and the lock is released before callbacks.
    fn publish(&self, mut inner: MutexGuard<'_, Inner>, change: &Change) {
        if change.is_empty() || inner.subscribers.is_empty() {
            return;
        }
        inner.pending.push_back(change.clone());
        if inner.delivering {
            return;
        }
        inner.delivering = true;
        drop(inner);
        self.deliver();
    }

    fn deliver(&self) {
        /// Lets the next mutation deliver again if a callback panics.
        struct ResetOnPanic<'a>(&'a SessionStore);
        impl Drop for ResetOnPanic<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.lock().delivering = false;
                }
            }
        }
        let _reset = ResetOnPanic(self);
        loop {
            let (change, subscribers) = {
                let mut inner = self.lock();
                match inner.pending.pop_front() {
                    Some(change) => (change, Arc::clone(&inner.subscribers)),
                    None => {
                        inner.delivering = false;
                        return;
                    }
                }
            };
            for (_, callback) in subscribers.iter() {
                callback(&change);
            }
        }
    }
}
