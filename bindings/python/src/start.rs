//! The local constructors: `spawn_agent`, `serve_stdio` and `from_fds`
//! (the remote ones are in `remote.rs`).
//!
//! Called with the GIL on the host's thread. Each parses its arguments
//! first, the options through the core's table (`options.rs`); nothing is
//! started, spawned or taken over when that raises. Then it starts the
//! core's `HostConnection` on libacp's runtime with the GIL released, and
//! returns a `NativeConnection` owning it. The dispatcher
//! gets the connection's inbox as `dispatcher.inbox` (a `NativeInbox`,
//! holding the host reader when `drive_reads` is true and the transport is
//! a descriptor: the dispatcher then watches it with `add_reader`).

use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use libacp_core::host::{HostConnection, HostOptions, InboxHooks};
use libacp_core::options::Use;
use libacp_core::{AcpOptions, AgentCommand, Role, Transport};

use crate::awaitable::runtime;
use crate::connection::{NativeConnection, wrap};
use crate::errors::{connection_error, report};
use crate::inbox::{NativeInbox, new_inbox};
use crate::interpreter::attach_alive;
use crate::options::{Parsed, role_of, settings};

/// Where a connection's bytes come from.
pub(crate) enum Source {
    Spawn(AgentCommand),
    Transport(Role, Transport),
}

/// Starts the core's connection for `dispatcher` and wraps it.
pub(crate) fn start(
    py: Python<'_>,
    dispatcher: Py<PyAny>,
    source: Source,
    acp: AcpOptions,
    hooks: InboxHooks,
    drive_reads: bool,
) -> PyResult<NativeConnection> {
    let rt = runtime()?;
    let inbox = new_inbox(py, &dispatcher)?;
    let options = HostOptions {
        acp,
        drive_reads,
        hooks,
    };
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

/// Client side: spawns `argv` and connects to its stdio. `**options` are
/// the table's for a spawned agent (`cwd`, `env`, `clear_env`,
/// `grace_after_stdin_close_ms`, `grace_after_sigterm_ms`, `stderr`, and
/// every connection option).
#[pyfunction]
#[pyo3(signature = (argv, dispatcher, *, drive_reads=true, **options))]
pub(crate) fn spawn_agent(
    py: Python<'_>,
    argv: Vec<String>,
    dispatcher: Py<PyAny>,
    drive_reads: bool,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<NativeConnection> {
    let Some((program, args)) = argv.split_first() else {
        return Err(PyValueError::new_err("argv must name a program"));
    };
    if program.is_empty() {
        return Err(PyValueError::new_err("argv[0] (the program) is empty"));
    }
    let Parsed {
        settings,
        hooks,
        stderr,
    } = settings(Role::Client, Use::Spawn, options)?;
    let mut command = settings.spawn.apply(AgentCommand::new(program).args(args));
    if let Some(hook) = stderr {
        command = command.stderr(move |line| {
            attach_alive(|py| {
                if let Err(e) = hook.call1(py, (line,)) {
                    report(py, &e);
                }
            });
        });
    }
    start(
        py,
        dispatcher,
        Source::Spawn(command),
        settings.acp,
        hooks,
        drive_reads,
    )
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
    let parsed = settings(Role::Agent, Use::Local, options)?;
    let transport = Transport::stdio();
    start(
        py,
        dispatcher,
        Source::Transport(Role::Agent, transport),
        parsed.settings.acp,
        parsed.hooks,
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
    let parsed = settings(role, Use::Local, options)?;
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
        parsed.settings.acp,
        parsed.hooks,
        drive_reads,
    )
}
