//! The constructors: `spawn_agent`, `serve_stdio` and `from_fds`.
//!
//! Called with the GIL on the host's thread. Each parses its arguments
//! first (nothing is started, spawned or taken over when that raises),
//! then starts the core's `HostConnection` on libacp's runtime with the GIL
//! released, and returns a `NativeConnection` owning it. The dispatcher
//! gets the connection's inbox as `dispatcher.inbox` (a `NativeInbox`,
//! holding the host reader when `drive_reads` is true and the transport is
//! a descriptor: the dispatcher then watches it with `add_reader`).

use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use libacp_core::host::{HostConnection, HostOptions};
use libacp_core::{AcpOptions, AgentCommand, Role, Transport};

use crate::awaitable::runtime;
use crate::connection::{NativeConnection, wrap};
use crate::errors::{connection_error, report};
use crate::inbox::{NativeInbox, new_inbox};
use crate::interpreter::attach_alive;
use crate::options::{acp_options, opt_bool, opt_callable, role_of};

/// Where a connection's bytes come from.
enum Source {
    Spawn(AgentCommand),
    Transport(Role, Transport),
}

/// Starts the core's connection for `dispatcher` and wraps it.
fn start(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    source: Source,
    acp: AcpOptions,
    drive_reads: bool,
) -> PyResult<NativeConnection> {
    let rt = runtime()?;
    let inbox = new_inbox(py, &dispatcher)?;
    let options = HostOptions { acp, drive_reads };
    let conn = py.detach(|| match source {
        Source::Spawn(command) => {
            HostConnection::spawn_agent(rt.handle(), &command, Arc::clone(&inbox), options)
        }
        Source::Transport(role, transport) => Ok(HostConnection::start(
            rt.handle(),
            role,
            transport,
            Arc::clone(&inbox),
            options,
        )),
    });
    let conn = conn.map_err(|e| connection_error(py, &e))?;
    NativeInbox::attach(py, &dispatcher, inbox, conn.take_reader())?;
    Ok(wrap(conn, dispatcher))
}

/// Client side: spawns `argv` and connects to its stdio.
#[pyfunction]
#[pyo3(signature = (argv, dispatcher, *, cwd=None, env=None, clear_env=None, stderr=None, shutdown_grace=None, drive_reads=true, **options))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_agent(
    py: Python<'_>,
    argv: Vec<String>,
    dispatcher: Py<PyAny>,
    cwd: Option<std::path::PathBuf>,
    env: Option<Vec<(String, String)>>,
    clear_env: Option<&Bound<'_, PyAny>>,
    stderr: Option<&Bound<'_, PyAny>>,
    shutdown_grace: Option<&Bound<'_, PyAny>>,
    drive_reads: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let Some((program, args)) = argv.split_first() else {
        return Err(PyValueError::new_err("argv must name a program"));
    };
    if program.is_empty() {
        return Err(PyValueError::new_err("argv[0] (the program) is empty"));
    }
    let options = acp_options(Role::Client, options)?;
    let mut command = AgentCommand::new(program).args(args);
    if let Some(cwd) = cwd {
        command = command.cwd(cwd);
    }
    for (k, v) in env.unwrap_or_default() {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            return Err(PyValueError::new_err(format!(
                "env: {k:?} is not a valid environment variable name (or its value holds NUL)"
            )));
        }
        command = command.env(k, v);
    }
    if let Some(clear) = clear_env.filter(|v| !v.is_none()) {
        command.clear_env = opt_bool("clear_env", clear)?;
    }
    if let Some(grace) = shutdown_grace.filter(|v| !v.is_none()) {
        command = command.grace(crate::options::shutdown_grace(grace)?);
    }
    if let Some(hook) = stderr.filter(|v| !v.is_none()) {
        let hook = opt_callable("stderr", hook)?;
        command = command.stderr(move |line| {
            attach_alive(|py| {
                if let Err(e) = hook.call1(py, (line,)) {
                    report(py, &e);
                }
            });
        });
    }
    start(py, dispatcher, Source::Spawn(command), options, drive_reads)
}

/// Agent side: serves on this process's stdin and stdout.
#[pyfunction]
#[pyo3(signature = (dispatcher, *, drive_reads=true, **options))]
pub(crate) fn serve_stdio(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    drive_reads: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let options = acp_options(Role::Agent, options)?;
    let transport = Transport::stdio();
    start(
        py,
        dispatcher,
        Source::Transport(Role::Agent, transport),
        options,
        drive_reads,
    )
}

/// Either role over file descriptors this call takes ownership of: a read
/// end and a write end (pipes, FIFOs, sockets, files), or one connected
/// stream socket as both (`read_fd == write_fd`): the core's
/// `Transport::from_fds` contract. Nothing is taken over when it raises
/// `ValueError` (a descriptor that is not open, the same one twice when it
/// is not a stream socket, a datagram socket, a bad option) or `TypeError`.
#[pyfunction]
#[pyo3(signature = (role, read_fd, write_fd, dispatcher, *, drive_reads=true, **options))]
pub(crate) fn from_fds(
    py: Python<'_>,
    role: &str,
    read_fd: i32,
    write_fd: i32,
    dispatcher: Py<PyAny>,
    drive_reads: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let role = role_of(role)?;
    let options = acp_options(role, options)?;
    // SAFETY: the caller gives up open descriptors; every check is made
    // before anything is taken over (then `ValueError`).
    let transport = match unsafe { Transport::from_raw_fds(read_fd, write_fd) } {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            return Err(PyValueError::new_err(e.to_string()));
        }
        Err(e) => return Err(PyOSError::new_err(e.to_string())),
    };
    start(
        py,
        dispatcher,
        Source::Transport(role, transport),
        options,
        drive_reads,
    )
}
