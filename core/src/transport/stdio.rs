//! This process's own stdin and stdout as a transport ([`super::Transport::stdio`]).
//!
//! **Pipes and stream sockets go through the reactor.** When fd 0 (or fd 1)
//! is a pipe or a stream socket, which is how editors launch agents, it is
//! read (written) non-blocking on the connection's own task, woken by the
//! runtime's epoll reactor: one `read(2)`/`write(2)` per wake-up, no thread
//! hand-off. Anything else goes through tokio's `stdin()` / `stdout()` as
//! before, which hand every read and write to a blocking-pool thread (a few
//! futex wake-ups per message): terminals, regular files, `/dev/null`,
//! character devices, a *named* FIFO as stdin (see below), platforms other
//! than Linux for pipes, and any descriptor the reactor refuses or a runtime
//! without I/O enabled.
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
//! * writes are `write(2)` / `send(2)` without `MSG_NOSIGNAL`, so a write
//!   to a closed pipe or socket raises `SIGPIPE` exactly as before (Rust
//!   programs ignore it and see `EPIPE`, which closes the connection);
//! * shutting down the write half does not close fd 1 (as before); the
//!   private descriptors are closed when the connection drops its halves,
//!   and the peer sees end of stream when the process exits or closes fd 1;
//! * bytes that the host read from stdin through `std::io::stdin()` before
//!   starting the connection and that are still in std's buffer are not
//!   seen (the blocking pool read through that buffer); do not read stdin
//!   before serving on it.
//!
//! A named FIFO is only reopened for writing: reopened for reading with
//! `O_NONBLOCK` while it has no writer, Linux suppresses its hang-up event
//! until a writer appears, so end of input could go unnoticed.
//!
//! Registration with the reactor happens on first use, on the runtime that
//! polls the connection (so [`super::Transport::stdio`] may be called outside
//! a runtime, as the bindings do). On a runtime built without I/O
//! (`enable_io`), tokio's registration panics: the panic is caught (its
//! message is printed once by the panic hook) and the blocking pool used.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use std::sync::atomic::{AtomicU8, Ordering};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// How one direction of [`super::Transport::stdio`] is driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A private non-blocking description of a pipe, through the reactor.
    Pipe,
    /// A duplicate of a stream socket with `MSG_DONTWAIT`, through the reactor.
    Socket,
    /// tokio's blocking-pool `stdin()` / `stdout()`.
    Blocking,
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

enum State<B> {
    /// Opened, registered with the reactor on first use.
    Unregistered(OwnedFd),
    Registered(AsyncFd<OwnedFd>),
    Blocking(B),
    /// Transient, while switching states.
    Switching,
}

/// One direction of the process's stdio: a reactor-driven descriptor when
/// possible, else the blocking pool's `B` (made by `fallback`).
pub(crate) struct StdStream<B> {
    mode: Mode,
    side: Side,
    state: State<B>,
    fallback: fn() -> B,
}

/// stdin.
pub(crate) type StdinReader = StdStream<tokio::io::Stdin>;
/// stdout.
pub(crate) type StdoutWriter = StdStream<tokio::io::Stdout>;

impl<B> std::fmt::Debug for StdStream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdStream")
            .field("side", &self.side)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// This process's stdin.
pub(crate) fn stdin() -> StdinReader {
    StdStream::open(Side::In, tokio::io::stdin)
}

/// This process's stdout.
pub(crate) fn stdout() -> StdoutWriter {
    StdStream::open(Side::Out, tokio::io::stdout)
}

impl<B> StdStream<B> {
    fn open(side: Side, fallback: fn() -> B) -> Self {
        let stream = match reactor_fd(side) {
            Some((fd, mode)) => Self {
                mode,
                side,
                state: State::Unregistered(fd),
                fallback,
            },
            None => Self {
                mode: Mode::Blocking,
                side,
                state: State::Blocking(fallback()),
                fallback,
            },
        };
        side.record(stream.mode);
        stream
    }

    fn fall_back(&mut self) {
        self.mode = Mode::Blocking;
        self.side.record(Mode::Blocking);
        self.state = State::Blocking((self.fallback)());
    }

    /// Registers an unregistered descriptor, or falls back to the blocking
    /// pool if the reactor refuses it.
    fn register(&mut self) {
        let fd = match std::mem::replace(&mut self.state, State::Switching) {
            State::Unregistered(fd) => fd,
            State::Registered(afd) => {
                self.state = State::Registered(afd);
                return;
            }
            State::Blocking(_) | State::Switching => {
                self.fall_back();
                return;
            }
        };
        let interest = match self.side {
            Side::In => Interest::READABLE,
            Side::Out => Interest::WRITABLE,
        };
        // `AsyncFd` panics outside a runtime or on a runtime without I/O
        // enabled; both mean "no reactor here", so fall back.
        let registered = tokio::runtime::Handle::try_current().ok().and_then(|_| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: `fd` is an open descriptor owned by the `AsyncFd`
                // from now on; `OwnedFd::as_raw_fd` always returns it.
                unsafe { AsyncFd::register_with_interest(fd, interest) }.ok()
            }))
            .ok()
            .flatten()
        });
        match registered {
            Some(afd) => self.state = State::Registered(afd),
            None => self.fall_back(),
        }
    }
}

impl AsyncRead for StdStream<tokio::io::Stdin> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Unregistered(_) | State::Switching => this.register(),
                State::Blocking(b) => return Pin::new(b).poll_read(cx, buf),
                State::Registered(afd) => {
                    let mut guard = ready!(afd.poll_read_ready(cx))?;
                    // SAFETY: the unfilled part is only written to, by the
                    // kernel (never de-initialized).
                    let unfilled = unsafe { buf.unfilled_mut() };
                    let len = unfilled.len();
                    let ptr = unfilled.as_mut_ptr().cast::<libc::c_void>();
                    let mode = this.mode;
                    match guard.try_io(|fd| read_some(fd.as_raw_fd(), mode, ptr, len)) {
                        Ok(Ok(n)) => {
                            // Edge-triggered epoll: a short read drained the
                            // descriptor, the next data brings a new event
                            // (as tokio's own pipes and sockets do).
                            if n > 0 && n < len {
                                guard.clear_ready();
                            }
                            // SAFETY: `read`/`recv` initialized `n` bytes of
                            // the unfilled part.
                            unsafe { buf.assume_init(n) };
                            buf.advance(n);
                            return Poll::Ready(Ok(()));
                        }
                        Ok(Err(e)) => return Poll::Ready(Err(e)),
                        // Would block: readiness cleared, wait again.
                        Err(_) => {}
                    }
                }
            }
        }
    }
}

impl AsyncWrite for StdStream<tokio::io::Stdout> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Unregistered(_) | State::Switching => this.register(),
                State::Blocking(b) => return Pin::new(b).poll_write(cx, data),
                State::Registered(afd) => {
                    let mut guard = ready!(afd.poll_write_ready(cx))?;
                    let mode = this.mode;
                    match guard.try_io(|fd| write_some(fd.as_raw_fd(), mode, data)) {
                        Ok(Ok(n)) => {
                            if n > 0 && n < data.len() {
                                guard.clear_ready();
                            }
                            return Poll::Ready(Ok(n));
                        }
                        Ok(Err(e)) => return Poll::Ready(Err(e)),
                        Err(_) => {}
                    }
                }
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().state {
            State::Blocking(b) => Pin::new(b).poll_flush(cx),
            // Written straight to the descriptor: nothing buffered here.
            _ => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().state {
            // tokio's stdout flushes and leaves fd 1 open.
            State::Blocking(b) => Pin::new(b).poll_shutdown(cx),
            // Likewise: fd 1 stays open, the private descriptor is closed on
            // drop.
            _ => Poll::Ready(Ok(())),
        }
    }
}

fn read_some(fd: RawFd, mode: Mode, ptr: *mut libc::c_void, len: usize) -> io::Result<usize> {
    loop {
        // SAFETY: `ptr` points to `len` writable bytes (the read buffer's
        // unfilled part); the kernel writes at most `len` bytes.
        let n = unsafe {
            match mode {
                Mode::Socket => libc::recv(fd, ptr, len, libc::MSG_DONTWAIT),
                _ => libc::read(fd, ptr, len),
            }
        };
        if n >= 0 {
            return Ok(n.unsigned_abs());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn write_some(fd: RawFd, mode: Mode, data: &[u8]) -> io::Result<usize> {
    loop {
        let ptr = data.as_ptr().cast::<libc::c_void>();
        // SAFETY: `data` is a valid slice for the duration of the call.
        let n = unsafe {
            match mode {
                // No MSG_NOSIGNAL: SIGPIPE as with write(2).
                Mode::Socket => libc::send(fd, ptr, data.len(), libc::MSG_DONTWAIT),
                _ => libc::write(fd, ptr, data.len()),
            }
        };
        if n >= 0 {
            return Ok(n.unsigned_abs());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn fstat(fd: RawFd) -> Option<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `stat` into the buffer on success.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: initialized by the successful call.
    Some(unsafe { st.assume_init() })
}

/// A private descriptor for `side` that the reactor can drive, if it is a
/// pipe or a stream socket; `None` for the blocking pool.
fn reactor_fd(side: Side) -> Option<(OwnedFd, Mode)> {
    let fd = side.fd();
    let st = fstat(fd)?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => stream_socket(fd).map(|fd| (fd, Mode::Socket)),
        libc::S_IFIFO => reopen_pipe(fd, side, &st).map(|fd| (fd, Mode::Pipe)),
        _ => None,
    }
}

/// A close-on-exec duplicate of `fd` if it is a stream socket.
fn stream_socket(fd: RawFd) -> Option<OwnedFd> {
    let mut kind: libc::c_int = 0;
    let mut len = libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).ok()?;
    // SAFETY: getsockopt writes at most `len` bytes into `kind`.
    let got = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&raw mut kind).cast::<libc::c_void>(),
            &raw mut len,
        )
    };
    if got != 0 || kind != libc::SOCK_STREAM {
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
    let again = fstat(new.as_raw_fd())?;
    (again.st_dev == st.st_dev
        && again.st_ino == st.st_ino
        && again.st_mode & libc::S_IFMT == libc::S_IFIFO)
        .then_some(new)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn reopen_pipe(_fd: RawFd, _side: Side, _st: &libc::stat) -> Option<OwnedFd> {
    None
}
