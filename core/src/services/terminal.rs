//! The `terminal/*` methods, backed by real processes.
//!
//! A [`TerminalManager`] runs each `terminal/create` command as a child
//! process in its own process group, with stdout and stderr sent into one
//! pipe (so their relative order is kept) and stdin connected to
//! `/dev/null`. The output is kept in a buffer of at most `outputByteLimit`
//! bytes; older output is dropped from the start, at a UTF-8 character
//! boundary, and `truncated` becomes `true`.
//!
//! # Contract
//!
//! * **Threads.** `TerminalManager` is `Send + Sync`; share it behind an
//!   `Arc`. Its methods must be awaited inside a Tokio runtime with the I/O
//!   and time drivers enabled (outside one they fail with `-32603`). Each
//!   terminal is driven by one Tokio task that reads its output, reaps the
//!   process and carries out kills; the request methods only look at shared
//!   state, so none of them blocks another. `output` never waits;
//!   `wait_for_exit` waits for the exit; `kill` waits for the exit for at
//!   most the kill grace plus one second.
//! * **Sessions.** The host registers each session's working directory with
//!   [`TerminalManager::add_session`]; it is the default `cwd` of the
//!   session's commands, and `terminal/create` for an unregistered session is
//!   refused. A terminal belongs to the session that created it: a request
//!   naming another session does not find it.
//! * **Ownership and lifetime.** The manager owns every process it starts.
//!   `terminal/kill` stops the command (SIGTERM to the whole process group,
//!   then SIGKILL after the kill grace, [`DEFAULT_KILL_GRACE`] by default)
//!   and keeps the terminal and its output. `terminal/release`,
//!   [`TerminalManager::release_session`] and
//!   [`TerminalManager::remove_session`] do the same in the background and
//!   forget the terminal at once. Dropping the manager sends SIGKILL to every
//!   group that may still be running, and a terminal's task that is dropped
//!   (runtime shut down) kills its group too: no process outlives the
//!   manager, except one that left its process group (`setsid`).
//! * **Hosts that display terminals.** Output is gone after release; a host
//!   that keeps showing an embedded terminal should take a last `output`
//!   before it releases.
//!
//! # Errors (all [`RpcError`], sent to the peer as they are)
//!
//! | Situation | Code | `data` |
//! |---|---|---|
//! | session not registered (`create`) | `-32002` | `{sessionId}` |
//! | unknown or released terminal id, or another session's | `-32002` | `{terminalId}` |
//! | `cwd` relative, missing or not a directory | `-32602` | `{cwd}` |
//! | empty `command`; NUL byte in command or args; env name empty or with `=`/NUL | `-32602` | `{command}` or `{name}` |
//! | the command could not be started (not found, not executable, ...) | `-32603` | `{command, error}` |
//! | no Tokio runtime; the terminal's task vanished before the exit | `-32603` | a description |
//!
//! # Exit status
//!
//! `exitCode` is the exit code when the command exited normally;
//! `signal` is the name of the signal that ended it (`"SIGTERM"`,
//! `"SIGKILL"`, ...; the decimal number for signals without a portable
//! name). The exit status is published once the process has been reaped and
//! its output has reached end of file (or 100 ms later, if a background
//! process still holds the output open), so an `output` that reports an
//! exit status contains everything the command wrote.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::{RpcError, codes};
use crate::v1;

/// Output kept when `terminal/create` gives no `outputByteLimit` (1 MiB).
pub const DEFAULT_OUTPUT_BYTE_LIMIT: usize = 1024 * 1024;

/// The largest `outputByteLimit` honoured (16 MiB); larger requests are
/// clamped to it, so one command cannot exhaust memory or the peer's frame
/// limit.
pub const MAX_OUTPUT_BYTE_LIMIT: usize = 16 * 1024 * 1024;

/// Time between SIGTERM and SIGKILL when a terminal is killed or released.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(2);

/// How long the exit status waits for the output to reach end of file.
const EXIT_DRAIN: Duration = Duration::from_millis(100);

/// How long `kill` waits for the exit beyond the kill grace.
const KILL_SETTLE: Duration = Duration::from_secs(1);

const READ_CHUNK: usize = 8192;

/// The `terminal/*` methods. See the [module documentation](self) for the
/// contract.
#[derive(Debug)]
pub struct TerminalManager {
    sessions: Mutex<HashMap<String, PathBuf>>,
    terminals: Mutex<HashMap<String, Arc<Terminal>>>,
    next_id: AtomicU64,
    default_output_byte_limit: usize,
    max_output_byte_limit: usize,
    kill_grace: Duration,
}

/// One running or finished command, as the manager sees it.
#[derive(Debug)]
struct Terminal {
    session_id: Arc<str>,
    /// The process id of the command, which is also its process group id.
    pgid: u32,
    output: Arc<Mutex<Output>>,
    exit: watch::Receiver<Option<v1::TerminalExitStatus>>,
    /// Dropping the last sender tells the terminal's task to release it.
    control: watch::Sender<Control>,
}

/// What the manager asks of a terminal's task. Only ever escalates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Control {
    Run,
    Kill,
    Release,
}

/// State shared between the manager and a terminal's task.
#[derive(Debug)]
struct Output {
    buffer: OutputBuffer,
    /// The command's process has been reaped (its pid is free).
    reaped: bool,
    /// Every writer closed the output pipe.
    eof: bool,
}

impl Default for TerminalManager {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalManager {
    /// A manager with no session and no terminal, the default output limits
    /// ([`DEFAULT_OUTPUT_BYTE_LIMIT`], [`MAX_OUTPUT_BYTE_LIMIT`]) and kill
    /// grace ([`DEFAULT_KILL_GRACE`]).
    pub fn new() -> Self {
        Self {
            sessions: Mutex::new(HashMap::new()),
            terminals: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            default_output_byte_limit: DEFAULT_OUTPUT_BYTE_LIMIT,
            max_output_byte_limit: MAX_OUTPUT_BYTE_LIMIT,
            kill_grace: DEFAULT_KILL_GRACE,
        }
    }

    /// Sets the output kept when the request gives no `outputByteLimit`
    /// (`default`) and the largest limit honoured (`max`). `default` is
    /// clamped to `max`.
    #[must_use]
    pub fn with_output_byte_limits(mut self, default: usize, max: usize) -> Self {
        self.max_output_byte_limit = max;
        self.default_output_byte_limit = default.min(max);
        self
    }

    /// Sets the time between SIGTERM and SIGKILL on kill and release.
    #[must_use]
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Registers (or re-registers) `session_id`, with `cwd` as the default
    /// working directory of its commands.
    ///
    /// Errors: `-32602` with `data: {cwd}` when `cwd` is relative or not an
    /// existing directory.
    pub fn add_session(&self, session_id: &str, cwd: &Path) -> Result<(), RpcError> {
        check_cwd(cwd)?;
        lock(&self.sessions).insert(session_id.to_owned(), cwd.to_path_buf());
        Ok(())
    }

    /// Releases every terminal of `session_id` (see
    /// [`release`](Self::release)) and forgets the session.
    pub fn remove_session(&self, session_id: &str) {
        self.release_session(session_id);
        lock(&self.sessions).remove(session_id);
    }

    /// Releases every terminal of `session_id`: their commands are stopped
    /// (SIGTERM, then SIGKILL after the grace) and their ids become unknown.
    /// The session stays registered.
    pub fn release_session(&self, session_id: &str) {
        let released: Vec<Arc<Terminal>> = {
            let mut terminals = lock(&self.terminals);
            let ids: Vec<String> = terminals
                .iter()
                .filter(|(_, t)| &*t.session_id == session_id)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| terminals.remove(id)).collect()
        };
        for terminal in released {
            terminal.control.send_replace(Control::Release);
        }
    }

    /// Handles `terminal/create`: starts the command and returns its id at
    /// once.
    ///
    /// The command inherits the host's environment with `env` applied on
    /// top, runs in `cwd` (default: the session's registered directory) in a
    /// new process group, and keeps at most `outputByteLimit` bytes of output
    /// (default [`DEFAULT_OUTPUT_BYTE_LIMIT`], at most
    /// [`MAX_OUTPUT_BYTE_LIMIT`]). The command is run as given, not through a
    /// shell. Errors: see the [module documentation](self).
    pub async fn create(
        &self,
        req: v1::CreateTerminalRequest,
    ) -> Result<v1::CreateTerminalResponse, RpcError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RpcError::internal_error(
                "terminals need a Tokio runtime with I/O and time enabled",
            ));
        }
        let session_cwd = lock(&self.sessions)
            .get(&*req.session_id.0)
            .cloned()
            .ok_or_else(|| {
                RpcError::new(codes::RESOURCE_NOT_FOUND, "unknown session")
                    .with_data(json!({ "sessionId": &*req.session_id.0 }))
            })?;
        let cwd = match req.cwd {
            Some(cwd) => {
                check_cwd(&cwd)?;
                cwd
            }
            None => session_cwd,
        };
        check_command(&req.command, &req.args, &req.env)?;
        let limit = req
            .output_byte_limit
            .map_or(self.default_output_byte_limit, |l| {
                usize::try_from(l).unwrap_or(usize::MAX)
            })
            .min(self.max_output_byte_limit);

        let internal = |what: &str, e: io::Error| {
            RpcError::internal_error(format!("could not set up the terminal ({what}): {e}"))
        };
        let (read_end, write_end) = io::pipe().map_err(|e| internal("pipe", e))?;
        let write_end_2 = write_end.try_clone().map_err(|e| internal("pipe", e))?;
        let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(read_end))
            .map_err(|e| internal("pipe", e))?;

        let mut command = tokio::process::Command::new(&req.command);
        command
            .args(&req.args)
            .envs(req.env.iter().map(|v| (&v.name, &v.value)))
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(write_end)
            .stderr(write_end_2)
            .process_group(0)
            .kill_on_drop(false);
        let spawned = command.spawn();
        // The command holds our copies of the pipe's write end; closing them
        // lets end of file arrive once the process group closes its own.
        drop(command);
        let child = spawned.map_err(|e| spawn_error(&req.command, &e))?;
        let Some(pgid) = child.id() else {
            // Only possible if the child was already reaped, which nothing
            // has done yet; there is nothing to kill.
            return Err(RpcError::internal_error("the command has no process id"));
        };

        let id = format!("term-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let output = Arc::new(Mutex::new(Output {
            buffer: OutputBuffer::new(limit),
            reaped: false,
            eof: false,
        }));
        let (exit_tx, exit_rx) = watch::channel(None);
        let (control_tx, control_rx) = watch::channel(Control::Run);
        let driver = Driver {
            pgid,
            output: Arc::clone(&output),
            exit: exit_tx,
            control: control_rx,
            grace: self.kill_grace,
        };
        tokio::spawn(driver.run(child, reader));
        let terminal = Arc::new(Terminal {
            session_id: req.session_id.0,
            pgid,
            output,
            exit: exit_rx,
            control: control_tx,
        });
        lock(&self.terminals).insert(id.clone(), terminal);
        Ok(v1::CreateTerminalResponse::new(id))
    }

    /// Handles `terminal/output`: the output kept so far, whether some was
    /// dropped, and the exit status once the command has exited. Never
    /// waits. While the command runs, a character whose last bytes have not
    /// arrived yet is left out until they do.
    pub async fn output(
        &self,
        req: v1::TerminalOutputRequest,
    ) -> Result<v1::TerminalOutputResponse, RpcError> {
        let terminal = self.find(&req.session_id, &req.terminal_id)?;
        // The exit status first: once it is set, the output is complete.
        let exit = terminal.exit.borrow().clone();
        let output = lock(&terminal.output);
        let text = output.buffer.text(output.eof);
        Ok(v1::TerminalOutputResponse::new(text, output.buffer.truncated).exit_status(exit))
    }

    /// Handles `terminal/wait_for_exit`: resolves when the command has
    /// exited (also when it is killed or released meanwhile).
    pub async fn wait_for_exit(
        &self,
        req: v1::WaitForTerminalExitRequest,
    ) -> Result<v1::WaitForTerminalExitResponse, RpcError> {
        let mut exit = self.find(&req.session_id, &req.terminal_id)?.exit.clone();
        match wait_exit(&mut exit).await {
            Some(status) => Ok(v1::WaitForTerminalExitResponse::new(status)),
            None => Err(RpcError::internal_error(
                "the terminal's task ended before the command exited",
            )),
        }
    }

    /// Handles `terminal/kill`: stops the command (SIGTERM to its process
    /// group, SIGKILL after the kill grace) and keeps the terminal, so that
    /// `output` and `wait_for_exit` still work. Returns once the command has
    /// exited, or after the grace plus one second. Killing a command that
    /// has exited is not an error (background processes it left in its group
    /// are sent SIGKILL).
    pub async fn kill(
        &self,
        req: v1::KillTerminalRequest,
    ) -> Result<v1::KillTerminalResponse, RpcError> {
        let terminal = self.find(&req.session_id, &req.terminal_id)?;
        terminal.control.send_if_modified(|c| {
            let run = *c == Control::Run;
            if run {
                *c = Control::Kill;
            }
            run
        });
        let mut exit = terminal.exit.clone();
        drop(terminal);
        let _ = tokio::time::timeout(self.kill_grace + KILL_SETTLE, wait_exit(&mut exit)).await;
        Ok(v1::KillTerminalResponse::new())
    }

    /// Handles `terminal/release`: stops the command if it still runs (in
    /// the background, as [`kill`](Self::kill) does) and forgets the
    /// terminal; its id is unknown from now on. Returns at once.
    pub async fn release(
        &self,
        req: v1::ReleaseTerminalRequest,
    ) -> Result<v1::ReleaseTerminalResponse, RpcError> {
        let terminal = {
            let mut terminals = lock(&self.terminals);
            match terminals.get(&*req.terminal_id.0) {
                Some(t) if t.session_id == req.session_id.0 => {
                    terminals.remove(&*req.terminal_id.0)
                }
                _ => None,
            }
        }
        .ok_or_else(|| unknown_terminal(&req.terminal_id))?;
        terminal.control.send_replace(Control::Release);
        Ok(v1::ReleaseTerminalResponse::new())
    }

    fn find(
        &self,
        session_id: &v1::SessionId,
        terminal_id: &v1::TerminalId,
    ) -> Result<Arc<Terminal>, RpcError> {
        lock(&self.terminals)
            .get(&*terminal_id.0)
            .filter(|t| t.session_id == session_id.0)
            .cloned()
            .ok_or_else(|| unknown_terminal(terminal_id))
    }
}

impl Drop for TerminalManager {
    /// Sends SIGKILL to every process group that may still run, then lets
    /// the terminals' tasks reap them.
    fn drop(&mut self) {
        let terminals = std::mem::take(&mut *lock(&self.terminals));
        for terminal in terminals.into_values() {
            let may_run = {
                let output = lock(&terminal.output);
                !output.reaped || !output.eof
            };
            if may_run {
                kill_group(terminal.pgid, libc::SIGKILL);
            }
            terminal.control.send_replace(Control::Release);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unknown_terminal(id: &v1::TerminalId) -> RpcError {
    RpcError::new(codes::RESOURCE_NOT_FOUND, "unknown terminal")
        .with_data(json!({ "terminalId": &*id.0 }))
}

fn check_cwd(cwd: &Path) -> Result<(), RpcError> {
    let bad = |message: &str| {
        RpcError::new(codes::INVALID_PARAMS, message)
            .with_data(json!({ "cwd": cwd.to_string_lossy() }))
    };
    if !cwd.is_absolute() {
        return Err(bad("cwd must be an absolute path"));
    }
    // One stat(2); cheap enough not to need the blocking pool.
    if !cwd.is_dir() {
        return Err(bad("cwd is not an existing directory"));
    }
    Ok(())
}

fn check_command(command: &str, args: &[String], env: &[v1::EnvVariable]) -> Result<(), RpcError> {
    let bad_command = |message: &str| {
        RpcError::new(codes::INVALID_PARAMS, message).with_data(json!({ "command": command }))
    };
    if command.is_empty() {
        return Err(bad_command("command must not be empty"));
    }
    if command.contains('\0') || args.iter().any(|a| a.contains('\0')) {
        return Err(bad_command("command and args must not contain NUL bytes"));
    }
    for var in env {
        if var.name.is_empty() || var.name.contains(['=', '\0']) || var.value.contains('\0') {
            return Err(RpcError::new(
                codes::INVALID_PARAMS,
                "environment variable names must be non-empty without `=` or NUL, values without NUL",
            )
            .with_data(json!({ "name": var.name })));
        }
    }
    Ok(())
}

fn spawn_error(command: &str, e: &io::Error) -> RpcError {
    let code = if e.kind() == io::ErrorKind::InvalidInput {
        codes::INVALID_PARAMS
    } else {
        codes::INTERNAL_ERROR
    };
    RpcError::new(code, format!("could not start `{command}`: {e}"))
        .with_data(json!({ "command": command, "error": e.to_string() }))
}

/// Sends `signal` to the process group `pgid`. Errors (the group is gone)
/// are ignored.
fn kill_group(pgid: u32, signal: libc::c_int) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    // 0 would be our own group and 1 "every process"; neither is a command's.
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg(2) only sends a signal; it takes no pointers and has no
    // memory-safety preconditions.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Waits until `exit` holds a status. `None` if the sender went away first.
async fn wait_exit(
    exit: &mut watch::Receiver<Option<v1::TerminalExitStatus>>,
) -> Option<v1::TerminalExitStatus> {
    loop {
        if let Some(status) = exit.borrow_and_update().clone() {
            return Some(status);
        }
        if exit.changed().await.is_err() {
            return exit.borrow().clone();
        }
    }
}

/// Sends SIGKILL to the group when dropped while armed: a terminal's task
/// dropped before its command was reaped (runtime shutdown) leaks nothing.
struct GroupGuard {
    pgid: u32,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// The task that owns one command: reads its output, reaps it, publishes
/// the exit status and carries out kill and release. All signals to the
/// group are sent from here while the command is unreaped, so its pid (the
/// group id) cannot have been reused.
struct Driver {
    pgid: u32,
    output: Arc<Mutex<Output>>,
    exit: watch::Sender<Option<v1::TerminalExitStatus>>,
    control: watch::Receiver<Control>,
    grace: Duration,
}

impl Driver {
    async fn run(mut self, mut child: tokio::process::Child, reader: pipe::Receiver) {
        let mut guard = GroupGuard {
            pgid: self.pgid,
            armed: true,
        };
        let mut reader = Some(reader);
        let mut buf = vec![0u8; READ_CHUNK];
        let mut status: Option<v1::TerminalExitStatus> = None;
        let mut published = false;
        let mut kill_requested = false;
        let mut control_open = true;
        let mut sigkill_at: Option<Instant> = None;
        let mut drain_until: Option<Instant> = None;
        loop {
            if let Some(s) = &status
                && reader.is_none()
            {
                if !published {
                    self.exit.send_replace(Some(s.clone()));
                }
                return;
            }
            tokio::select! {
                changed = self.control.changed(), if control_open => {
                    let requested = match changed {
                        Ok(()) => *self.control.borrow_and_update(),
                        // The manager forgot the terminal without a word
                        // (it was dropped): release.
                        Err(_) => {
                            control_open = false;
                            Control::Release
                        }
                    };
                    if requested >= Control::Kill && !kill_requested {
                        kill_requested = true;
                        if status.is_none() {
                            kill_group(self.pgid, libc::SIGTERM);
                            sigkill_at = Some(Instant::now() + self.grace);
                        } else {
                            // The command has exited but something still
                            // holds its output open: background processes
                            // left in its group.
                            kill_group(self.pgid, libc::SIGKILL);
                        }
                    }
                    if requested == Control::Release {
                        reader = None;
                    }
                }
                read = read_some(&mut reader, &mut buf), if reader.is_some() => {
                    match read {
                        Ok(n) if n > 0 => lock(&self.output).buffer.push(buf.get(..n).unwrap_or_default()),
                        _ => {
                            reader = None;
                            lock(&self.output).eof = true;
                        }
                    }
                }
                result = child.wait(), if status.is_none() => {
                    guard.armed = false;
                    lock(&self.output).reaped = true;
                    if kill_requested {
                        // Whatever is left of the group gets no more grace.
                        kill_group(self.pgid, libc::SIGKILL);
                    }
                    sigkill_at = None;
                    status = Some(exit_status(result));
                    drain_until = Some(Instant::now() + EXIT_DRAIN);
                }
                () = sleep_until(sigkill_at), if sigkill_at.is_some() => {
                    sigkill_at = None;
                    kill_group(self.pgid, libc::SIGKILL);
                }
                () = sleep_until(drain_until), if drain_until.is_some() => {
                    drain_until = None;
                    if let Some(s) = &status {
                        self.exit.send_replace(Some(s.clone()));
                        published = true;
                    }
                }
                else => return,
            }
        }
    }
}

async fn read_some(reader: &mut Option<pipe::Receiver>, buf: &mut [u8]) -> io::Result<usize> {
    match reader {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn exit_status(result: io::Result<ExitStatus>) -> v1::TerminalExitStatus {
    match result {
        Ok(status) => v1::TerminalExitStatus::new()
            .exit_code(status.code().and_then(|c| u32::try_from(c).ok()))
            .signal(status.signal().map(signal_name)),
        Err(_) => v1::TerminalExitStatus::new(),
    }
}

/// The conventional name of a signal (`"SIGKILL"`), or its number for
/// signals without a portable name.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        _ => return signal.to_string(),
    };
    name.to_owned()
}

/// The last `limit` bytes of output at most, starting at a UTF-8 character
/// boundary once anything was dropped.
#[derive(Debug)]
struct OutputBuffer {
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
    /// After a cut, how many more leading continuation bytes (the rest of
    /// the character that was cut) may still have to be dropped; they can
    /// arrive in later chunks when the buffer emptied.
    skip_continuations: u8,
}

impl OutputBuffer {
    fn new(limit: usize) -> Self {
        Self {
            bytes: VecDeque::new(),
            limit,
            truncated: false,
            skip_continuations: 0,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let mut dropped = false;
        // A chunk longer than the limit replaces everything with its tail.
        let keep_from = chunk.len().saturating_sub(self.limit);
        if keep_from > 0 {
            dropped = true;
            self.bytes.clear();
        }
        self.bytes
            .extend(chunk.get(keep_from..).unwrap_or_default());
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            dropped = true;
            self.bytes.drain(..excess);
        }
        if dropped {
            self.truncated = true;
            // The cut may have split a character: its remaining
            // continuation bytes (at most three in UTF-8) must go too.
            self.skip_continuations = 3;
        }
        while self.skip_continuations > 0 {
            match self.bytes.front() {
                Some(b) if b & 0xC0 == 0x80 => {
                    self.bytes.pop_front();
                    self.skip_continuations -= 1;
                }
                // A character starts here: aligned.
                Some(_) => self.skip_continuations = 0,
                // Empty: the rest may come with the next chunk.
                None => break,
            }
        }
    }

    /// The kept output as text. Unless `complete`, a character whose last
    /// bytes have not arrived yet is left out; invalid UTF-8 the command
    /// wrote becomes U+FFFD.
    fn text(&self, complete: bool) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        if !complete {
            let keep = bytes.len() - incomplete_tail(&bytes);
            bytes.truncate(keep);
        }
        match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }
}

/// The length of an incomplete UTF-8 sequence at the end of `bytes` (0 if
/// the last character is complete or the bytes are not UTF-8 there).
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let Some(&byte) = bytes.get(bytes.len() - back) else {
            return 0;
        };
        if byte & 0xC0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests;
