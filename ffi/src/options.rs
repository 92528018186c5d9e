//! `acp_options`: how a connection is made. Create with `acp_options_new`,
//! set what differs from the defaults, pass to a connection constructor
//! (which copies it), free with `acp_options_free`.
//!
//! The options themselves are the core's table (`libacp_core::options`,
//! the same names, units and ranges in every binding): set by name with
//! `acp_options_set_bool`, `_int`, `_double`, `_string`, `_add_string`
//! and `_add_pair`, checked by the core when set (unknown name, wrong
//! type, out of range) and applied by each constructor for its role and
//! use (an option that does not apply there is refused by the
//! constructor). The older typed setters record the same table entries.
//! Only what is the C ABI's own (event mode, trace callback, stderr events,
//! engine events, event queue) is stored here directly.

use std::ffi::{c_char, c_void};

use libacp_core::Role;
use libacp_core::options::{self, OptionErrorKind, OptionSpec, Settings, Use, Value};

use crate::error::acp_error;
use crate::events::acp_event;
use crate::export;
use crate::status::acp_status;
use crate::string::acp_str;

/// Frame delimiting on the wire.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_framing {
    /// Newline-delimited JSON (the default; what ACP peers speak).
    ACP_FRAMING_NDJSON = 0,
    /// LSP-style `Content-Length` headers.
    ACP_FRAMING_CONTENT_LENGTH = 1,
}

/// Which way a traced frame went.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum acp_direction {
    /// Read from the peer.
    ACP_DIRECTION_INCOMING = 0,
    /// Written to the peer.
    ACP_DIRECTION_OUTGOING = 1,
}

/// Receives each event in callback mode, on the connection's dispatch
/// thread, one at a time. The callee owns `event` (free it with
/// `acp_event_free`). The first call comes after the constructor
/// returned: the connection pointer it wrote to `*out` is there to read.
/// The dispatch thread also reads the transport (pipes, sockets, stdio):
/// while the callback runs, nothing more is read.
pub type acp_event_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *mut acp_event)>;

/// Sees every frame (`frame`, `len` borrowed for the call). Runs on the
/// thread that reads or writes the frame: libacp's I/O threads, the
/// dispatch thread (callback mode reads pipes, sockets and stdio there), or
/// the thread whose `acp_*` call wrote an answer or a request directly (when
/// the writer was idle), possibly concurrently with events: it must be
/// thread-safe, quick, and must not call blocking `acp_*` functions (they
/// return `ACP_ERR_WRONG_THREAD` inside it, on any thread). It returns
/// before what it traced goes further: an incoming frame is traced before
/// its event is queued, so the trace of a response always comes before
/// that response's `ACP_EVENT_RESULT` (the option `ordered_hooks` does not
/// apply to it).
pub type acp_trace_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        direction: acp_direction,
        frame: *const c_char,
        len: usize,
    ),
>;

/// A host pointer handed back in callbacks. libacp never dereferences it;
/// the host guarantees it may be used from the threads named in the docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserData(pub(crate) *mut c_void);

// SAFETY: libacp only passes the pointer back to the host's callbacks; the
// host's contract (include/README.md) is that it may be used from the
// dispatch or I/O threads.
unsafe impl Send for UserData {}
// SAFETY: as above; never dereferenced by libacp.
unsafe impl Sync for UserData {}

/// One option the host set by name (or through a typed setter that maps
/// to the table), kept until a constructor applies it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The table's canonical name.
    name: &'static str,
    value: Value,
    /// Set by name: an option that does not apply to the constructor is
    /// refused there. Typed setters keep their old meaning: ignored where
    /// they do not apply.
    strict: bool,
}

/// Connection settings: what the host set from the core's option table
/// (`libacp_core::options`), applied by each constructor for its role and
/// use, and the settings of the C ABI alone (event mode, trace callback,
/// stderr events, engine events, event queue).
#[derive(Debug, Clone)]
pub struct acp_options {
    pub(crate) entries: Vec<Entry>,
    pub(crate) event_callback:
        Option<(unsafe extern "C" fn(*mut c_void, *mut acp_event), UserData)>,
    pub(crate) trace_callback: Option<(
        unsafe extern "C" fn(*mut c_void, acp_direction, *const c_char, usize),
        UserData,
    )>,
    pub(crate) stderr_events: bool,
    pub(crate) engine_events: bool,
    pub(crate) event_queue: usize,
}

impl Default for acp_options {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            event_callback: None,
            trace_callback: None,
            stderr_events: true,
            engine_events: false,
            event_queue: 1024,
        }
    }
}

impl acp_options {
    /// The core's settings for a constructor making a connection in `role`
    /// for `usage`: every recorded option applied in the order it was set.
    /// An option set by name that does not apply here is refused with the
    /// core's message (kind `not_applicable`).
    pub(crate) fn settings(&self, role: Role, usage: Use) -> Result<Settings, acp_error> {
        let mut settings = Settings::new(role, usage);
        for entry in &self.entries {
            match settings.set(entry.name, entry.value.clone()) {
                Ok(()) => {}
                Err(e) if !entry.strict && e.kind == OptionErrorKind::NotApplicable => {}
                Err(e) => return Err(acp_error::from_option(&e)),
            }
        }
        Ok(settings)
    }

    /// Records `name` = `value` after the core checked it (unknown name,
    /// wrong type, out of range: refused here, with the core's message).
    /// A later value of the same option replaces the earlier one.
    fn record(&mut self, name: &str, value: Value, strict: bool) -> Result<(), acp_error> {
        let spec = check(name, &value)?;
        let entry = Entry {
            name: spec.name,
            value,
            strict,
        };
        match self.entries.iter_mut().find(|e| e.name == spec.name) {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
        Ok(())
    }

    /// Forgets `name` (its default applies again).
    fn forget(&mut self, name: &str) {
        self.entries.retain(|e| e.name != name);
    }

    /// The list value recorded for `name` so far (empty when none).
    fn list(&self, name: &str) -> Value {
        let canonical = options::spec(name).map_or(name, |s| s.name);
        self.entries
            .iter()
            .find(|e| e.name == canonical)
            .map_or(Value::Null, |e| e.value.clone())
    }
}

/// Checks `value` for option `name` against the core's table, in a
/// setting where the option applies (whether it applies to the
/// constructor is decided there). Returns the option's declaration.
fn check(name: &str, value: &Value) -> Result<&'static OptionSpec, acp_error> {
    const PLACES: [(Role, Use); 8] = [
        (Role::Client, Use::Local),
        (Role::Agent, Use::Local),
        (Role::Client, Use::Spawn),
        (Role::Client, Use::Connect),
        (Role::Agent, Use::Serve),
        (Role::Agent, Use::Spawn),
        (Role::Agent, Use::Connect),
        (Role::Client, Use::Serve),
    ];
    let spec = options::spec(name);
    let (role, usage) = spec
        .and_then(|s| PLACES.into_iter().find(|(r, u)| s.applies(*u, *r)))
        .unwrap_or(PLACES[0]);
    // An unknown name, a callback, a wrong type or a value out of range:
    // the core says which, and how.
    Settings::new(role, usage)
        .set(name, value.clone())
        .map_err(|e| acp_error::from_option(&e))?;
    spec.ok_or_else(|| acp_error::invalid_argument(format!("unknown option `{name}`")))
}

/// Writes new default options to `*out` (owned; free with
/// `acp_options_free`): NDJSON, 64 MiB frames, no request timeout, 2 s + 2 s
/// shutdown grace, poll mode, the agent's stderr delivered as events, no
/// client services.
///
/// # Safety
/// `out` is valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_new(out: *mut *mut acp_options) -> acp_status {
    // SAFETY: `out` is NULL or valid, per this function's `# Safety`.
    unsafe { export::output(out, export::NO_ERROR, || Ok(Box::default())) }
}

impl export::Owned for acp_options {}

/// Frees options. NULL is ignored.
///
/// # Safety
/// `options` is NULL or from `acp_options_new`, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_free(options: *mut acp_options) {
    // SAFETY: as this function's `# Safety` says.
    unsafe { export::free(options) }
}

/// The longest duration the table takes, in milliseconds (it refuses
/// 10^15 and above).
const LONGEST_MS: u64 = 999_999_999_999_999;

/// A setter: `f` changes the options behind `options`; a failure goes to
/// `*error` (NULL: the status alone).
///
/// # Safety
/// `options` is NULL or a live `acp_options`, not used concurrently;
/// `error` is NULL or valid for one pointer write.
unsafe fn set_with_error(
    options: *mut acp_options,
    error: *mut *mut acp_error,
    f: impl FnOnce(&mut acp_options) -> Result<(), acp_error>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe { export::status(error, || f(export::arg_mut(options, "options")?)) }
}

/// A setter without an `error` parameter (the typed setters).
///
/// # Safety
/// `options` is NULL or a live `acp_options`, not used concurrently.
unsafe fn set(
    options: *mut acp_options,
    f: impl FnOnce(&mut acp_options) -> Result<(), acp_error>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe { set_with_error(options, export::NO_ERROR, f) }
}

/// Sets the boolean option `name` (an option of the core's table, in
/// snake_case: `fs`, `terminals`, `session_model`, `require_auth`,
/// `clear_env`, `prefer_websocket`, `http2_prior_knowledge`, `websocket`,
/// `streamable_http`; the full list with defaults and docs is in
/// include/README.md). Refused here with `ACP_ERR_INVALID_ARGUMENT` and an
/// error naming the option (`acp_error_kind`: `unknown`, `type` for an
/// option that is not a boolean, `not_applicable` for a callback); an
/// option that does not apply to the connection being made is refused by
/// its constructor (kind `not_applicable`). A later value replaces an
/// earlier one.
///
/// # Safety
/// `options` is a live `acp_options`; `name` per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_bool(
    options: *mut acp_options,
    name: acp_str,
    value: bool,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, `name` valid,
    // `error` NULL or valid, per this function's `# Safety`.
    unsafe {
        set_with_error(options, error, |o| {
            o.record(name.to_str()?, Value::Bool(value), true)
        })
    }
}

/// Sets the whole-number option `name`: sizes in bytes (`max_frame_size`,
/// `max_message_size`), counts (`outgoing_queue`, `incoming_queue`,
/// `incoming_requests`, `queue`, `max_connections`) and durations in
/// milliseconds (every option named `*_ms`). Refusals as
/// `acp_options_set_bool`, and `range` for a value out of the option's
/// range (the error says the range).
///
/// # Safety
/// As `acp_options_set_bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_int(
    options: *mut acp_options,
    name: acp_str,
    value: i64,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            o.record(name.to_str()?, Value::Int(value), true)
        })
    }
}

/// Sets the number option `name` with a fraction: durations in
/// milliseconds (`request_timeout_ms` = 1.5 is 1500 microseconds); a
/// whole-number option takes a whole value only. Refusals as
/// `acp_options_set_int` (NaN and infinities are `range`).
///
/// # Safety
/// As `acp_options_set_bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_double(
    options: *mut acp_options,
    name: acp_str,
    value: f64,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            o.record(name.to_str()?, Value::Float(value), true)
        })
    }
}

/// Sets the string option `name`: a choice (`framing`: `"ndjson"` or
/// `"content-length"`), a path (`cwd`, `ca_file`, `tls_cert`, `tls_key`)
/// or text (`path`). `value` is copied. Refusals as `acp_options_set_bool`,
/// and `range` for an empty string or a choice not offered.
///
/// # Safety
/// As `acp_options_set_bool`; `value` per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_string(
    options: *mut acp_options,
    name: acp_str,
    value: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            let value = Value::Text(value.to_str()?.to_owned());
            o.record(name.to_str()?, value, true)
        })
    }
}

/// Appends `value` to the list option `name` (`allowed_origins`,
/// `bearer_tokens`). `value` is copied. Refusals as `acp_options_set_bool`
/// (`type` for an option that is not a list), and `range` for an empty
/// string.
///
/// # Safety
/// As `acp_options_set_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_add_string(
    options: *mut acp_options,
    name: acp_str,
    value: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            let (name, value) = (name.to_str()?, value.to_str()?);
            let list = match o.list(name) {
                Value::Texts(mut list) => {
                    list.push(value.to_owned());
                    list
                }
                _ => vec![value.to_owned()],
            };
            o.record(name, Value::Texts(list), true)
        })
    }
}

/// Appends the pair `key`, `value` to the pairs option `name` (`headers`:
/// HTTP headers of a remote client, `env`: a spawned agent's environment).
/// Both are copied. Refusals as `acp_options_set_bool` (`type` for an
/// option that holds no pairs), and `range` for an empty key, a key with
/// `=`, or a line break or NUL in either.
///
/// # Safety
/// As `acp_options_set_string`; `key` per include/README.md.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_add_pair(
    options: *mut acp_options,
    name: acp_str,
    key: acp_str,
    value: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            let name = name.to_str()?;
            let pair = (key.to_str()?.to_owned(), value.to_str()?.to_owned());
            let pairs = match o.list(name) {
                Value::Pairs(mut pairs) => {
                    pairs.push(pair);
                    pairs
                }
                _ => vec![pair],
            };
            o.record(name, Value::Pairs(pairs), true)
        })
    }
}

/// Returns the option `name` to its default (a list or pairs option is
/// emptied). `ACP_ERR_INVALID_ARGUMENT` (kind `unknown`) for a name the
/// table does not have.
///
/// # Safety
/// As `acp_options_set_bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_unset(
    options: *mut acp_options,
    name: acp_str,
    error: *mut *mut acp_error,
) -> acp_status {
    // SAFETY: as `acp_options_set_bool`.
    unsafe {
        set_with_error(options, error, |o| {
            let name = name.to_str()?;
            let spec = options::spec(name).ok_or_else(|| {
                // The core's refusal of an unknown name, with its list.
                match Settings::new(Role::Client, Use::Local).set(name, Value::Null) {
                    Err(e) => acp_error::from_option(&e),
                    Ok(()) => acp_error::invalid_argument(format!("unknown option `{name}`")),
                }
            })?;
            o.forget(spec.name);
            Ok(())
        })
    }
}

/// Sets the framing (an `acp_framing`): the table's `framing`. Applies to
/// byte streams (a spawned agent, stdio, descriptors); ignored elsewhere.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_framing(
    options: *mut acp_options,
    framing: i32,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            let choice = match framing {
                0 => "ndjson",
                1 => "content-length",
                _ => return Err(acp_error::invalid_argument("unknown framing")),
            };
            o.record("framing", Value::Text(choice.into()), false)
        })
    }
}

/// Sets the largest frame accepted from the peer (bytes, at least 1; above
/// 2^53, 2^53): the table's `max_frame_size`.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_max_frame_size(
    options: *mut acp_options,
    bytes: usize,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            // Above the table's largest (2^53 bytes): its largest, as this
            // setter always accepted any size.
            let bytes = i64::try_from(bytes).unwrap_or(i64::MAX).min(1 << 53);
            o.record("max_frame_size", Value::Int(bytes), false)
        })
    }
}

/// Sets the default timeout of outgoing requests in milliseconds (0: none;
/// so is a value too large to be a duration, such as `UINT64_MAX`): the
/// table's `request_timeout_ms`. A timed-out call is cancelled at the peer
/// and its result is `ACP_ERR_TIMEOUT`.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_request_timeout_ms(
    options: *mut acp_options,
    ms: u64,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            let value = Value::Int(i64::try_from(ms).unwrap_or(i64::MAX));
            // 0, or longer than any duration the table accepts: none.
            if ms == 0 || check("request_timeout_ms", &value).is_err() {
                o.forget("request_timeout_ms");
                return Ok(());
            }
            o.record("request_timeout_ms", value, false)
        })
    }
}

/// Sets the spawned agent's shutdown ladder: wait `after_stdin_close_ms`
/// after closing its stdin, then SIGTERM its process group, wait
/// `after_sigterm_ms`, then SIGKILL it (the table's
/// `grace_after_stdin_close_ms` and `grace_after_sigterm_ms`, whose largest
/// value, 10^15 - 1 ms, stands for anything above; ignored by other
/// constructors).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_shutdown_grace_ms(
    options: *mut acp_options,
    after_stdin_close_ms: u64,
    after_sigterm_ms: u64,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            // Above the table's largest duration (31,000 years): its
            // largest, as this setter always accepted any value.
            let ms = |n: u64| Value::Int(n.min(LONGEST_MS) as i64);
            o.record(
                "grace_after_stdin_close_ms",
                ms(after_stdin_close_ms),
                false,
            )?;
            o.record("grace_after_sigterm_ms", ms(after_sigterm_ms), false)
        })
    }
}

/// Chooses callback mode: `callback` receives every event on the
/// connection's dispatch thread. NULL `callback` returns to poll mode.
///
/// # Safety
/// `options` is a live `acp_options`; `user_data` may be used from the
/// dispatch thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_event_callback(
    options: *mut acp_options,
    callback: acp_event_callback,
    user_data: *mut c_void,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.event_callback = callback.map(|cb| (cb, UserData(user_data)));
            Ok(())
        })
    }
}

/// Sets a wire-trace callback (NULL removes it). See `acp_trace_callback`
/// for its threading rules.
///
/// # Safety
/// `options` is a live `acp_options`; `user_data` is usable from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_trace_callback(
    options: *mut acp_options,
    callback: acp_trace_callback,
    user_data: *mut c_void,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.trace_callback = callback.map(|cb| (cb, UserData(user_data)));
            Ok(())
        })
    }
}

/// Whether a spawned agent's stderr lines arrive as `ACP_EVENT_LOG` events
/// (true, the default) or go to this process's stderr (false).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_stderr_events(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.stderr_events = enabled;
            Ok(())
        })
    }
}

/// Whether what the engine reports that is not a message arrives as
/// `ACP_EVENT_ENGINE` events (the core's `events`; default false): a
/// payload capability rule broken either way (`payload_rule`), a frame
/// skipped, a response to no request, a request the core served, ... They
/// come with the other events in wire order: after the messages received
/// before them and before those that follow (a `served` event before the
/// answer the agent sends once it read the core's). With the option
/// `ordered_hooks` false they come at once instead, ahead of the ordered
/// events (like stderr lines). While `event_queue` events wait, new ones
/// are dropped and counted (`events_dropped`).
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_engine_events(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.engine_events = enabled;
            Ok(())
        })
    }
}

/// Agent side: sessions need `authenticate` first (`session/new|load|resume`
/// answer `-32000` with `data.authMethods` until then). The table's
/// `require_auth`; ignored by client connections.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_require_auth(
    options: *mut acp_options,
    required: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.record("require_auth", Value::Bool(required), false)
        })
    }
}

/// Client side: fold every `session/update` into a session model, read with
/// `acp_connection_session_snapshot`. The table's `session_model`; ignored
/// by agent connections.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_session_model(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.record("session_model", Value::Bool(enabled), false)
        })
    }
}

/// Client side: answer `fs/read_text_file` and `fs/write_text_file` in the
/// core, confined to each session's cwd (advertised automatically; the host
/// never sees those requests). The table's `fs`; ignored by agent
/// connections.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_fs(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe { set(options, |o| o.record("fs", Value::Bool(enabled), false)) }
}

/// Client side: answer `terminal/*` in the core with real processes
/// (advertised automatically). The table's `terminals`; ignored by agent
/// connections.
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_terminals(
    options: *mut acp_options,
    enabled: bool,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            o.record("terminals", Value::Bool(enabled), false)
        })
    }
}

/// Sets how many events may wait for the host before libacp stops reading
/// from the peer, and from a spawned agent's stderr (back-pressure: a host
/// that falls behind slows them down; no event is dropped). At least 1;
/// default 1024. (The C ABI's own inbox, not in the core's table.)
///
/// # Safety
/// `options` is a live `acp_options`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acp_options_set_event_queue_capacity(
    options: *mut acp_options,
    events: usize,
) -> acp_status {
    // SAFETY: `options` is NULL or live and not shared, per this
    // function's `# Safety`.
    unsafe {
        set(options, |o| {
            if events == 0 {
                return Err(acp_error::invalid_argument(
                    "the queue must hold at least 1 event",
                ));
            }
            o.event_queue = events;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> acp_str {
        acp_str {
            ptr: s.as_ptr().cast(),
            len: s.len(),
        }
    }

    #[test]
    fn a_later_value_replaces_an_earlier_one_and_lists_grow() {
        let mut o = acp_options::default();
        let p = &raw mut o;
        // SAFETY: live options, valid strings, no error wanted.
        unsafe {
            let none = std::ptr::null_mut();
            assert_eq!(
                acp_options_set_int(p, name("queue"), 5, none),
                acp_status::ACP_OK
            );
            assert_eq!(
                acp_options_set_int(p, name("queue"), 9, none),
                acp_status::ACP_OK
            );
            for token in ["a", "b"] {
                let st = acp_options_add_string(p, name("bearer_tokens"), name(token), none);
                assert_eq!(st, acp_status::ACP_OK);
            }
        }
        let settings = o.settings(Role::Agent, Use::Serve).expect("settings");
        assert_eq!(settings.server.queue, 9);
        assert_eq!(settings.server.bearer_tokens, ["a", "b"]);
        assert_eq!(o.entries.len(), 2);
    }

    #[test]
    fn typed_setters_are_ignored_where_they_do_not_apply_and_names_are_not() {
        let mut o = acp_options::default();
        // SAFETY: live options.
        unsafe { assert_eq!(acp_options_set_fs(&raw mut o, true), acp_status::ACP_OK) };
        let agent = o.settings(Role::Agent, Use::Local).expect("ignored");
        assert!(agent.acp.services.fs.is_none());
        let client = o.settings(Role::Client, Use::Local).expect("applied");
        assert!(client.acp.services.fs.is_some());
        // SAFETY: live options and a valid string.
        let st =
            unsafe { acp_options_set_bool(&raw mut o, name("fs"), true, std::ptr::null_mut()) };
        assert_eq!(st, acp_status::ACP_OK);
        let refused = o.settings(Role::Agent, Use::Local).expect_err("strict");
        assert_eq!(refused.kind, Some("not_applicable"));
    }

    #[test]
    fn typed_setters_accept_every_value_they_always_accepted() {
        let mut o = acp_options::default();
        // SAFETY: live options.
        unsafe {
            assert_eq!(
                acp_options_set_shutdown_grace_ms(&raw mut o, u64::MAX, 0),
                acp_status::ACP_OK
            );
            assert_eq!(
                acp_options_set_max_frame_size(&raw mut o, usize::MAX),
                acp_status::ACP_OK
            );
        }
        let s = o.settings(Role::Client, Use::Spawn).expect("settings");
        assert_eq!(s.acp.connection.max_frame_size, 1 << 53);
        assert!(s.spawn.grace.after_stdin_close.as_secs() > 1 << 39);
    }

    #[test]
    fn a_request_timeout_of_zero_or_too_long_is_none() {
        let mut o = acp_options::default();
        for ms in [0, u64::MAX] {
            // SAFETY: live options.
            let st = unsafe { acp_options_set_request_timeout_ms(&raw mut o, ms) };
            assert_eq!(st, acp_status::ACP_OK);
            let s = o.settings(Role::Client, Use::Local).expect("settings");
            assert_eq!(s.acp.connection.request_timeout, None);
        }
        // SAFETY: live options.
        unsafe { acp_options_set_request_timeout_ms(&raw mut o, 250) };
        let s = o.settings(Role::Client, Use::Local).expect("settings");
        assert_eq!(
            s.acp.connection.request_timeout,
            Some(std::time::Duration::from_millis(250))
        );
    }
}
