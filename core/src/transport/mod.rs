//! Transports: where a connection's bytes come from and go to.
//!
//! A [`Transport`] is a read half, a write half and, for a spawned agent, the
//! [`process::AgentProcess`] whose lifetime the connection owns. Build one
//! with [`Transport::stdio`] (an agent serving on its own stdin/stdout),
//! [`process::spawn`] (a client driving an agent subprocess),
//! [`Transport::memory_pair`] (two connected ends, for tests) or
//! [`Transport::from_stream`] / [`Transport::new`] (any socket or pipe).

pub mod process;
mod stdio;

use tokio::io::{AsyncRead, AsyncWrite};

/// The read half of a transport.
pub type BoxReader = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of a transport.
pub type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Default buffer size of each direction of [`Transport::memory_pair`].
pub const MEMORY_PIPE_SIZE: usize = 64 * 1024;

/// A byte-stream transport. Consumed by [`crate::Connection::start`], which
/// owns it from then on: closing the connection closes the write half (the
/// peer sees end of stream) and shuts down the agent process, if any.
pub struct Transport {
    pub(crate) reader: BoxReader,
    pub(crate) writer: BoxWriter,
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
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Self {
            reader: Box::new(reader),
            writer: Box::new(writer),
            process: None,
        }
    }

    /// A transport over one bidirectional stream (a Unix or TCP socket).
    pub fn from_stream(stream: impl AsyncRead + AsyncWrite + Send + 'static) -> Self {
        let (r, w) = tokio::io::split(stream);
        Self::new(r, w)
    }

    /// This process's own stdin and stdout: what an agent launched by an
    /// editor serves on. Nothing else may write to stdout afterwards (log to
    /// stderr), and nothing may read stdin before (bytes buffered by
    /// `std::io::stdin()` are not seen).
    ///
    /// Pipes and stream sockets are driven by the runtime's reactor,
    /// non-blocking, without changing the flags of the inherited file
    /// descriptions; terminals, regular files and anything else go through
    /// tokio's blocking-pool `stdin()`/`stdout()`
    /// ([`Transport::stdio_description`] says which). Details in
    /// `transport/stdio.rs`. May be called outside a runtime: the
    /// descriptors are registered on first use.
    pub fn stdio() -> Self {
        Self::new(stdio::stdin(), stdio::stdout())
    }

    /// How the latest [`Transport::stdio`] drives stdin and stdout, for
    /// diagnostics: `"stdin: pipe (reactor), stdout: socket (reactor)"`;
    /// each is `pipe (reactor)`, `socket (reactor)`, `blocking pool`, or
    /// `unused` before the first `Transport::stdio()`. A descriptor the
    /// reactor refuses on first use shows `blocking pool` from then on.
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
}
