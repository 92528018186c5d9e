//! The constructors: `spawn_agent`, `serve_stdio` and `from_fds`.
//!
//! Called with the GIL on the host's thread. Each parses its arguments
//! first (nothing is started, spawned or taken over when that raises),
//! then starts the core's connection on libacp's runtime with the GIL
//! released, and returns a `NativeConnection` owning it. The dispatcher is
//! moved into the connection's `PyHandler`, and
//! gets the connection's ordered inbox as `dispatcher.inbox`.

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use libacp_core::{AcpConnection, AgentCommand, Role, Transport};

use crate::awaitable::runtime;
use crate::connection::{NativeConnection, wrap};
use crate::errors::{connection_error, report};
use crate::handler::PyHandler;
use crate::inbox::Inbox;
use crate::interpreter::attach_alive;
use crate::options::{acp_options, opt_bool, opt_callable, role_of};

/// Client side: spawns `argv` and connects to its stdio.
#[pyfunction]
#[pyo3(signature = (argv, dispatcher, *, cwd=None, env=None, clear_env=None, stderr=None, shutdown_grace=None, **options))]
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
    let inbox = Inbox::attach(py, &dispatcher)?;
    let handler = PyHandler {
        _dispatcher: dispatcher,
        inbox: Arc::clone(&inbox),
    };
    let rt = runtime()?;
    let result = py.detach(|| {
        let _guard = rt.enter();
        AcpConnection::spawn_agent(&command, handler, options)
    });
    result
        .map(|conn| wrap(conn, inbox))
        .map_err(|e| connection_error(py, &e))
}

/// Agent side: serves on this process's stdin and stdout.
#[pyfunction]
#[pyo3(signature = (dispatcher, **options))]
pub(crate) fn serve_stdio(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let options = acp_options(Role::Agent, options)?;
    let rt = runtime()?;
    let inbox = Inbox::attach(py, &dispatcher)?;
    let handler = PyHandler {
        _dispatcher: dispatcher,
        inbox: Arc::clone(&inbox),
    };
    let conn = py.detach(|| {
        AcpConnection::start_on(
            rt.handle(),
            Role::Agent,
            Transport::stdio(),
            handler,
            options,
        )
    });
    Ok(wrap(conn, inbox))
}

/// Either role over file descriptors this call takes ownership of: one
/// connected socket (`read_fd == write_fd`), or a read and a write end
/// (pipes, sockets or files). Nothing is taken over when it raises
/// `ValueError` or `TypeError` (bad arguments).
#[pyfunction]
#[pyo3(signature = (role, read_fd, write_fd, dispatcher, **options))]
pub(crate) fn from_fds(
    py: Python<'_>,
    role: &str,
    read_fd: i32,
    write_fd: i32,
    dispatcher: Py<PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let role = role_of(role)?;
    if read_fd < 0 || write_fd < 0 {
        return Err(PyValueError::new_err("file descriptors must be >= 0"));
    }
    let options = acp_options(role, options)?;
    let inbox = Inbox::attach(py, &dispatcher)?;
    let handler = PyHandler {
        _dispatcher: dispatcher,
        inbox: Arc::clone(&inbox),
    };
    let rt = runtime()?;
    let _guard = rt.enter();
    let transport = if read_fd == write_fd {
        // SAFETY: the caller gives up an open descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(read_fd) };
        let std = std::os::unix::net::UnixStream::from(fd);
        std.set_nonblocking(true)
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let stream =
            tokio::net::UnixStream::from_std(std).map_err(|e| PyOSError::new_err(e.to_string()))?;
        Transport::from_stream(stream)
    } else {
        // SAFETY: the caller gives up two open descriptors.
        let (r, w) = unsafe {
            (
                OwnedFd::from_raw_fd(read_fd),
                OwnedFd::from_raw_fd(write_fd),
            )
        };
        let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(r)
            .map_err(|e| PyOSError::new_err(format!("read_fd: {e}")))?;
        let writer = tokio::net::unix::pipe::Sender::from_owned_fd(w)
            .map_err(|e| PyOSError::new_err(format!("write_fd: {e}")))?;
        Transport::new(reader, writer)
    };
    let conn =
        py.detach(|| AcpConnection::start_on(rt.handle(), role, transport, handler, options));
    Ok(wrap(conn, inbox))
}
