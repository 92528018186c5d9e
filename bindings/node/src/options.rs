//! The constructors' options, set by name through the core's one option
//! table (`libacp_core::options`: names, kinds, units, ranges, where each
//! applies). This module only turns JavaScript values into the core's
//! `Value`s: the JavaScript layer hands each option over as a tagged
//! `NativeOption` (`ts/options.ts`, which keeps the callbacks), and
//! `Settings::set` checks and applies it. A refusal comes back as the
//! core's message with the JavaScript error class in front
//! (`TypeError: ...` for an unknown name, a wrong type or an option that
//! does not apply here; `RangeError: ...` for a value out of range); nothing
//! is started then.

use napi_derive::napi;

use libacp_core::options::{Kind, OptionError, OptionErrorKind, Settings, Use, Value, spec};
use libacp_core::{AgentCommand, Role};

/// One option as JavaScript hands it over: its name (camelCase) and its
/// value, tagged by type.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeOption {
    /// The option's name as the host wrote it.
    pub name: String,
    /// `"null"`, `"bool"`, `"number"`, `"text"`, `"list"` (`texts`, and
    /// `pairs` for the arrays that hold pairs), `"pairs"` (an object),
    /// `"callback"` (kept by JavaScript; checked here for where it applies)
    /// or `"invalid"` (a value no option takes; `text` says why).
    pub r#type: String,
    /// `"bool"`.
    pub bool: Option<bool>,
    /// `"number"` (NaN and infinities included: the core refuses them).
    pub number: Option<f64>,
    /// `"text"`, or why an `"invalid"` value is refused.
    pub text: Option<String>,
    /// `"list"` of strings.
    pub texts: Option<Vec<String>>,
    /// `"pairs"`, or a `"list"` of `[name, value]` pairs.
    pub pairs: Option<Vec<Vec<String>>>,
}

/// An option refused: the JSON error JavaScript turns into its class.
pub(crate) fn refusal(e: &OptionError) -> serde_json::Value {
    let (class, kind) = match e.kind {
        OptionErrorKind::Unknown => ("TypeError", "unknown"),
        OptionErrorKind::Type => ("TypeError", "type"),
        OptionErrorKind::Range => ("RangeError", "range"),
        OptionErrorKind::NotApplicable => ("TypeError", "not_applicable"),
    };
    serde_json::json!({
        "kind": "invalid_options",
        "message": format!("{class}: {}", e.message),
        "option": e.name,
        "optionError": kind,
    })
}

fn pairs_of(list: Vec<Vec<String>>) -> Value {
    Value::Pairs(
        list.into_iter()
            .map(|mut p| {
                let v = p.pop().unwrap_or_default();
                let k = p.pop().unwrap_or_default();
                (k, v)
            })
            .collect(),
    )
}

/// The core's value for `o`.
fn value(o: NativeOption) -> Value {
    let wants_pairs = spec(&o.name).is_some_and(|s| s.kind == Kind::Pairs);
    match o.r#type.as_str() {
        "bool" => Value::Bool(o.bool.unwrap_or(false)),
        "number" => {
            let n = o.number.unwrap_or(f64::NAN);
            if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.0e15 {
                Value::Int(n as i64)
            } else {
                Value::Float(n)
            }
        }
        "text" => Value::Text(o.text.unwrap_or_default()),
        "pairs" => pairs_of(o.pairs.unwrap_or_default()),
        "list" => match (o.texts, o.pairs) {
            (Some(texts), _) if texts.is_empty() && wants_pairs => Value::Pairs(Vec::new()),
            (Some(texts), _) => Value::Texts(texts),
            (None, Some(pairs)) => pairs_of(pairs),
            (None, None) => Value::Texts(Vec::new()),
        },
        _ => Value::Null,
    }
}

/// The settings of a connection in `role` made for `usage`, from the
/// host's options; the error (JSON) of the first option refused.
pub(crate) fn settings(
    role: Role,
    usage: Use,
    options: Vec<NativeOption>,
) -> Result<Settings, serde_json::Value> {
    let mut settings = Settings::new(role, usage);
    for o in options {
        let name = o.name.clone();
        match o.r#type.as_str() {
            // A callback is the binding's: only where it applies is checked.
            "callback" => settings.set(&name, Value::Null),
            // A value no option takes (a bigint, a nested object): the name
            // and where it applies first, then a type error.
            "invalid" => settings.set(&name, Value::Null).and(Err(OptionError {
                kind: OptionErrorKind::Type,
                name: name.clone(),
                message: o.text.unwrap_or_default(),
            })),
            _ => settings.set(&name, value(o)),
        }
        .map_err(|e| refusal(&e))?;
    }
    Ok(settings)
}

/// The agent command to spawn with `settings` (its stderr hook is set by
/// the caller).
pub(crate) fn command(
    program: &str,
    args: &[String],
    settings: &Settings,
) -> Result<AgentCommand, serde_json::Value> {
    if program.is_empty() {
        return Err(serde_json::json!({
            "kind": "invalid_options",
            "message": "RangeError: command is empty",
        }));
    }
    Ok(settings.spawn.apply(AgentCommand::new(program).args(args)))
}
