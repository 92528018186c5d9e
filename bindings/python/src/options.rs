//! The constructors' keyword arguments, set through the core's option table
//! (`libacp_core::options`): the names, units (milliseconds, bytes), ranges,
//! scopes and refusal messages are the core's, the same in every binding.
//!
//! This module only turns each Python value into an `options::Value`
//! (None, bool, int, float, str or path, a list of str, a dict or list of
//! `(name, value)` str pairs) and maps the core's refusals to exceptions:
//! an unknown name or a value of the wrong type raises `TypeError`, a value
//! out of range or an option that does not apply to this connection
//! `ValueError`, each with the core's message. The callbacks (`trace`,
//! `events`, a spawned agent's `stderr`) are the binding's own, but their
//! names and where they apply are the table's too.
//!
//! Called with the GIL on the host's thread, before anything is started:
//! when it raises, nothing was taken over.

use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};

use libacp_core::Role;
use libacp_core::host::InboxHooks;
use libacp_core::options::{self, Kind, OptionError, OptionErrorKind, Scope, Settings, Use, Value};

use crate::convert::type_name;

/// What a constructor's `**options` set: the core's settings, which hooks
/// the dispatcher gets, and the spawned agent's `stderr` callback, if any.
pub(crate) struct Parsed {
    pub(crate) settings: Settings,
    /// The trace and events go to the dispatcher (`trace=True`,
    /// `events=True`: the Python layer keeps the callables on it) as
    /// `(6, ...)` and `(7, ...)` items.
    pub(crate) hooks: InboxHooks,
    pub(crate) stderr: Option<Py<PyAny>>,
}

/// The core's settings for a connection in `role` made for `usage`, from a
/// constructor's `**options` (None keeps an option's default).
pub(crate) fn settings(
    role: Role,
    usage: Use,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Parsed> {
    let mut parsed = Parsed {
        settings: Settings::new(role, usage),
        hooks: InboxHooks::default(),
        stderr: None,
    };
    if let Some(options) = options {
        for (key, value) in options.iter() {
            let name: String = key.extract()?;
            set(&mut parsed, &name, &value)?;
        }
    }
    parsed.hooks.lane = parsed.settings.hooks;
    Ok(parsed)
}

fn set(parsed: &mut Parsed, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let settings = &mut parsed.settings;
    let spec = options::spec(name);
    if spec.is_none_or(|s| s.kind == Kind::Callback) || value.is_none() {
        // The core says whether the name exists and applies here (Null
        // changes nothing); callbacks are then set below.
        settings.set(name, Value::Null).map_err(option_error)?;
    }
    let Some(spec) = spec else {
        return Ok(());
    };
    if value.is_none() {
        return Ok(());
    }
    if spec.kind == Kind::Callback {
        match spec.name {
            "trace" => parsed.hooks.trace = flag(spec.name, value)?,
            "events" => parsed.hooks.events = flag(spec.name, value)?,
            _ => parsed.stderr = Some(callable(spec.name, value)?),
        }
        return Ok(());
    }
    let Some(converted) = to_value(spec.kind, value) else {
        // Whether it applies here first, as for any other value.
        settings.set(name, Value::Null).map_err(option_error)?;
        return Err(PyTypeError::new_err(format!(
            "`{name}` cannot be a {} (option values are bool, int, float, str or a path, \
             a list of str, or a dict or list of (name, value) str pairs)",
            type_name(value)
        )));
    };
    settings.set(name, converted).map_err(option_error)
}

/// The exception for a refusal of the core's: its message, its kind's
/// Python type.
fn option_error(e: OptionError) -> PyErr {
    match e.kind {
        OptionErrorKind::Unknown | OptionErrorKind::Type => PyTypeError::new_err(e.message),
        OptionErrorKind::Range | OptionErrorKind::NotApplicable => PyValueError::new_err(e.message),
    }
}

/// `trace` and `events` as the Python layer passes them: whether the
/// dispatcher has the callable.
fn flag(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        PyTypeError::new_err(format!(
            "`{name}` is a flag here (the Python layer keeps the callable), not {}",
            type_name(value)
        ))
    })
}

fn callable(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if value.is_callable() {
        Ok(value.clone().unbind())
    } else {
        Err(PyTypeError::new_err(format!(
            "`{name}` must be callable, not {}",
            type_name(value)
        )))
    }
}

/// A Python value as the core's `Value`, or None for one no option takes
/// (the core judges the rest). A list is read as pairs when the option
/// takes pairs, as strings otherwise.
fn to_value(kind: Kind, value: &Bound<'_, PyAny>) -> Option<Value> {
    if let Ok(b) = value.cast::<PyBool>() {
        return Some(Value::Bool(b.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        return Some(match value.extract::<i64>() {
            Ok(n) => Value::Int(n),
            // Beyond 64 bits: out of every range, which the core says.
            Err(_) => Value::Float(value.extract::<f64>().unwrap_or(f64::INFINITY)),
        });
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Some(Value::Float(f.value()));
    }
    if let Some(text) = text(value) {
        return Some(Value::Text(text));
    }
    if let Ok(mapping) = value.cast::<PyMapping>() {
        let items = mapping.items().ok()?;
        return pairs(items.as_any()).map(Value::Pairs);
    }
    if value.cast::<PyList>().is_ok() || value.cast::<PyTuple>().is_ok() {
        if kind == Kind::Pairs {
            return pairs(value).map(Value::Pairs);
        }
        let texts: Option<Vec<String>> = value
            .try_iter()
            .ok()?
            .map(|item| item.ok().and_then(|i| i.extract::<String>().ok()))
            .collect();
        return texts
            .map(Value::Texts)
            .or_else(|| pairs(value).map(Value::Pairs));
    }
    None
}

/// A str, or a path (`os.PathLike` giving a str).
fn text(value: &Bound<'_, PyAny>) -> Option<String> {
    if let Ok(s) = value.cast::<PyString>() {
        return s.extract::<String>().ok();
    }
    if value.hasattr("__fspath__").unwrap_or(false) {
        return value.call_method0("__fspath__").ok()?.extract().ok();
    }
    None
}

/// `(name, value)` str pairs from an iterable of 2-item sequences.
fn pairs(items: &Bound<'_, PyAny>) -> Option<Vec<(String, String)>> {
    items
        .try_iter()
        .ok()?
        .map(|item| item.ok().and_then(|i| i.extract::<(String, String)>().ok()))
        .collect()
}

/// A duration in seconds (int or float) for a single call's `timeout`:
/// finite and more than 0. (The options' durations are the table's
/// milliseconds.)
pub(crate) fn call_timeout(value: &Bound<'_, PyAny>) -> PyResult<Duration> {
    if value.cast::<PyBool>().is_ok()
        || !(value.cast::<PyInt>().is_ok() || value.cast::<PyFloat>().is_ok())
    {
        return Err(PyTypeError::new_err(format!(
            "timeout must be a number of seconds (int or float), not {}",
            type_name(value)
        )));
    }
    let secs: f64 = value.extract()?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(PyValueError::new_err(format!(
            "timeout must be a finite number of seconds, more than 0, not {value}"
        )));
    }
    Duration::try_from_secs_f64(secs)
        .map_err(|_| PyValueError::new_err(format!("timeout: {value} seconds is too long")))
}

pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Agent => "agent",
    }
}

pub(crate) fn role_of(role: &str) -> PyResult<Role> {
    match role {
        "client" => Ok(Role::Client),
        "agent" => Ok(Role::Agent),
        other => Err(PyValueError::new_err(format!(
            "role must be \"client\" or \"agent\", not {other:?}"
        ))),
    }
}

/// The core's option table, for the binding's docs and its drift test:
/// one dict per option (`name`, `kind`, `uses`: the constructors it
/// applies to, as `"spawn"`, `"local"`, `"connect"`, `"serve"`; `default`,
/// `doc`).
#[pyfunction]
pub(crate) fn option_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let uses = [
        (Use::Spawn, "spawn"),
        (Use::Local, "local"),
        (Use::Connect, "connect"),
        (Use::Serve, "serve"),
    ];
    options::OPTIONS
        .iter()
        .map(|spec| {
            let row = PyDict::new(py);
            row.set_item("name", spec.name)?;
            row.set_item("kind", kind_name(spec.kind))?;
            let applies: Vec<&str> = uses
                .iter()
                .filter(|(u, _)| spec.applies(*u, Role::Client) || spec.applies(*u, Role::Agent))
                .map(|(_, n)| *n)
                .collect();
            row.set_item("uses", applies)?;
            let roles: Vec<&str> = match () {
                () if spec.scopes.contains(&Scope::Agent) => vec!["agent"],
                () if spec.scopes.contains(&Scope::Client) => vec!["client"],
                () => vec!["client", "agent"],
            };
            row.set_item("roles", roles)?;
            row.set_item("default", spec.default)?;
            row.set_item("doc", spec.doc)?;
            Ok(row)
        })
        .collect()
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Bool => "bool",
        Kind::Count { .. } => "count",
        Kind::Millis { .. } => "millis",
        Kind::Choice(_) => "choice",
        Kind::Text => "text",
        Kind::Path => "path",
        Kind::Texts => "texts",
        Kind::Pairs => "pairs",
        Kind::Callback => "callback",
    }
}
