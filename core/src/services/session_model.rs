//! The client-side session model: folds `session/update` notifications into
//! one state snapshot per session, for editors to render.
//!
//! A [`SessionStore`] holds any number of sessions by id. Feed it the raw
//! params of every `session/update` notification with [`SessionStore::apply`];
//! read the state back with [`SessionStore::snapshot`] (typed) or
//! [`SessionStore::snapshot_json`] (the stable JSON shape below, which the
//! bindings expose), or a single part with [`SessionStore::entry`] /
//! [`SessionStore::tool_call`] and their `_json` twins. Every mutation returns
//! a [`Change`] saying which parts moved, and [`SessionStore::subscribe`]
//! delivers the same [`Change`]s to callbacks, so a UI redraws only those.
//!
//! # What the fold does
//!
//! * **Conversation.** `user_message_chunk`, `agent_message_chunk` and
//!   `agent_thought_chunk` build [`Entry::Message`] entries. A chunk joins the
//!   last entry when that entry is a message of the same kind and the
//!   `messageId`s do not disagree (a change of `messageId` starts a new
//!   message, as the schema says; a missing id never does). Inside an entry,
//!   a text block directly after a text block with the same other fields
//!   (`annotations`, `_meta`, ...) is concatenated into it; any other block
//!   (image, audio, resource, a text block after an image, a block of a type
//!   this crate does not know) is appended as its own block, raw. Any other
//!   entry in between (another kind, a tool call) ends the message.
//! * **Tool calls.** `tool_call` creates a tool call, `tool_call_update`
//!   merges into it by `toolCallId`: only fields present (and not `null`) in
//!   the update overwrite; `content` and `locations` are replaced whole when
//!   present. An update for an unknown id creates the tool call (as the
//!   spec allows, with an empty title until one arrives). A `tool_call` for
//!   an id already known re-initialises it in place. Tool calls are kept in
//!   first-seen order and referenced from the conversation by an
//!   [`Entry::ToolCall`] at the point they first appeared.
//! * **Plan, mode, commands, config options, usage**: the latest update
//!   replaces the previous one whole.
//! * **Session info** (`session_info_update`): merged field by field. An
//!   absent field is left alone, `null` clears it; `_meta` keys are merged
//!   into the stored `_meta` (`"_meta": null` clears it).
//! * **Unknown variants** (any `sessionUpdate` tag outside the stable v1
//!   schema, including ones the schema crate knows but the stable schema does
//!   not, such as `notice`) are appended, raw and whole, to
//!   [`SessionSnapshot::unknown`].
//!
//! # Tolerance
//!
//! Nothing the agent sends is dropped. Fields a variant does not define go to
//! the part's `extra` object (merged key by key for messages, tool calls and
//! session info; replaced with the part otherwise). `_meta` objects are kept
//! (merged key by key for messages and tool calls, whose `_meta` arrives in
//! pieces). A known field with the wrong JSON type falls back to its schema
//! default (the schema's `x-deserialize-default-on-error`) and its value is
//! kept in `extra` under its own name. Unknown tool kinds and statuses are
//! kept as the strings received. Content blocks, tool call content,
//! locations, plan entries, commands, config options and costs are kept as
//! raw JSON; `typed_*` methods decode them with the official schema crate on
//! demand.
//!
//! The notification-level `_meta` (beside `sessionId`) describes the
//! notification, not the session, and is not folded; the host still sees it
//! in the raw notification.
//!
//! # Errors
//!
//! [`SessionStore::apply`] answers [`RpcError::invalid_params`] (`-32602`),
//! with a precise description in `data`, and leaves every session untouched,
//! when the params are not a `SessionNotification` envelope (not an object;
//! `sessionId` missing or not a string; `update` missing or not an object;
//! `update.sessionUpdate` missing or not a string), or when a known variant
//! lacks what the fold needs: a chunk's `content` object, a tool call's
//! `toolCallId` string, `currentModeId` string, or usage `used`/`size`
//! (non-negative integers). A session is created by the first update that
//! names it (updates may arrive before the `session/new` response).
//!
//! # JSON shape ([`SessionStore::snapshot_json`])
//!
//! Every key is always present (`null` when unset), so bindings can decode
//! into fixed records. Values written `<...>` are raw JSON as the agent sent
//! them (wire names, camelCase).
//!
//! ```text
//! Snapshot = {
//!   "sessionId": string,
//!   "entries": [Entry],                 // conversation order
//!   "toolCalls": [ToolCall],            // first-seen order
//!   "plan": null | {"entries": [<PlanEntry>], "_meta": object|null, "extra": object},
//!   "mode": null | {"currentModeId": string, "_meta": object|null, "extra": object},
//!   "commands": null | {"availableCommands": [<AvailableCommand>], "_meta": object|null, "extra": object},
//!   "config": null | {"configOptions": [<SessionConfigOption>], "_meta": object|null, "extra": object},
//!   "info": {"title": string|null, "updatedAt": string|null, "_meta": object|null, "extra": object},
//!   "usage": null | {"used": integer, "size": integer, "cost": <Cost>|null, "_meta": object|null, "extra": object},
//!   "unknown": [<update object, "sessionUpdate" included>]
//! }
//! Entry = {"type": "user_message" | "agent_message" | "agent_thought",
//!          "messageId": string|null,
//!          "text": string,               // all text blocks concatenated
//!          "content": [<ContentBlock>],  // adjacent text chunks joined
//!          "_meta": object|null, "extra": object}
//!       | {"type": "tool_call", "toolCallId": string}
//! ToolCall = {"toolCallId": string, "title": string,
//!             "kind": string,            // wire value, "other" by default
//!             "status": "pending" | "in_progress" | "completed" | "failed"
//!                     | "cancelled"      // local: SessionStore::mark_turn_cancelled
//!                     | string,          // an unknown status, as received
//!             "content": [<ToolCallContent>], "locations": [<ToolCallLocation>],
//!             "rawInput": any|null, "rawOutput": any|null,
//!             "entryIndex": integer,     // its Entry in "entries"
//!             "_meta": object|null, "extra": object}
//! ```
//!
//! [`Change::to_json`] gives:
//!
//! ```text
//! Change = {"sessionId": string, "sessionAdded": bool, "sessionRemoved": bool,
//!           "entryAppended": integer|null, "entryUpdated": integer|null,
//!           "toolCalls": [string], "plan": bool, "mode": bool, "commands": bool,
//!           "config": bool, "info": bool, "usage": bool, "unknown": bool}
//! ```
//!
//! # Example
//!
//! ```
//! use libacp_core::services::session_model::SessionStore;
//! use libacp_core::RawValue;
//!
//! let store = SessionStore::new();
//! for text in ["Hel", "lo"] {
//!     let params = serde_json::json!({"sessionId": "s1", "update": {
//!         "sessionUpdate": "agent_message_chunk",
//!         "content": {"type": "text", "text": text}}});
//!     let raw = RawValue::from_string(params.to_string()).unwrap();
//!     store.apply(&raw).unwrap();
//! }
//! let json = store.snapshot_json("s1").unwrap();
//! assert_eq!(json["entries"][0]["text"], "Hello");
//! ```

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::error::RpcError;
use crate::schema::v1;

/// A JSON object (`_meta`, unknown fields).
pub type JsonObject = Map<String, Value>;

// ---------------------------------------------------------------------------
// Snapshot types
// ---------------------------------------------------------------------------

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
    fn new(kind: MessageKind) -> Self {
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
        self.content
            .iter()
            .filter_map(text_of_block)
            .collect::<Vec<_>>()
            .concat()
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

    fn push(&mut self, chunk: Chunk) {
        if self.message_id.is_none() {
            self.message_id = chunk.message_id;
        }
        self.push_block(chunk.content);
        merge_meta(&mut self.meta, chunk.meta);
        merge_into(&mut self.extra, chunk.extra);
    }

    fn push_block(&mut self, block: Value) {
        if let (Some(Value::Object(last)), Value::Object(new)) = (self.content.last_mut(), &block)
            && is_text_block(last)
            && is_text_block(new)
            && same_except_text(last, new)
            && let (Some(Value::String(acc)), Some(Value::String(more))) =
                (last.get_mut("text"), new.get("text"))
        {
            acc.push_str(more);
            return;
        }
        self.content.push(block);
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
}

impl Entry {
    /// The message, if this entry is one.
    pub fn as_message(&self) -> Option<&MessageEntry> {
        match self {
            Self::Message(m) => Some(m),
            Self::ToolCall { .. } => None,
        }
    }

    /// The tool call id, if this entry is a tool call.
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            Self::Message(_) => None,
            Self::ToolCall { tool_call_id } => Some(tool_call_id),
        }
    }

    /// This entry in the snapshot's JSON shape.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Message(m) => m.to_json(),
            Self::ToolCall { tool_call_id } => {
                json!({"type": "tool_call", "toolCallId": tool_call_id})
            }
        }
    }
}

/// A tool call's status: the wire's four values, plus `Cancelled`, which
/// only [`SessionStore::mark_turn_cancelled`] sets (the wire has no such
/// status; a peer sending `"cancelled"` is read as it too), plus any other
/// string a newer peer sends, kept as received.
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
    fn new(tool_call_id: String, entry_index: usize) -> Self {
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

    fn apply(&mut self, patch: ToolCallPatch) {
        if let Some(title) = patch.title {
            self.title = title;
        }
        if let Some(kind) = patch.kind {
            self.kind = kind;
        }
        if let Some(status) = patch.status {
            self.status = status;
        }
        if let Some(content) = patch.content {
            self.content = content;
        }
        if let Some(locations) = patch.locations {
            self.locations = locations;
        }
        if let Some(raw_input) = patch.raw_input {
            self.raw_input = Some(raw_input);
        }
        if let Some(raw_output) = patch.raw_output {
            self.raw_output = Some(raw_output);
        }
        merge_meta(&mut self.meta, patch.meta);
        merge_into(&mut self.extra, patch.extra);
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

    fn apply(&mut self, patch: InfoPatch) {
        patch.title.apply_to(&mut self.title);
        patch.updated_at.apply_to(&mut self.updated_at);
        match patch.meta {
            Field::Absent => {}
            Field::Null => self.meta = None,
            Field::Set(meta) => merge_meta(&mut self.meta, Some(meta)),
        }
        merge_into(&mut self.extra, patch.extra);
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
    /// Updates of variants outside the stable v1 schema, raw and whole
    /// (`sessionUpdate` included), in arrival order.
    pub unknown: Vec<Value>,
}

impl SessionSnapshot {
    fn new(session_id: String) -> Self {
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
            unknown: Vec::new(),
        }
    }

    /// The tool call with this id.
    pub fn tool_call(&self, tool_call_id: &str) -> Option<&ToolCallState> {
        self.tool_calls
            .iter()
            .find(|t| t.tool_call_id == tool_call_id)
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

// ---------------------------------------------------------------------------
// Change
// ---------------------------------------------------------------------------

/// What one mutation of a [`SessionStore`] changed, so that a UI can redraw
/// only that. Indices are into [`SessionSnapshot::entries`]; tool calls are
/// named by id (look them up with [`SessionStore::tool_call`]).
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

/// One session's snapshot plus the index that makes merging by id O(1).
struct SessionState {
    snap: SessionSnapshot,
    tool_index: HashMap<String, usize>,
}

impl SessionState {
    fn new(session_id: String) -> Self {
        Self {
            snap: SessionSnapshot::new(session_id),
            tool_index: HashMap::new(),
        }
    }

    fn tool_call(&self, id: &str) -> Option<&ToolCallState> {
        self.tool_index
            .get(id)
            .and_then(|&i| self.snap.tool_calls.get(i))
    }

    fn fold(&mut self, update: Update, change: &mut Change) {
        let snap = &mut self.snap;
        match update {
            Update::Chunk(kind, chunk) => self.chunk(kind, chunk, change),
            Update::ToolCallCreate(patch) => self.tool_call_patch(patch, true, change),
            Update::ToolCallMerge(patch) => self.tool_call_patch(patch, false, change),
            Update::Plan(plan) => {
                snap.plan = Some(plan);
                change.plan = true;
            }
            Update::Mode(mode) => {
                snap.mode = Some(mode);
                change.mode = true;
            }
            Update::Commands(commands) => {
                snap.commands = Some(commands);
                change.commands = true;
            }
            Update::Config(config) => {
                snap.config = Some(config);
                change.config = true;
            }
            Update::Info(patch) => {
                snap.info.apply(patch);
                change.info = true;
            }
            Update::Usage(usage) => {
                snap.usage = Some(usage);
                change.usage = true;
            }
            Update::Unknown(raw) => {
                snap.unknown.push(raw);
                change.unknown = true;
            }
        }
    }

    fn chunk(&mut self, kind: MessageKind, chunk: Chunk, change: &mut Change) {
        let entries = &mut self.snap.entries;
        let last = entries.len().checked_sub(1);
        if let (Some(index), Some(Entry::Message(message))) = (last, entries.last_mut())
            && message.kind == kind
            && ids_compatible(message.message_id.as_deref(), chunk.message_id.as_deref())
        {
            message.push(chunk);
            change.entry_updated = Some(index);
            return;
        }
        let mut message = MessageEntry::new(kind);
        message.push(chunk);
        change.entry_appended = Some(entries.len());
        entries.push(Entry::Message(message));
    }

    fn tool_call_patch(&mut self, patch: ToolCallPatch, create: bool, change: &mut Change) {
        let id = patch.tool_call_id.clone();
        let existing = self
            .tool_index
            .get(&id)
            .and_then(|&i| self.snap.tool_calls.get_mut(i));
        match existing {
            Some(tool_call) => {
                if create {
                    // A repeated `tool_call` starts the tool call afresh, in
                    // its original place.
                    *tool_call = ToolCallState::new(id.clone(), tool_call.entry_index);
                }
                tool_call.apply(patch);
            }
            None => {
                let entry_index = self.snap.entries.len();
                self.snap.entries.push(Entry::ToolCall {
                    tool_call_id: id.clone(),
                });
                change.entry_appended = Some(entry_index);
                let mut tool_call = ToolCallState::new(id.clone(), entry_index);
                tool_call.apply(patch);
                self.tool_index
                    .insert(id.clone(), self.snap.tool_calls.len());
                self.snap.tool_calls.push(tool_call);
            }
        }
        change.tool_calls.push(id);
    }
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

const DEFAULT_TOOL_KIND: &str = "other";

/// A decoded update, ready to fold; decoding never touches the store, so a
/// rejected update changes nothing.
enum Update {
    Chunk(MessageKind, Chunk),
    ToolCallCreate(ToolCallPatch),
    ToolCallMerge(ToolCallPatch),
    Plan(PlanState),
    Mode(ModeState),
    Commands(CommandsState),
    Config(ConfigState),
    Info(InfoPatch),
    Usage(UsageState),
    Unknown(Value),
}

struct Chunk {
    content: Value,
    message_id: Option<String>,
    meta: Option<JsonObject>,
    extra: JsonObject,
}

/// The fields of a `tool_call` or `tool_call_update`; `None` means absent.
struct ToolCallPatch {
    tool_call_id: String,
    title: Option<String>,
    kind: Option<String>,
    status: Option<ToolCallStatus>,
    content: Option<Vec<Value>>,
    locations: Option<Vec<Value>>,
    raw_input: Option<Value>,
    raw_output: Option<Value>,
    meta: Option<JsonObject>,
    extra: JsonObject,
}

/// A field that distinguishes absent from `null`.
enum Field<T> {
    Absent,
    Null,
    Set(T),
}

impl<T> Field<T> {
    fn apply_to(self, slot: &mut Option<T>) {
        match self {
            Self::Absent => {}
            Self::Null => *slot = None,
            Self::Set(value) => *slot = Some(value),
        }
    }
}

struct InfoPatch {
    title: Field<String>,
    updated_at: Field<String>,
    meta: Field<JsonObject>,
    extra: JsonObject,
}

fn invalid(detail: impl Into<String>) -> RpcError {
    RpcError::invalid_params(format!("session/update: {}", detail.into()))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_notification(params: &RawValue) -> Result<(String, Update), RpcError> {
    let value: Value = serde_json::from_str(params.get())
        .map_err(|e| invalid(format!("params are not valid JSON: {e}")))?;
    let mut envelope = match value {
        Value::Object(map) => map,
        other => {
            return Err(invalid(format!(
                "params must be an object, got {}",
                type_name(&other)
            )));
        }
    };
    let session_id = match envelope.remove("sessionId") {
        Some(Value::String(id)) => id,
        Some(other) => {
            return Err(invalid(format!(
                "`sessionId` must be a string, got {}",
                type_name(&other)
            )));
        }
        None => return Err(invalid("missing `sessionId`")),
    };
    let update = match envelope.remove("update") {
        Some(Value::Object(update)) => update,
        Some(other) => {
            return Err(invalid(format!(
                "`update` must be an object, got {}",
                type_name(&other)
            )));
        }
        None => return Err(invalid("missing `update`")),
    };
    Ok((session_id, parse_update(update)?))
}

fn parse_update(mut update: JsonObject) -> Result<Update, RpcError> {
    let tag = match update.get("sessionUpdate") {
        Some(Value::String(tag)) => tag.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "`update.sessionUpdate` must be a string, got {}",
                type_name(other)
            )));
        }
        None => return Err(invalid("missing `update.sessionUpdate`")),
    };
    let kind = match tag.as_str() {
        "user_message_chunk" => Some(MessageKind::User),
        "agent_message_chunk" => Some(MessageKind::Agent),
        "agent_thought_chunk" => Some(MessageKind::Thought),
        _ => None,
    };
    let known = kind.is_some()
        || matches!(
            tag.as_str(),
            "tool_call"
                | "tool_call_update"
                | "plan"
                | "available_commands_update"
                | "current_mode_update"
                | "config_option_update"
                | "session_info_update"
                | "usage_update"
        );
    if !known {
        return Ok(Update::Unknown(Value::Object(update)));
    }
    update.remove("sessionUpdate");
    let mut fields = Fields {
        map: update,
        tag: &tag,
    };
    if let Some(kind) = kind {
        let content = fields.required_object("content", "a ContentBlock object")?;
        return Ok(Update::Chunk(
            kind,
            Chunk {
                content,
                message_id: fields.string("messageId"),
                meta: fields.meta(),
                extra: fields.map,
            },
        ));
    }
    Ok(match tag.as_str() {
        "tool_call" => Update::ToolCallCreate(fields.tool_call()?),
        "tool_call_update" => Update::ToolCallMerge(fields.tool_call()?),
        "plan" => Update::Plan(PlanState {
            entries: fields.array("entries").unwrap_or_default(),
            meta: fields.meta(),
            extra: fields.map,
        }),
        "available_commands_update" => Update::Commands(CommandsState {
            available_commands: fields.array("availableCommands").unwrap_or_default(),
            meta: fields.meta(),
            extra: fields.map,
        }),
        "current_mode_update" => {
            let current_mode_id = fields.required_string("currentModeId")?;
            Update::Mode(ModeState {
                current_mode_id,
                meta: fields.meta(),
                extra: fields.map,
            })
        }
        "config_option_update" => Update::Config(ConfigState {
            config_options: fields.array("configOptions").unwrap_or_default(),
            meta: fields.meta(),
            extra: fields.map,
        }),
        "session_info_update" => Update::Info(InfoPatch {
            title: fields.field_string("title"),
            updated_at: fields.field_string("updatedAt"),
            meta: fields.field_meta(),
            extra: fields.map,
        }),
        "usage_update" => {
            let used = fields.required_u64("used")?;
            let size = fields.required_u64("size")?;
            Update::Usage(UsageState {
                used,
                size,
                cost: fields.any("cost"),
                meta: fields.meta(),
                extra: fields.map,
            })
        }
        // `known` covers exactly the tags matched above and the chunks.
        _ => Update::Unknown(Value::Object(fields.map)),
    })
}

/// The fields of one update object. Every `take`-style method removes the
/// field only when it has the expected type (or is `null`), so that what is
/// left over, unknown and wrongly typed fields, becomes `extra`.
struct Fields<'a> {
    map: JsonObject,
    tag: &'a str,
}

impl Fields<'_> {
    fn tool_call(&mut self) -> Result<ToolCallPatch, RpcError> {
        let tool_call_id = self.required_string("toolCallId")?;
        let status = self
            .string("status")
            .map(|status| ToolCallStatus::from_wire(&status));
        Ok(ToolCallPatch {
            tool_call_id,
            title: self.string("title"),
            kind: self.string("kind"),
            status,
            content: self.array("content"),
            locations: self.array("locations"),
            raw_input: self.any("rawInput"),
            raw_output: self.any("rawOutput"),
            meta: self.meta(),
            extra: std::mem::take(&mut self.map),
        })
    }

    fn missing(&self, key: &str, expected: &str) -> RpcError {
        invalid(format!(
            "`update.{key}` is required in `{}` and must be {expected}",
            self.tag
        ))
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> RpcError {
        invalid(format!(
            "`update.{key}` in `{}` must be {expected}, got {}",
            self.tag,
            type_name(got)
        ))
    }

    fn required_object(&mut self, key: &str, expected: &str) -> Result<Value, RpcError> {
        match self.map.remove(key) {
            Some(value @ Value::Object(_)) => Ok(value),
            Some(other) => Err(self.wrong(key, expected, &other)),
            None => Err(self.missing(key, expected)),
        }
    }

    fn required_string(&mut self, key: &str) -> Result<String, RpcError> {
        match self.map.remove(key) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.wrong(key, "a string", &other)),
            None => Err(self.missing(key, "a string")),
        }
    }

    fn required_u64(&mut self, key: &str) -> Result<u64, RpcError> {
        const EXPECTED: &str = "a non-negative integer";
        match self.map.remove(key) {
            Some(value) => match value.as_u64() {
                Some(n) => Ok(n),
                None => Err(self.wrong(key, EXPECTED, &value)),
            },
            None => Err(self.missing(key, EXPECTED)),
        }
    }

    /// A string field; `null` counts as absent; any other type stays in
    /// `extra`.
    fn string(&mut self, key: &str) -> Option<String> {
        match self.field_string(key) {
            Field::Set(s) => Some(s),
            Field::Absent | Field::Null => None,
        }
    }

    fn field_string(&mut self, key: &str) -> Field<String> {
        match self.map.get(key) {
            Some(Value::String(_)) => match self.map.remove(key) {
                Some(Value::String(s)) => Field::Set(s),
                _ => Field::Absent,
            },
            Some(Value::Null) => {
                self.map.remove(key);
                Field::Null
            }
            _ => Field::Absent,
        }
    }

    /// An array field; `null` counts as absent; any other type stays in
    /// `extra`.
    fn array(&mut self, key: &str) -> Option<Vec<Value>> {
        match self.map.get(key) {
            Some(Value::Array(_)) => match self.map.remove(key) {
                Some(Value::Array(items)) => Some(items),
                _ => None,
            },
            Some(Value::Null) => {
                self.map.remove(key);
                None
            }
            _ => None,
        }
    }

    /// A field of any type; `null` counts as absent.
    fn any(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|v| !v.is_null())
    }

    fn meta(&mut self) -> Option<JsonObject> {
        match self.field_meta() {
            Field::Set(meta) => Some(meta),
            Field::Absent | Field::Null => None,
        }
    }

    fn field_meta(&mut self) -> Field<JsonObject> {
        match self.map.get("_meta") {
            Some(Value::Object(_)) => match self.map.remove("_meta") {
                Some(Value::Object(meta)) => Field::Set(meta),
                _ => Field::Absent,
            },
            Some(Value::Null) => {
                self.map.remove("_meta");
                Field::Null
            }
            _ => Field::Absent,
        }
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn ids_compatible(entry: Option<&str>, chunk: Option<&str>) -> bool {
    match (entry, chunk) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

fn is_text_block(block: &JsonObject) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text")
        && block.get("text").is_some_and(Value::is_string)
}

/// Both blocks have the same fields with the same values, `text` aside.
fn same_except_text(a: &JsonObject, b: &JsonObject) -> bool {
    a.len() == b.len()
        && a.iter()
            .filter(|(key, _)| key.as_str() != "text")
            .all(|(key, value)| b.get(key) == Some(value))
}

fn text_of_block(block: &Value) -> Option<&str> {
    match block {
        Value::Object(map) if is_text_block(map) => map.get("text").and_then(Value::as_str),
        _ => None,
    }
}

fn merge_into(target: &mut JsonObject, source: JsonObject) {
    for (key, value) in source {
        target.insert(key, value);
    }
}

fn merge_meta(target: &mut Option<JsonObject>, source: Option<JsonObject>) {
    if let Some(source) = source {
        match target {
            Some(existing) => merge_into(existing, source),
            None => *target = Some(source),
        }
    }
}

fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

fn decode_items<T: DeserializeOwned>(items: &[Value]) -> Vec<T> {
    items.iter().filter_map(decode).collect()
}

#[cfg(test)]
mod tests;
