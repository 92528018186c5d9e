//! Decoding: validates the `session/update` envelope and the known
//! variants' required fields, and reads the other fields tolerantly
//! ([`Fields`]), into an [`Update`] ready to fold. Decoding never touches
//! the store, so a rejected update changes nothing.

use serde_json::Value;
use serde_json::value::RawValue;

use super::snapshot::{
    CommandsState, ConfigState, JsonObject, MessageKind, ModeState, NoticeState, PlanByIdState,
    PlanState, ToolCallStatus, UsageState,
};
use crate::error::RpcError;

/// A decoded update, ready to fold; decoding never touches the store, so a
/// rejected update changes nothing.
pub(super) enum Update {
    Chunk(MessageKind, Chunk),
    ToolCallCreate(ToolCallPatch),
    ToolCallMerge(ToolCallPatch),
    Plan(PlanState),
    Mode(ModeState),
    Commands(CommandsState),
    Config(ConfigState),
    Info(InfoPatch),
    Usage(UsageState),
    Compaction(CompactionPatch),
    CompactionChunk(IdChunk),
    Notice(NoticeState),
    PlanUpsert(PlanByIdState),
    PlanRemove(String),
    Subagent(SubagentPatch),
    SessionMessage(SessionMessagePatch),
    SessionMessageChunk(IdChunk),
    Unknown(Value),
}

pub(super) struct Chunk {
    pub(super) content: Value,
    pub(super) message_id: Option<String>,
    pub(super) meta: Option<JsonObject>,
    pub(super) extra: JsonObject,
}

/// A chunk addressed to an entity by id (`compaction_summary_chunk`,
/// `session_message_chunk`): one content block and the chunk's own `_meta`.
pub(super) struct IdChunk {
    pub(super) id: String,
    pub(super) content: Value,
    pub(super) meta: Option<JsonObject>,
    pub(super) extra: JsonObject,
}

/// The fields of a `compaction_update`; `status` `None` means absent.
pub(super) struct CompactionPatch {
    pub(super) compaction_id: String,
    pub(super) status: Option<String>,
    pub(super) summary: Field<Vec<Value>>,
    pub(super) error: Field<String>,
    pub(super) meta: Field<JsonObject>,
    pub(super) extra: JsonObject,
}

/// The fields of a `subagent_update`.
pub(super) struct SubagentPatch {
    pub(super) session_id: String,
    pub(super) title: Field<String>,
    pub(super) description: Field<String>,
    pub(super) capabilities: Field<Value>,
    pub(super) state: Field<Value>,
    pub(super) cwd: Field<String>,
    pub(super) additional_directories: Field<Vec<String>>,
    pub(super) meta: Field<JsonObject>,
    pub(super) extra: JsonObject,
}

/// The fields of a `session_message`.
pub(super) struct SessionMessagePatch {
    pub(super) message_id: String,
    pub(super) sender_session_id: Field<String>,
    pub(super) recipient_session_id: Field<String>,
    pub(super) sender_message_id: Field<String>,
    pub(super) recipient_message_id: Field<String>,
    pub(super) content: Field<Vec<Value>>,
    pub(super) meta: Field<JsonObject>,
    pub(super) extra: JsonObject,
}

/// The fields of a `tool_call` or `tool_call_update`; `None` means absent.
pub(super) struct ToolCallPatch {
    pub(super) tool_call_id: String,
    pub(super) title: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) status: Option<ToolCallStatus>,
    pub(super) content: Option<Vec<Value>>,
    pub(super) locations: Option<Vec<Value>>,
    pub(super) raw_input: Option<Value>,
    pub(super) raw_output: Option<Value>,
    pub(super) meta: Option<JsonObject>,
    pub(super) extra: JsonObject,
}

/// A field that distinguishes absent from `null`.
pub(super) enum Field<T> {
    Absent,
    Null,
    Set(T),
}

impl<T> Field<T> {
    pub(super) fn map<U>(self, f: impl FnOnce(T) -> U) -> Field<U> {
        match self {
            Self::Absent => Field::Absent,
            Self::Null => Field::Null,
            Self::Set(value) => Field::Set(f(value)),
        }
    }

    pub(super) fn apply_to(self, slot: &mut Option<T>) {
        match self {
            Self::Absent => {}
            Self::Null => *slot = None,
            Self::Set(value) => *slot = Some(value),
        }
    }
}

pub(super) struct InfoPatch {
    pub(super) title: Field<String>,
    pub(super) updated_at: Field<String>,
    pub(super) meta: Field<JsonObject>,
    pub(super) extra: JsonObject,
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

pub(super) fn parse_notification(params: &RawValue) -> Result<(String, Update), RpcError> {
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
                | "compaction_update"
                | "compaction_summary_chunk"
                | "notice"
                | "plan_update"
                | "plan_removed"
                | "subagent_update"
                | "session_message"
                | "session_message_chunk"
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
        "compaction_update" => {
            let compaction_id = fields.required_string("compactionId")?;
            Update::Compaction(CompactionPatch {
                compaction_id,
                status: fields.string("status"),
                summary: fields.field_array("summary"),
                error: fields.field_string("error"),
                meta: fields.field_meta(),
                extra: fields.map,
            })
        }
        "compaction_summary_chunk" => Update::CompactionChunk(fields.id_chunk("compactionId")?),
        "notice" => {
            let severity = fields.required_string("severity")?;
            let title = fields.required_string("title")?;
            Update::Notice(NoticeState {
                severity,
                title,
                description: fields.string("description"),
                meta: fields.meta(),
                extra: fields.map,
            })
        }
        "plan_update" => {
            let plan = fields.required_object("plan", "a PlanUpdateContent object")?;
            let plan_id = match plan.get("planId") {
                Some(Value::String(id)) => id.clone(),
                Some(other) => return Err(fields.wrong("plan.planId", "a string", other)),
                None => return Err(fields.missing("plan.planId", "a string")),
            };
            Update::PlanUpsert(PlanByIdState {
                plan_id,
                plan,
                meta: fields.meta(),
                extra: fields.map,
            })
        }
        // The removal's own `_meta` and other fields describe the removal,
        // not a plan, and are not kept (see the module docs).
        "plan_removed" => Update::PlanRemove(fields.required_string("planId")?),
        "subagent_update" => {
            let session_id = fields.required_string("sessionId")?;
            Update::Subagent(SubagentPatch {
                session_id,
                title: fields.field_string("title"),
                description: fields.field_string("description"),
                capabilities: fields.field_object("capabilities").map(Value::Object),
                state: fields.field_state(),
                cwd: fields.field_string("cwd"),
                additional_directories: fields.field_strings("additionalDirectories"),
                meta: fields.field_meta(),
                extra: fields.map,
            })
        }
        "session_message" => {
            let message_id = fields.required_string("messageId")?;
            Update::SessionMessage(SessionMessagePatch {
                message_id,
                sender_session_id: fields.field_string("senderSessionId"),
                recipient_session_id: fields.field_string("recipientSessionId"),
                sender_message_id: fields.field_string("senderMessageId"),
                recipient_message_id: fields.field_string("recipientMessageId"),
                content: fields.field_array("content"),
                meta: fields.field_meta(),
                extra: fields.map,
            })
        }
        "session_message_chunk" => Update::SessionMessageChunk(fields.id_chunk("messageId")?),
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

    /// A chunk addressed by the string id `id_key`, with a required
    /// `content` block.
    fn id_chunk(&mut self, id_key: &str) -> Result<IdChunk, RpcError> {
        let id = self.required_string(id_key)?;
        let content = self.required_object("content", "a ContentBlock object")?;
        Ok(IdChunk {
            id,
            content,
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

    /// An array field; `null` counts as absent; any other type stays in
    /// `extra`.
    fn array(&mut self, key: &str) -> Option<Vec<Value>> {
        match self.field_array(key) {
            Field::Set(items) => Some(items),
            Field::Absent | Field::Null => None,
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
        self.field_object("_meta")
    }

    /// A field that must be `T` or `null`: `Set` or `Null`, removed; any
    /// other value (the wrong type, which `take` hands back) reads as
    /// `Absent` and stays in `extra`.
    fn field_with<T>(
        &mut self,
        key: &str,
        take: impl FnOnce(Value) -> Result<T, Value>,
    ) -> Field<T> {
        match self.map.remove(key) {
            None => Field::Absent,
            Some(Value::Null) => Field::Null,
            Some(value) => match take(value) {
                Ok(taken) => Field::Set(taken),
                Err(value) => {
                    self.map.insert(key.to_owned(), value);
                    Field::Absent
                }
            },
        }
    }

    fn field_string(&mut self, key: &str) -> Field<String> {
        self.field_with(key, |v| match v {
            Value::String(s) => Ok(s),
            other => Err(other),
        })
    }

    fn field_array(&mut self, key: &str) -> Field<Vec<Value>> {
        self.field_with(key, |v| match v {
            Value::Array(items) => Ok(items),
            other => Err(other),
        })
    }

    fn field_object(&mut self, key: &str) -> Field<JsonObject> {
        self.field_with(key, |v| match v {
            Value::Object(map) => Ok(map),
            other => Err(other),
        })
    }

    /// An array of strings; an array with any other item is the wrong type.
    fn field_strings(&mut self, key: &str) -> Field<Vec<String>> {
        self.field_with(key, |v| match v {
            Value::Array(items) if items.iter().all(Value::is_string) => Ok(items
                .into_iter()
                .filter_map(|item| match item {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect()),
            other => Err(other),
        })
    }

    /// A subagent's `state`: an object with a string `state` tag (a
    /// `StateUpdate`); an object without one is the wrong type.
    fn field_state(&mut self) -> Field<Value> {
        self.field_with("state", |v| {
            if v.get("state").is_some_and(Value::is_string) {
                Ok(v)
            } else {
                Err(v)
            }
        })
    }
}
