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
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    const LONG: Duration = Duration::from_secs(10);

    /// A unique directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            static N: AtomicU32 = AtomicU32::new(0);
            let dir = std::env::temp_dir().join(format!(
                "libacp-term-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(std::fs::canonicalize(&dir).unwrap())
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A manager with session "s" rooted at a fresh temp dir.
    fn manager(tag: &str) -> (TerminalManager, TempDir) {
        let dir = TempDir::new(tag);
        let m = TerminalManager::new();
        m.add_session("s", &dir.0).unwrap();
        (m, dir)
    }

    fn sh(script: &str) -> v1::CreateTerminalRequest {
        sh_in("s", script)
    }

    fn sh_in(session: &str, script: &str) -> v1::CreateTerminalRequest {
        v1::CreateTerminalRequest::new(session.to_owned(), "sh")
            .args(vec!["-c".into(), script.into()])
    }

    async fn create(m: &TerminalManager, req: v1::CreateTerminalRequest) -> v1::TerminalId {
        m.create(req).await.unwrap().terminal_id
    }

    async fn output(m: &TerminalManager, id: &v1::TerminalId) -> v1::TerminalOutputResponse {
        m.output(v1::TerminalOutputRequest::new("s", id.clone()))
            .await
            .unwrap()
    }

    async fn wait(m: &TerminalManager, id: &v1::TerminalId) -> v1::TerminalExitStatus {
        tokio::time::timeout(
            LONG,
            m.wait_for_exit(v1::WaitForTerminalExitRequest::new("s", id.clone())),
        )
        .await
        .expect("the command did not exit in time")
        .unwrap()
        .exit_status
    }

    async fn kill(m: &TerminalManager, id: &v1::TerminalId) {
        tokio::time::timeout(LONG, m.kill(v1::KillTerminalRequest::new("s", id.clone())))
            .await
            .expect("kill did not return")
            .unwrap();
    }

    /// Polls the output until it contains `needle`.
    async fn output_containing(m: &TerminalManager, id: &v1::TerminalId, needle: &str) -> String {
        let deadline = Instant::now() + LONG;
        loop {
            let out = output(m, id).await.output;
            if out.contains(needle) {
                return out;
            }
            assert!(Instant::now() < deadline, "no {needle:?} in {out:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The first line of output, parsed as a pid.
    async fn printed_pid(m: &TerminalManager, id: &v1::TerminalId) -> i32 {
        let out = output_containing(m, id, "\n").await;
        out.lines().next().unwrap().trim().parse().unwrap()
    }

    /// Whether `pid` is gone (or a zombie nobody has reaped yet).
    fn is_dead(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(_) if Path::new("/proc/self").exists() => true,
            // No procfs: ask the kernel (a zombie still counts as alive).
            // SAFETY: kill(2) with signal 0 only checks for existence.
            Err(_) => (unsafe { libc::kill(pid, 0) }) != 0,
        }
    }

    async fn eventually_dead(pid: i32) -> bool {
        let deadline = Instant::now() + LONG;
        while Instant::now() < deadline {
            if is_dead(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    fn assert_unknown_terminal(err: &RpcError, id: &v1::TerminalId) {
        assert_eq!(err.code, codes::RESOURCE_NOT_FOUND, "{err}");
        assert_eq!(err.data, Some(json!({ "terminalId": &*id.0 })));
    }

    #[tokio::test]
    async fn output_captures_stdout_and_stderr_in_order_with_the_exit_code() {
        let (m, _dir) = manager("basic");
        let id = create(&m, sh("echo out; echo err >&2; echo out2; exit 3")).await;
        let status = wait(&m, &id).await;
        assert_eq!(status.exit_code, Some(3));
        assert_eq!(status.signal, None);
        let out = output(&m, &id).await;
        assert_eq!(out.output, "out\nerr\nout2\n");
        assert!(!out.truncated);
        assert_eq!(out.exit_status, Some(status));
    }

    #[tokio::test]
    async fn output_of_a_running_command_has_no_exit_status() {
        let (m, _dir) = manager("running");
        let id = create(&m, sh("echo started; sleep 30")).await;
        output_containing(&m, &id, "started").await;
        assert_eq!(output(&m, &id).await.exit_status, None);
        m.release(v1::ReleaseTerminalRequest::new("s", id))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn args_env_and_cwd_are_applied() {
        let (m, dir) = manager("env");
        let sub = dir.0.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let req = v1::CreateTerminalRequest::new("s", "sh")
            .args(vec![
                "-c".into(),
                r#"printf '%s|%s|%s' "$FOO" "$1" "$(pwd -P)""#.into(),
                "sh".into(),
                "first arg".into(),
            ])
            .env(vec![v1::EnvVariable::new("FOO", "bar baz")])
            .cwd(sub.clone());
        let id = create(&m, req).await;
        wait(&m, &id).await;
        assert_eq!(
            output(&m, &id).await.output,
            format!("bar baz|first arg|{}", sub.display())
        );
    }

    #[tokio::test]
    async fn default_cwd_is_the_sessions() {
        let (m, dir) = manager("cwd");
        let id = create(&m, sh("pwd -P")).await;
        wait(&m, &id).await;
        assert_eq!(
            output(&m, &id).await.output,
            format!("{}\n", dir.0.display())
        );
    }

    #[tokio::test]
    async fn relative_or_missing_cwd_is_invalid_params() {
        let (m, dir) = manager("badcwd");
        let err = m
            .create(sh("true").cwd(PathBuf::from("rel")))
            .await
            .unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS);
        assert_eq!(err.data, Some(json!({ "cwd": "rel" })));
        let missing = dir.0.join("missing");
        let err = m.create(sh("true").cwd(missing)).await.unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS);
        assert!(lock(&m.terminals).is_empty());
        assert_eq!(
            m.add_session("t", Path::new("rel")).unwrap_err().code,
            codes::INVALID_PARAMS
        );
    }

    #[tokio::test]
    async fn unknown_session_is_resource_not_found() {
        let (m, _dir) = manager("nosession");
        let err = m
            .create(v1::CreateTerminalRequest::new("other", "true"))
            .await
            .unwrap_err();
        assert_eq!(err.code, codes::RESOURCE_NOT_FOUND);
        assert_eq!(err.data, Some(json!({ "sessionId": "other" })));
    }

    #[tokio::test]
    async fn bad_commands_are_refused_without_a_terminal() {
        let (m, _dir) = manager("badcmd");
        let err = m
            .create(v1::CreateTerminalRequest::new(
                "s",
                "/definitely/not/a/command",
            ))
            .await
            .unwrap_err();
        assert_eq!(err.code, codes::INTERNAL_ERROR, "{err}");
        assert_eq!(err.data.unwrap()["command"], "/definitely/not/a/command");
        let err = m
            .create(v1::CreateTerminalRequest::new("s", ""))
            .await
            .unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS);
        let err = m.create(sh("true\0")).await.unwrap_err();
        assert_eq!(err.code, codes::INVALID_PARAMS);
        for name in ["", "A=B", "A\0"] {
            let err = m
                .create(sh("true").env(vec![v1::EnvVariable::new(name, "x")]))
                .await
                .unwrap_err();
            assert_eq!(err.code, codes::INVALID_PARAMS, "{name:?}");
        }
        assert!(lock(&m.terminals).is_empty());
    }

    #[tokio::test]
    async fn output_limit_truncates_from_the_start_at_a_character_boundary() {
        let (m, _dir) = manager("utf8");
        // 100 × "é" (2 bytes each) = 200 bytes; 11 bytes would split one.
        let script = "printf 'é%.0s' $(seq 1 100)";
        let id = create(&m, sh(script).output_byte_limit(11)).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!(out.output, "é".repeat(5));
        assert!(out.truncated);
        // The same command within its limit is not truncated.
        let id = create(&m, sh(script).output_byte_limit(200)).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!(out.output, "é".repeat(100));
        assert!(!out.truncated);
    }

    #[tokio::test]
    async fn truncation_keeps_the_end_of_the_output() {
        let (m, _dir) = manager("tail");
        let id = create(&m, sh("seq 1 10000").output_byte_limit(12)).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!(out.output, "\n9999\n10000\n");
        assert!(out.truncated);
    }

    #[tokio::test]
    async fn absent_limit_uses_the_default_and_large_limits_are_clamped() {
        let dir = TempDir::new("limits");
        let m = TerminalManager::new().with_output_byte_limits(4, 8);
        m.add_session("s", &dir.0).unwrap();
        let id = create(&m, sh("printf 0123456789")).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!((out.output.as_str(), out.truncated), ("6789", true));
        let id = create(&m, sh("printf 0123456789").output_byte_limit(u64::MAX)).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!((out.output.as_str(), out.truncated), ("23456789", true));
        let id = create(&m, sh("printf 0123456789").output_byte_limit(0)).await;
        wait(&m, &id).await;
        let out = output(&m, &id).await;
        assert_eq!((out.output.as_str(), out.truncated), ("", true));
    }

    #[tokio::test]
    async fn signal_exits_report_the_signal_name() {
        let (m, _dir) = manager("signal");
        for (signal, name) in [("KILL", "SIGKILL"), ("TERM", "SIGTERM")] {
            let id = create(&m, sh(&format!("kill -{signal} $$"))).await;
            let status = wait(&m, &id).await;
            assert_eq!(status.signal.as_deref(), Some(name));
            assert_eq!(status.exit_code, None);
        }
    }

    #[tokio::test]
    async fn kill_stops_the_whole_group_and_keeps_the_terminal() {
        let (m, _dir) = manager("kill");
        // The shell prints the pid of a background child in its group.
        let id = create(&m, sh("sleep 30 & echo $!; wait")).await;
        let grandchild = printed_pid(&m, &id).await;
        kill(&m, &id).await;
        // kill returned after the exit: the status is there at once.
        let out = output(&m, &id).await;
        assert_eq!(
            out.exit_status.and_then(|s| s.signal).as_deref(),
            Some("SIGTERM")
        );
        assert_eq!(wait(&m, &id).await.signal.as_deref(), Some("SIGTERM"));
        assert!(
            eventually_dead(grandchild).await,
            "background child survived"
        );
        // Killing again is harmless.
        kill(&m, &id).await;
        m.release(v1::ReleaseTerminalRequest::new("s", id))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn kill_gives_the_command_a_grace_period() {
        let (m, _dir) = manager("grace");
        let id = create(
            &m,
            sh("trap 'echo bye; exit 7' TERM; echo ready; sleep 30 & wait"),
        )
        .await;
        output_containing(&m, &id, "ready").await;
        kill(&m, &id).await;
        let status = wait(&m, &id).await;
        assert_eq!(status.exit_code, Some(7));
        assert_eq!(output(&m, &id).await.output, "ready\nbye\n");
    }

    #[tokio::test]
    async fn kill_escalates_to_sigkill_after_the_grace() {
        let dir = TempDir::new("escalate");
        let m = TerminalManager::new().with_kill_grace(Duration::from_millis(200));
        m.add_session("s", &dir.0).unwrap();
        let id = create(&m, sh("trap '' TERM; echo ready; sleep 30")).await;
        output_containing(&m, &id, "ready").await;
        let started = Instant::now();
        kill(&m, &id).await;
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert_eq!(wait(&m, &id).await.signal.as_deref(), Some("SIGKILL"));
    }

    #[tokio::test]
    async fn wait_for_exit_resolves_when_another_request_kills() {
        let (m, _dir) = manager("waitkill");
        let m = Arc::new(m);
        let id = create(&m, sh("sleep 30")).await;
        let waiter = {
            let (m, id) = (Arc::clone(&m), id.clone());
            tokio::spawn(async move { wait(&m, &id).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished());
        kill(&m, &id).await;
        let status = waiter.await.unwrap();
        assert_eq!(status.signal.as_deref(), Some("SIGTERM"));
    }

    #[tokio::test]
    async fn release_kills_and_forgets_the_terminal() {
        let (m, _dir) = manager("release");
        let id = create(&m, sh("echo $$; exec sleep 30")).await;
        let pid = printed_pid(&m, &id).await;
        m.release(v1::ReleaseTerminalRequest::new("s", id.clone()))
            .await
            .unwrap();
        assert!(eventually_dead(pid).await, "released command survived");
        assert_unknown_terminal(
            &m.output(v1::TerminalOutputRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
        assert_unknown_terminal(
            &m.wait_for_exit(v1::WaitForTerminalExitRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
        assert_unknown_terminal(
            &m.kill(v1::KillTerminalRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
        assert_unknown_terminal(
            &m.release(v1::ReleaseTerminalRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
    }

    #[tokio::test]
    async fn exit_is_reported_while_a_background_process_holds_the_output() {
        let (m, _dir) = manager("background");
        // The shell exits at once; its background child keeps the pipe open.
        let id = create(&m, sh("sleep 30 & echo $!")).await;
        let status = wait(&m, &id).await;
        assert_eq!(status.exit_code, Some(0));
        let out = output(&m, &id).await;
        assert_eq!(out.exit_status, Some(status));
        let background: i32 = out.output.trim().parse().unwrap();
        assert!(!is_dead(background));
        // Releasing the exited terminal still kills what it left behind.
        m.release(v1::ReleaseTerminalRequest::new("s", id))
            .await
            .unwrap();
        assert!(
            eventually_dead(background).await,
            "background child survived"
        );
    }

    #[tokio::test]
    async fn unknown_terminal_ids_are_resource_not_found() {
        let (m, _dir) = manager("unknown");
        let id = v1::TerminalId::new("term-nope");
        assert_unknown_terminal(
            &m.output(v1::TerminalOutputRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
        assert_unknown_terminal(
            &m.kill(v1::KillTerminalRequest::new("s", id.clone()))
                .await
                .unwrap_err(),
            &id,
        );
    }

    #[tokio::test]
    async fn another_sessions_terminal_is_not_found() {
        let (m, dir) = manager("foreign");
        m.add_session("t", &dir.0).unwrap();
        let id = create(&m, sh("echo hi")).await;
        let err = m
            .output(v1::TerminalOutputRequest::new("t", id.clone()))
            .await
            .unwrap_err();
        assert_unknown_terminal(&err, &id);
        let err = m
            .release(v1::ReleaseTerminalRequest::new("t", id.clone()))
            .await
            .unwrap_err();
        assert_unknown_terminal(&err, &id);
        // Still there for its own session.
        wait(&m, &id).await;
        assert_eq!(output(&m, &id).await.output, "hi\n");
    }

    #[tokio::test]
    async fn release_session_releases_only_that_sessions_terminals() {
        let (m, dir) = manager("relsession");
        m.add_session("t", &dir.0).unwrap();
        let a = create(&m, sh("echo $$; exec sleep 30")).await;
        let b = create(&m, sh("echo $$; exec sleep 30")).await;
        let other = m
            .create(sh_in("t", "echo $$; exec sleep 30"))
            .await
            .unwrap()
            .terminal_id;
        let (pa, pb) = (printed_pid(&m, &a).await, printed_pid(&m, &b).await);
        m.release_session("s");
        assert!(eventually_dead(pa).await && eventually_dead(pb).await);
        for id in [&a, &b] {
            let err = m
                .output(v1::TerminalOutputRequest::new("s", id.clone()))
                .await
                .unwrap_err();
            assert_unknown_terminal(&err, id);
        }
        // The other session's terminal still runs, and "s" can still create.
        let out = m
            .output(v1::TerminalOutputRequest::new("t", other.clone()))
            .await
            .unwrap();
        assert_eq!(out.exit_status, None);
        create(&m, sh("true")).await;
        m.remove_session("t");
        assert!(m.create(sh_in("t", "true")).await.is_err());
        assert!(
            m.output(v1::TerminalOutputRequest::new("t", other))
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn dropping_the_manager_kills_running_commands() {
        let (m, _dir) = manager("drop");
        let id = create(&m, sh("sleep 30 & echo $!; wait")).await;
        let grandchild = printed_pid(&m, &id).await;
        let id2 = create(&m, sh("echo $$; exec sleep 30")).await;
        let child = printed_pid(&m, &id2).await;
        drop(m);
        assert!(eventually_dead(child).await, "command survived the manager");
        assert!(
            eventually_dead(grandchild).await,
            "background child survived"
        );
    }

    #[test]
    fn buffer_truncation_never_splits_a_character() {
        // Mixed 1-, 2-, 3- and 4-byte characters.
        let text = "aé€😀".repeat(20);
        for limit in 0..=24 {
            for chunk in 1..=7 {
                let mut buf = OutputBuffer::new(limit);
                for piece in text.as_bytes().chunks(chunk) {
                    buf.push(piece);
                }
                let kept = buf.text(true);
                assert!(
                    !kept.contains('\u{FFFD}'),
                    "limit {limit}, chunk {chunk}: {kept:?}"
                );
                assert!(kept.len() <= limit, "limit {limit}: {kept:?}");
                assert!(
                    kept.len() + 4 > limit,
                    "kept too little for {limit}: {kept:?}"
                );
                assert!(text.ends_with(&kept));
                assert!(buf.truncated);
            }
        }
    }

    #[test]
    fn buffer_hides_an_incomplete_character_until_complete() {
        let mut buf = OutputBuffer::new(100);
        buf.push("a€".as_bytes().get(..2).unwrap());
        assert_eq!(buf.text(false), "a");
        assert_eq!(buf.text(true), "a\u{FFFD}");
        buf.push("€".as_bytes().get(1..).unwrap());
        assert_eq!(buf.text(false), "a€");
        assert!(!buf.truncated);
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(1000), "1000");
    }
}
