//! Validation at the boundary: the rules of the spec that a JSON schema
//! cannot say, plus required fields, checked on params going both ways.
//! Violations are `-32602` with `data: {"field": <JSON pointer>, "message"}`
//! when received, and [`crate::CallError::InvalidParams`] when sent.
//!
//! * paths are absolute: `cwd`, `additionalDirectories`, fs `path`, terminal
//!   `cwd`, tool-call `locations[].path`;
//! * line numbers are 1-based: fs `line`, tool-call `locations[].line`;
//! * required fields are present with the right JSON type.
//!
//! Only the fields libacp relies on are checked; everything else passes
//! through untouched (tolerant decoding).

use serde_json::Value;

use crate::error::{RpcError, codes};

/// A failed rule: which field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the field (`/cwd`, `/toolCall/locations/0/line`).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl Violation {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The `-32602` error to answer with.
    pub fn into_rpc(self, method: &str) -> RpcError {
        RpcError::new(
            codes::INVALID_PARAMS,
            format!(
                "Invalid params for {method}: {} {}",
                self.field, self.message
            ),
        )
        .with_data(serde_json::json!({ "field": self.field, "message": self.message }))
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.field, self.message)
    }
}

type Check = Result<(), Violation>;

fn field<'a>(params: &'a Value, name: &str) -> Option<&'a Value> {
    params.get(name).filter(|v| !v.is_null())
}

fn required_str<'a>(params: &'a Value, at: &str, name: &str) -> Result<&'a str, Violation> {
    match field(params, name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(Violation::new(format!("{at}/{name}"), "must be a string")),
        None => Err(Violation::new(format!("{at}/{name}"), "is required")),
    }
}

fn required_array<'a>(params: &'a Value, at: &str, name: &str) -> Result<&'a [Value], Violation> {
    match field(params, name) {
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(Violation::new(format!("{at}/{name}"), "must be an array")),
        None => Err(Violation::new(format!("{at}/{name}"), "is required")),
    }
}

fn absolute(path: &str, at: &str) -> Check {
    if std::path::Path::new(path).is_absolute() {
        Ok(())
    } else {
        Err(Violation::new(
            at,
            format!("must be an absolute path, not {path:?}"),
        ))
    }
}

fn required_absolute(params: &Value, at: &str, name: &str) -> Check {
    absolute(required_str(params, at, name)?, &format!("{at}/{name}"))
}

fn optional_absolute(params: &Value, at: &str, name: &str) -> Check {
    match field(params, name) {
        None => Ok(()),
        Some(Value::String(s)) => absolute(s, &format!("{at}/{name}")),
        Some(_) => Err(Violation::new(format!("{at}/{name}"), "must be a string")),
    }
}

fn absolute_list(params: &Value, at: &str, name: &str) -> Check {
    let Some(list) = field(params, name) else {
        return Ok(());
    };
    let Value::Array(items) = list else {
        return Err(Violation::new(format!("{at}/{name}"), "must be an array"));
    };
    for (i, item) in items.iter().enumerate() {
        let here = format!("{at}/{name}/{i}");
        match item {
            Value::String(s) => absolute(s, &here)?,
            _ => return Err(Violation::new(here, "must be a string")),
        }
    }
    Ok(())
}

fn one_based(params: &Value, at: &str, name: &str) -> Check {
    match field(params, name) {
        None => Ok(()),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(()),
            _ => Err(Violation::new(
                format!("{at}/{name}"),
                format!("must be a 1-based line number, not {v}"),
            )),
        },
    }
}

fn non_negative(params: &Value, at: &str, name: &str) -> Check {
    match field(params, name) {
        None => Ok(()),
        Some(v) if v.as_u64().is_some() => Ok(()),
        Some(v) => Err(Violation::new(
            format!("{at}/{name}"),
            format!("must be a non-negative integer, not {v}"),
        )),
    }
}

fn locations(tool_call: &Value, at: &str) -> Check {
    let Some(list) = field(tool_call, "locations") else {
        return Ok(());
    };
    let Value::Array(items) = list else {
        return Err(Violation::new(
            format!("{at}/locations"),
            "must be an array",
        ));
    };
    for (i, loc) in items.iter().enumerate() {
        let here = format!("{at}/locations/{i}");
        required_absolute(loc, &here, "path")?;
        one_based(loc, &here, "line")?;
    }
    Ok(())
}

fn session_id(params: &Value) -> Check {
    required_str(params, "", "sessionId").map(|_| ())
}

/// Checks `params` of `method` (either direction). Methods without rules
/// (and extension methods) always pass.
pub fn check(method: &str, params: &Value) -> Result<(), Violation> {
    if !params.is_object() {
        return Err(Violation::new("", "params must be an object"));
    }
    match method {
        "initialize" => match field(params, "protocolVersion") {
            Some(v) if v.as_u64().is_some_and(|n| n <= u64::from(u16::MAX)) => Ok(()),
            Some(v) => Err(Violation::new(
                "/protocolVersion",
                format!("must be an integer from 0 to 65535, not {v}"),
            )),
            None => Err(Violation::new("/protocolVersion", "is required")),
        },
        "authenticate" => required_str(params, "", "methodId").map(|_| ()),
        "session/new" => {
            required_absolute(params, "", "cwd")?;
            absolute_list(params, "", "additionalDirectories")?;
            required_array(params, "", "mcpServers").map(|_| ())
        }
        "session/load" => {
            session_id(params)?;
            required_absolute(params, "", "cwd")?;
            absolute_list(params, "", "additionalDirectories")?;
            required_array(params, "", "mcpServers").map(|_| ())
        }
        "session/resume" => {
            session_id(params)?;
            required_absolute(params, "", "cwd")?;
            absolute_list(params, "", "additionalDirectories")
        }
        "session/list" => optional_absolute(params, "", "cwd"),
        "session/close" | "session/delete" | "session/cancel" => session_id(params),
        "session/set_mode" => {
            session_id(params)?;
            required_str(params, "", "modeId").map(|_| ())
        }
        "session/set_config_option" => {
            session_id(params)?;
            required_str(params, "", "configId").map(|_| ())
        }
        "session/prompt" => {
            session_id(params)?;
            for (i, block) in required_array(params, "", "prompt")?.iter().enumerate() {
                required_str(block, &format!("/prompt/{i}"), "type")?;
            }
            Ok(())
        }
        "session/request_permission" => {
            session_id(params)?;
            let Some(tool_call) = field(params, "toolCall").filter(|v| v.is_object()) else {
                return Err(Violation::new(
                    "/toolCall",
                    "is required and must be an object",
                ));
            };
            required_str(tool_call, "/toolCall", "toolCallId")?;
            locations(tool_call, "/toolCall")?;
            required_array(params, "", "options").map(|_| ())
        }
        "session/update" => {
            session_id(params)?;
            let Some(update) = field(params, "update").filter(|v| v.is_object()) else {
                return Err(Violation::new(
                    "/update",
                    "is required and must be an object",
                ));
            };
            let kind = required_str(update, "/update", "sessionUpdate")?;
            if matches!(kind, "tool_call" | "tool_call_update") {
                required_str(update, "/update", "toolCallId")?;
                locations(update, "/update")?;
            }
            Ok(())
        }
        "fs/read_text_file" => {
            session_id(params)?;
            required_absolute(params, "", "path")?;
            one_based(params, "", "line")?;
            non_negative(params, "", "limit")
        }
        "fs/write_text_file" => {
            session_id(params)?;
            required_absolute(params, "", "path")?;
            required_str(params, "", "content").map(|_| ())
        }
        "terminal/create" => {
            session_id(params)?;
            required_str(params, "", "command")?;
            optional_absolute(params, "", "cwd")?;
            non_negative(params, "", "outputByteLimit")
        }
        "terminal/output" | "terminal/wait_for_exit" | "terminal/kill" | "terminal/release" => {
            session_id(params)?;
            required_str(params, "", "terminalId").map(|_| ())
        }
        "elicitation/create" => required_str(params, "", "message").map(|_| ()),
        "elicitation/complete" => required_str(params, "", "elicitationId").map(|_| ()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field_of(method: &str, params: Value) -> Option<String> {
        check(method, &params).err().map(|v| v.field)
    }

    #[test]
    fn relative_paths_are_refused_everywhere() {
        assert_eq!(
            field_of("session/new", json!({"cwd": "proj", "mcpServers": []})),
            Some("/cwd".into())
        );
        assert_eq!(
            field_of(
                "session/new",
                json!({"cwd": "/p", "mcpServers": [], "additionalDirectories": ["/a", "b"]})
            ),
            Some("/additionalDirectories/1".into())
        );
        assert_eq!(
            field_of(
                "fs/read_text_file",
                json!({"sessionId": "s", "path": "a.txt"})
            ),
            Some("/path".into())
        );
        assert_eq!(
            field_of(
                "terminal/create",
                json!({"sessionId": "s", "command": "ls", "cwd": "./x"})
            ),
            Some("/cwd".into())
        );
        assert_eq!(
            field_of(
                "session/update",
                json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t",
                    "locations": [{"path": "/ok"}, {"path": "rel"}]}})
            ),
            Some("/update/locations/1/path".into())
        );
    }

    #[test]
    fn lines_are_one_based() {
        assert_eq!(
            field_of(
                "fs/read_text_file",
                json!({"sessionId": "s", "path": "/a", "line": 0})
            ),
            Some("/line".into())
        );
        assert!(
            check(
                "fs/read_text_file",
                &json!({"sessionId": "s", "path": "/a", "line": 1})
            )
            .is_ok()
        );
        assert_eq!(
            field_of(
                "session/request_permission",
                json!({"sessionId": "s", "options": [], "toolCall": {"toolCallId": "t",
                    "locations": [{"path": "/a", "line": 0}]}})
            ),
            Some("/toolCall/locations/0/line".into())
        );
    }

    #[test]
    fn required_fields_and_types() {
        assert_eq!(
            field_of("session/prompt", json!({"prompt": []})),
            Some("/sessionId".into())
        );
        assert_eq!(
            field_of(
                "session/prompt",
                json!({"sessionId": "s", "prompt": [{"text": "x"}]})
            ),
            Some("/prompt/0/type".into())
        );
        assert_eq!(
            field_of("session/new", json!({"cwd": "/p"})),
            Some("/mcpServers".into())
        );
        assert_eq!(
            field_of("initialize", json!({"protocolVersion": "1"})),
            Some("/protocolVersion".into())
        );
        assert_eq!(field_of("session/cancel", json!([])), Some(String::new()));
    }

    #[test]
    fn unknown_fields_and_extension_methods_pass() {
        assert!(
            check(
                "session/new",
                &json!({"cwd": "/p", "mcpServers": [], "x": 1})
            )
            .is_ok()
        );
        assert!(check("_vendor/anything", &json!({"cwd": "rel"})).is_ok());
        // Updates other than tool calls are not inspected beyond the envelope.
        let update = json!({"sessionId": "s", "update": {"sessionUpdate": "hologram"}});
        assert!(check("session/update", &update).is_ok());
    }

    #[test]
    fn violations_become_invalid_params_with_field_data() {
        let e = check("session/new", &json!({"cwd": "x", "mcpServers": []}))
            .expect_err("relative")
            .into_rpc("session/new");
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert_eq!(e.data.expect("data")["field"], "/cwd");
    }
}
