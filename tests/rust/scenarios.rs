//! The shared scenarios: every `tests/scenarios/*.json` (the format is in
//! `tests/scenarios/README.md`) run against libacp-core's dynamic API
//! ([`AcpConnection`]) with a scripted raw peer on the other end of an
//! in-memory pipe. One scenario at a time, each on its own runtime.
//!
//! Each verdict is written straight to stderr (so the test harness does not
//! swallow it): `PASS`, `FAIL`, `XFAIL` (a scenario marked `known_failure`
//! that failed, as expected) or `XPASS` (a `known_failure` that passed:
//! remove the marker; this fails the test). `SCENARIO=<text>` runs only the
//! scenarios whose name contains `<text>`.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use libacp_core::{
    AcpConnection, AcpOptions, AcpPeer, BoxFuture, CallError, Handler, IncomingNotification,
    IncomingRequest, RawValue, Refusal, Responder, RpcError,
};
use libacp_tests::{RemoteLink, acp_agent_raw, acp_client_raw_with, acp_remote_raw};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, watch};

/// Bound on every step that waits for something.
const STEP_LIMIT: Duration = Duration::from_secs(5);
/// Bound on a whole scenario (a safety net; steps are bounded on their own).
const SCENARIO_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------
// The format, parsed and checked before anything runs.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Agent,
    Client,
}

#[derive(Debug)]
struct Scenario {
    role: Side,
    require_auth: bool,
    /// `options.unstable`: the unstable features turned on.
    unstable: Vec<String>,
    rules: Vec<Rule>,
    script: Vec<Step>,
    known_failure: Option<String>,
}

/// `host.requests[i]`: which requests it takes and what the host does.
#[derive(Debug, Clone)]
struct Rule {
    method: String,
    params: Option<Value>,
    program: Arc<Vec<Op>>,
}

/// One operation of a host program.
#[derive(Debug, Clone)]
enum Op {
    Respond(Value),
    Error(Value),
    Notify {
        method: String,
        params: Option<Value>,
        name: Option<String>,
    },
    Call {
        method: String,
        params: Option<Value>,
        name: Option<String>,
        /// On failure the handler fails with the call's error (`escape`).
        escape: bool,
    },
    WaitForCancel,
    Wait(String),
    Emit(Value),
}

#[derive(Debug)]
struct Step {
    /// The step as written, for messages.
    text: String,
    kind: StepKind,
}

#[derive(Debug)]
enum StepKind {
    Send(Value),
    Expect(Value),
    ExpectUnordered(Vec<Value>),
    ExpectEvent(Value),
    ExpectEventsUnordered(Vec<Value>),
    ExpectNoFrame(Duration),
    ExpectNoEvent(Duration),
    Close,
    ExpectClosed,
    Action {
        action: Action,
        name: Option<String>,
    },
}

#[derive(Debug, Clone)]
enum Action {
    Call {
        method: String,
        params: Option<Value>,
    },
    Notify {
        method: String,
        params: Option<Value>,
    },
    CancelSession(String),
    Release(String),
    Close,
}

type Obj = Map<String, Value>;

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Obj, String> {
    v.as_object()
        .ok_or_else(|| format!("{what} must be a JSON object, not {}", short(v)))
}

fn only_keys(obj: &Obj, allowed: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "{what}: unknown key `{k}` (allowed: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

fn string(obj: &Obj, key: &str, what: &str) -> Result<String, String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(format!(
            "{what}: `{key}` must be a string, not {}",
            short(v)
        )),
        None => Err(format!("{what}: `{key}` is required")),
    }
}

fn opt_string(obj: &Obj, key: &str, what: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(_) => string(obj, key, what).map(Some),
    }
}

fn millis(v: &Value, what: &str) -> Result<Duration, String> {
    v.as_u64()
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{what}: a quiet period in milliseconds, not {}", short(v)))
}

fn must_be_true(v: &Value, what: &str) -> Result<(), String> {
    if v == &Value::Bool(true) {
        Ok(())
    } else {
        Err(format!("{what}: the value must be `true`"))
    }
}

/// The single verb key of a step or op (besides `note` and `extra` keys).
fn verb<'a>(obj: &'a Obj, verbs: &[&'static str], what: &str) -> Result<&'a str, String> {
    let found: Vec<&String> = obj.keys().filter(|k| verbs.contains(&k.as_str())).collect();
    match found.as_slice() {
        [one] => Ok(one.as_str()),
        [] => Err(format!(
            "{what}: no verb (one of: {}) in {}",
            verbs.join(", "),
            short(&Value::Object(obj.clone()))
        )),
        _ => Err(format!("{what}: more than one verb in one object")),
    }
}

fn parse_scenario(text: &str) -> Result<Scenario, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let top = object(&v, "the scenario")?;
    only_keys(
        top,
        &[
            "description",
            "role",
            "options",
            "host",
            "script",
            "known_failure",
        ],
        "the scenario",
    )?;
    string(top, "description", "the scenario")?;
    let role = match string(top, "role", "the scenario")?.as_str() {
        "agent" => Side::Agent,
        "client" => Side::Client,
        other => {
            return Err(format!(
                "`role` must be \"agent\" or \"client\", not {other:?}"
            ));
        }
    };
    let mut require_auth = false;
    let mut unstable = Vec::new();
    if let Some(options) = top.get("options") {
        let options = object(options, "`options`")?;
        only_keys(options, &["require_auth", "unstable"], "`options`")?;
        if let Some(v) = options.get("unstable") {
            unstable = v
                .as_array()
                .and_then(|items| {
                    items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or("`options.unstable` must be an array of strings")?;
        }
        if let Some(v) = options.get("require_auth") {
            require_auth = v
                .as_bool()
                .ok_or("`options.require_auth` must be a boolean")?;
            if require_auth && role != Side::Agent {
                return Err("`options.require_auth` is an agent option".into());
            }
        }
    }
    let mut rules = Vec::new();
    if let Some(host) = top.get("host") {
        let host = object(host, "`host`")?;
        only_keys(host, &["requests"], "`host`")?;
        let list = host
            .get("requests")
            .and_then(Value::as_array)
            .ok_or("`host.requests` must be an array")?;
        for (i, rule) in list.iter().enumerate() {
            let what = format!("host.requests[{i}]");
            let obj = object(rule, &what)?;
            only_keys(obj, &["method", "params", "do", "note"], &what)?;
            let program = obj
                .get("do")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{what}: `do` must be an array of operations"))?
                .iter()
                .enumerate()
                .map(|(j, op)| parse_op(op, &format!("{what}.do[{j}]")))
                .collect::<Result<Vec<_>, _>>()?;
            rules.push(Rule {
                method: string(obj, "method", &what)?,
                params: obj.get("params").cloned(),
                program: Arc::new(program),
            });
        }
    }
    let script = top
        .get("script")
        .and_then(Value::as_array)
        .ok_or("`script` must be an array of steps")?
        .iter()
        .enumerate()
        .map(|(i, step)| parse_step(step, &format!("script[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let known_failure = opt_string(top, "known_failure", "the scenario")?;
    Ok(Scenario {
        role,
        require_auth,
        unstable,
        rules,
        script,
        known_failure,
    })
}

fn parse_op(v: &Value, what: &str) -> Result<Op, String> {
    const OPS: &[&str] = &[
        "respond",
        "error",
        "notify",
        "call",
        "wait_for_cancel",
        "wait",
        "emit",
    ];
    let obj = object(v, what)?;
    let verb = verb(obj, OPS, what)?;
    let arg = &obj[verb];
    let plain = |extra: &[&str]| {
        let mut allowed = vec![verb, "note"];
        allowed.extend_from_slice(extra);
        only_keys(obj, &allowed, what)
    };
    Ok(match verb {
        "respond" => {
            plain(&[])?;
            Op::Respond(arg.clone())
        }
        "error" => {
            plain(&[])?;
            let e = object(arg, what)?;
            only_keys(e, &["code", "message", "data"], what)?;
            if !e.get("code").is_some_and(Value::is_i64) {
                return Err(format!("{what}: `error.code` must be an integer"));
            }
            string(e, "message", what)?;
            Op::Error(arg.clone())
        }
        "notify" => {
            plain(&["params", "as"])?;
            Op::Notify {
                method: string(obj, verb, what)?,
                params: obj.get("params").cloned(),
                name: opt_string(obj, "as", what)?,
            }
        }
        "call" => {
            plain(&["params", "as", "escape"])?;
            let escape = match obj.get("escape") {
                None => false,
                Some(v) => {
                    must_be_true(v, what)?;
                    true
                }
            };
            Op::Call {
                method: string(obj, verb, what)?,
                params: obj.get("params").cloned(),
                name: opt_string(obj, "as", what)?,
                escape,
            }
        }
        "wait_for_cancel" => {
            plain(&[])?;
            must_be_true(arg, what)?;
            Op::WaitForCancel
        }
        "wait" => {
            plain(&[])?;
            Op::Wait(string(obj, "wait", what)?)
        }
        _ => {
            plain(&[])?;
            Op::Emit(arg.clone())
        }
    })
}

fn parse_step(v: &Value, what: &str) -> Result<Step, String> {
    const STEPS: &[&str] = &[
        "send",
        "expect",
        "expect_unordered",
        "expect_event",
        "expect_events_unordered",
        "expect_no_frame",
        "expect_no_event",
        "close",
        "expect_closed",
        "action",
    ];
    let obj = object(v, what)?;
    let verb = verb(obj, STEPS, what)?;
    let arg = &obj[verb];
    if verb != "action" {
        only_keys(obj, &[verb, "note"], what)?;
    }
    let kind = match verb {
        "send" => StepKind::Send(arg.clone()),
        "expect" => StepKind::Expect(arg.clone()),
        "expect_unordered" => StepKind::ExpectUnordered(
            arg.as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| format!("{what}: `expect_unordered` takes a non-empty array"))?
                .clone(),
        ),
        "expect_event" => StepKind::ExpectEvent(arg.clone()),
        "expect_events_unordered" => StepKind::ExpectEventsUnordered(
            arg.as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| {
                    format!("{what}: `expect_events_unordered` takes a non-empty array")
                })?
                .clone(),
        ),
        "expect_no_frame" => StepKind::ExpectNoFrame(millis(arg, what)?),
        "expect_no_event" => StepKind::ExpectNoEvent(millis(arg, what)?),
        "close" => {
            must_be_true(arg, what)?;
            StepKind::Close
        }
        "expect_closed" => {
            must_be_true(arg, what)?;
            StepKind::ExpectClosed
        }
        _ => {
            let name = opt_string(obj, "as", what)?;
            let (action, extra): (Action, &[&str]) = match string(obj, "action", what)?.as_str() {
                "call" => (
                    Action::Call {
                        method: string(obj, "method", what)?,
                        params: obj.get("params").cloned(),
                    },
                    &["method", "params"],
                ),
                "notify" => (
                    Action::Notify {
                        method: string(obj, "method", what)?,
                        params: obj.get("params").cloned(),
                    },
                    &["method", "params"],
                ),
                "cancel_session" => (
                    Action::CancelSession(string(obj, "sessionId", what)?),
                    &["sessionId"],
                ),
                "release" => (Action::Release(string(obj, "gate", what)?), &["gate"]),
                "close" => (Action::Close, &[]),
                other => {
                    return Err(format!(
                        "{what}: unknown action {other:?} (call, notify, cancel_session, release, close)"
                    ));
                }
            };
            let mut allowed = vec!["action", "as", "note"];
            allowed.extend_from_slice(extra);
            only_keys(obj, &allowed, what)?;
            StepKind::Action { action, name }
        }
    };
    Ok(Step {
        text: short(v),
        kind,
    })
}

// ---------------------------------------------------------------------------
// Patterns and templates.

/// Where a pattern and a value part ways.
#[derive(Debug)]
struct Mismatch {
    path: String,
    expected: String,
    got: String,
}

impl Mismatch {
    fn new(path: &str, expected: impl Into<String>, got: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            expected: expected.into(),
            got: got.into(),
        }
    }

    fn describe(&self, what: &str, pattern: &Value, actual: &Value) -> String {
        let at = if self.path.is_empty() {
            "(top level)"
        } else {
            &self.path
        };
        format!(
            "{what} does not match, at {at}: expected {}, got {}\n  expected {what}: {}\n  got {what}:      {}",
            self.expected,
            self.got,
            short(pattern),
            short(actual)
        )
    }
}

/// Compact JSON, cut at 2000 characters.
fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 2000 {
        let mut cut = 2000;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Numbers compare by value (`1` equals `1.0`); everything else structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Matches `actual` against `pattern`. `known` holds the captures so far;
/// new captures go to `bound` (kept by the caller only on success).
fn matches(pattern: &Value, actual: &Value, known: &Obj, bound: &mut Obj) -> Result<(), Mismatch> {
    match_at(pattern, actual, "", known, bound)
}

fn match_at(
    pattern: &Value,
    actual: &Value,
    path: &str,
    known: &Obj,
    bound: &mut Obj,
) -> Result<(), Mismatch> {
    match pattern {
        Value::String(s) if s.starts_with("$$") => {
            if actual.as_str() == Some(&s[1..]) {
                Ok(())
            } else {
                Err(Mismatch::new(path, short(&json!(&s[1..])), short(actual)))
            }
        }
        Value::String(s) if s == "$any" => Ok(()),
        Value::String(s) if s == "$absent" => Err(Mismatch::new(
            path,
            "\"$absent\" (only valid as the value of an object member)",
            short(actual),
        )),
        Value::String(s) if s.starts_with("$capture:") => {
            bound.insert(s["$capture:".len()..].to_owned(), actual.clone());
            Ok(())
        }
        Value::String(s) if s.starts_with("$ref:") => {
            let name = &s["$ref:".len()..];
            match bound.get(name).or_else(|| known.get(name)) {
                None => Err(Mismatch::new(
                    path,
                    format!("{s} (but nothing was captured under `{name}`)"),
                    short(actual),
                )),
                Some(v) if json_eq(v, actual) => Ok(()),
                Some(v) => Err(Mismatch::new(
                    path,
                    format!("{} ({s})", short(v)),
                    short(actual),
                )),
            }
        }
        Value::Object(p) if p.len() == 1 && p.contains_key("$one_of") => {
            let Some(alternatives) = p["$one_of"].as_array() else {
                return Err(Mismatch::new(
                    path,
                    "`$one_of` with an array",
                    "a pattern error",
                ));
            };
            let mut why = Vec::new();
            for alternative in alternatives {
                let mut trial = bound.clone();
                match match_at(alternative, actual, path, known, &mut trial) {
                    Ok(()) => {
                        *bound = trial;
                        return Ok(());
                    }
                    Err(m) => why.push(m.expected),
                }
            }
            Err(Mismatch::new(
                path,
                format!("one of [{}]", why.join(", ")),
                short(actual),
            ))
        }
        Value::Object(p) => {
            let Value::Object(a) = actual else {
                return Err(Mismatch::new(path, "an object", short(actual)));
            };
            for (key, sub) in p {
                let here = format!("{path}/{}", pointer_token(key));
                match (sub.as_str(), a.get(key)) {
                    (Some("$absent"), None) => {}
                    (Some("$absent"), Some(v)) => {
                        return Err(Mismatch::new(&here, "no such member", short(v)));
                    }
                    (_, None) => {
                        return Err(Mismatch::new(&here, short(sub), "no such member"));
                    }
                    (_, Some(v)) => match_at(sub, v, &here, known, bound)?,
                }
            }
            Ok(())
        }
        Value::Array(p) => {
            let Value::Array(a) = actual else {
                return Err(Mismatch::new(path, "an array", short(actual)));
            };
            if p.len() != a.len() {
                return Err(Mismatch::new(
                    path,
                    format!("an array of {} items", p.len()),
                    format!("{} items: {}", a.len(), short(actual)),
                ));
            }
            for (i, (sub, v)) in p.iter().zip(a).enumerate() {
                match_at(sub, v, &format!("{path}/{i}"), known, bound)?;
            }
            Ok(())
        }
        literal => {
            if json_eq(literal, actual) {
                Ok(())
            } else {
                Err(Mismatch::new(path, short(literal), short(actual)))
            }
        }
    }
}

/// Fills a template: `"$ref:name"` becomes the captured value, `"$$x"`
/// becomes `"$x"`; other placeholders are errors.
fn fill(template: &Value, known: &Obj) -> Result<Value, String> {
    Ok(match template {
        Value::String(s) if s.starts_with("$$") => Value::String(s[1..].to_owned()),
        Value::String(s) if s.starts_with("$ref:") => {
            let name = &s["$ref:".len()..];
            known
                .get(name)
                .cloned()
                .ok_or_else(|| format!("{s}: nothing was captured under `{name}`"))?
        }
        Value::String(s) if s == "$any" || s == "$absent" || s.starts_with("$capture:") => {
            return Err(format!("{s} is a pattern, not a value"));
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| fill(v, known))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => {
            if o.contains_key("$one_of") {
                return Err("`$one_of` is a pattern, not a value".into());
            }
            Value::Object(
                o.iter()
                    .map(|(k, v)| Ok((k.clone(), fill(v, known)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
        other => other.clone(),
    })
}

// ---------------------------------------------------------------------------
// Outcomes: how a call's result or typed error is written as JSON.

fn outcome(result: &Result<Value, CallError>) -> Value {
    match result {
        Ok(v) => json!({ "result": v }),
        Err(e) => json!({ "error": error_json(e) }),
    }
}

fn error_json(e: &CallError) -> Value {
    let message = e.to_string();
    match e {
        CallError::Rpc(err) => {
            let mut v = json!({"kind": "Rpc", "code": err.code, "message": err.message});
            if let Some(data) = &err.data {
                v["data"] = data.clone();
            }
            v
        }
        CallError::Connection(_) => json!({"kind": "Closed", "message": message}),
        CallError::Cancelled => json!({"kind": "Cancelled", "message": message}),
        CallError::Timeout => json!({"kind": "Timeout", "message": message}),
        CallError::InvalidParams(_) => json!({"kind": "InvalidParams", "message": message}),
        CallError::InvalidResult(_) => json!({"kind": "InvalidResult", "message": message}),
        CallError::Refused(r) => refusal_json(r, message),
        // No scenario expects a kind the core adds later.
        _ => json!({"kind": "Other", "message": message}),
    }
}

fn refusal_json(r: &Refusal, message: String) -> Value {
    let mut v = r.to_json();
    v["kind"] = json!(format!("Refused.{}", r.kind()));
    v["message"] = json!(message);
    v
}

fn value_of(raw: Option<&RawValue>) -> Value {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or(Value::Null)
}

fn raw_of(v: &Value) -> Result<Box<RawValue>, String> {
    serde_json::value::to_raw_value(v).map_err(|e| e.to_string())
}

fn params_of(params: Option<&Value>, known: &Obj) -> Result<Option<Box<RawValue>>, String> {
    params
        .map(|p| fill(p, known).and_then(|v| raw_of(&v)))
        .transpose()
}

// ---------------------------------------------------------------------------
// The host: a Handler that runs the scenario's programs.

/// State shared by the script and the host programs of one scenario.
struct Ctx {
    captures: Mutex<Obj>,
    events: mpsc::UnboundedSender<Value>,
    gates: watch::Sender<HashSet<String>>,
    /// Host-side errors (an unbound `$ref`, a failed call without `as`):
    /// they fail the scenario at the next step.
    problems: Mutex<Vec<String>>,
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Ctx {
    fn known(&self) -> Obj {
        locked(&self.captures).clone()
    }

    fn keep(&self, bound: Obj) {
        locked(&self.captures).extend(bound);
    }

    fn fill(&self, template: &Value) -> Result<Value, String> {
        fill(template, &self.known())
    }

    fn emit(&self, event: Value) {
        let _ = self.events.send(event);
    }

    fn problem(&self, what: String) {
        locked(&self.problems).push(what);
    }

    fn spawn(&self, fut: impl std::future::Future<Output = ()> + Send + 'static) {
        let handle = tokio::spawn(fut);
        locked(&self.tasks).push(handle.abort_handle());
    }

    fn release(&self, gate: &str) {
        self.gates.send_modify(|open| {
            open.insert(gate.to_owned());
        });
    }

    async fn wait_gate(&self, gate: &str) {
        let mut rx = self.gates.subscribe();
        let _ = rx.wait_for(|open| open.contains(gate)).await;
    }

    /// Records the outcome of a host program's call or notify.
    fn settle(&self, what: &str, name: Option<&String>, result: &Result<Value, CallError>) {
        match (name, result) {
            (Some(name), _) => {
                locked(&self.captures).insert(name.clone(), outcome(result));
            }
            (None, Ok(_)) => {}
            (None, Err(e)) => self.problem(format!("{what} failed: {}", short(&error_json(e)))),
        }
    }
}

struct Host {
    rules: Vec<Rule>,
    ctx: Arc<Ctx>,
}

impl Handler for Host {
    fn on_request(&self, request: IncomingRequest, responder: Responder) {
        let params = value_of(request.params.as_deref());
        let known = self.ctx.known();
        let chosen = self.rules.iter().find_map(|rule| {
            if rule.method != request.method {
                return None;
            }
            let mut bound = Obj::new();
            if let Some(pattern) = &rule.params {
                matches(pattern, &params, &known, &mut bound).ok()?;
            }
            Some((rule, bound))
        });
        let Some((rule, bound)) = chosen else {
            let _ = responder.respond(Err(RpcError::method_not_found(&request.method)));
            return;
        };
        self.ctx.keep(bound);
        let ctx = Arc::clone(&self.ctx);
        self.ctx.spawn(run_program(
            Arc::clone(&rule.program),
            request,
            responder,
            ctx,
        ));
    }

    fn on_notification(&self, notification: IncomingNotification) -> BoxFuture<'static, ()> {
        self.ctx.emit(json!({
            "event": "notification",
            "method": notification.method,
            "params": value_of(notification.params.as_deref()),
        }));
        Box::pin(async {})
    }
}

async fn run_program(
    program: Arc<Vec<Op>>,
    request: IncomingRequest,
    responder: Responder,
    ctx: Arc<Ctx>,
) {
    let what = format!(
        "the host's `{}` handler (id {})",
        request.method, request.id
    );
    let Some(acp) = AcpPeer::of(&request.peer) else {
        ctx.problem(format!("{what}: not an ACP connection"));
        return;
    };
    for op in program.iter() {
        match op {
            Op::Respond(v) => {
                match ctx.fill(v).and_then(|v| raw_of(&v)) {
                    Ok(raw) => {
                        let _ = responder.respond(Ok(raw));
                    }
                    Err(e) => ctx.problem(format!("{what}: respond: {e}")),
                }
                return;
            }
            Op::Error(e) => {
                match ctx.fill(e) {
                    Ok(e) => {
                        let mut err = RpcError::new(
                            e["code"].as_i64().unwrap_or_default(),
                            e["message"].as_str().unwrap_or_default(),
                        );
                        if let Some(data) = e.get("data") {
                            err = err.with_data(data.clone());
                        }
                        let _ = responder.respond(Err(err));
                    }
                    Err(e) => ctx.problem(format!("{what}: error: {e}")),
                }
                return;
            }
            Op::Notify {
                method,
                params,
                name,
            } => {
                let params = match params_of(params.as_ref(), &ctx.known()) {
                    Ok(p) => p,
                    Err(e) => return ctx.problem(format!("{what}: notify {method}: {e}")),
                };
                let result = acp.notify(method, params).await.map(|()| Value::Null);
                ctx.settle(&format!("{what}: notify {method}"), name.as_ref(), &result);
            }
            Op::Call {
                method,
                params,
                name,
                escape,
            } => {
                let params = match params_of(params.as_ref(), &ctx.known()) {
                    Ok(p) => p,
                    Err(e) => return ctx.problem(format!("{what}: call {method}: {e}")),
                };
                let result = acp
                    .request(method, params)
                    .await
                    .map(|raw| value_of(Some(&raw)));
                if *escape && let Err(e) = result {
                    if let Some(name) = name {
                        ctx.settle(&what, Some(name), &Err(e.clone()));
                    }
                    // The conversion a typed handler's `?` makes.
                    let _ = responder.respond(Err(RpcError::from(e)));
                    return;
                }
                ctx.settle(&format!("{what}: call {method}"), name.as_ref(), &result);
            }
            Op::WaitForCancel => request.cancellation.cancelled().await,
            Op::Wait(gate) => ctx.wait_gate(gate).await,
            Op::Emit(v) => match ctx.fill(v) {
                Ok(v) => ctx.emit(json!({"event": "emit", "value": v})),
                Err(e) => ctx.problem(format!("{what}: emit: {e}")),
            },
        }
    }
    // Ends without answering: the dropped responder answers -32603 unless
    // the request was answered already.
    drop(responder);
}

// ---------------------------------------------------------------------------
// The peer's wire and the script.

enum Line {
    Frame(Value),
    Garbage(String),
}

/// Reads the frames libacp writes; the channel closes at end of stream.
async fn read_frames(
    mut reader: BufReader<ReadHalf<DuplexStream>>,
    tx: mpsc::UnboundedSender<Line>,
) {
    loop {
        let mut buf = Vec::new();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf);
                let text = text.trim_end_matches(['\n', '\r']);
                let line = match serde_json::from_str(text) {
                    Ok(v) => Line::Frame(v),
                    Err(_) => Line::Garbage(text.to_owned()),
                };
                if tx.send(line).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Line::Garbage(format!("(read error: {e})")));
                return;
            }
        }
    }
}

struct Run<'a> {
    /// Set once the connection exists (remotely, an agent is made when the
    /// peer's `initialize` arrives).
    conn: watch::Receiver<Option<AcpConnection>>,
    ctx: &'a Arc<Ctx>,
    frames: mpsc::UnboundedReceiver<Line>,
    writer: Option<WriteHalf<DuplexStream>>,
    events: mpsc::UnboundedReceiver<Value>,
}

impl Run<'_> {
    async fn next_frame(&mut self) -> Result<Value, String> {
        match tokio::time::timeout(STEP_LIMIT, self.frames.recv()).await {
            Err(_) => Err(format!("no frame within {} s", STEP_LIMIT.as_secs())),
            Ok(None) => Err("got end of stream instead of a frame".into()),
            Ok(Some(Line::Garbage(text))) => Err(format!("got a line that is not JSON: {text:?}")),
            Ok(Some(Line::Frame(v))) => Ok(v),
        }
    }

    async fn next_event(&mut self) -> Result<Value, String> {
        match tokio::time::timeout(STEP_LIMIT, self.events.recv()).await {
            Ok(Some(e)) => Ok(e),
            _ => Err(format!("no host event within {} s", STEP_LIMIT.as_secs())),
        }
    }

    /// Matches `got` (frames or events) against `patterns` in any order.
    fn unordered(&self, what: &str, patterns: &[Value], got: &[Value]) -> Result<(), String> {
        let known = self.ctx.known();
        let mut used = vec![false; got.len()];
        let mut bound = Obj::new();
        if pair_up(patterns, got, &mut used, &known, &mut bound) {
            self.ctx.keep(bound);
            return Ok(());
        }
        let mut report = format!("the {what}s do not match the patterns in any order");
        for (i, v) in got.iter().enumerate() {
            report.push_str(&format!("\n  got {what} {i}: {}", short(v)));
        }
        for (i, p) in patterns.iter().enumerate() {
            let fits: Vec<usize> = (0..got.len())
                .filter(|&j| matches(p, &got[j], &known, &mut Obj::new()).is_ok())
                .collect();
            report.push_str(&format!(
                "\n  pattern {i}: {} matches {what}s {fits:?}",
                short(p)
            ));
            if fits.is_empty() {
                for (j, v) in got.iter().enumerate() {
                    if let Err(m) = matches(p, v, &known, &mut Obj::new()) {
                        report.push_str(&format!(
                            "\n    vs {what} {j}: at {}: expected {}, got {}",
                            if m.path.is_empty() {
                                "(top level)"
                            } else {
                                &m.path
                            },
                            m.expected,
                            m.got
                        ));
                    }
                }
            }
        }
        Err(report)
    }

    async fn step(&mut self, step: &StepKind) -> Result<(), String> {
        match step {
            StepKind::Send(v) => {
                let mut line = match v {
                    Value::String(raw) => raw.clone(),
                    v => self.ctx.fill(v)?.to_string(),
                };
                line.push('\n');
                let writer = self
                    .writer
                    .as_mut()
                    .ok_or("the peer already closed its write side")?;
                tokio::time::timeout(STEP_LIMIT, async {
                    writer.write_all(line.as_bytes()).await?;
                    writer.flush().await
                })
                .await
                .map_err(|_| "could not write within the step limit".to_owned())?
                .map_err(|e| format!("write failed: {e}"))
            }
            StepKind::Expect(pattern) => {
                let frame = self.next_frame().await?;
                let mut bound = Obj::new();
                matches(pattern, &frame, &self.ctx.known(), &mut bound)
                    .map_err(|m| m.describe("frame", pattern, &frame))?;
                self.ctx.keep(bound);
                Ok(())
            }
            StepKind::ExpectUnordered(patterns) => {
                let mut frames = Vec::new();
                for _ in patterns {
                    frames.push(self.next_frame().await.map_err(|e| {
                        format!("after {} of {} frames: {e}", frames.len(), patterns.len())
                    })?);
                }
                self.unordered("frame", patterns, &frames)
            }
            StepKind::ExpectEventsUnordered(patterns) => {
                let mut events = Vec::new();
                for _ in patterns {
                    events.push(self.next_event().await.map_err(|e| {
                        format!("after {} of {} events: {e}", events.len(), patterns.len())
                    })?);
                }
                self.unordered("event", patterns, &events)
            }
            StepKind::ExpectEvent(pattern) => {
                let event = self.next_event().await?;
                let mut bound = Obj::new();
                matches(pattern, &event, &self.ctx.known(), &mut bound)
                    .map_err(|m| m.describe("event", pattern, &event))?;
                self.ctx.keep(bound);
                Ok(())
            }
            StepKind::ExpectNoFrame(quiet) => {
                match tokio::time::timeout(*quiet, self.frames.recv()).await {
                    Err(_) => Ok(()),
                    Ok(None) => Err("got end of stream: libacp closed the connection".into()),
                    Ok(Some(Line::Frame(v))) => {
                        Err(format!("got an unexpected frame: {}", short(&v)))
                    }
                    Ok(Some(Line::Garbage(text))) => {
                        Err(format!("got an unexpected line that is not JSON: {text:?}"))
                    }
                }
            }
            StepKind::ExpectNoEvent(quiet) => {
                match tokio::time::timeout(*quiet, self.events.recv()).await {
                    Err(_) | Ok(None) => Ok(()),
                    Ok(Some(e)) => Err(format!("got an unexpected host event: {}", short(&e))),
                }
            }
            StepKind::Close => {
                if let Some(mut w) = self.writer.take() {
                    let _ = w.shutdown().await;
                }
                Ok(())
            }
            StepKind::ExpectClosed => {
                match tokio::time::timeout(STEP_LIMIT, self.frames.recv()).await {
                    Ok(None) => Ok(()),
                    Err(_) => Err(format!(
                        "the connection was still open after {} s",
                        STEP_LIMIT.as_secs()
                    )),
                    Ok(Some(Line::Frame(v))) => Err(format!(
                        "expected end of stream, got a frame: {}",
                        short(&v)
                    )),
                    Ok(Some(Line::Garbage(t))) => {
                        Err(format!("expected end of stream, got a line: {t:?}"))
                    }
                }
            }
            StepKind::Action { action, name } => self.action(action, name.as_ref()).await,
        }
    }

    async fn action(&mut self, action: &Action, name: Option<&String>) -> Result<(), String> {
        let known = self.ctx.known();
        let conn = match tokio::time::timeout(STEP_LIMIT, self.conn.wait_for(Option::is_some)).await
        {
            Ok(Ok(conn)) => conn.clone().ok_or("no connection")?,
            _ => return Err("the connection was never made".into()),
        };
        let ctx = Arc::clone(self.ctx);
        let work: BoxFuture<'static, Result<Value, CallError>> = match action.clone() {
            Action::Call { method, params } => {
                let call = conn.request(&method, params_of(params.as_ref(), &known)?);
                Box::pin(async move { call.await.map(|raw| value_of(Some(&raw))) })
            }
            Action::Notify { method, params } => {
                let params = params_of(params.as_ref(), &known)?;
                Box::pin(async move { conn.notify(&method, params).await.map(|()| Value::Null) })
            }
            Action::CancelSession(id) => {
                let id = fill(&Value::String(id), &known)?;
                let id = id
                    .as_str()
                    .ok_or("`sessionId` must be a string")?
                    .to_owned();
                Box::pin(async move { conn.cancel_session(&id).await.map(|()| Value::Null) })
            }
            Action::Release(gate) => {
                ctx.release(&gate);
                Box::pin(async { Ok(Value::Null) })
            }
            Action::Close => Box::pin(async move {
                conn.close().await;
                Ok(Value::Null)
            }),
        };
        match name {
            Some(name) => {
                let name = name.clone();
                let events = Arc::clone(self.ctx);
                self.ctx.spawn(async move {
                    let result = work.await;
                    let mut event = outcome(&result);
                    event["event"] = json!("returned");
                    event["as"] = json!(name);
                    events.emit(event);
                });
                Ok(())
            }
            None => match tokio::time::timeout(STEP_LIMIT, work).await {
                Err(_) => Err(format!(
                    "did not complete within {} s",
                    STEP_LIMIT.as_secs()
                )),
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(format!("failed: {}", short(&error_json(&e)))),
            },
        }
    }
}

/// Pairs each pattern with a distinct frame (backtracking; lists are
/// short). Captures of earlier pairs are visible to later ones.
fn pair_up(
    patterns: &[Value],
    frames: &[Value],
    used: &mut [bool],
    known: &Obj,
    bound: &mut Obj,
) -> bool {
    let Some((first, rest)) = patterns.split_first() else {
        return true;
    };
    for j in 0..frames.len() {
        if used[j] {
            continue;
        }
        let mut trial = bound.clone();
        let mut visible = known.clone();
        visible.extend(bound.clone());
        if matches(first, &frames[j], &visible, &mut trial).is_err() {
            continue;
        }
        used[j] = true;
        if pair_up(rest, frames, used, known, &mut trial) {
            *bound = trial;
            return true;
        }
        used[j] = false;
    }
    false
}

/// What carries a scenario's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    /// An in-memory pipe.
    Memory,
    /// libacp's remote transport, client and server, on loopback.
    Remote(RemoteLink),
}

async fn run_scenario(scenario: &Scenario, link: Link) -> Result<(), String> {
    let (events_tx, events) = mpsc::unbounded_channel();
    let ctx = Arc::new(Ctx {
        captures: Mutex::new(Obj::new()),
        events: events_tx,
        gates: watch::Sender::new(HashSet::new()),
        problems: Mutex::new(Vec::new()),
        tasks: Mutex::new(Vec::new()),
    });
    let host = Host {
        rules: scenario.rules.clone(),
        ctx: Arc::clone(&ctx),
    };
    let options = AcpOptions {
        require_auth: scenario.require_auth,
        unstable: libacp_core::protocol::unstable::Features::parse(&scenario.unstable)
            .unwrap_or_else(|bad| panic!("`options.unstable` names no feature {bad:?}")),
        ..AcpOptions::default()
    };
    let (conn, peer, server) = match (link, scenario.role) {
        (Link::Memory, Side::Agent) => {
            let (conn, peer) = acp_agent_raw(host, options);
            (watch::channel(Some(conn)).1, peer, None)
        }
        (Link::Memory, Side::Client) => {
            let (conn, peer) = acp_client_raw_with(host, options);
            (watch::channel(Some(conn)).1, peer, None)
        }
        (Link::Remote(remote), side) => {
            let role = match side {
                Side::Agent => libacp_core::Role::Agent,
                Side::Client => libacp_core::Role::Client,
            };
            let r = acp_remote_raw(role, host, options, remote).await;
            (r.conn, r.peer, Some(r.server))
        }
    };
    let (reader, writer) = peer.into_parts();
    let (frames_tx, frames) = mpsc::unbounded_channel();
    ctx.spawn(read_frames(reader, frames_tx));
    let mut run = Run {
        conn,
        ctx: &ctx,
        frames,
        writer,
        events,
    };
    let script = async {
        for (i, step) in scenario.script.iter().enumerate() {
            let result = run.step(&step.kind).await;
            let problems = std::mem::take(&mut *locked(&ctx.problems));
            let mut failure = result.err().into_iter().chain(problems).peekable();
            if failure.peek().is_some() {
                let details: Vec<String> = failure.collect();
                return Err(format!(
                    "step {} {}\n    {}",
                    i + 1,
                    step.text,
                    details.join("\n").replace('\n', "\n    ")
                ));
            }
        }
        // Host errors after the last step fail the scenario too.
        let problems = std::mem::take(&mut *locked(&ctx.problems));
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "after the last step\n    {}",
                problems.join("\n    ")
            ))
        }
    };
    let result = tokio::time::timeout(SCENARIO_LIMIT, script)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "the scenario took over {} s",
                SCENARIO_LIMIT.as_secs()
            ))
        });
    for task in locked(&ctx.tasks).drain(..) {
        task.abort();
    }
    drop(run);
    drop(server);
    result
}

/// How one scenario went.
enum Verdict {
    Pass,
    Fail(String),
    /// Marked `known_failure` and failed.
    KnownFailure {
        reason: String,
        details: String,
    },
}

fn run_file(path: &Path, link: Link) -> Verdict {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return Verdict::Fail(format!("cannot read the file: {e}")),
    };
    let scenario = match parse_scenario(&text) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail(format!("bad scenario file: {e}")),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Verdict::Fail(format!("no runtime: {e}")),
    };
    let result = runtime.block_on(run_scenario(&scenario, link));
    runtime.shutdown_timeout(Duration::from_secs(1));
    match (scenario.known_failure, result) {
        (None, Ok(())) => Verdict::Pass,
        (None, Err(e)) => Verdict::Fail(e),
        (Some(reason), Err(details)) => Verdict::KnownFailure { reason, details },
        (Some(reason), Ok(())) => Verdict::Fail(format!(
            "marked known_failure ({reason}) but passed (XPASS): remove the marker"
        )),
    }
}

/// Writes past the harness's output capture, so each verdict is always seen.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Scenarios that cannot mean the same over a remote link, and why. Every
/// other scenario must pass over every link.
fn not_over(link: Link, name: &str) -> Option<&'static str> {
    match (link, name) {
        (Link::Remote(_), "peer_closes_mid_turn") => Some(
            "a remote transport has no half-close: the agent ending its output ends the \
             connection (a WebSocket close, the end of the event streams), so no answer can \
             follow",
        ),
        _ => None,
    }
}

#[test]
fn shared_scenarios() {
    run_all(Link::Memory);
}

#[test]
fn shared_scenarios_over_websocket() {
    run_all(Link::Remote(RemoteLink::WebSocket));
}

#[test]
fn shared_scenarios_over_streamable_http() {
    run_all(Link::Remote(RemoteLink::Http));
}

#[test]
fn shared_scenarios_over_h2c() {
    run_all(Link::Remote(RemoteLink::H2c));
}

fn run_all(link: Link) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/scenarios")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios in {}", dir.display());
    let filter = std::env::var("SCENARIO").ok();
    let (mut passed, mut expected_failures, mut failed) = (0, 0, Vec::new());
    for path in &files {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        if let Some(why) = not_over(link, &name) {
            say(&format!("SKIP  {name} over {link:?}: {why}"));
            continue;
        }
        let started = Instant::now();
        let verdict = run_file(path, link);
        let ms = started.elapsed().as_millis();
        match verdict {
            Verdict::Pass => {
                passed += 1;
                say(&format!("PASS  {name} over {link:?} ({ms} ms)"));
            }
            Verdict::KnownFailure { reason, details } => {
                expected_failures += 1;
                say(&format!(
                    "XFAIL {name} ({ms} ms): known failure: {reason}\n  {}",
                    details.replace('\n', "\n  ")
                ));
            }
            Verdict::Fail(e) => {
                let report = format!("FAIL  {name} ({ms} ms)\n  {}", e.replace('\n', "\n  "));
                say(&report);
                failed.push(report);
            }
        }
    }
    say(&format!(
        "scenarios: {passed} passed, {expected_failures} known failures, {} failed",
        failed.len()
    ));
    assert!(
        failed.is_empty(),
        "{} scenario(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

// ---------------------------------------------------------------------------
// The runner's own checks: a runner that passes everything is worthless.

#[test]
fn patterns_match_as_documented() {
    let none = Obj::new();
    let ok = |p: Value, a: Value| matches(&p, &a, &none, &mut Obj::new()).is_ok();
    assert!(
        ok(json!({"a": 1}), json!({"a": 1.0, "b": 2})),
        "subset, by value"
    );
    assert!(ok(json!({"a": "$absent"}), json!({"b": 1})));
    assert!(!ok(json!({"a": "$absent"}), json!({"a": null})));
    assert!(ok(json!({"a": "$any"}), json!({"a": null})));
    assert!(!ok(json!({"a": "$any"}), json!({})));
    assert!(!ok(json!([1]), json!([1, 2])), "arrays match whole");
    assert!(ok(json!({"$one_of": ["x", "y"]}), json!("y")));
    assert!(!ok(json!({"$one_of": ["x", "y"]}), json!("z")));
    assert!(ok(json!("$$any"), json!("$any")));
    assert!(!ok(json!("$$any"), json!("other")));
    assert!(ok(json!("$/cancel_request"), json!("$/cancel_request")));

    let mut bound = Obj::new();
    matches(
        &json!({"id": "$capture:id"}),
        &json!({"id": 7}),
        &none,
        &mut bound,
    )
    .expect("captures");
    assert_eq!(bound["id"], 7);
    assert!(matches(&json!("$ref:id"), &json!(7), &bound, &mut Obj::new()).is_ok());
    assert!(matches(&json!("$ref:id"), &json!(8), &bound, &mut Obj::new()).is_err());
    assert!(matches(&json!("$ref:nothing"), &json!(8), &bound, &mut Obj::new()).is_err());

    let m = matches(
        &json!({"result": {"stopReason": "cancelled"}}),
        &json!({"id": 3, "result": {"stopReason": "end_turn"}}),
        &none,
        &mut Obj::new(),
    )
    .expect_err("a mismatch");
    assert_eq!(
        (m.path.as_str(), m.expected.as_str(), m.got.as_str()),
        ("/result/stopReason", "\"cancelled\"", "\"end_turn\"")
    );

    assert_eq!(
        fill(
            &json!({"id": "$ref:id", "m": "$$x", "l": ["$ref:id"]}),
            &bound
        ),
        Ok(json!({"id": 7, "m": "$x", "l": [7]}))
    );
    assert!(fill(&json!({"a": "$any"}), &none).is_err());
    assert!(fill(&json!("$ref:nothing"), &none).is_err());

    let mut used = [false, false];
    let mut bound = Obj::new();
    assert!(pair_up(
        &[json!({"id": "$capture:x"}), json!({"id": 1})],
        &[json!({"id": 2}), json!({"id": 1})],
        &mut used,
        &none,
        &mut bound,
    ));
    assert_eq!(bound["x"], 2, "backtracks past the first fit");
}

#[test]
fn bad_scenario_files_are_refused() {
    for bad in [
        r#"{"role": "agent", "script": []}"#,
        r#"{"description": "", "role": "editor", "script": []}"#,
        r#"{"description": "", "role": "agent", "script": [], "extra": 1}"#,
        r#"{"description": "", "role": "agent", "script": [{"sned": {}}]}"#,
        r#"{"description": "", "role": "agent", "script": [{"send": {}, "expect": {}}]}"#,
        r#"{"description": "", "role": "agent", "script": [{"action": "dance"}]}"#,
        r#"{"description": "", "role": "agent", "script": [{"expect_no_frame": "long"}]}"#,
        r#"{"description": "", "role": "client", "options": {"require_auth": true}, "script": []}"#,
        r#"{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"reply": 1}]}]}, "script": []}"#,
        r#"{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"error": {"code": "x", "message": ""}}]}]}, "script": []}"#,
    ] {
        assert!(parse_scenario(bad).is_err(), "accepted: {bad}");
    }
}

/// A scenario whose expectation is wrong fails, saying where and how.
#[test]
fn a_wrong_expectation_fails_with_a_precise_diff() {
    let scenario = parse_scenario(
        r#"{"description": "", "role": "agent",
            "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
            "script": [
              {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
              {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
            ]}"#,
    )
    .expect("a valid scenario");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let err = runtime
        .block_on(run_scenario(&scenario, Link::Memory))
        .expect_err("the scenario must fail");
    assert!(
        err.starts_with("step 2 ")
            && err.contains("at /result/protocolVersion: expected 2, got 1")
            && err.contains(
                r#"got frame:      {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#
            ),
        "{err}"
    );
    let err = runtime
        .block_on(run_scenario(
            &parse_scenario(
                r#"{"description": "", "role": "agent",
                    "script": [{"send": "garbage"}, {"expect_no_frame": 200}]}"#,
            )
            .expect("valid"),
            Link::Memory,
        ))
        .expect_err("a -32700 answer is a frame");
    assert!(
        err.contains("unexpected frame") && err.contains("-32700"),
        "{err}"
    );
}
