//! The unstable payloads of `tests/interop/unstable-payloads.json`, shared
//! by the Rust interop peers (libacp's and the official Rust SDK's, each on
//! its own typed API): the agents decode them into their types and send
//! them, the clients compare what their side decoded with them, member by
//! member. Plain JSON only (`serde_json`), no ACP library.
//!
//! `tests/interop/README.md` ("Unstable payloads") describes the steps.

#![allow(dead_code, reason = "each peer uses its side's half")]

use std::sync::LazyLock;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

static PAYLOADS: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../interop/unstable-payloads.json"))
        .unwrap_or_else(|e| panic!("tests/interop/unstable-payloads.json: {e}"))
});

/// The payload at the JSON pointer (`/usage`, `/plan`,
/// `/systemPrompt/append`); `null` if there is none.
pub fn json(pointer: &str) -> Value {
    PAYLOADS.pointer(pointer).cloned().unwrap_or(Value::Null)
}

/// The payload at the JSON pointer, decoded as `T`.
pub fn typed<T: DeserializeOwned>(pointer: &str) -> Result<T, String> {
    serde_json::from_value(json(pointer))
        .map_err(|e| format!("unstable-payloads.json{pointer} as a typed value: {e}"))
}

/// Agent side: why this agent refuses a `systemPrompt` (the `data` of its
/// `-32602`), given as its SDK decoded it (`null`: none). It applies the
/// modes `append` and `override`, and text blocks only.
pub fn refused_system_prompt(system_prompt: &Value) -> Option<Value> {
    if system_prompt.is_null() {
        return None;
    }
    let mode = &system_prompt["mode"];
    if mode != "append" && mode != "override" {
        return Some(json!({"mode": mode, "details": "unsupported system prompt mode"}));
    }
    let content = system_prompt["content"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if content.is_empty() || content.iter().any(|block| block["type"] != "text") {
        return Some(json!({"details": "a system prompt is one or more text blocks"}));
    }
    None
}

/// Client side: the `systemPrompt` the agent says it got, from the chunks
/// of the prompt `system` (exactly one, `system: <JSON>`).
pub fn said_system_prompt(label: &str, chunks: &[String]) -> Result<Value, String> {
    match chunks {
        [one] => one
            .strip_prefix("system: ")
            .and_then(|said| serde_json::from_str(said).ok())
            .ok_or_else(|| format!("{label}: the agent said {one:?}")),
        _ => Err(format!("{label}: the agent said {chunks:?}")),
    }
}

/// Client side: the updates of the prompt `plan` or `subagent` (as this
/// client decoded them) must be the payloads at `/COMMAND`, one by one,
/// then the chunk `COMMAND: N updates`.
pub fn check_updates(command: &str, updates: &[Value]) -> Result<(), String> {
    let expected = json(&format!("/{command}"));
    let expected = expected.as_array().map_or(&[][..], Vec::as_slice);
    let said = format!("{command}: {} updates", expected.len());
    let (last, got) = updates
        .split_last()
        .ok_or_else(|| format!("{command}: no update"))?;
    if last["sessionUpdate"] != "agent_message_chunk" || last["content"]["text"] != said {
        return Err(format!(
            "{command}: the last update is {last}, expected the chunk {said:?}"
        ));
    }
    if got.len() != expected.len() {
        return Err(format!(
            "{command}: {} updates before the chunk, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (i, (got, expected)) in got.iter().zip(expected).enumerate() {
        if got != expected {
            return Err(format!(
                "{command}: update {i}: got {got}, expected {expected}"
            ));
        }
    }
    Ok(())
}
