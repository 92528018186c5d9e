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
//! Each method's rules are declared once, in one table (`RULES`), and both
//! uses are derived from it: [`check`] applies them to a tree, and
//! `sparse_params` builds that tree holding only the members the rules
//! name (and what of them each kind of rule reads). Everything else, such
//! as an 8 MiB embedded resource or file content, is skipped over by the
//! fast scan of `crate::json::scan`, never unescaped or copied: the host's
//! own decode is the only one.

use std::fmt;
use std::sync::LazyLock;

use memchr::memmem;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{RpcError, codes};
use crate::json::scan::{self, Keep, Select};

/// A failed rule: which field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the field (`/cwd`, `/toolCall/locations/0/line`;
    /// empty: the params as a whole).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl Violation {
    /// The `-32602` error to answer with.
    pub fn into_rpc(self, method: &str) -> RpcError {
        RpcError::new(
            codes::INVALID_PARAMS,
            format!("Invalid params for {method}: {self}"),
        )
        .with_data(serde_json::json!({ "field": self.field, "message": self.message }))
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{} {}", self.field, self.message)
        }
    }
}

/// A rule: what one member of an object must be.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// The member's name.
    name: &'static str,
    /// What it must be.
    kind: Kind,
}

const fn rule(name: &'static str, kind: Kind) -> Rule {
    Rule { name, kind }
}

/// What a member must be. Absent and `null` are the same: "is required"
/// for the required kinds, fine for the others.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Anything: not checked, read whole by the protocol layer.
    Read,
    /// A string (required), read whole: ids and names, small, some read
    /// by the protocol layer too.
    Str,
    /// A string (required) that may be large, such as file content: only
    /// its JSON type is read.
    Text,
    /// An absolute path (required).
    Path,
    /// An absolute path, if present.
    OptPath,
    /// An array of absolute paths, if present.
    Paths,
    /// A 1-based line number, if present.
    Line,
    /// A non-negative integer, if present.
    Count,
    /// A protocol version: an integer from 0 to 65535 (required).
    Version,
    /// An array (required); only its JSON type is read.
    Array,
    /// An array (required) whose items follow the rules (an item that is
    /// not an object has none of the members they require).
    Each(&'static [Rule]),
    /// Like [`Kind::Each`], if present.
    OptEach(&'static [Rule]),
    /// An object (required) whose members follow the rules.
    Object(&'static [Rule]),
    /// A string (required) that tells variants apart; when it is one of the
    /// values of a case, the object it is a member of also follows that
    /// case's rules (other values have none).
    Tag(&'static [(&'static [&'static str], &'static [Rule])]),
    /// A string (required) that must be one of the listed values (an enum
    /// of the schema); the object it is a member of also follows that
    /// value's rules.
    OneOf(&'static [(&'static str, &'static [Rule])]),
    /// A boolean (required).
    Bool,
}

use Kind::{
    Array, Bool, Count, Each, Line, Object, OneOf, OptEach, OptPath, Path, Paths, Read, Str, Tag,
    Text, Version,
};

const SESSION_ID: Rule = rule("sessionId", Str);
const CWD: Rule = rule("cwd", Path);
const ADDITIONAL_DIRECTORIES: Rule = rule("additionalDirectories", Paths);
/// Each server's `type` is read by the payload rules (`payload::RULES`).
const MCP_SERVERS: Rule = rule("mcpServers", Each(&[rule("type", Read)]));
/// Read by the payload rules (unstable `session_system_prompt`).
const SYSTEM_PROMPT: Rule = rule("systemPrompt", Read);
const LOCATIONS: Rule = rule(
    "locations",
    OptEach(&[rule("path", Path), rule("line", Line)]),
);

/// Each method's rules, checked in this order (the first violation is the
/// one reported). The members the protocol layer reads (session ids,
/// `cwd`, prompt content types, `initialize`'s members) are named here
/// too, so the sparse tree keeps them. Methods not listed (`logout`,
/// extension methods) have no rules and nothing is read of their params.
static RULES: &[(&[&str], &[Rule])] = &[
    (
        &["initialize", "proxy/initialize"],
        &[
            rule("protocolVersion", Version),
            rule("clientCapabilities", Read),
        ],
    ),
    (&["proxy/successor"], &[rule("method", Str)]),
    (&["authenticate"], &[rule("methodId", Str)]),
    (
        &["session/new"],
        &[CWD, ADDITIONAL_DIRECTORIES, MCP_SERVERS, SYSTEM_PROMPT],
    ),
    (
        &["session/load"],
        &[
            SESSION_ID,
            CWD,
            ADDITIONAL_DIRECTORIES,
            MCP_SERVERS,
            SYSTEM_PROMPT,
        ],
    ),
    (
        &["session/resume"],
        &[
            SESSION_ID,
            CWD,
            ADDITIONAL_DIRECTORIES,
            rule("mcpServers", OptEach(&[rule("type", Read)])),
            SYSTEM_PROMPT,
        ],
    ),
    (
        &["session/fork"],
        &[
            SESSION_ID,
            CWD,
            ADDITIONAL_DIRECTORIES,
            rule("mcpServers", OptEach(&[rule("type", Read)])),
            SYSTEM_PROMPT,
        ],
    ),
    (
        &["session/list"],
        &[rule("cwd", OptPath), rule("archived", Read)],
    ),
    (
        &[
            "session/close",
            "session/delete",
            "session/cancel",
            "session/archive",
            "session/unarchive",
            "session/status",
        ],
        &[SESSION_ID],
    ),
    (&["session/set_title"], &[SESSION_ID, rule("title", Str)]),
    (
        &["providers/set"],
        &[
            rule("providerId", Str),
            rule("apiType", Str),
            rule("baseUrl", Str),
        ],
    ),
    (&["providers/disable"], &[rule("providerId", Str)]),
    (
        &["mcp/message"],
        &[
            rule("serverId", Str),
            rule("requestId", Str),
            rule("method", Str),
        ],
    ),
    (&["auth/status_update"], &[rule("state", Str)]),
    (&["session/set_mode"], &[SESSION_ID, rule("modeId", Str)]),
    (
        &["session/set_config_option"],
        &[SESSION_ID, rule("configId", Str)],
    ),
    (
        &["session/prompt"],
        &[SESSION_ID, rule("prompt", Each(&[rule("type", Str)]))],
    ),
    (
        &["session/request_permission"],
        &[
            SESSION_ID,
            rule("toolCall", Object(&[rule("toolCallId", Str), LOCATIONS])),
            rule("options", Array),
        ],
    ),
    (
        &["session/update"],
        &[
            SESSION_ID,
            rule(
                "update",
                Object(&[rule(
                    "sessionUpdate",
                    // See `update_needs_check`, which must say yes to
                    // every value named here.
                    Tag(&[
                        (
                            &["tool_call", "tool_call_update"],
                            &[rule("toolCallId", Str), LOCATIONS],
                        ),
                        (&["notice"], &[rule("severity", Str), rule("title", Str)]),
                        (
                            &["compaction_update"],
                            &[rule("compactionId", Str), rule("status", Str)],
                        ),
                        (
                            &["compaction_summary_chunk"],
                            &[
                                rule("compactionId", Str),
                                rule("content", Object(&[rule("type", Str)])),
                            ],
                        ),
                    ]),
                )]),
            ),
        ],
    ),
    (
        &["fs/read_text_file"],
        &[
            SESSION_ID,
            rule("path", Path),
            rule("line", Line),
            rule("limit", Count),
        ],
    ),
    (
        &["fs/write_text_file"],
        &[SESSION_ID, rule("path", Path), rule("content", Text)],
    ),
    (
        &["terminal/create"],
        &[
            SESSION_ID,
            rule("command", Str),
            rule("cwd", OptPath),
            rule("outputByteLimit", Count),
        ],
    ),
    (
        &[
            "terminal/output",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release",
        ],
        &[SESSION_ID, rule("terminalId", Str)],
    ),
    // It may name a session (checked by the protocol layer when it does).
    (
        &["elicitation/create"],
        &[
            rule("sessionId", Read),
            rule("message", Str),
            rule("mode", Read),
        ],
    ),
    (&["elicitation/complete"], &[rule("elicitationId", Str)]),
];

/// The rules of `method` (none for methods not in [`RULES`]).
fn rules_of(method: &str) -> &'static [Rule] {
    RULES
        .iter()
        .find(|(names, _)| names.contains(&method))
        .map_or(&[], |(_, rules)| rules)
}

/// The values of `stopReason` (the schema's `StopReason`).
const STOP_REASONS: Kind = OneOf(&[
    ("end_turn", &[]),
    ("max_tokens", &[]),
    ("max_turn_requests", &[]),
    ("refusal", &[]),
    ("cancelled", &[]),
]);

/// Each method's rules for its result (the schema's `*Response`): the
/// required members and the enums. Unknown members pass (tolerant
/// decoding); methods not listed only need an object.
static RESULT_RULES: &[(&[&str], &[Rule])] = &[
    (
        &["initialize", "proxy/initialize"],
        &[rule("protocolVersion", Version)],
    ),
    (&["session/new", "session/fork"], &[SESSION_ID]),
    (&["session/status"], &[rule("status", Str)]),
    (&["providers/list"], &[rule("providers", Array)]),
    (&["auth/status"], &[rule("state", Str)]),
    (
        &["session/list"],
        &[rule("sessions", Each(&[SESSION_ID, rule("cwd", Path)]))],
    ),
    (
        &["session/set_config_option"],
        &[rule("configOptions", Array)],
    ),
    (&["session/prompt"], &[rule("stopReason", STOP_REASONS)]),
    (
        &["session/request_permission"],
        &[rule(
            "outcome",
            Object(&[rule(
                "outcome",
                OneOf(&[("cancelled", &[]), ("selected", &[rule("optionId", Str)])]),
            )]),
        )],
    ),
    (&["fs/read_text_file"], &[rule("content", Text)]),
    (&["terminal/create"], &[rule("terminalId", Str)]),
    (
        &["terminal/output"],
        &[rule("output", Text), rule("truncated", Bool)],
    ),
];

/// Checks the result of `method` (an ACP request; either direction: the
/// peer's answer to our call, or the host's answer to the peer's request),
/// reading only the members its rules name.
pub(crate) fn check_result(method: &str, result: &RawValue) -> Result<(), Violation> {
    if !super::methods::result_is_object(method) {
        // Any JSON value: the successor's answer to a method this
        // connection does not see.
        return Ok(());
    }
    let rules = RESULT_RULES
        .iter()
        .find(|(names, _)| names.contains(&method))
        .map_or(&[][..], |(_, rules)| rules);
    let tree = scan::sparse(result.get(), Wanted::Members(rules)).ok_or_else(|| Violation {
        field: String::new(),
        message: "the result cannot be read as JSON values".into(),
    })?;
    if !tree.is_object() {
        return Err(Violation {
            field: String::new(),
            message: "the result must be an object".into(),
        });
    }
    check_rules(&tree, &At::Root, rules)
}

/// Checks `params` of `method` (either direction). Methods without rules
/// (and extension methods) pass if their params are an object.
pub fn check(method: &str, params: &Value) -> Result<(), Violation> {
    if !params.is_object() {
        return Err(Violation {
            field: String::new(),
            message: "params must be an object".into(),
        });
    }
    check_rules(params, &At::Root, rules_of(method))
}

type Check = Result<(), Violation>;

/// Checks the members of `object` (a value that is not an object has none)
/// against `rules`, in order.
fn check_rules(object: &Value, at: &At<'_>, rules: &[Rule]) -> Check {
    rules.iter().try_for_each(|rule| rule.check(object, at))
}

impl Rule {
    /// Checks this rule's member of `object`, which is at `parent`.
    fn check(&self, object: &Value, parent: &At<'_>) -> Check {
        let at = At::Member(parent, self.name);
        let Some(value) = object.get(self.name).filter(|v| !v.is_null()) else {
            return match self.kind {
                Read | OptPath | Paths | Line | Count | OptEach(_) => Ok(()),
                Object(_) => Err(at.violation("is required and must be an object")),
                Str | Text | Path | Version | Array | Each(_) | Tag(..) | OneOf(_) | Bool => {
                    Err(at.violation("is required"))
                }
            };
        };
        match self.kind {
            Read => Ok(()),
            Str | Text => string(value, &at).map(drop),
            Path | OptPath => absolute(string(value, &at)?, &at),
            Paths => array(value, &at)?
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| {
                    let at = At::Item(&at, i);
                    absolute(string(item, &at)?, &at)
                }),
            Line => match value.as_u64() {
                Some(n) if n >= 1 => Ok(()),
                _ => Err(at.violation(format!("must be a 1-based line number, not {value}"))),
            },
            Count => match value.as_u64() {
                Some(_) => Ok(()),
                None => Err(at.violation(format!("must be a non-negative integer, not {value}"))),
            },
            Version => match value.as_u64() {
                Some(n) if n <= u64::from(u16::MAX) => Ok(()),
                _ => Err(at.violation(format!("must be an integer from 0 to 65535, not {value}"))),
            },
            Array => array(value, &at).map(drop),
            Each(rules) | OptEach(rules) => array(value, &at)?
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| check_rules(item, &At::Item(&at, i), rules)),
            Object(rules) if value.is_object() => check_rules(value, &at, rules),
            Object(_) => Err(at.violation("is required and must be an object")),
            Tag(cases) => {
                let tag = string(value, &at)?;
                match cases.iter().find(|(values, _)| values.contains(&tag)) {
                    Some((_, rules)) => check_rules(object, parent, rules),
                    None => Ok(()),
                }
            }
            OneOf(variants) => {
                let tag = string(value, &at)?;
                match variants.iter().find(|(name, _)| *name == tag) {
                    Some((_, rules)) => check_rules(object, parent, rules),
                    None => {
                        let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
                        Err(at
                            .violation(format!("must be one of {}, not {tag:?}", names.join(", "))))
                    }
                }
            }
            Bool => match value {
                Value::Bool(_) => Ok(()),
                _ => Err(at.violation("must be a boolean")),
            },
        }
    }
}

fn string<'a>(value: &'a Value, at: &At<'_>) -> Result<&'a str, Violation> {
    match value {
        Value::String(s) => Ok(s),
        _ => Err(at.violation("must be a string")),
    }
}

fn array<'a>(value: &'a Value, at: &At<'_>) -> Result<&'a [Value], Violation> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(at.violation("must be an array")),
    }
}

fn absolute(path: &str, at: &At<'_>) -> Check {
    if std::path::Path::new(path).is_absolute() {
        Ok(())
    } else {
        Err(at.violation(format!("must be an absolute path, not {path:?}")))
    }
}

/// Where a value is in the params; spelled as a JSON pointer only for a
/// violation.
#[derive(Debug, Clone, Copy)]
enum At<'a> {
    /// The params.
    Root,
    /// A member of an object.
    Member(&'a At<'a>, &'static str),
    /// An item of an array.
    Item(&'a At<'a>, usize),
}

impl At<'_> {
    fn violation(&self, message: impl Into<String>) -> Violation {
        Violation {
            field: self.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Root => Ok(()),
            At::Member(parent, name) => write!(f, "{parent}/{name}"),
            At::Item(parent, i) => write!(f, "{parent}/{i}"),
        }
    }
}

/// What the sparse tree keeps for the rules: what each kind of rule reads.
#[derive(Debug, Clone, Copy)]
enum Wanted {
    /// The members the rules name (of the params, of array items).
    Members(&'static [Rule]),
    /// A member, as its rule's kind reads it.
    Member(Kind),
}

impl Select for Wanted {
    fn keep(self) -> Keep<Self> {
        match self {
            Self::Members(_) | Self::Member(Object(_)) => Keep::Members,
            Self::Member(Each(rules) | OptEach(rules)) => Keep::Items(Self::Members(rules)),
            Self::Member(Text | Array) => Keep::Type,
            Self::Member(
                Read | Str | Path | OptPath | Paths | Line | Count | Version | Tag(..) | OneOf(_)
                | Bool,
            ) => Keep::Whole,
        }
    }

    fn member(self, name: &str) -> Option<Self> {
        let (Self::Members(rules) | Self::Member(Object(rules))) = self else {
            return None;
        };
        kind_of(rules, name).map(Self::Member)
    }
}

/// The kind of the rule for the member `name` among `rules`, including the
/// rules a [`Kind::Tag`] brings in.
fn kind_of(rules: &[Rule], name: &str) -> Option<Kind> {
    rules.iter().find_map(|rule| match rule.kind {
        _ if rule.name == name => Some(rule.kind),
        Tag(cases) => cases.iter().find_map(|(_, rules)| kind_of(rules, name)),
        OneOf(variants) => variants.iter().find_map(|(_, rules)| kind_of(rules, name)),
        _ => None,
    })
}

/// Whether a `session/update` must be validated in depth: only tool-call,
/// notice and compaction updates have rules beyond the session id (the hot
/// path of streamed chunks skips the walk). Decided on the raw text, so any
/// `\u` escape, which could spell a tag in disguise, counts as a yes.
pub(crate) fn update_needs_check(raw: &RawValue) -> bool {
    /// Built once: building a searcher per call was 2 % of a W1 client's
    /// samples (`perf`, bench/README.md).
    static TAGS: LazyLock<[memmem::Finder<'static>; 3]> = LazyLock::new(|| {
        [
            memmem::Finder::new(b"\"tool_call"),
            memmem::Finder::new(b"\"notice\""),
            memmem::Finder::new(b"\"compaction_"),
        ]
    });
    let text = raw.get().as_bytes();
    TAGS.iter().any(|tag| tag.find(text).is_some()) || scan::may_hold_unicode_escape(text)
}

/// Parses `params` of `method` into the tree [`check`] and the protocol
/// layer read: only the members its rules name, everything else skipped
/// unparsed (scanned, never unescaped or copied). `Null` when absent (or
/// not parseable), as a full parse would give.
#[cfg(test)]
pub(crate) fn sparse_params(method: &str, params: Option<&RawValue>) -> Value {
    params
        .and_then(|raw| scan::sparse(raw.get(), Wanted::Members(rules_of(method))))
        .unwrap_or(Value::Null)
}

/// The tree the checks read (see [`sparse_params`]): `{}` when there are
/// no params. Params that are valid JSON text but cannot be read as values
/// (a lone surrogate escape such as `"\ud800"`, nesting past the parser's
/// limit) are a violation that says so, not a missing field.
pub(crate) fn params_tree(method: &str, params: Option<&RawValue>) -> Result<Value, Violation> {
    let Some(raw) = params else {
        return Ok(Value::Object(serde_json::Map::new()));
    };
    match scan::sparse(raw.get(), Wanted::Members(rules_of(method))) {
        Some(Value::Null) => Ok(Value::Object(serde_json::Map::new())),
        Some(tree) => Ok(tree),
        // Only on failure: a full parse says what is wrong, and where.
        None => Err(Violation {
            field: String::new(),
            message: match serde_json::from_str::<Value>(raw.get()) {
                Err(e) => format!(
                    "the params cannot be read as JSON values (an invalid \\u escape \
                     such as a lone surrogate, or nesting too deep): {e}"
                ),
                Ok(_) => "the params cannot be read as JSON values".to_owned(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::methods;
    use serde_json::{Map, json};

    fn field_of(method: &str, params: Value) -> Option<String> {
        check(method, &params).err().map(|v| v.field)
    }

    #[test]
    fn notices_and_compactions_need_their_required_members() {
        let update = |u: Value| json!({"sessionId": "s", "update": u});
        assert_eq!(
            field_of(
                "session/update",
                update(json!({"sessionUpdate": "notice", "severity": "info"}))
            ),
            Some("/update/title".into())
        );
        assert_eq!(
            field_of(
                "session/update",
                update(json!({"sessionUpdate": "compaction_update", "compactionId": "c"}))
            ),
            Some("/update/status".into())
        );
        assert_eq!(
            field_of(
                "session/update",
                update(
                    json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": {}})
                )
            ),
            Some("/update/content/type".into())
        );
        assert_eq!(
            field_of(
                "session/update",
                update(json!({"sessionUpdate": "notice", "severity": "info", "title": "t"}))
            ),
            None
        );
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
            for member in read_by_protocol_layer(method) {
                assert_eq!(full.get(member), sparse.get(member), "{method} {text}");
            }
        }
        assert_eq!(sparse_params("session/cancel", None), Value::Null);
    }

    /// The members of the tree the protocol layer reads besides the rules
    /// (`incoming.rs`, `outgoing.rs`): the session id of the methods about
    /// one session, what `initialize` negotiates, the `cwd` of a session.
    fn read_by_protocol_layer(method: &str) -> &'static [&'static str] {
        match method {
            // Extension methods go to the host before any rule.
            _ if !methods::is_protocol_method(method) => &[],
            "initialize" | "proxy/initialize" => &["clientCapabilities", "protocolVersion"],
            "session/new" => &["cwd"],
            "session/load" | "session/resume" | "session/fork" => &["sessionId", "cwd"],
            "authenticate"
            | "logout"
            | "session/list"
            | "elicitation/complete"
            | "auth/status"
            | "auth/status_update"
            | "providers/list"
            | "providers/set"
            | "providers/disable"
            | "mcp/message"
            | "proxy/successor" => &[],
            _ => &["sessionId"],
        }
    }

    /// Params that pass `rules`, with one value of each rule's kind.
    fn passing(rules: &[Rule]) -> Map<String, Value> {
        let mut members = Map::new();
        for rule in rules {
            let value = match rule.kind {
                Read => json!({"fs": {"readTextFile": true}}),
                Str | Text => json!("s \"q\""),
                Path | OptPath => json!("/p"),
                Paths => json!(["/a", "/b"]),
                Line | Count | Version => json!(1),
                Array => json!([{"name": "x", "args": ["a"]}]),
                Each(rules) | OptEach(rules) => json!([passing(rules), passing(rules)]),
                Object(rules) => Value::Object(passing(rules)),
                Tag(cases) => {
                    let (values, rules) = cases[0];
                    members.extend(passing(rules));
                    json!(values[0])
                }
                OneOf(variants) => {
                    let (name, rules) = variants[variants.len() - 1];
                    members.extend(passing(rules));
                    json!(name)
                }
                Bool => json!(true),
            };
            members.insert(rule.name.to_owned(), value);
        }
        members
    }

    /// The JSON pointers of the members the rules name in [`passing`]
    /// params (of the first item of arrays), with their rules.
    fn rule_pointers(rules: &[Rule], at: &str, out: &mut Vec<String>) {
        for rule in rules {
            let here = format!("{at}/{}", rule.name);
            match rule.kind {
                Each(rules) | OptEach(rules) => rule_pointers(rules, &format!("{here}/0"), out),
                Object(rules) => rule_pointers(rules, &here, out),
                Tag(cases) => {
                    for (_, rules) in cases {
                        rule_pointers(rules, at, out);
                    }
                }
                OneOf(variants) => {
                    for (_, rules) in variants {
                        rule_pointers(rules, at, out);
                    }
                }
                _ => {}
            }
            out.push(here);
        }
    }

    /// Values of every JSON type, right and wrong for each kind of rule.
    fn probes() -> Vec<Option<Value>> {
        let mut probes = vec![None];
        probes.extend(
            [
                json!(null),
                json!(""),
                json!("rel/x"),
                json!("/abs"),
                json!("tool_call"),
                json!("tool_call_update"),
                json!("tool_callx"),
                json!(0),
                json!(1),
                json!(-1),
                json!(1.5),
                json!(70000),
                json!(18_446_744_073_709_551_615_u64),
                json!(true),
                json!([]),
                json!(["/a", "b"]),
                json!([1]),
                json!([null]),
                json!([{"path": "rel", "line": 0}]),
                json!([{"type": 3}, {"type": "text"}]),
                json!({}),
                json!({"sessionUpdate": "tool_call", "toolCallId": 1}),
                json!({"toolCallId": "t", "locations": [{"path": "/a", "line": 0}]}),
            ]
            .into_iter()
            .map(Some),
        );
        probes
    }

    /// Every method's params as declared, then with each member the rules
    /// name replaced by each probe (or removed): the sparse tree gives the
    /// same answer as the whole tree, and what the protocol layer reads.
    #[test]
    fn every_rule_checks_the_same_on_the_sparse_tree() {
        let noise = json!({"k": "\"}\\", "deep": [[[{"sessionId": "x"}]]], "n": 1e300});
        for info in methods::METHODS {
            let rules = rules_of(info.name);
            let mut base = passing(rules);
            for member in read_by_protocol_layer(info.name) {
                base.entry(*member).or_insert_with(|| json!("/s"));
            }
            base.insert("_meta".into(), noise.clone());
            let base = Value::Object(base);
            let mut pointers = Vec::new();
            rule_pointers(rules, "", &mut pointers);
            let mut variants = vec![base.clone()];
            for pointer in &pointers {
                let (parent, name) = pointer.rsplit_once('/').expect("a member");
                for probe in probes() {
                    let mut variant = base.clone();
                    let Some(Value::Object(object)) = variant.pointer_mut(parent) else {
                        continue; // under a member an earlier probe replaced
                    };
                    match probe {
                        Some(v) => object.insert(name.to_owned(), v),
                        None => object.remove(name),
                    };
                    object.insert("_x".into(), noise.clone());
                    variants.push(variant);
                }
            }
            assert!(check(info.name, &base).is_ok(), "{} {base}", info.name);
            for full in variants {
                let text = serde_json::to_string(&full).expect("json");
                let sparse = sparse_params(info.name, Some(&raw(&text)));
                assert_eq!(
                    check(info.name, &full),
                    check(info.name, &sparse),
                    "{} {text}",
                    info.name
                );
                for member in read_by_protocol_layer(info.name) {
                    assert_eq!(full.get(member), sparse.get(member), "{} {text}", info.name);
                }
            }
        }
    }

    #[test]
    fn every_method_with_rules_is_a_method_of_the_spec() {
        for (names, _) in RULES {
            for name in *names {
                assert!(methods::is_protocol_method(name), "{name}");
            }
        }
    }

    /// `update_needs_check` must say yes to every update the rules look
    /// into.
    #[test]
    fn updates_with_rules_are_checked_in_depth() {
        let Some(Object(update)) = kind_of(rules_of("session/update"), "update") else {
            panic!("session/update has an update object");
        };
        let Some(Tag(cases)) = kind_of(update, "sessionUpdate") else {
            panic!("updates are told apart by sessionUpdate");
        };
        for value in cases.iter().flat_map(|(values, _)| values.iter()) {
            let params = json!({"sessionId": "s", "update": {"sessionUpdate": value}});
            let raw = crate::json::to_raw(&params).expect("raw");
            assert!(update_needs_check(&raw), "{value}");
        }
        let chunk = json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}});
        assert!(!update_needs_check(
            &crate::json::to_raw(&chunk).expect("raw")
        ));
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

    #[test]
    fn unreadable_params_say_so_instead_of_a_missing_field() {
        let params = raw(r#"{"cwd": "\ud800", "mcpServers": []}"#);
        let v = params_tree("session/new", Some(&params)).expect_err("unreadable");
        assert_eq!(v.field, "");
        assert!(v.message.contains("lone surrogate"), "{}", v.message);
        assert!(v.message.contains("line 1 column"), "{}", v.message);
        let rpc = v.into_rpc("session/new");
        assert!(!rpc.message.contains("is required"), "{}", rpc.message);
        assert_eq!(params_tree("session/new", None), Ok(json!({})));
    }

    #[test]
    fn results_follow_the_schema_tolerating_unknown_members() {
        let check = |method: &str, result: Value| {
            check_result(method, &raw(&result.to_string())).map_err(|v| v.to_string())
        };
        for (names, rules) in RESULT_RULES {
            let mut result = passing(rules);
            result.insert("_vendor".into(), json!({"unknown": [1, 2]}));
            for name in *names {
                assert_eq!(check(name, Value::Object(result.clone())), Ok(()), "{name}");
                for rule in *rules {
                    let mut missing = result.clone();
                    missing.remove(rule.name);
                    let err = check(name, Value::Object(missing)).expect_err(name);
                    assert!(err.contains(rule.name), "{name}: {err}");
                }
            }
        }
        let err = check("session/prompt", json!({"stopReason": "done"})).expect_err("enum");
        assert!(
            err.starts_with("/stopReason must be one of end_turn,"),
            "{err}"
        );
        assert!(check("session/prompt", json!({"stopReason": "refusal"})).is_ok());
        let err = check(
            "session/request_permission",
            json!({"outcome": {"outcome": "selected"}}),
        )
        .expect_err("optionId");
        assert_eq!(err, "/outcome/optionId is required");
        assert!(
            check(
                "session/request_permission",
                json!({"outcome": {"outcome": "cancelled"}})
            )
            .is_ok()
        );
        assert!(check("session/load", json!({})).is_ok());
        assert!(check("session/load", json!([])).is_err());
        assert!(check("_vendor/anything", json!({})).is_ok());
    }
}
