//! Python values <-> JSON, and request ids as Python and JSON see them.
//!
//! Pure conversions: every function takes the GIL token (`Python`) or a bound
//! object, so it runs on whichever thread already holds the GIL (the host's
//! thread calling into the binding, or an engine thread inside
//! `attach_alive`). Python objects are only read; the values returned are
//! new and owned by the caller. `to_json` reports failures as text naming
//! the offending member (the caller picks the exception); `to_py` and
//! `raw_to_py` raise.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;
use serde_json::value::RawValue;

use libacp_core::RequestId;

/// Deepest nesting converted (deeper values are refused, not overflowed).
const MAX_DEPTH: usize = 512;

/// A Python value as JSON. `path` names the offending member in errors.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{path}: nested deeper than {MAX_DEPTH} levels"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(format!("{path}: integer out of the 64-bit range"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| format!("{path}: {v} is not a JSON number"));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_cow()
            .map(|s| Value::String(s.into_owned()))
            .map_err(|e| format!("{path}: {e}"));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(format!("{path}: keys must be str, not {}", type_name(&k)));
            };
            let key = key
                .to_cow()
                .map_err(|e| format!("{path}: {e}"))?
                .into_owned();
            let value = to_json(&v, &format!("{path}.{key}"), depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter().map_err(|e| e.to_string())?.enumerate() {
            let item = item.map_err(|e| e.to_string())?;
            items.push(to_json(&item, &format!("{path}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    Err(format!(
        "{path}: {} is not JSON (use dict, list, tuple, str, int, float, bool or None)",
        type_name(obj)
    ))
}

/// The name of `obj`'s type, for error messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// A JSON value as a Python object (dict, list, str, int, float, bool, None).
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Raw JSON from the peer (`None`: absent) as a Python object.
pub(crate) fn raw_to_py<'py>(
    py: Python<'py>,
    raw: Option<&RawValue>,
) -> PyResult<Bound<'py, PyAny>> {
    match raw {
        None => Ok(py.None().into_bound(py)),
        Some(raw) => {
            let v: Value = serde_json::from_str(raw.get())
                .map_err(|e| PyValueError::new_err(format!("invalid JSON from the peer: {e}")))?;
            to_py(py, &v)
        }
    }
}

/// A request id as Python sees it: int, str or None (other JSON numbers as
/// `json.loads` reads their text, so they stay exact).
pub(crate) fn id_to_py<'py>(py: Python<'py>, id: &RequestId) -> PyResult<Bound<'py, PyAny>> {
    match id {
        RequestId::Null => Ok(py.None().into_bound(py)),
        RequestId::Number(n) => Ok(n.into_pyobject(py)?.into_any()),
        RequestId::Str(s) => Ok(PyString::new(py, s).into_any()),
        RequestId::Other(text) => py.import("json")?.call_method1("loads", (text.as_str(),)),
    }
}

/// A request id as JSON (for event details).
pub(crate) fn id_to_json(id: &RequestId) -> Value {
    match id {
        RequestId::Null => Value::Null,
        RequestId::Number(n) => Value::from(*n),
        RequestId::Str(s) => Value::String(s.clone()),
        RequestId::Other(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
    }
}
