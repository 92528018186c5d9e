//! The constructors' keyword arguments, parsed into the core's options.
//!
//! Called with the GIL on the host's thread, before anything is started:
//! a bad argument raises (`TypeError` for unknown names and wrong types,
//! `ValueError` for bad values) and nothing is taken over. The values
//! returned (`AcpOptions`, `ShutdownGrace`, durations) are owned by the
//! caller and handed to the core; the defaults are the core's.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyTuple};

use libacp_core::services::fs::SandboxedFs;
use libacp_core::services::session_model::SessionStore;
use libacp_core::services::terminal::TerminalManager;
use libacp_core::{AcpOptions, ClientServices, ConnectionOptions, Framing, Role, ShutdownGrace};

use crate::convert::type_name;
use crate::hooks::{events_hook, trace_hook};

/// The keyword options every constructor takes (`**options`; `terminals`
/// is the older name of `terminal`).
const OPTION_NAMES: &str = "framing, max_frame_size, request_timeout, flush_timeout, \
     outgoing_queue, incoming_queue, trace, events, require_auth, session_model, fs, terminal, \
     terminals";

/// Largest queue size accepted (far below what tokio's semaphores allow).
const MAX_QUEUE: u64 = 1 << 24;

pub(crate) fn opt_bool(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value.cast::<PyBool>().map(|b| b.is_true()).map_err(|_| {
        PyTypeError::new_err(format!("{name} must be a bool, not {}", type_name(value)))
    })
}

/// A positive integer no larger than `max`.
fn opt_count(name: &str, value: &Bound<'_, PyAny>, max: u64) -> PyResult<usize> {
    if value.cast::<PyBool>().is_ok() || value.cast::<PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            type_name(value)
        )));
    }
    value
        .extract::<u64>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            PyValueError::new_err(format!("{name} must be between 1 and {max}, not {value}"))
        })
}

/// A duration in seconds (int or float): finite, not negative, and not
/// zero unless `zero_ok`.
pub(crate) fn opt_seconds(
    name: &str,
    value: &Bound<'_, PyAny>,
    zero_ok: bool,
) -> PyResult<Duration> {
    if value.cast::<PyBool>().is_ok()
        || !(value.cast::<PyInt>().is_ok() || value.cast::<PyFloat>().is_ok())
    {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a number of seconds (int or float), not {}",
            type_name(value)
        )));
    }
    let secs: f64 = value.extract()?;
    let bad = !secs.is_finite() || secs < 0.0 || (secs == 0.0 && !zero_ok);
    if bad {
        let wanted = if zero_ok { "0 or more" } else { "more than 0" };
        return Err(PyValueError::new_err(format!(
            "{name} must be a finite number of seconds, {wanted}, not {value}"
        )));
    }
    Duration::try_from_secs_f64(secs)
        .map_err(|_| PyValueError::new_err(format!("{name}: {value} seconds is too long")))
}

pub(crate) fn opt_callable(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if value.is_callable() {
        Ok(value.clone().unbind())
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must be callable, not {}",
            type_name(value)
        )))
    }
}

pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Agent => "agent",
    }
}

/// An option that only one role uses, set on the other: refused rather
/// than silently ignored.
fn check_role(name: &str, wanted: Role, role: Role) -> PyResult<()> {
    if wanted == role {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{name} applies to the {} side; this connection is the {}",
            role_name(wanted),
            role_name(role)
        )))
    }
}

/// The core's options from a constructor's `**options` (None values keep
/// the default). Unknown names raise `TypeError`, values of the wrong type
/// `TypeError`, values out of range `ValueError`.
pub(crate) fn acp_options(role: Role, options: Option<&Bound<'_, PyDict>>) -> PyResult<AcpOptions> {
    let mut connection = ConnectionOptions::default();
    let mut acp = AcpOptions::default();
    let mut services = ClientServices::default();
    let Some(options) = options else {
        acp.connection = connection;
        return Ok(acp);
    };
    for (key, value) in options.iter() {
        let name: String = key.extract()?;
        if value.is_none() {
            if !OPTION_NAMES.split(", ").any(|n| n == name) {
                return Err(unknown_option(&name));
            }
            continue;
        }
        let name = name.as_str();
        match name {
            "framing" => {
                let framing = value.extract::<String>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "framing must be a str, not {}",
                        type_name(&value)
                    ))
                })?;
                connection.framing = match framing.as_str() {
                    "ndjson" => Framing::Ndjson,
                    "content-length" => Framing::ContentLength,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "framing must be \"ndjson\" or \"content-length\", not {other:?}"
                        )));
                    }
                };
            }
            "max_frame_size" => connection.max_frame_size = opt_count(name, &value, u64::MAX)?,
            "outgoing_queue" => connection.outgoing_queue = opt_count(name, &value, MAX_QUEUE)?,
            "incoming_queue" => connection.incoming_queue = opt_count(name, &value, MAX_QUEUE)?,
            "request_timeout" => {
                connection.request_timeout = Some(opt_seconds(name, &value, false)?);
            }
            "flush_timeout" => connection.flush_timeout = opt_seconds(name, &value, true)?,
            "trace" => connection.trace = Some(trace_hook(opt_callable(name, &value)?)),
            "events" => connection.events = Some(events_hook(opt_callable(name, &value)?)?),
            "require_auth" => {
                acp.require_auth = opt_bool(name, &value)?;
                if acp.require_auth {
                    check_role(name, Role::Agent, role)?;
                }
            }
            // Named after the capability each advertises; `terminals` is the
            // older name of `terminal`, still accepted.
            "session_model" | "fs" | "terminal" | "terminals" => {
                if opt_bool(name, &value)? {
                    check_role(name, Role::Client, role)?;
                    match name {
                        "session_model" => services.sessions = Some(Arc::new(SessionStore::new())),
                        "fs" => services.fs = Some(Arc::new(SandboxedFs::new())),
                        _ => services.terminals = Some(Arc::new(TerminalManager::new())),
                    }
                }
            }
            other => return Err(unknown_option(other)),
        }
    }
    acp.connection = connection;
    acp.services = services;
    Ok(acp)
}

fn unknown_option(name: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "unexpected option {name:?} (the options are: {OPTION_NAMES})"
    ))
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

/// `shutdown_grace`: seconds for both rungs of the ladder, or a pair
/// `(after_stdin_close, after_sigterm)`.
pub(crate) fn shutdown_grace(value: &Bound<'_, PyAny>) -> PyResult<ShutdownGrace> {
    const NAME: &str = "shutdown_grace";
    if value.cast::<PyTuple>().is_ok() || value.cast::<PyList>().is_ok() {
        let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
        let [stdin, term] = items.as_slice() else {
            return Err(PyValueError::new_err(format!(
                "{NAME} must be seconds or a pair (after_stdin_close, after_sigterm), \
                 not {} items",
                items.len()
            )));
        };
        return Ok(ShutdownGrace {
            after_stdin_close: opt_seconds("shutdown_grace[0]", stdin, true)?,
            after_sigterm: opt_seconds("shutdown_grace[1]", term, true)?,
        });
    }
    let both = opt_seconds(NAME, value, true)?;
    Ok(ShutdownGrace {
        after_stdin_close: both,
        after_sigterm: both,
    })
}
