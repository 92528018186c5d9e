//! The fold: applies one decoded `session/update` to a session's state,
//! recording in a [`Change`] what moved (the rules are in the module docs).

use std::collections::HashMap;

use serde_json::Value;

use super::parse::{Chunk, Field, InfoPatch, ToolCallPatch, Update};
use super::snapshot::{
    Entry, JsonObject, MessageEntry, MessageKind, SessionInfo, SessionSnapshot, ToolCallState,
    is_text_block,
};
use super::store::Change;

/// One session's snapshot plus the index that makes merging by id O(1).
pub(super) struct SessionState {
    pub(super) snap: SessionSnapshot,
    tool_index: HashMap<String, usize>,
}

impl SessionState {
    pub(super) fn new(session_id: String) -> Self {
        Self {
            snap: SessionSnapshot::new(session_id),
            tool_index: HashMap::new(),
        }
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
