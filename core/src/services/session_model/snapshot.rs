//! The snapshot types: one session's state as the fold leaves it, their
//! accessors, the `typed_*` decoders and the stable JSON shape
//! (`to_json`) described in the module docs.

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::schema::v1;

/// A JSON object (`_meta`, unknown fields).
pub type JsonObject = Map<String, Value>;

/// A tool call's `kind` until the agent sends one (the schema default).
const DEFAULT_TOOL_KIND: &str = "other";

/// A compaction's `status` until an update sends one (a compaction first
/// seen through a summary chunk is in progress, as the schema says).
const DEFAULT_COMPACTION_STATUS: &str = "in_progress";

/// Which stream a message entry was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// `user_message_chunk`.
    User,
    /// `agent_message_chunk`.
    Agent,
    /// `agent_thought_chunk`.
    Thought,
}

impl MessageKind {
    /// The entry's `"type"` in the JSON snapshot: `user_message`,
    /// `agent_message` or `agent_thought`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user_message",
            Self::Agent => "agent_message",
            Self::Thought => "agent_thought",
        }
    }

    /// The `sessionUpdate` tag whose chunks build entries of this kind.
    pub fn update_tag(self) -> &'static str {
        match self {
            Self::User => "user_message_chunk",
            Self::Agent => "agent_message_chunk",
            Self::Thought => "agent_thought_chunk",
        }
    }
}

/// One message of the conversation: consecutive chunks of one kind, joined.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MessageEntry {
    /// User message, agent message or agent thought.
    pub kind: MessageKind,
    /// The chunks' `messageId`, when the agent sends one.
    pub message_id: Option<String>,
    /// The content blocks, raw, in arrival order; adjacent text chunks are
    /// joined into one text block (see the module docs).
    pub content: Vec<Value>,
    /// The chunks' `_meta` objects, merged key by key (later chunks win).
    pub meta: Option<JsonObject>,
    /// Fields of the chunks that `ContentChunk` does not define, merged key by
    /// key (later chunks win).
    pub extra: JsonObject,
}

impl MessageEntry {
    pub(super) fn new(kind: MessageKind) -> Self {
        Self {
            kind,
            message_id: None,
            content: Vec::new(),
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The text of every text block, concatenated.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// The content blocks the official schema crate can represent, decoded;
    /// blocks it cannot (for example a newer block type) are skipped here but
    /// stay in [`MessageEntry::content`].
    pub fn typed_content(&self) -> Vec<v1::ContentBlock> {
        decode_items(&self.content)
    }

    /// This entry in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "type": self.kind.as_str(),
            "messageId": self.message_id,
            "text": self.text(),
            "content": self.content,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// An inter-session message (`session_message` and
/// `session_message_chunk`, unstable): a message this session sent to or
/// received from another session (a subagent or its parent), upserted by
/// `messageId`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionMessageEntry {
    /// `messageId`, unique within this session's transcript.
    pub message_id: String,
    /// `senderSessionId`: the sending session.
    pub sender_session_id: Option<String>,
    /// `recipientSessionId`: the receiving session.
    pub recipient_session_id: Option<String>,
    /// `senderMessageId`: on an incoming message, its id in the sender's
    /// transcript.
    pub sender_message_id: Option<String>,
    /// `recipientMessageId`: on an outgoing message, its id in the
    /// recipient's transcript.
    pub recipient_message_id: Option<String>,
    /// The content blocks, raw: replaced whole by a `session_message` that
    /// sends `content`, appended to by chunks (adjacent text chunks joined,
    /// as in [`MessageEntry::content`]).
    pub content: Vec<Value>,
    /// `_meta` of the `session_message` upserts (replaced by each upsert that
    /// sends it, cleared by `null`).
    pub meta: Option<JsonObject>,
    /// The chunks' own `_meta` objects, merged key by key (later chunks win).
    pub chunk_meta: Option<JsonObject>,
    /// Fields of the upserts and chunks that the schema does not define (or
    /// sent with the wrong type), merged key by key.
    pub extra: JsonObject,
}

impl SessionMessageEntry {
    pub(super) fn new(message_id: String) -> Self {
        Self {
            message_id,
            sender_session_id: None,
            recipient_session_id: None,
            sender_message_id: None,
            recipient_message_id: None,
            content: Vec::new(),
            meta: None,
            chunk_meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The text of every text block, concatenated.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// The content blocks the official schema crate can represent, decoded.
    pub fn typed_content(&self) -> Vec<v1::ContentBlock> {
        decode_items(&self.content)
    }

    /// This entry in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "session_message",
            "messageId": self.message_id,
            "senderSessionId": self.sender_session_id,
            "recipientSessionId": self.recipient_session_id,
            "senderMessageId": self.sender_message_id,
            "recipientMessageId": self.recipient_message_id,
            "text": self.text(),
            "content": self.content,
            "_meta": self.meta,
            "chunkMeta": self.chunk_meta,
            "extra": self.extra,
        })
    }
}

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Entry {
    /// A user message, agent message or agent thought.
    Message(MessageEntry),
    /// The point where a tool call first appeared; its state is in
    /// [`SessionSnapshot::tool_calls`].
    ToolCall {
        /// The tool call's `toolCallId`.
        tool_call_id: String,
    },
    /// The point where a context compaction first appeared; its state is in
    /// [`SessionSnapshot::compactions`].
    Compaction {
        /// The compaction's `compactionId`.
        compaction_id: String,
    },
    /// A message sent to or received from another session (unstable).
    SessionMessage(SessionMessageEntry),
}

impl Entry {
    /// The message, if this entry is one.
    pub fn as_message(&self) -> Option<&MessageEntry> {
        match self {
            Self::Message(m) => Some(m),
            _ => None,
        }
    }

    /// The tool call id, if this entry is a tool call.
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            Self::ToolCall { tool_call_id } => Some(tool_call_id),
            _ => None,
        }
    }

    /// The compaction id, if this entry is a compaction.
    pub fn compaction_id(&self) -> Option<&str> {
        match self {
            Self::Compaction { compaction_id } => Some(compaction_id),
            _ => None,
        }
    }

    /// The inter-session message, if this entry is one.
    pub fn as_session_message(&self) -> Option<&SessionMessageEntry> {
        match self {
            Self::SessionMessage(m) => Some(m),
            _ => None,
        }
    }

    /// This entry in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Message(m) => m.to_json(),
            Self::ToolCall { tool_call_id } => {
                json!({"type": "tool_call", "toolCallId": tool_call_id})
            }
            Self::Compaction { compaction_id } => {
                json!({"type": "compaction", "compactionId": compaction_id})
            }
            Self::SessionMessage(m) => m.to_json(),
        }
    }
}

/// A tool call's status: the wire's four values, plus `Cancelled`, which
/// only [`SessionStore::mark_turn_cancelled`] sets (the wire has no such
/// status; a peer sending `"cancelled"` is read as it too), plus any other
/// string a newer peer sends, kept as received.
///
/// [`SessionStore::mark_turn_cancelled`]: super::SessionStore::mark_turn_cancelled
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolCallStatus {
    /// `pending`: not started yet (the default when the agent sends none).
    #[default]
    Pending,
    /// `in_progress`.
    InProgress,
    /// `completed`.
    Completed,
    /// `failed`.
    Failed,
    /// `cancelled`: local only, the prompt turn was cancelled while the tool
    /// call was unfinished.
    Cancelled,
    /// A status this crate does not know, as received.
    Other(String),
}

impl ToolCallStatus {
    /// Reads a wire status; unknown values become [`ToolCallStatus::Other`].
    pub fn from_wire(status: &str) -> Self {
        match status {
            "pending" => Self::Pending,
            "in_progress" => Self::InProgress,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The status as written in the JSON snapshot.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Other(s) => s,
        }
    }

    /// `true` for `completed`, `failed` and `cancelled`.
    pub fn is_finished(&self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

impl From<v1::ToolCallStatus> for ToolCallStatus {
    fn from(status: v1::ToolCallStatus) -> Self {
        match status {
            v1::ToolCallStatus::Pending => Self::Pending,
            v1::ToolCallStatus::InProgress => Self::InProgress,
            v1::ToolCallStatus::Completed => Self::Completed,
            v1::ToolCallStatus::Failed => Self::Failed,
            other => match serde_json::to_value(other) {
                Ok(Value::String(s)) => Self::from_wire(&s),
                _ => Self::Other(format!("{other:?}")),
            },
        }
    }
}

/// A tool call, merged from its `tool_call` and `tool_call_update`s.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallState {
    /// `toolCallId`.
    pub tool_call_id: String,
    /// `title` (empty until the agent sends one).
    pub title: String,
    /// `kind`, as received (`"other"`, the schema default, when never sent).
    pub kind: String,
    /// `status`, or `Cancelled` set locally.
    pub status: ToolCallStatus,
    /// `content`, raw (`ToolCallContent` items), replaced whole by updates.
    pub content: Vec<Value>,
    /// `locations`, raw (`ToolCallLocation` items), replaced whole by updates.
    pub locations: Vec<Value>,
    /// `rawInput`.
    pub raw_input: Option<Value>,
    /// `rawOutput`.
    pub raw_output: Option<Value>,
    /// Index of this tool call's [`Entry::ToolCall`] in
    /// [`SessionSnapshot::entries`].
    pub entry_index: usize,
    /// `_meta` objects of the tool call and its updates, merged key by key.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define (or sent with the wrong type),
    /// merged key by key.
    pub extra: JsonObject,
}

impl ToolCallState {
    pub(super) fn new(tool_call_id: String, entry_index: usize) -> Self {
        Self {
            tool_call_id,
            title: String::new(),
            kind: DEFAULT_TOOL_KIND.to_owned(),
            status: ToolCallStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            entry_index,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The kind as the official schema crate's enum (unknown kinds read as
    /// [`v1::ToolKind::Other`]; [`ToolCallState::kind`] keeps the string).
    pub fn kind_typed(&self) -> v1::ToolKind {
        decode(&Value::String(self.kind.clone())).unwrap_or_default()
    }

    /// The content items the official schema crate can represent, decoded.
    pub fn typed_content(&self) -> Vec<v1::ToolCallContent> {
        decode_items(&self.content)
    }

    /// The locations the official schema crate can represent, decoded.
    pub fn typed_locations(&self) -> Vec<v1::ToolCallLocation> {
        decode_items(&self.locations)
    }

    /// This tool call in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "toolCallId": self.tool_call_id,
            "title": self.title,
            "kind": self.kind,
            "status": self.status.as_str(),
            "content": self.content,
            "locations": self.locations,
            "rawInput": self.raw_input,
            "rawOutput": self.raw_output,
            "entryIndex": self.entry_index,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// The latest `plan` update.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanState {
    /// `entries`, raw (`PlanEntry` items).
    pub entries: Vec<Value>,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define.
    pub extra: JsonObject,
}

impl PlanState {
    /// The entries the official schema crate can represent, decoded.
    pub fn typed_entries(&self) -> Vec<v1::PlanEntry> {
        decode_items(&self.entries)
    }

    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({"entries": self.entries, "_meta": self.meta, "extra": self.extra})
    }
}

/// The latest `current_mode_update`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModeState {
    /// `currentModeId`.
    pub current_mode_id: String,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define.
    pub extra: JsonObject,
}

impl ModeState {
    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({"currentModeId": self.current_mode_id, "_meta": self.meta, "extra": self.extra})
    }
}

/// The latest `available_commands_update`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CommandsState {
    /// `availableCommands`, raw (`AvailableCommand` items).
    pub available_commands: Vec<Value>,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define.
    pub extra: JsonObject,
}

impl CommandsState {
    /// The commands the official schema crate can represent, decoded.
    pub fn typed(&self) -> Vec<v1::AvailableCommand> {
        decode_items(&self.available_commands)
    }

    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "availableCommands": self.available_commands,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// The latest `config_option_update`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConfigState {
    /// `configOptions`, raw (`SessionConfigOption` items).
    pub config_options: Vec<Value>,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define.
    pub extra: JsonObject,
}

impl ConfigState {
    /// The options the official schema crate can represent, decoded.
    pub fn typed(&self) -> Vec<v1::SessionConfigOption> {
        decode_items(&self.config_options)
    }

    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({"configOptions": self.config_options, "_meta": self.meta, "extra": self.extra})
    }
}

/// Session metadata, merged from every `session_info_update`.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SessionInfo {
    /// `title`.
    pub title: Option<String>,
    /// `updatedAt` (ISO 8601, as received).
    pub updated_at: Option<String>,
    /// `_meta`, merged key by key.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define, merged key by key.
    pub extra: JsonObject,
}

impl SessionInfo {
    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "title": self.title,
            "updatedAt": self.updated_at,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// The latest `usage_update`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UsageState {
    /// `used`: tokens currently in context.
    pub used: u64,
    /// `size`: the context window's size in tokens.
    pub size: u64,
    /// `cost`, raw (`Cost`).
    pub cost: Option<Value>,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define.
    pub extra: JsonObject,
}

impl UsageState {
    /// The cost, if the official schema crate can represent it.
    pub fn typed_cost(&self) -> Option<v1::Cost> {
        self.cost.as_ref().and_then(decode)
    }

    /// This part in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "used": self.used,
            "size": self.size,
            "cost": self.cost,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// A context compaction, merged from its `compaction_update`s and
/// `compaction_summary_chunk`s.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionState {
    /// `compactionId`.
    pub compaction_id: String,
    /// `status`, as received (`in_progress`, `completed`, `failed`,
    /// `cancelled` or a custom or future value); `in_progress` until an
    /// update sends one.
    pub status: String,
    /// The summary's content blocks, raw: replaced whole by an update that
    /// sends `summary` (`null` and `[]` clear it), appended to by summary
    /// chunks (adjacent text chunks joined, as in [`MessageEntry::content`]).
    pub summary: Vec<Value>,
    /// `error`: human-readable error details.
    pub error: Option<String>,
    /// Index of this compaction's [`Entry::Compaction`] in
    /// [`SessionSnapshot::entries`].
    pub entry_index: usize,
    /// `_meta` of the updates (replaced by each update that sends it,
    /// cleared by `null`).
    pub meta: Option<JsonObject>,
    /// The summary chunks' own `_meta` objects, merged key by key (later
    /// chunks win).
    pub chunk_meta: Option<JsonObject>,
    /// Fields of the updates and chunks that the schema does not define (or
    /// sent with the wrong type), merged key by key.
    pub extra: JsonObject,
}

impl CompactionState {
    pub(super) fn new(compaction_id: String, entry_index: usize) -> Self {
        Self {
            compaction_id,
            status: DEFAULT_COMPACTION_STATUS.to_owned(),
            summary: Vec::new(),
            error: None,
            entry_index,
            meta: None,
            chunk_meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The text of every text block of the summary, concatenated.
    pub fn summary_text(&self) -> String {
        text_of(&self.summary)
    }

    /// The summary blocks the official schema crate can represent, decoded.
    pub fn typed_summary(&self) -> Vec<v1::ContentBlock> {
        decode_items(&self.summary)
    }

    /// The status as the official schema crate's enum (unknown values are
    /// [`v1::CompactionStatus::Other`]).
    pub fn status_typed(&self) -> v1::CompactionStatus {
        decode(&Value::String(self.status.clone()))
            .unwrap_or_else(|| v1::CompactionStatus::Other(self.status.clone()))
    }

    /// `true` for `completed`, `failed` and `cancelled`.
    pub fn is_finished(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    /// This compaction in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "compactionId": self.compaction_id,
            "status": self.status,
            "summary": self.summary,
            "summaryText": self.summary_text(),
            "error": self.error,
            "entryIndex": self.entry_index,
            "_meta": self.meta,
            "chunkMeta": self.chunk_meta,
            "extra": self.extra,
        })
    }
}

/// A `notice`: live information for the user, not part of the conversation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NoticeState {
    /// `severity`, as received (`info`, `warning`, `error` or a custom or
    /// future value).
    pub severity: String,
    /// `title`.
    pub title: String,
    /// `description`.
    pub description: Option<String>,
    /// `_meta`.
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define (or sent with the wrong type).
    pub extra: JsonObject,
}

impl NoticeState {
    /// The severity as the official schema crate's enum (unknown values are
    /// [`v1::NoticeSeverity::Other`]).
    pub fn severity_typed(&self) -> v1::NoticeSeverity {
        decode(&Value::String(self.severity.clone()))
            .unwrap_or_else(|| v1::NoticeSeverity::Other(self.severity.clone()))
    }

    /// This notice in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "severity": self.severity,
            "title": self.title,
            "description": self.description,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// A plan addressed by id (`plan_update`, unstable plan operations): the
/// latest content sent for its `planId`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanByIdState {
    /// `plan.planId`.
    pub plan_id: String,
    /// `plan`, raw (a `PlanUpdateContent` object: `type` `items` with
    /// `entries`, `file` with `uri`, `markdown` with `content`, or a type
    /// this crate does not know).
    pub plan: Value,
    /// `_meta` of the `plan_update`.
    pub meta: Option<JsonObject>,
    /// Fields of the `plan_update` the schema does not define.
    pub extra: JsonObject,
}

impl PlanByIdState {
    /// The plan's `type` (`items`, `file`, `markdown`, ...), if it is a
    /// string.
    pub fn plan_type(&self) -> Option<&str> {
        self.plan.get("type").and_then(Value::as_str)
    }

    /// The entries of an `items` plan that the official schema crate can
    /// represent, decoded (empty for other plan types).
    pub fn typed_entries(&self) -> Vec<v1::PlanEntry> {
        match (self.plan_type(), self.plan.get("entries")) {
            (Some("items"), Some(Value::Array(entries))) => decode_items(entries),
            _ => Vec::new(),
        }
    }

    /// This plan in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "planId": self.plan_id,
            "plan": self.plan,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// A child session owned by this session (`subagent_update`, unstable),
/// merged field by field from its updates.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SubagentState {
    /// The child's `sessionId`.
    pub session_id: String,
    /// `title`: the parent's display title for the child.
    pub title: Option<String>,
    /// `description`: the parent's description of the child's role.
    pub description: Option<String>,
    /// `capabilities`, raw (`SubagentSessionCapabilities`); `None`: no
    /// client-initiated mutation of the child is permitted.
    pub capabilities: Option<Value>,
    /// `state`, raw (a `StateUpdate` object, replaced whole by each update
    /// that sends one); `None`: current activity unset or unconfirmed.
    pub state: Option<Value>,
    /// `cwd`; `None`: inherits the parent's.
    pub cwd: Option<String>,
    /// `additionalDirectories`; `None`: inherits the parent's.
    pub additional_directories: Option<Vec<String>>,
    /// `_meta` (replaced by each update that sends it, cleared by `null`).
    pub meta: Option<JsonObject>,
    /// Fields the schema does not define (or sent with the wrong type),
    /// merged key by key.
    pub extra: JsonObject,
}

impl SubagentState {
    pub(super) fn new(session_id: String) -> Self {
        Self {
            session_id,
            title: None,
            description: None,
            capabilities: None,
            state: None,
            cwd: None,
            additional_directories: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The state's tag (`running`, `idle`, `requires_action`, `unknown` or a
    /// custom or future value); `None` while the state is unset.
    pub fn state_tag(&self) -> Option<&str> {
        self.state
            .as_ref()
            .and_then(|state| state.get("state"))
            .and_then(Value::as_str)
    }

    /// This subagent in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "title": self.title,
            "description": self.description,
            "capabilities": self.capabilities,
            "state": self.state,
            "cwd": self.cwd,
            "additionalDirectories": self.additional_directories,
            "_meta": self.meta,
            "extra": self.extra,
        })
    }
}

/// The state of one session, as folded from its `session/update`s.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionSnapshot {
    /// The session's id.
    pub session_id: String,
    /// The conversation, in order.
    pub entries: Vec<Entry>,
    /// Every tool call, in first-seen order.
    pub tool_calls: Vec<ToolCallState>,
    /// The latest plan.
    pub plan: Option<PlanState>,
    /// The current mode.
    pub mode: Option<ModeState>,
    /// The latest available commands.
    pub commands: Option<CommandsState>,
    /// The latest config options.
    pub config: Option<ConfigState>,
    /// Session metadata.
    pub info: SessionInfo,
    /// The latest context usage.
    pub usage: Option<UsageState>,
    /// Every context compaction, in first-seen order.
    pub compactions: Vec<CompactionState>,
    /// The most recent notices, oldest first, at most
    /// [`SessionSnapshot::NOTICE_LIMIT`].
    pub notices: Vec<NoticeState>,
    /// How many older notices were dropped to keep within the bound.
    pub notices_dropped: u64,
    /// Plans addressed by id (unstable), in first-seen order; a removed plan
    /// is gone.
    pub plans: Vec<PlanByIdState>,
    /// Child sessions owned by this session (unstable), in first-seen order.
    pub subagents: Vec<SubagentState>,
    /// Updates of variants the fold does not know, raw and whole
    /// (`sessionUpdate` included), in arrival order.
    pub unknown: Vec<Value>,
}

impl SessionSnapshot {
    /// How many notices [`SessionSnapshot::notices`] keeps; older ones are
    /// dropped and counted in [`SessionSnapshot::notices_dropped`].
    pub const NOTICE_LIMIT: usize = 64;

    pub(super) fn new(session_id: String) -> Self {
        Self {
            session_id,
            entries: Vec::new(),
            tool_calls: Vec::new(),
            plan: None,
            mode: None,
            commands: None,
            config: None,
            info: SessionInfo::default(),
            usage: None,
            compactions: Vec::new(),
            notices: Vec::new(),
            notices_dropped: 0,
            plans: Vec::new(),
            subagents: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// The tool call with this id.
    pub fn tool_call(&self, tool_call_id: &str) -> Option<&ToolCallState> {
        self.tool_calls
            .iter()
            .find(|t| t.tool_call_id == tool_call_id)
    }

    /// The compaction with this id.
    pub fn compaction(&self, compaction_id: &str) -> Option<&CompactionState> {
        self.compactions
            .iter()
            .find(|c| c.compaction_id == compaction_id)
    }

    /// The plan with this id (see [`SessionSnapshot::plans`]).
    pub fn plan_by_id(&self, plan_id: &str) -> Option<&PlanByIdState> {
        self.plans.iter().find(|p| p.plan_id == plan_id)
    }

    /// The subagent with this child session id.
    pub fn subagent(&self, session_id: &str) -> Option<&SubagentState> {
        self.subagents.iter().find(|s| s.session_id == session_id)
    }

    /// The inter-session message with this `messageId`.
    pub fn session_message(&self, message_id: &str) -> Option<&SessionMessageEntry> {
        self.entries
            .iter()
            .filter_map(Entry::as_session_message)
            .find(|m| m.message_id == message_id)
    }

    /// The current mode's id.
    pub fn current_mode_id(&self) -> Option<&str> {
        self.mode.as_ref().map(|m| m.current_mode_id.as_str())
    }

    /// The snapshot in its stable JSON shape (see the module docs).
    pub fn to_json(&self) -> Value {
        json!({
            "sessionId": self.session_id,
            "entries": self.entries.iter().map(Entry::to_json).collect::<Vec<_>>(),
            "toolCalls": self.tool_calls.iter().map(ToolCallState::to_json).collect::<Vec<_>>(),
            "plan": self.plan.as_ref().map(PlanState::to_json),
            "mode": self.mode.as_ref().map(ModeState::to_json),
            "commands": self.commands.as_ref().map(CommandsState::to_json),
            "config": self.config.as_ref().map(ConfigState::to_json),
            "info": self.info.to_json(),
            "usage": self.usage.as_ref().map(UsageState::to_json),
            "compactions": self.compactions.iter().map(CompactionState::to_json).collect::<Vec<_>>(),
            "notices": self.notices.iter().map(NoticeState::to_json).collect::<Vec<_>>(),
            "noticesDropped": self.notices_dropped,
            "plans": self.plans.iter().map(PlanByIdState::to_json).collect::<Vec<_>>(),
            "subagents": self.subagents.iter().map(SubagentState::to_json).collect::<Vec<_>>(),
            "unknown": self.unknown,
        })
    }
}

/// Serializes as [`SessionSnapshot::to_json`].
impl Serialize for SessionSnapshot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// The text of every text block, concatenated.
fn text_of(content: &[Value]) -> String {
    content
        .iter()
        .filter_map(text_of_block)
        .collect::<Vec<_>>()
        .concat()
}

fn text_of_block(block: &Value) -> Option<&str> {
    match block {
        Value::Object(map) if is_text_block(map) => map.get("text").and_then(Value::as_str),
        _ => None,
    }
}

pub(super) fn is_text_block(block: &JsonObject) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text")
        && block.get("text").is_some_and(Value::is_string)
}

fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

fn decode_items<T: DeserializeOwned>(items: &[Value]) -> Vec<T> {
    items.iter().filter_map(decode).collect()
}
