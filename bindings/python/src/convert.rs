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

/// A Python value as a JSON tree (for error `data`). Same rules and error
/// texts as [`to_raw`], whose serializer it uses.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, path: &str) -> Result<Value, String> {
    serde_json::to_value(PyJson { obj, depth: 0 }).map_err(|e| format!("{path}{e}"))
}

/// A Python value serialized straight to JSON text (no intermediate
/// `Value` tree): what outgoing params and results take. Errors name the
/// offending member like [`to_json`]'s (`params.x[2]: set is not JSON ...`).
pub(crate) fn to_raw(obj: &Bound<'_, PyAny>, path: &str) -> Result<Box<RawValue>, String> {
    serde_json::value::to_raw_value(&PyJson { obj, depth: 0 }).map_err(|e| format!("{path}{e}"))
}

/// Serializes a Python object as JSON. An error's text is the path below
/// this value then `: why` (the caller prefixes the top-level name), built
/// only when something fails.
struct PyJson<'a, 'py> {
    obj: &'a Bound<'py, PyAny>,
    depth: usize,
}

impl serde::Serialize for PyJson<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap, SerializeSeq};
        let obj = self.obj;
        if self.depth > MAX_DEPTH {
            return Err(S::Error::custom(format!(
                ": nested deeper than {MAX_DEPTH} levels"
            )));
        }
        if obj.is_none() {
            return s.serialize_unit();
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return s.serialize_bool(b.is_true());
        }
        if obj.cast::<PyInt>().is_ok() {
            if let Ok(i) = obj.extract::<i64>() {
                return s.serialize_i64(i);
            }
            if let Ok(u) = obj.extract::<u64>() {
                return s.serialize_u64(u);
            }
            return Err(S::Error::custom(": integer out of the 64-bit range"));
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            let v = f.value();
            if !v.is_finite() {
                return Err(S::Error::custom(format!(": {v} is not a JSON number")));
            }
            return s.serialize_f64(v);
        }
        if let Ok(text) = obj.cast::<PyString>() {
            let text = text
                .to_cow()
                .map_err(|e| S::Error::custom(format!(": {e}")))?;
            return s.serialize_str(&text);
        }
        let depth = self.depth + 1;
        if let Ok(d) = obj.cast::<PyDict>() {
            let mut map = s.serialize_map(Some(d.len()))?;
            for (k, v) in d.iter() {
                let Ok(key) = k.cast::<PyString>() else {
                    return Err(S::Error::custom(format!(
                        ": keys must be str, not {}",
                        type_name(&k)
                    )));
                };
                let key = key
                    .to_cow()
                    .map_err(|e| S::Error::custom(format!(": {e}")))?;
                map.serialize_entry(&*key, &PyJson { obj: &v, depth })
                    .map_err(|e| S::Error::custom(format!(".{key}{e}")))?;
            }
            return map.end();
        }
        if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
            let len = obj.len().ok();
            let mut seq = s.serialize_seq(len)?;
            let items = obj
                .try_iter()
                .map_err(|e| S::Error::custom(format!(": {e}")))?;
            for (i, item) in items.enumerate() {
                let item = item.map_err(|e| S::Error::custom(format!(": {e}")))?;
                seq.serialize_element(&PyJson { obj: &item, depth })
                    .map_err(|e| S::Error::custom(format!("[{i}]{e}")))?;
            }
            return seq.end();
        }
        Err(S::Error::custom(format!(
            ": {} is not JSON (use dict, list, tuple, str, int, float, bool or None)",
            type_name(obj)
        )))
    }
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

/// Raw JSON from the peer (`None`: absent) as a Python object, decoded
/// straight into Python objects (no intermediate `Value` tree).
pub(crate) fn raw_to_py<'py>(
    py: Python<'py>,
    raw: Option<&RawValue>,
) -> PyResult<Bound<'py, PyAny>> {
    use serde::de::DeserializeSeed;
    match raw {
        None => Ok(py.None().into_bound(py)),
        Some(raw) => {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            PySeed(py)
                .deserialize(&mut de)
                .map_err(|e| PyValueError::new_err(format!("invalid JSON from the peer: {e}")))
        }
    }
}

/// Builds the Python object for one JSON value.
#[derive(Clone, Copy)]
struct PySeed<'py>(Python<'py>);

impl<'de, 'py> serde::de::DeserializeSeed<'de> for PySeed<'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn py_err<E: serde::de::Error>(e: PyErr) -> E {
    E::custom(e.to_string())
}

impl<'de, 'py> serde::de::Visitor<'de> for PySeed<'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.None().into_bound(self.0))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.0, v).to_owned().into_any())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0, v).into_any())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.0, v).into_any())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(PyFloat::new(self.0, v).into_any())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, v).into_any())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.0);
        while let Some(item) = seq.next_element_seed(self)? {
            list.append(item).map_err(py_err)?;
        }
        Ok(list.into_any())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = map.next_value_seed(self)?;
            dict.set_item(PyString::new(self.0, &key), value)
                .map_err(py_err)?;
        }
        Ok(dict.into_any())
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
