//! Spawning an agent process and owning its lifetime.
//!
//! The agent runs in a process group of its own, so that shutting it down
//! also reaches what it started (an `npx`/`uvx` wrapper's real agent, a
//! language server, a shell command). Shutdown is a ladder: close its stdin,
//! wait ([`ShutdownGrace::after_stdin_close`]), SIGTERM the group, wait
//! ([`ShutdownGrace::after_sigterm`]), SIGKILL the group. Dropping an
//! [`AgentProcess`] that was not shut down SIGKILLs the group at once, so no
//! child outlives its handle.
//!
//! The connection ends when the agent's stdout ends, or when the agent
//! process itself exits, whichever comes first. A process the agent started
//! (a language server, a background helper) inherits its stdout and may keep
//! the pipe open long after the agent is gone, so end of stream alone would
//! leave calls waiting forever. Once the agent has exited, its output is
//! still read for [`AGENT_EXIT_DRAIN`] (and after that, for as long as more
//! is available without waiting), then the connection closes as at end of
//! stream, with [`CloseReason::AgentExited`](crate::CloseReason::AgentExited)
//! carrying the exit status; the shutdown ladder then ends the process
//! group, the process holding the pipe included. (An unterminated last line
//! is dropped then, since it cannot be known complete; at end of stream it
//! still counts.) Consequently an agent command must not be a wrapper that
//! exits while the agent it started keeps serving on the inherited stdio
//! (`exec` the agent instead).

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::watch;

use super::Transport;
use crate::error::ConnectionError;

/// Receives the agent's stderr, one line at a time (without the newline;
/// invalid UTF-8 replaced). Called from a runtime task: do not block in it.
pub type LogHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Resolves when the receiver of the agent's stderr can take another line
/// (see [`AgentCommand::stderr_room`]).
pub type LogRoom = Arc<dyn Fn() -> crate::rpc::BoxFuture<'static, ()> + Send + Sync>;

/// Longest stderr line passed to the log hook in one call; longer lines are
/// delivered in pieces of this size.
const MAX_LOG_LINE: usize = 64 * 1024;

/// How long the connection keeps reading a spawned agent's stdout after the
/// agent process exited, before it closes as at end of stream (when no end
/// of stream came: something the agent started still holds the pipe open).
///
/// What the agent wrote before it exited is in the pipe by then (a write to
/// a pipe returns once the kernel holds the bytes), and the reader takes
/// everything available before it honours the exit, so the drain is not
/// what delivers the agent's last answers. It covers the gap between the
/// exit being reported (SIGCHLD, then `waitpid`) and the reader being told
/// that the pipe is readable, and lets the usual end of stream win whenever
/// the pipe closes with the agent (the common case, closed as
/// [`CloseReason::PeerClosed`](crate::CloseReason::PeerClosed)). Short
/// enough that a call waiting on a dead agent fails without a noticeable
/// delay.
pub const AGENT_EXIT_DRAIN: Duration = Duration::from_millis(200);

/// How long each rung of the shutdown ladder waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownGrace {
    /// After closing the agent's stdin, before SIGTERM. Default 2 s.
    pub after_stdin_close: Duration,
    /// After SIGTERM, before SIGKILL. Default 2 s.
    pub after_sigterm: Duration,
}

impl Default for ShutdownGrace {
    fn default() -> Self {
        Self {
            after_stdin_close: Duration::from_secs(2),
            after_sigterm: Duration::from_secs(2),
        }
    }
}

/// What to run. `program` is looked up on `PATH` as by `execvp`.
#[derive(Clone)]
pub struct AgentCommand {
    /// The program to run.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables to set (on top of the inherited environment, unless
    /// `clear_env`).
    pub env: Vec<(OsString, OsString)>,
    /// Start from an empty environment.
    pub clear_env: bool,
    /// Working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Where the agent's stderr goes: line by line to this hook, or to this
    /// process's stderr when `None`.
    pub stderr: Option<LogHook>,
    /// Awaited before each stderr line is given to `stderr`: the agent's
    /// stderr is read no further meanwhile (so an agent that floods it is
    /// slowed down by its pipe, not buffered here).
    pub stderr_room: Option<LogRoom>,
    /// The shutdown ladder's waits.
    pub grace: ShutdownGrace,
}

impl std::fmt::Debug for AgentCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("grace", &self.grace)
            .finish_non_exhaustive()
    }
}

impl AgentCommand {
    /// A command with no arguments, the inherited environment and default
    /// grace periods.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            stderr: None,
            stderr_room: None,
            grace: ShutdownGrace::default(),
        }
    }

    /// Appends arguments.
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sends stderr lines to `hook`.
    #[must_use]
    pub fn stderr(mut self, hook: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.stderr = Some(Arc::new(hook));
        self
    }

    /// Waits for `room()` before each stderr line is given to the hook
    /// (a receiver with a bounded queue: [`crate::host::Inbox::forward_stderr`]).
    #[must_use]
    pub fn stderr_room(
        mut self,
        room: impl Fn() -> crate::rpc::BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        self.stderr_room = Some(Arc::new(room));
        self
    }

    /// Sets the shutdown ladder's waits.
    #[must_use]
    pub fn grace(mut self, grace: ShutdownGrace) -> Self {
        self.grace = grace;
        self
    }
}

/// How the agent process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, when it was killed.
    pub signal: Option<i32>,
}

impl ExitInfo {
    fn from_status(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Self {
            code: status.code(),
            signal: status.signal(),
        }
    }

    /// `true` for exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

/// A running (or finished) agent process. Owned by its [`Transport`] and then
/// by the connection; cheap handles to its status come from
/// [`AgentProcess::status`].
pub struct AgentProcess {
    pid: u32,
    grace: ShutdownGrace,
    status: watch::Receiver<Option<ExitInfo>>,
    /// Cleared once the group is known to be gone (or was killed).
    group_alive: bool,
}

impl std::fmt::Debug for AgentProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentProcess")
            .field("pid", &self.pid)
            .field("status", &*self.status.borrow())
            .finish()
    }
}

/// A cloneable view of the agent's exit status.
#[derive(Debug, Clone)]
pub struct ProcessStatus {
    pid: u32,
    status: watch::Receiver<Option<ExitInfo>>,
}

impl ProcessStatus {
    /// The agent's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends SIGKILL to the agent's process group now, skipping the
    /// shutdown ladder: for a host process that is exiting and cannot wait
    /// (a Node `process.on("exit")` hook). Does nothing once the agent has
    /// exited and its group is gone.
    pub fn kill_now(&self) {
        if group_exists(self.pid) {
            kill_group(self.pid, libc::SIGKILL);
        }
    }

    /// The exit status, if it has exited.
    pub fn try_exit(&self) -> Option<ExitInfo> {
        *self.status.borrow()
    }

    /// Waits for the agent to exit, then [`AGENT_EXIT_DRAIN`]; never
    /// resolves without an agent (`None`). The connection's reader ends
    /// the input when this resolves and nothing more is ready to be read.
    pub(crate) async fn exited_and_drained(status: Option<Self>) -> ExitInfo {
        let Some(status) = status else {
            return std::future::pending().await;
        };
        let exit = status.wait().await;
        tokio::time::sleep(AGENT_EXIT_DRAIN).await;
        exit
    }

    /// Waits for the agent to exit.
    pub async fn wait(&self) -> ExitInfo {
        let mut rx = self.status.clone();
        loop {
            if let Some(info) = *rx.borrow_and_update() {
                return info;
            }
            if rx.changed().await.is_err() {
                return rx.borrow().unwrap_or(ExitInfo {
                    code: None,
                    signal: None,
                });
            }
        }
    }
}

/// Spawns `command` with piped stdin/stdout in a new process group and
/// returns a transport over its stdio. Must be called within a Tokio runtime.
///
/// A connection over it closes when the agent's stdout ends
/// ([`CloseReason::PeerClosed`](crate::CloseReason::PeerClosed)) or, if
/// something the agent started keeps that pipe open, once the agent process
/// has exited, [`AGENT_EXIT_DRAIN`] has passed and what was ready has been
/// read
/// ([`CloseReason::AgentExited`](crate::CloseReason::AgentExited), with its
/// exit status). Either way pending calls then fail, and closing the
/// connection shuts the whole process group down (see the module docs).
///
/// Errors: [`ConnectionError::Spawn`] naming the program and the OS error
/// (for example "No such file or directory" when it is not found). Nothing
/// is left running on error.
pub fn spawn(command: &AgentCommand) -> Result<Transport, ConnectionError> {
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if command.stderr.is_some() {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .process_group(0)
        .kill_on_drop(false);
    if command.clear_env {
        cmd.env_clear();
    }
    for (k, v) in &command.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &command.cwd {
        cmd.current_dir(dir);
    }
    let spawn_error = |e: std::io::Error| ConnectionError::Spawn {
        program: command.program.to_string_lossy().into_owned(),
        error: e.to_string(),
    };
    let mut child = cmd.spawn().map_err(spawn_error)?;
    let pid = child
        .id()
        .ok_or_else(|| spawn_error(std::io::Error::other("no pid")))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        kill_group(pid, libc::SIGKILL);
        return Err(spawn_error(std::io::Error::other("stdio pipes missing")));
    };
    if let (Some(stderr), Some(hook)) = (child.stderr.take(), command.stderr.clone()) {
        tokio::spawn(forward_stderr(stderr, hook, command.stderr_room.clone()));
    }
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let info = match child.wait().await {
            Ok(status) => ExitInfo::from_status(status),
            Err(_) => ExitInfo {
                code: None,
                signal: None,
            },
        };
        let _ = tx.send(Some(info));
    });
    // Our ends of the pipes, non-blocking (the child's ends stay blocking):
    // read and written without thread hand-offs (`fd.rs`).
    let halves = stdout
        .into_owned_fd()
        .and_then(|r| stdin.into_owned_fd().map(|w| (r, w)))
        .and_then(|(r, w)| {
            super::fd::set_nonblocking(r.as_raw_fd(), true)?;
            super::fd::set_nonblocking(w.as_raw_fd(), true)?;
            Ok((r, w))
        });
    let (r, w) = match halves {
        Ok(halves) => halves,
        Err(e) => {
            kill_group(pid, libc::SIGKILL);
            return Err(spawn_error(e));
        }
    };
    let mut transport = Transport {
        reader: super::ReadHalf::Fd(super::fd::FdReader::new(r, super::fd::Mode::Pipe)),
        writer: super::WriteHalf::Fd(super::fd::FdWriter::new(w, super::fd::Mode::Pipe, false)),
        process: None,
    };
    transport.process = Some(AgentProcess {
        pid,
        grace: command.grace,
        status: rx,
        group_alive: true,
    });
    Ok(transport)
}

async fn forward_stderr(stderr: tokio::process::ChildStderr, hook: LogHook, room: Option<LogRoom>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bound each read so one endless line cannot grow memory.
        let mut limited = (&mut reader).take(MAX_LOG_LINE as u64);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                if let Some(room) = &room {
                    room().await;
                }
                hook(&String::from_utf8_lossy(&line));
            }
        }
    }
}

fn kill_group(pgid: u32, signal: libc::c_int) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    // SAFETY: kill(2) with a negative pid signals a process group; it has no
    // memory-safety preconditions.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

fn group_exists(pgid: u32) -> bool {
    kill_group(pgid, 0)
}

impl AgentProcess {
    /// The agent's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// A cloneable handle to the exit status.
    pub fn status(&self) -> ProcessStatus {
        ProcessStatus {
            pid: self.pid,
            status: self.status.clone(),
        }
    }

    /// Waits until the direct child has exited and no process of its group
    /// is left, at most `limit`. Returns whether the group is gone.
    async fn wait_group(&self, limit: Duration) -> bool {
        let status = self.status();
        let deadline = tokio::time::Instant::now() + limit;
        if tokio::time::timeout_at(deadline, status.wait())
            .await
            .is_err()
        {
            return false;
        }
        loop {
            if !group_exists(self.pid) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs the shutdown ladder. The caller must have closed the agent's
    /// stdin first (the connection does so by closing its write half).
    /// Returns the direct child's exit status.
    pub async fn shutdown(mut self) -> ExitInfo {
        if !self.wait_group(self.grace.after_stdin_close).await {
            kill_group(self.pid, libc::SIGTERM);
            if !self.wait_group(self.grace.after_sigterm).await {
                kill_group(self.pid, libc::SIGKILL);
            }
        }
        self.group_alive = false;
        self.status().wait().await
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.group_alive && group_exists(self.pid) {
            kill_group(self.pid, libc::SIGKILL);
        }
    }
}
