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
//!
//! [`check`] works on a tree; the protocol layer builds it with
//! `sparse_params`, which holds only the members the rules and the
//! protocol bookkeeping read (`wanted`): everything else, such as an
//! 8 MiB embedded resource or file content, is skipped over by the fast
//! scan of `crate::json::scan`, never unescaped or copied: the host's own
//! decode is the only one.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{RpcError, codes};
use crate::json::scan::{self, Keep, Select};

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

/// What the rules and the protocol bookkeeping read of a JSON value.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// All of it (small by nature: ids, paths, numbers, capabilities).
    Value,
    /// Only its JSON type: a string, array or object is kept as an empty
    /// one (so "is required" / "must be a string" come out the same), any
    /// other value whole.
    Kind,
    /// An object: these members as wanted, the others skipped. Anything
    /// other than an object is kept whole.
    Members(&'static [(&'static str, Want)]),
    /// An array: each item as wanted. Anything other than an array is kept
    /// whole.
    Items(&'static Want),
}

impl Select for Want {
    fn keep(self) -> Keep<Self> {
        match self {
            Want::Value => Keep::Whole,
            Want::Kind => Keep::Type,
            Want::Members(_) => Keep::Members,
            Want::Items(item) => Keep::Items(*item),
        }
    }

    fn member(self, name: &str) -> Option<Self> {
        let Want::Members(wanted) = self else {
            return None;
        };
        wanted
            .iter()
            .find(|(w, _)| *w == name)
            .map(|(_, want)| *want)
    }
}

const SESSION_ID: (&str, Want) = ("sessionId", Want::Value);
const CWD: (&str, Want) = ("cwd", Want::Value);
const LOCATIONS: (&str, Want) = (
    "locations",
    Want::Items(&Want::Members(&[
        ("path", Want::Value),
        ("line", Want::Value),
    ])),
);

/// The members of `method`'s params that [`check`] and the protocol layer
/// (session ids, `cwd`, prompt content types) read; `None`: all of them.
/// Must name every member [`check`] reads for that method (a debug build
/// compares the two on every call).
fn wanted(method: &str) -> Option<&'static [(&'static str, Want)]> {
    Some(match method {
        // Members the rules and the bookkeeping read; unknown members (even
        // numbers no f64 holds) are left alone.
        "initialize" => &[
            ("protocolVersion", Want::Value),
            ("clientCapabilities", Want::Value),
        ],
        "authenticate" => &[("methodId", Want::Value)],
        "session/new" | "session/load" => &[
            SESSION_ID,
            CWD,
            ("additionalDirectories", Want::Value),
            ("mcpServers", Want::Kind),
        ],
        "session/resume" => &[SESSION_ID, CWD, ("additionalDirectories", Want::Value)],
        "session/list" => &[CWD],
        "session/set_mode" => &[SESSION_ID, ("modeId", Want::Value)],
        "session/set_config_option" => &[SESSION_ID, ("configId", Want::Value)],
        "session/prompt" => &[
            SESSION_ID,
            (
                "prompt",
                Want::Items(&Want::Members(&[("type", Want::Value)])),
            ),
        ],
        "session/request_permission" => &[
            SESSION_ID,
            (
                "toolCall",
                Want::Members(&[("toolCallId", Want::Value), LOCATIONS]),
            ),
            ("options", Want::Kind),
        ],
        "session/update" => &[
            SESSION_ID,
            (
                "update",
                Want::Members(&[
                    ("sessionUpdate", Want::Value),
                    ("toolCallId", Want::Value),
                    LOCATIONS,
                ]),
            ),
        ],
        "fs/read_text_file" => &[
            SESSION_ID,
            ("path", Want::Value),
            ("line", Want::Value),
            ("limit", Want::Value),
        ],
        "fs/write_text_file" => &[SESSION_ID, ("path", Want::Value), ("content", Want::Kind)],
        "terminal/create" => &[
            SESSION_ID,
            ("command", Want::Value),
            CWD,
            ("outputByteLimit", Want::Value),
        ],
        "terminal/output" | "terminal/wait_for_exit" | "terminal/kill" | "terminal/release" => {
            &[SESSION_ID, ("terminalId", Want::Value)]
        }
        "elicitation/create" => &[("message", Want::Value)],
        "elicitation/complete" => &[("elicitationId", Want::Value)],
        // Session-scoped methods without rules, extension methods.
        _ => &[SESSION_ID],
    })
}

/// Whether a `session/update` must be validated in depth: only tool-call
/// updates have rules beyond the session id (the hot path of streamed
/// chunks skips the walk). Decided on the raw text, so any `\u` escape,
/// which could spell `tool_call` in disguise, counts as a yes.
pub(crate) fn update_needs_check(raw: &RawValue) -> bool {
    let text = raw.get().as_bytes();
    memchr::memmem::find(text, b"\"tool_call").is_some()
        || memchr::memmem::find(text, b"\\u").is_some()
}

/// Parses `params` of `method` into the tree [`check`] and the protocol
/// layer read: only the [`wanted`] members, everything else skipped
/// unparsed (scanned, never unescaped or copied). `Null` when absent (or
/// not parseable), as a full parse would give.
pub(crate) fn sparse_params(method: &str, params: Option<&RawValue>) -> Value {
    let Some(raw) = params else {
        return Value::Null;
    };
    let sparse = match wanted(method) {
        None => serde_json::from_str(raw.get()).ok(),
        Some(members) => scan::sparse(raw.get(), Want::Members(members)),
    }
    .unwrap_or(Value::Null);
    #[cfg(debug_assertions)]
    debug_check_sparse(method, raw, &sparse);
    sparse
}

/// The members of the params the protocol layer reads besides [`check`]
/// (prompt content types aside).
#[cfg(any(test, debug_assertions))]
fn bookkeeping_members(method: &str) -> &'static [&'static str] {
    match method {
        "initialize" => &["clientCapabilities", "protocolVersion"],
        "session/new" | "session/load" | "session/resume" => &["sessionId", "cwd"],
        _ => &["sessionId"],
    }
}

/// Debug builds: the sparse tree must give what the whole tree gives.
#[cfg(debug_assertions)]
fn debug_check_sparse(method: &str, raw: &RawValue, sparse: &Value) {
    let Ok(full) = serde_json::from_str::<Value>(raw.get()) else {
        return; // too deep for a tree: the sparse parse may still succeed
    };
    let object = |v: &Value| {
        if v.is_null() {
            Value::Object(Map::new())
        } else {
            v.clone()
        }
    };
    let (full, sparse) = (object(&full), object(sparse));
    assert_eq!(check(method, &full), check(method, &sparse), "{method}");
    for member in bookkeeping_members(method) {
        assert_eq!(full.get(member), sparse.get(member), "{method} {member}");
    }
    let types = |v: &Value| -> Option<Vec<Option<Value>>> {
        let blocks = v.get("prompt")?.as_array()?;
        Some(blocks.iter().map(|b| b.get("type").cloned()).collect())
    };
    assert_eq!(types(&full), types(&sparse), "{method} prompt types");
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

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("valid JSON")
    }

    #[test]
    fn the_sparse_tree_checks_like_the_whole_tree() {
        let cases: &[(&str, &str)] = &[
            (
                "session/new",
                r#"{"cwd": "/p", "mcpServers": [{"name": "x"}], "x": {"y": [1]}}"#,
            ),
            ("session/new", r#"{"cwd": "rel", "mcpServers": []}"#),
            ("session/new", r#"{"cwd": "/p", "mcpServers": "no"}"#),
            ("session/new", r#"{"cwd": "/p", "mcpServers": null}"#),
            (
                "session/new",
                r#"{"cwd": "/p", "mcpServers": [], "additionalDirectories": ["/a", 2]}"#,
            ),
            (
                "session/load",
                r#"{"sessionId": 7, "cwd": "/p", "mcpServers": []}"#,
            ),
            (
                "session/prompt",
                r#"{"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}, {"type": "resource", "resource": {"text": "\"q\" \\"}}]}"#,
            ),
            (
                "session/prompt",
                r#"{"prompt": [1, "a", {"type": 3}, {"type": "image", "type": "text"}], "sessionId": "s"}"#,
            ),
            ("session/prompt", r#"{"sessionId": "s", "prompt": "x"}"#),
            (
                "session/prompt",
                r#" { "session\u0049d" : "s" , "prompt" : [ ] } "#,
            ),
            (
                "session/prompt",
                r#"{"sessionId": "a", "sessionId": "b", "prompt": []}"#,
            ),
            (
                "session/request_permission",
                r#"{"sessionId": "s", "options": [], "toolCall": {"toolCallId": "t", "locations": [{"path": "/a", "line": 0}]}}"#,
            ),
            (
                "session/request_permission",
                r#"{"sessionId": "s", "options": {}, "toolCall": "t"}"#,
            ),
            (
                "session/request_permission",
                r#"{"sessionId": "s", "options": [], "toolCall": {"toolCallId": "t", "locations": [3, {"line": 2.5, "path": "/a"}]}}"#,
            ),
            (
                "session/update",
                r#"{"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "content": [{"type": "diff", "newText": "\\\""}], "locations": [{"path": "rel"}]}}"#,
            ),
            (
                "session/update",
                r#"{"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}"#,
            ),
            ("session/update", r#"{"sessionId": "s", "update": null}"#),
            (
                "fs/read_text_file",
                r#"{"sessionId": "s", "path": "/a", "line": 0, "limit": -1}"#,
            ),
            (
                "fs/read_text_file",
                r#"{"sessionId": "s", "path": "/a", "line": 1e3}"#,
            ),
            (
                "fs/write_text_file",
                r#"{"sessionId": "s", "path": "/a", "content": 5}"#,
            ),
            (
                "fs/write_text_file",
                r#"{"sessionId": "s", "path": "/a", "content": "\"\\"}"#,
            ),
            (
                "terminal/create",
                r#"{"sessionId": "s", "command": "ls", "cwd": "./x", "outputByteLimit": 18446744073709551615}"#,
            ),
            ("terminal/kill", r#"{"sessionId": "s"}"#),
            (
                "initialize",
                r#"{"protocolVersion": 70000, "clientCapabilities": {"fs": {"readTextFile": true}}}"#,
            ),
            ("elicitation/create", r#"{"message": ["m"]}"#),
            ("_vendor/anything", r#"{"cwd": "rel", "sessionId": "s"}"#),
            ("session/cancel", "[]"),
            ("session/cancel", r#""s""#),
            ("session/cancel", "null"),
            ("session/cancel", "{}"),
        ];
        let object = |v: Value| {
            if v.is_null() {
                Value::Object(Map::new())
            } else {
                v
            }
        };
        for (method, text) in cases {
            let sparse = object(sparse_params(method, Some(&raw(text))));
            let full = object(serde_json::from_str(text).expect("json"));
            assert_eq!(
                check(method, &full),
                check(method, &sparse),
                "{method} {text}"
            );
            for member in bookkeeping_members(method) {
                assert_eq!(full.get(member), sparse.get(member), "{method} {text}");
            }
        }
        assert_eq!(sparse_params("session/cancel", None), Value::Null);
    }

    #[test]
    fn large_unchecked_contents_are_left_out_of_the_sparse_tree() {
        let content = "\"q\" \\".repeat(100_000);
        let params =
            json!({"sessionId": "s", "path": "/a", "content": content, "_meta": {"k": content}});
        let sparse = sparse_params(
            "fs/write_text_file",
            Some(&crate::json::to_raw(&params).expect("raw")),
        );
        assert_eq!(
            sparse,
            json!({"sessionId": "s", "path": "/a", "content": ""})
        );
        let prompt = json!({"sessionId": "s", "prompt": [{"type": "resource", "resource": {"text": content}}]});
        let sparse = sparse_params(
            "session/prompt",
            Some(&crate::json::to_raw(&prompt).expect("raw")),
        );
        assert_eq!(
            sparse,
            json!({"sessionId": "s", "prompt": [{"type": "resource"}]})
        );
        // Nesting deeper than a tree may hold, in a member nobody reads.
        let deep = format!(
            r#"{{"sessionId": "s", "x": {}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            sparse_params("session/cancel", Some(&raw(&deep))),
            json!({"sessionId": "s"})
        );
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
