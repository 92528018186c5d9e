//! File descriptors as transport halves: the one implementation behind
//! [`super::Transport::from_fds`], [`super::Transport::stdio`] and spawned
//! agents' pipes.
//!
//! **Pipes, FIFOs and stream sockets are driven non-blocking** ([`FdReader`],
//! [`FdWriter`]): by the runtime's reactor from the engine's tasks, or
//! directly by whoever holds the connection's lock (a host's event loop
//! reading, any thread writing an answer while the writer task is idle), so a
//! round trip needs no thread hand-off. A pipe's open file description must
//! be non-blocking: [`super::Transport::from_fds`] sets `O_NONBLOCK` on the
//! descriptors it is given (they are the connection's from then on), stdio
//! reopens a private description instead (see `stdio.rs`). A socket is read
//! and written with `MSG_DONTWAIT` per call, so its flags are never changed.
//!
//! **Anything else** (regular files, terminals, character devices) goes
//! through tokio's blocking pool ([`super::ReadHalf::Stream`]), as a file
//! cannot be waited on.
//!
//! **SIGPIPE is never raised**: sockets are written with `MSG_NOSIGNAL`;
//! pipe writes block SIGPIPE on the calling thread for the duration of the
//! write (and consume the one it raised), so a host whose SIGPIPE kills the
//! process (C and C++ programs by default) sees `EPIPE` instead, whichever
//! thread writes. Processes that ignore SIGPIPE (Rust, Python, Node and the
//! JVM do at startup) skip that guard (two syscalls a write): its need is
//! read when the connection's writer starts, so a host must not restore
//! SIGPIPE's default action while connections are open.

use std::io::{self, IoSlice};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

use super::{BoxReader, BoxWriter, ReadHalf, WriteHalf};

/// How a descriptor is used without blocking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A pipe or FIFO whose open file description is non-blocking.
    Pipe,
    /// A stream socket, read and written with `MSG_DONTWAIT`.
    Socket,
}

/// What a descriptor is, from `fstat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Fifo,
    StreamSocket,
    /// A socket that is not a stream (datagram, seqpacket): refused.
    OtherSocket,
    Other,
}

pub(crate) fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `stat` into the buffer on success.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: initialized by the successful call.
    Ok(unsafe { st.assume_init() })
}

/// What `fd` is. Fails when it is not an open descriptor (`EBADF`).
pub(crate) fn kind(fd: RawFd) -> io::Result<Kind> {
    let st = fstat(fd)?;
    Ok(match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => Kind::Fifo,
        libc::S_IFSOCK => {
            if socket_type(fd) == Some(libc::SOCK_STREAM) {
                Kind::StreamSocket
            } else {
                Kind::OtherSocket
            }
        }
        _ => Kind::Other,
    })
}

fn socket_type(fd: RawFd) -> Option<libc::c_int> {
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
    (got == 0).then_some(kind)
}

/// Sets or clears `O_NONBLOCK` on the open file description of `fd`.
pub(crate) fn set_nonblocking(fd: RawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let wanted = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    // SAFETY: as above.
    if wanted != flags && unsafe { libc::fcntl(fd, libc::F_SETFL, wanted) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads what is available now into `buf`: `WouldBlock` when nothing is;
/// `Ok(0)` at end of stream. Interrupted calls are retried. On `Ok(n)` the
/// first `n` bytes of `buf` are initialized.
pub(crate) fn read_now(
    fd: RawFd,
    mode: Mode,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> io::Result<usize> {
    loop {
        let ptr = buf.as_mut_ptr().cast::<libc::c_void>();
        // SAFETY: `buf` is valid for `buf.len()` bytes; the kernel only
        // writes into it.
        let n = unsafe {
            match mode {
                Mode::Socket => libc::recv(fd, ptr, buf.len(), libc::MSG_DONTWAIT),
                Mode::Pipe => libc::read(fd, ptr, buf.len()),
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

/// Writes what fits now from `bufs` (in order): the count written, or
/// `WouldBlock` when nothing fits. Never raises SIGPIPE (see the module
/// docs). Interrupted calls are retried.
pub(crate) fn write_now(
    fd: RawFd,
    mode: Mode,
    guard: bool,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize> {
    let count = libc::c_int::try_from(bufs.len().min(64)).unwrap_or(64);
    loop {
        let n = match mode {
            Mode::Socket => {
                // SAFETY: a zeroed msghdr is valid; the iovecs point into
                // `bufs`, alive for the call (IoSlice is ABI-compatible with
                // iovec on Unix).
                unsafe {
                    let mut msg: libc::msghdr = std::mem::zeroed();
                    msg.msg_iov = bufs.as_ptr().cast_mut().cast::<libc::iovec>();
                    msg.msg_iovlen = count as _;
                    libc::sendmsg(fd, &raw const msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
                }
            }
            Mode::Pipe => {
                let guard = guard.then(SigpipeGuard::new);
                // SAFETY: as above, for writev.
                let n = unsafe { libc::writev(fd, bufs.as_ptr().cast::<libc::iovec>(), count) };
                let error = (n < 0).then(io::Error::last_os_error);
                if let Some(guard) = guard {
                    guard.finish(error.as_ref());
                }
                if let Some(e) = error {
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                n
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

/// Whether pipe writes need the SIGPIPE guard: SIGPIPE is not ignored.
pub(crate) fn sigpipe_guard_needed() -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::uninit();
    // SAFETY: sigaction with a NULL new action only reads the current one
    // into `old`.
    if unsafe { libc::sigaction(libc::SIGPIPE, std::ptr::null(), old.as_mut_ptr()) } != 0 {
        return true;
    }
    // SAFETY: initialized by the successful call.
    let old = unsafe { old.assume_init() };
    old.sa_sigaction != libc::SIG_IGN
}

/// Blocks SIGPIPE on the calling thread around one pipe write, and consumes
/// the SIGPIPE that write raised, if any, before restoring the mask. A
/// thread that already blocked SIGPIPE is left exactly as it was (the
/// signal stays pending, as for any write it makes itself).
struct SigpipeGuard {
    /// The mask to restore; `None` when SIGPIPE was already blocked.
    restore: Option<libc::sigset_t>,
}

fn sigpipe_set() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is valid storage; sigemptyset/sigaddset
    // initialize it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGPIPE);
        set
    }
}

impl SigpipeGuard {
    fn new() -> Self {
        let set = sigpipe_set();
        // SAFETY: a zeroed sigset_t is valid storage for the old mask;
        // pthread_sigmask only changes this thread's mask.
        unsafe {
            let mut old: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, &raw mut old) != 0 {
                return Self { restore: None };
            }
            let was_blocked = libc::sigismember(&raw const old, libc::SIGPIPE) == 1;
            Self {
                restore: (!was_blocked).then_some(old),
            }
        }
    }

    fn finish(self, error: Option<&io::Error>) {
        let Some(old) = self.restore else { return };
        if error.and_then(io::Error::raw_os_error) == Some(libc::EPIPE) {
            let set = sigpipe_set();
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: consumes a pending SIGPIPE of this thread, if any
            // (none was pending before: it was not blocked, so it would
            // have been delivered), without waiting.
            unsafe {
                libc::sigtimedwait(&raw const set, std::ptr::null_mut(), &raw const zero);
            }
        }
        // SAFETY: restores this thread's mask as it was.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &raw const old, std::ptr::null_mut());
        }
    }
}

/// Registers `fd` with the current runtime's reactor. On failure (outside a
/// runtime, a runtime without I/O, a descriptor epoll refuses) the
/// descriptor is handed back untouched: a duplicate is registered, so that a
/// panicking registration (tokio panics on a runtime without I/O) cannot
/// close the original.
fn register(fd: OwnedFd, interest: Interest) -> Result<AsyncFd<OwnedFd>, OwnedFd> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(fd);
    }
    let Ok(dup) = fd.try_clone() else {
        return Err(fd);
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `dup` is an open descriptor owned by the `AsyncFd` from
        // now on (`OwnedFd::as_raw_fd` always returns it).
        unsafe { AsyncFd::register_with_interest(dup, interest) }
    })) {
        Ok(Ok(afd)) => Ok(afd),
        _ => Err(fd),
    }
}

/// A blocking-pool stream over `fd` (made blocking again first), for when
/// the reactor refuses the descriptor.
fn blocking_file(fd: OwnedFd) -> tokio::fs::File {
    let _ = set_nonblocking(fd.as_raw_fd(), false);
    tokio::fs::File::from_std(std::fs::File::from(fd))
}

enum ReadState {
    /// Not yet used: registered on the first poll (on the runtime that
    /// polls it), or read directly by a host (see `Engine::host_reader`).
    Open(OwnedFd),
    Registered(AsyncFd<OwnedFd>),
    /// The reactor refused the descriptor.
    Blocking(BoxReader),
    /// Transient, while switching states.
    Switching,
}

/// The read half over a non-blocking pipe or stream socket.
pub(crate) struct FdReader {
    mode: Mode,
    state: ReadState,
}

impl std::fmt::Debug for FdReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdReader")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl FdReader {
    /// `fd` must already be non-blocking (pipes) or a stream socket.
    pub(crate) fn new(fd: OwnedFd, mode: Mode) -> Self {
        Self {
            mode,
            state: ReadState::Open(fd),
        }
    }

    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The descriptor, for a host that reads it itself (before first use).
    pub(crate) fn into_unregistered(self) -> Result<OwnedFd, Self> {
        match self.state {
            ReadState::Open(fd) => Ok(fd),
            state => Err(Self {
                mode: self.mode,
                state,
            }),
        }
    }

    fn register(&mut self) {
        let fd = match std::mem::replace(&mut self.state, ReadState::Switching) {
            ReadState::Open(fd) => fd,
            other => {
                self.state = other;
                return;
            }
        };
        self.state = match register(fd, Interest::READABLE) {
            Ok(afd) => ReadState::Registered(afd),
            Err(fd) => ReadState::Blocking(Box::new(blocking_file(fd))),
        };
    }
}

impl AsyncRead for FdReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                ReadState::Open(_) | ReadState::Switching => this.register(),
                ReadState::Blocking(b) => return Pin::new(b).poll_read(cx, buf),
                ReadState::Registered(afd) => {
                    let mut guard = ready!(afd.poll_read_ready(cx))?;
                    // SAFETY: the unfilled part is only written to, by the
                    // kernel (never de-initialized).
                    let unfilled = unsafe { buf.unfilled_mut() };
                    let len = unfilled.len();
                    let mode = this.mode;
                    match guard.try_io(|fd| read_now(fd.as_raw_fd(), mode, unfilled)) {
                        Ok(Ok(n)) => {
                            // Edge-triggered epoll: a short read drained the
                            // descriptor; the next data brings a new event.
                            if n > 0 && n < len {
                                guard.clear_ready();
                            }
                            // SAFETY: `read_now` initialized `n` bytes.
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

enum WriteState {
    Open(OwnedFd),
    Registered(AsyncFd<OwnedFd>),
    Blocking(BoxWriter),
    Switching,
}

/// The write half over a non-blocking pipe or stream socket.
pub(crate) struct FdWriter {
    mode: Mode,
    state: WriteState,
    /// Shut the socket's write side down on close (`SHUT_WR`), so the peer
    /// sees end of stream even while another descriptor of the socket is
    /// open. Off for stdio, whose socket is shared with the parent.
    shutdown_on_close: bool,
    /// Pipe writes block SIGPIPE around the write (read at registration).
    guard: bool,
}

impl std::fmt::Debug for FdWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdWriter")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl FdWriter {
    /// `fd` must already be non-blocking (pipes) or a stream socket.
    pub(crate) fn new(fd: OwnedFd, mode: Mode, shutdown_on_close: bool) -> Self {
        Self {
            mode,
            state: WriteState::Open(fd),
            shutdown_on_close,
            guard: true,
        }
    }

    /// Registers the descriptor with the current runtime (the writer task
    /// does this first). Afterwards [`FdWriter::direct`] says whether it
    /// can be written directly.
    pub(crate) fn register(&mut self) {
        self.guard = sigpipe_guard_needed();
        let fd = match std::mem::replace(&mut self.state, WriteState::Switching) {
            WriteState::Open(fd) => fd,
            other => {
                self.state = other;
                return;
            }
        };
        self.state = match register(fd, Interest::WRITABLE) {
            Ok(afd) => WriteState::Registered(afd),
            Err(fd) => WriteState::Blocking(Box::new(blocking_file(fd))),
        };
    }

    /// The descriptor and how to write it directly with [`write_now`]
    /// (mode, SIGPIPE guard), while this writer is registered (and alive).
    pub(crate) fn direct(&self) -> Option<(RawFd, Mode, bool)> {
        match &self.state {
            WriteState::Registered(afd) => Some((afd.get_ref().as_raw_fd(), self.mode, self.guard)),
            _ => None,
        }
    }
}

impl AsyncWrite for FdWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(data)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                WriteState::Open(_) | WriteState::Switching => this.register(),
                WriteState::Blocking(b) => return Pin::new(b).poll_write_vectored(cx, bufs),
                WriteState::Registered(afd) => {
                    let mut guard = ready!(afd.poll_write_ready(cx))?;
                    let (mode, sigpipe) = (this.mode, this.guard);
                    let total: usize = bufs.iter().map(|b| b.len()).sum();
                    match guard.try_io(|fd| write_now(fd.as_raw_fd(), mode, sigpipe, bufs)) {
                        Ok(Ok(n)) => {
                            if n > 0 && n < total {
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

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().state {
            WriteState::Blocking(b) => Pin::new(b).poll_flush(cx),
            // Written straight to the descriptor: nothing buffered here.
            _ => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let raw = match &mut this.state {
            WriteState::Blocking(b) => return Pin::new(b).poll_shutdown(cx),
            WriteState::Registered(afd) => afd.get_ref().as_raw_fd(),
            WriteState::Open(fd) => fd.as_raw_fd(),
            WriteState::Switching => return Poll::Ready(Ok(())),
        };
        if this.mode == Mode::Socket && this.shutdown_on_close {
            // SAFETY: shutdown(2) on a socket this writer owns.
            if unsafe { libc::shutdown(raw, libc::SHUT_WR) } < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::ENOTCONN) {
                    return Poll::Ready(Err(e));
                }
            }
        }
        // A pipe's write end closes when this writer is dropped.
        Poll::Ready(Ok(()))
    }
}

/// The read half over `fd`, which the caller gives up: a pipe or FIFO is
/// set non-blocking, a stream socket is used with `MSG_DONTWAIT`, anything
/// else goes through the blocking pool.
pub(crate) fn read_half(fd: OwnedFd) -> io::Result<ReadHalf> {
    Ok(match kind(fd.as_raw_fd())? {
        Kind::Fifo => {
            set_nonblocking(fd.as_raw_fd(), true)?;
            ReadHalf::Fd(FdReader::new(fd, Mode::Pipe))
        }
        Kind::StreamSocket => ReadHalf::Fd(FdReader::new(fd, Mode::Socket)),
        Kind::OtherSocket => return Err(not_a_stream()),
        Kind::Other => {
            ReadHalf::Stream(Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))))
        }
    })
}

/// The write half over `fd` (as [`read_half`]); a socket's write side is
/// shut down when the connection closes.
pub(crate) fn write_half(fd: OwnedFd) -> io::Result<WriteHalf> {
    Ok(match kind(fd.as_raw_fd())? {
        Kind::Fifo => {
            set_nonblocking(fd.as_raw_fd(), true)?;
            WriteHalf::Fd(FdWriter::new(fd, Mode::Pipe, false))
        }
        Kind::StreamSocket => WriteHalf::Fd(FdWriter::new(fd, Mode::Socket, true)),
        Kind::OtherSocket => return Err(not_a_stream()),
        Kind::Other => {
            WriteHalf::Stream(Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))))
        }
    })
}

fn not_a_stream() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "the socket is not a stream socket (SOCK_STREAM)",
    )
}

/// Takes ownership of a raw descriptor after checking that it is open.
///
/// # Safety
/// If `fd` is open, the caller owns it and gives it up.
pub(crate) unsafe fn owned(fd: RawFd, what: &str) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} {fd} is not a file descriptor"),
        ));
    }
    // SAFETY: F_GETFD has no memory-safety preconditions; it only checks
    // that `fd` is open.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} {fd} is not an open file descriptor"),
        ));
    }
    // SAFETY: open, and the caller's to give up.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
