//! This process's own stdin and stdout as a transport ([`super::Transport::stdio`]).
//!
//! **Pipes and stream sockets are driven non-blocking** (`fd.rs`). When fd 0
//! (or fd 1) is a pipe or a stream socket, which is how editors launch
//! agents, it is read (written) without blocking: by the engine's tasks
//! through the runtime's epoll reactor, or directly by a host's event loop
//! and by the thread that answers; one `read(2)`/`write(2)` per wake-up, no
//! thread hand-off. Anything else goes through tokio's `stdin()` /
//! `stdout()`, which hand every read and write to a blocking-pool thread:
//! terminals, regular files, `/dev/null`, character devices, a *named* FIFO
//! as stdin (see below), and pipes on platforms other than Linux.
//!
//! **Nothing shared is changed.** `O_NONBLOCK` is a flag of the open file
//! description, which a pipe or socket inherited from a parent shares with
//! other processes (the parent, a shell pipeline, siblings): setting it
//! would make *their* reads and writes fail with `EAGAIN`, and would outlive
//! this process if it died without restoring it. So the inherited
//! descriptions are never touched:
//! * a pipe is reopened through `/proc/self/fd/N` (Linux), which creates a
//!   new open file description of the same pipe, private to this process,
//!   and `O_NONBLOCK` is set on that one only;
//! * a socket is duplicated and read and written with `recv`/`send` and
//!   `MSG_DONTWAIT`, which is non-blocking per call, without any flag.
//!
//! **Behaviour is otherwise the same as the blocking pool's:**
//! * end of input is end of stream: a peer that writes its frames and closes
//!   the pipe (`printf '...' | agent`) has every frame read, the last one
//!   even without a newline;
//! * a write to a closed pipe or socket fails with `EPIPE` (which closes the
//!   connection) and never raises SIGPIPE, whichever thread writes;
//! * shutting down the write half does not close fd 1 and does not shut a
//!   socket down (it is shared with the parent); the private descriptors
//!   are closed when the connection drops its halves, and the peer sees end
//!   of stream when the process exits or closes fd 1;
//! * bytes that the host read from stdin through `std::io::stdin()` before
//!   starting the connection and that are still in std's buffer are not
//!   seen; do not read stdin before serving on it.
//!
//! A named FIFO is only reopened for writing: reopened for reading with
//! `O_NONBLOCK` while it has no writer, Linux suppresses its hang-up event
//! until a writer appears, so end of input could go unnoticed.
//!
//! Registration with the reactor happens on first use, on the runtime that
//! polls the connection (so [`super::Transport::stdio`] may be called outside
//! a runtime, as the bindings do); a runtime without I/O falls back to the
//! blocking pool.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU8, Ordering};

use super::fd::{self, FdReader, FdWriter, fstat};
use super::{ReadHalf, WriteHalf};

/// How one direction of [`super::Transport::stdio`] is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A private non-blocking description of a pipe, through the reactor.
    Pipe,
    /// A duplicate of a stream socket with `MSG_DONTWAIT`, through the reactor.
    Socket,
    /// tokio's blocking-pool `stdin()` / `stdout()`.
    Blocking,
}

impl Mode {
    /// How `fd.rs` drives it (only for the reactor modes).
    fn io(self) -> fd::Mode {
        match self {
            Self::Socket => fd::Mode::Socket,
            Self::Pipe | Self::Blocking => fd::Mode::Pipe,
        }
    }
}

/// The latest modes chosen, per side (0: none yet), for [`describe`].
static LATEST: [AtomicU8; 2] = [AtomicU8::new(0), AtomicU8::new(0)];

fn describe_mode(code: u8) -> &'static str {
    match code {
        1 => "pipe (reactor)",
        2 => "socket (reactor)",
        3 => "blocking pool",
        _ => "unused",
    }
}

/// See [`super::Transport::stdio_description`].
pub(crate) fn describe() -> String {
    format!(
        "stdin: {}, stdout: {}",
        describe_mode(LATEST[0].load(Ordering::Relaxed)),
        describe_mode(LATEST[1].load(Ordering::Relaxed))
    )
}

/// Which standard stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    In,
    Out,
}

impl Side {
    fn record(self, mode: Mode) {
        let code = match mode {
            Mode::Pipe => 1,
            Mode::Socket => 2,
            Mode::Blocking => 3,
        };
        LATEST[usize::from(self == Self::Out)].store(code, Ordering::Relaxed);
    }

    fn fd(self) -> RawFd {
        match self {
            Self::In => libc::STDIN_FILENO,
            Self::Out => libc::STDOUT_FILENO,
        }
    }
}

/// This process's stdin.
pub(crate) fn stdin() -> ReadHalf {
    match reactor_fd(Side::In) {
        Some((fd, mode)) => {
            Side::In.record(mode);
            ReadHalf::Fd(FdReader::new(fd, mode.io()))
        }
        None => {
            Side::In.record(Mode::Blocking);
            ReadHalf::Stream(Box::new(tokio::io::stdin()))
        }
    }
}

/// This process's stdout.
pub(crate) fn stdout() -> WriteHalf {
    match reactor_fd(Side::Out) {
        Some((fd, mode)) => {
            Side::Out.record(mode);
            // Never shut down: the socket is shared with the parent.
            WriteHalf::Fd(FdWriter::new(fd, mode.io(), false))
        }
        None => {
            Side::Out.record(Mode::Blocking);
            WriteHalf::Stream(Box::new(tokio::io::stdout()))
        }
    }
}

/// A private descriptor for `side` that the reactor can drive, if it is a
/// pipe or a stream socket; `None` for the blocking pool.
fn reactor_fd(side: Side) -> Option<(OwnedFd, Mode)> {
    let fd = side.fd();
    let st = fstat(fd).ok()?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => stream_socket(fd).map(|fd| (fd, Mode::Socket)),
        libc::S_IFIFO => reopen_pipe(fd, side, &st).map(|fd| (fd, Mode::Pipe)),
        _ => None,
    }
}

/// A close-on-exec duplicate of `fd` if it is a stream socket.
fn stream_socket(fd: RawFd) -> Option<OwnedFd> {
    if fd::kind(fd).ok()? != fd::Kind::StreamSocket {
        return None;
    }
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) has no memory-safety preconditions.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    // SAFETY: a new descriptor that nothing else owns.
    (dup >= 0).then(|| unsafe { OwnedFd::from_raw_fd(dup) })
}

/// A new, private, non-blocking open file description of the pipe behind
/// `fd` (Linux: through `/proc/self/fd`).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn reopen_pipe(fd: RawFd, side: Side, st: &libc::stat) -> Option<OwnedFd> {
    /// `statfs.f_type` of anonymous pipes.
    const PIPEFS_MAGIC: i64 = 0x5049_5045;
    if side == Side::In {
        // Named FIFOs only for writing (see the module docs).
        let mut fs = std::mem::MaybeUninit::<libc::statfs>::uninit();
        // SAFETY: fstatfs writes a `statfs` into the buffer on success.
        if unsafe { libc::fstatfs(fd, fs.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: initialized by the successful call.
        let fs = unsafe { fs.assume_init() };
        #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
        if fs.f_type as i64 != PIPEFS_MAGIC {
            return None;
        }
    }
    let access = match side {
        Side::In => libc::O_RDONLY,
        Side::Out => libc::O_WRONLY,
    };
    let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).ok()?;
    // SAFETY: `path` is a NUL-terminated string. O_NONBLOCK also keeps the
    // open itself from waiting for a peer.
    let new = unsafe {
        libc::open(
            path.as_ptr(),
            access | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if new < 0 {
        return None;
    }
    // SAFETY: a new descriptor that nothing else owns.
    let new = unsafe { OwnedFd::from_raw_fd(new) };
    // The same pipe (not whatever the path resolves to now)?
    let again = fstat(new.as_raw_fd()).ok()?;
    (again.st_dev == st.st_dev
        && again.st_ino == st.st_ino
        && again.st_mode & libc::S_IFMT == libc::S_IFIFO)
        .then_some(new)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn reopen_pipe(_fd: RawFd, _side: Side, _st: &libc::stat) -> Option<OwnedFd> {
    None
}
