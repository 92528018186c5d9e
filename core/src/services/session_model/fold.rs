//! The fold: applies one decoded `session/update` to a session's state,
//! recording in a [`Change`] what moved (the rules are in the module docs).

use std::collections::HashMap;

use serde_json::Value;

use super::parse::{
    Chunk, CompactionPatch, Field, IdChunk, InfoPatch, SessionMessagePatch, SubagentPatch,
    ToolCallPatch, Update,
};
use super::snapshot::{
    CompactionState, Entry, JsonObject, MessageEntry, MessageKind, SessionInfo,
    SessionMessageEntry, SessionSnapshot, SubagentState, ToolCallState, is_text_block,
};
use super::store::Change;

/// One session's snapshot plus the indices that make merging by id O(1).
pub(super) struct SessionState {
    pub(super) snap: SessionSnapshot,
    /// `toolCallId` to index in `snap.tool_calls`.
    tool_index: HashMap<String, usize>,
    /// `compactionId` to index in `snap.compactions`.
    compaction_index: HashMap<String, usize>,
    /// Child `sessionId` to index in `snap.subagents`.
    subagent_index: HashMap<String, usize>,
    /// Inter-session `messageId` to index in `snap.entries`.
    session_message_index: HashMap<String, usize>,
}

impl SessionState {
    pub(super) fn new(session_id: String) -> Self {
        Self {
            snap: SessionSnapshot::new(session_id),
            tool_index: HashMap::new(),
            compaction_index: HashMap::new(),
            subagent_index: HashMap::new(),
            session_message_index: HashMap::new(),
        }
    }

    pub(super) fn compaction(&self, id: &str) -> Option<&CompactionState> {
        self.compaction_index
            .get(id)
            .and_then(|&i| self.snap.compactions.get(i))
    }

    pub(super) fn subagent(&self, id: &str) -> Option<&SubagentState> {
        self.subagent_index
            .get(id)
            .and_then(|&i| self.snap.subagents.get(i))
    }

    pub(super) fn tool_call(&self, id: &str) -> Option<&ToolCallState> {
        self.tool_index
            .get(id)
            .and_then(|&i| self.snap.tool_calls.get(i))
    }

    pub(super) fn fold(&mut self, update: Update, change: &mut Change) {
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
            Update::Compaction(patch) => self.compaction_patch(patch, change),
            Update::CompactionChunk(chunk) => self.compaction_chunk(chunk, change),
            Update::Notice(notice) => {
                if snap.notices.len() >= SessionSnapshot::NOTICE_LIMIT {
                    let excess = snap.notices.len() + 1 - SessionSnapshot::NOTICE_LIMIT;
                    snap.notices.drain(..excess);
                    snap.notices_dropped += excess as u64;
                }
                snap.notices.push(notice);
                change.notices = true;
            }
            Update::PlanUpsert(plan) => {
                change.plans.push(plan.plan_id.clone());
                match snap.plans.iter_mut().find(|p| p.plan_id == plan.plan_id) {
                    Some(existing) => *existing = plan,
                    None => snap.plans.push(plan),
                }
            }
            Update::PlanRemove(plan_id) => {
                let before = snap.plans.len();
                snap.plans.retain(|p| p.plan_id != plan_id);
                if snap.plans.len() != before {
                    change.plans.push(plan_id);
                }
            }
            Update::Subagent(patch) => self.subagent_patch(patch, change),
            Update::SessionMessage(patch) => {
                self.session_message(patch.message_id.clone(), change, |message| {
                    message.apply(patch);
                });
            }
            Update::SessionMessageChunk(chunk) => {
                self.session_message(chunk.id, change, |message| {
                    push_block(&mut message.content, chunk.content);
                    merge_meta(&mut message.chunk_meta, chunk.meta);
                    merge_into(&mut message.extra, chunk.extra);
                });
            }
            Update::Unknown(raw) => {
                snap.unknown.push(raw);
                change.unknown = true;
            }
        }
    }

    /// The compaction with this id; at first sight it is created, in
    /// progress, and its entry appended to the conversation.
    fn compaction_mut(&mut self, id: String, change: &mut Change) -> &mut CompactionState {
        let index = match self.compaction_index.get(&id) {
            Some(&index) => index,
            None => {
                let entry_index = self.snap.entries.len();
                self.snap.entries.push(Entry::Compaction {
                    compaction_id: id.clone(),
                });
                change.entry_appended = Some(entry_index);
                let index = self.snap.compactions.len();
                self.snap
                    .compactions
                    .push(CompactionState::new(id.clone(), entry_index));
                self.compaction_index.insert(id.clone(), index);
                index
            }
        };
        change.compactions.push(id);
        &mut self.snap.compactions[index]
    }

    fn compaction_patch(&mut self, patch: CompactionPatch, change: &mut Change) {
        let compaction = self.compaction_mut(patch.compaction_id, change);
        if let Some(status) = patch.status {
            compaction.status = status;
        }
        match patch.summary {
            Field::Absent => {}
            Field::Null => compaction.summary.clear(),
            Field::Set(summary) => compaction.summary = summary,
        }
        patch.error.apply_to(&mut compaction.error);
        patch.meta.apply_to(&mut compaction.meta);
        merge_into(&mut compaction.extra, patch.extra);
    }

    fn compaction_chunk(&mut self, chunk: IdChunk, change: &mut Change) {
        let compaction = self.compaction_mut(chunk.id, change);
        push_block(&mut compaction.summary, chunk.content);
        merge_meta(&mut compaction.chunk_meta, chunk.meta);
        merge_into(&mut compaction.extra, chunk.extra);
    }

    fn subagent_patch(&mut self, patch: SubagentPatch, change: &mut Change) {
        let id = patch.session_id.clone();
        let index = match self.subagent_index.get(&id) {
            Some(&index) => index,
            None => {
                let index = self.snap.subagents.len();
                self.snap.subagents.push(SubagentState::new(id.clone()));
                self.subagent_index.insert(id.clone(), index);
                index
            }
        };
        self.snap.subagents[index].apply(patch);
        change.subagents.push(id);
    }

    /// Runs `f` on the inter-session message with this id; at first sight
    /// its entry is appended to the conversation.
    fn session_message(
        &mut self,
        id: String,
        change: &mut Change,
        f: impl FnOnce(&mut SessionMessageEntry),
    ) {
        let index = match self.session_message_index.get(&id) {
            Some(&index) => {
                change.entry_updated = Some(index);
                index
            }
            None => {
                let index = self.snap.entries.len();
                self.snap
                    .entries
                    .push(Entry::SessionMessage(SessionMessageEntry::new(id.clone())));
                self.session_message_index.insert(id, index);
                change.entry_appended = Some(index);
                index
            }
        };
        // The index only ever names session message entries, which are never
        // replaced.
        if let Some(Entry::SessionMessage(message)) = self.snap.entries.get_mut(index) {
            f(message);
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

impl MessageEntry {
    fn push(&mut self, chunk: Chunk) {
        if self.message_id.is_none() {
            self.message_id = chunk.message_id;
        }
        self.push_block(chunk.content);
        merge_meta(&mut self.meta, chunk.meta);
        merge_into(&mut self.extra, chunk.extra);
    }

    fn push_block(&mut self, block: Value) {
        push_block(&mut self.content, block);
    }
}

/// Appends a content block, joining a text block to a text block right
/// before it with the same other fields.
fn push_block(content: &mut Vec<Value>, block: Value) {
    if let (Some(Value::Object(last)), Value::Object(new)) = (content.last_mut(), &block)
        && is_text_block(last)
        && is_text_block(new)
        && same_except_text(last, new)
        && let (Some(Value::String(acc)), Some(Value::String(more))) =
            (last.get_mut("text"), new.get("text"))
    {
        acc.push_str(more);
        return;
    }
    content.push(block);
}

impl ToolCallState {
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

impl SessionInfo {
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

impl SubagentState {
    fn apply(&mut self, patch: SubagentPatch) {
        patch.title.apply_to(&mut self.title);
        patch.description.apply_to(&mut self.description);
        patch.capabilities.apply_to(&mut self.capabilities);
        patch.state.apply_to(&mut self.state);
        patch.cwd.apply_to(&mut self.cwd);
        patch
            .additional_directories
            .apply_to(&mut self.additional_directories);
        patch.meta.apply_to(&mut self.meta);
        merge_into(&mut self.extra, patch.extra);
    }
}

impl SessionMessageEntry {
    fn apply(&mut self, patch: SessionMessagePatch) {
        patch
            .sender_session_id
            .apply_to(&mut self.sender_session_id);
        patch
            .recipient_session_id
            .apply_to(&mut self.recipient_session_id);
        patch
            .sender_message_id
            .apply_to(&mut self.sender_message_id);
        patch
            .recipient_message_id
            .apply_to(&mut self.recipient_message_id);
        match patch.content {
            Field::Absent => {}
            Field::Null => self.content.clear(),
            Field::Set(content) => self.content = content,
        }
        patch.meta.apply_to(&mut self.meta);
        merge_into(&mut self.extra, patch.extra);
    }
}

fn ids_compatible(entry: Option<&str>, chunk: Option<&str>) -> bool {
    match (entry, chunk) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Both blocks have the same fields with the same values, `text` aside.
fn same_except_text(a: &JsonObject, b: &JsonObject) -> bool {
    a.len() == b.len()
        && a.iter()
            .filter(|(key, _)| key.as_str() != "text")
            .all(|(key, value)| b.get(key) == Some(value))
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
