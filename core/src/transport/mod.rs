//! Transports: where a connection's bytes come from and go to.
//!
//! A [`Transport`] is a read half, a write half and, for a spawned agent, the
//! [`process::AgentProcess`] whose lifetime the connection owns. Build one
//! with [`Transport::stdio`] (an agent serving on its own stdin/stdout),
//! [`process::spawn`] (a client driving an agent subprocess),
//! [`Transport::memory_pair`] (two connected ends, for tests) or
//! [`Transport::from_fds`] (descriptors: pipes, FIFOs, sockets, files) or
//! [`Transport::from_stream`] / [`Transport::new`] (any async stream).
//!
//! Descriptor-backed halves (pipes, FIFOs, stream sockets: `fd.rs`) can be
//! written directly by the thread that answers, and read by a host's own
//! event loop (`Engine::host_reader`), so a round trip needs no thread
//! hand-off; other halves are driven by the engine's tasks only.

pub(crate) mod fd;
pub mod process;
mod stdio;

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The read half of a transport.
pub type BoxReader = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of a transport.
pub type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Default buffer size of each direction of [`Transport::memory_pair`].
pub const MEMORY_PIPE_SIZE: usize = 64 * 1024;

/// The read half of a [`Transport`].
pub(crate) enum ReadHalf {
    /// A non-blocking pipe or stream socket.
    Fd(fd::FdReader),
    /// Anything else, driven by the engine's tasks.
    Stream(BoxReader),
}

/// The write half of a [`Transport`].
pub(crate) enum WriteHalf {
    /// A non-blocking pipe or stream socket.
    Fd(fd::FdWriter),
    /// Anything else, driven by the engine's writer task.
    Stream(BoxWriter),
}

impl AsyncRead for ReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Fd(r) => Pin::new(r).poll_read(cx, buf),
            Self::Stream(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Fd(w) => Pin::new(w).poll_write(cx, data),
            Self::Stream(w) => Pin::new(w).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Fd(w) => Pin::new(w).poll_write_vectored(cx, bufs),
            Self::Stream(w) => Pin::new(w).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Fd(w) => w.is_write_vectored(),
            Self::Stream(w) => w.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Fd(w) => Pin::new(w).poll_flush(cx),
            Self::Stream(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Fd(w) => Pin::new(w).poll_shutdown(cx),
            Self::Stream(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}

/// A byte-stream transport. Consumed by [`crate::Connection::start`], which
/// owns it from then on: closing the connection closes the write half (the
/// peer sees end of stream) and shuts down the agent process, if any.
pub struct Transport {
    pub(crate) reader: ReadHalf,
    pub(crate) writer: WriteHalf,
    pub(crate) process: Option<process::AgentProcess>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("process", &self.process)
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// A transport over any read and write halves (pipes, sockets, files).
    /// Prefer [`Transport::from_fds`] for descriptors: it drives them
    /// without thread hand-offs.
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Self {
            reader: ReadHalf::Stream(Box::new(reader)),
            writer: WriteHalf::Stream(Box::new(writer)),
            process: None,
        }
    }

    /// A transport over one bidirectional stream (a Unix or TCP socket).
    pub fn from_stream(stream: impl AsyncRead + AsyncWrite + Send + 'static) -> Self {
        let (r, w) = tokio::io::split(stream);
        Self::new(r, w)
    }

    /// A transport over file descriptors, which it takes ownership of (they
    /// are closed when the connection ends): a read end and a write end,
    /// or one connected stream socket given as both.
    ///
    /// The contract every binding shares:
    /// * **pipes and FIFOs** are set non-blocking (`O_NONBLOCK`, on their
    ///   open file descriptions: do not share them with other users);
    /// * **stream sockets** are used with `MSG_DONTWAIT`, their flags
    ///   untouched; closing the connection shuts the socket's write side
    ///   down (`SHUT_WR`), so the peer sees end of stream even while a
    ///   duplicate of the descriptor stays open;
    /// * **anything else** (regular files, terminals, character devices) is
    ///   read and written through the blocking pool;
    /// * the same descriptor for both directions must be a stream socket.
    ///
    /// Errors (the descriptors are closed): `ErrorKind::InvalidInput` for a
    /// socket that is not a stream socket; the OS error if `fcntl` fails.
    /// [`Transport::from_raw_fds`] makes the checks before taking anything
    /// over. May be called outside a runtime: descriptors are registered with the
    /// reactor of the runtime that drives the connection.
    pub fn from_fds(read: OwnedFd, write: OwnedFd) -> std::io::Result<Self> {
        let (r, w) = (read.as_raw_fd(), write.as_raw_fd());
        check_pair(r, w)?;
        Ok(Self {
            reader: fd::read_half(read)?,
            writer: fd::write_half(write)?,
            process: None,
        })
    }

    /// A transport over one connected stream socket, for both directions
    /// (see [`Transport::from_fds`]).
    pub fn from_socket(socket: OwnedFd) -> std::io::Result<Self> {
        let raw = socket.as_raw_fd();
        check_pair(raw, raw)?;
        let write = socket.try_clone()?;
        Self::from_fds(socket, write)
    }

    /// [`Transport::from_fds`] for raw descriptors, as bindings receive them
    /// (`read == write`: one stream socket). Both are checked to be open
    /// first; every check of `from_fds` is made before anything is taken
    /// over, so on an `InvalidInput` error the caller still owns them.
    ///
    /// # Safety
    /// Open descriptors are owned by the caller and given up (on success,
    /// or on an error other than `InvalidInput`); nothing else may use or
    /// close them afterwards.
    pub unsafe fn from_raw_fds(read: RawFd, write: RawFd) -> std::io::Result<Self> {
        for (fd, what) in [(read, "read_fd"), (write, "write_fd")] {
            if fd < 0 || fd::kind(fd).is_err() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{what} {fd} is not an open file descriptor"),
                ));
            }
        }
        check_pair(read, write)?;
        // SAFETY: both checked open; the caller gives them up.
        unsafe {
            if read == write {
                Self::from_socket(fd::owned(read, "read_fd")?)
            } else {
                Self::from_fds(fd::owned(read, "read_fd")?, fd::owned(write, "write_fd")?)
            }
        }
    }

    /// This process's own stdin and stdout: what an agent launched by an
    /// editor serves on. Nothing else may write to stdout afterwards (log to
    /// stderr), and nothing may read stdin before (bytes buffered by
    /// `std::io::stdin()` are not seen).
    ///
    /// Pipes and stream sockets are driven non-blocking (by the runtime's
    /// reactor, or by a host's event loop), without changing the flags of
    /// the inherited file descriptions; terminals, regular files and
    /// anything else go through tokio's blocking-pool `stdin()`/`stdout()`
    /// ([`Transport::stdio_description`] says which). Details in
    /// `transport/stdio.rs`. May be called outside a runtime: the
    /// descriptors are registered on first use.
    pub fn stdio() -> Self {
        Self {
            reader: stdio::stdin(),
            writer: stdio::stdout(),
            process: None,
        }
    }

    /// How the latest [`Transport::stdio`] drives stdin and stdout, for
    /// diagnostics: `"stdin: pipe (reactor), stdout: socket (reactor)"`;
    /// each is `pipe (reactor)`, `socket (reactor)`, `blocking pool`, or
    /// `unused` before the first `Transport::stdio()`.
    pub fn stdio_description() -> String {
        stdio::describe()
    }

    /// Two connected in-memory ends: what one writes, the other reads.
    /// Each direction buffers at most `MEMORY_PIPE_SIZE` bytes, so
    /// back-pressure behaves as on a real pipe.
    pub fn memory_pair() -> (Self, Self) {
        Self::memory_pair_with_capacity(MEMORY_PIPE_SIZE)
    }

    /// [`Transport::memory_pair`] with a chosen buffer size per direction.
    pub fn memory_pair_with_capacity(capacity: usize) -> (Self, Self) {
        let (a, b) = tokio::io::duplex(capacity);
        (Self::from_stream(a), Self::from_stream(b))
    }

    /// The agent process behind this transport, if it spawned one.
    pub fn process(&self) -> Option<&process::AgentProcess> {
        self.process.as_ref()
    }

    /// Joins two transports byte for byte, no engine between them: what
    /// one reads, the other writes (a gateway between a remote connection
    /// and a stdio agent or client). When one side's input ends, the other
    /// side's output is shut down (its peer sees end of stream) and the
    /// other direction gets [`SPLICE_DRAIN`] to finish; when a read or a
    /// write fails instead, both end at once. Then both are closed and any
    /// agent process is shut down (the ladder of
    /// [`process::AgentProcess::shutdown`]) and reaped. Returns the first
    /// failure, if any (a remote transport's carries its
    /// [`RemoteError`](crate::remote::RemoteError) as the I/O error's inner
    /// error: `e.get_ref()` and `downcast_ref`).
    pub async fn splice(self, other: Transport) -> Result<(), std::io::Error> {
        use tokio::io::AsyncWriteExt;
        let Transport {
            reader: mut a_in,
            writer: mut a_out,
            process: a_process,
        } = self;
        let Transport {
            reader: mut b_in,
            writer: mut b_out,
            process: b_process,
        } = other;
        // Each direction owns its halves: a pipe closes when its half is
        // dropped (shutting a pipe's write half down does not close it).
        let a_to_b = async move {
            let copied = tokio::io::copy(&mut a_in, &mut b_out).await.map(drop);
            let _ = b_out.shutdown().await;
            drop((a_in, b_out));
            copied
        };
        let b_to_a = async move {
            let copied = tokio::io::copy(&mut b_in, &mut a_out).await.map(drop);
            let _ = a_out.shutdown().await;
            drop((b_in, a_out));
            copied
        };
        let (mut a_to_b, mut b_to_a) = (std::pin::pin!(a_to_b), std::pin::pin!(b_to_a));
        use futures_util::FutureExt;
        let (first, rest) = tokio::select! {
            r = &mut a_to_b => (r, b_to_a.as_mut().left_future()),
            r = &mut b_to_a => (r, a_to_b.as_mut().right_future()),
        };
        let result = match first {
            Ok(()) => tokio::time::timeout(SPLICE_DRAIN, rest)
                .await
                .unwrap_or(Ok(())),
            Err(e) => Err(e),
        };
        for process in [a_process, b_process].into_iter().flatten() {
            process.shutdown().await;
        }
        result
    }
}

/// How long [`Transport::splice`] lets the second direction finish once
/// the first has ended.
pub const SPLICE_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// The checks [`Transport::from_fds`] makes before taking anything over.
fn check_pair(read: RawFd, write: RawFd) -> std::io::Result<()> {
    let invalid = |msg: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, msg);
    for fd in [read, write] {
        if fd::kind(fd)? == fd::Kind::OtherSocket {
            return Err(invalid(format!(
                "descriptor {fd} is a socket that is not a stream socket (SOCK_STREAM)"
            )));
        }
    }
    if read == write && fd::kind(read)? != fd::Kind::StreamSocket {
        return Err(invalid(format!(
            "the same descriptor ({read}) for both directions must be a stream socket; \
             pass a pipe's two ends, or two descriptors"
        )));
    }
    Ok(())
}
