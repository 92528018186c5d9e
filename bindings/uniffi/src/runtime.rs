//! libacp's tokio runtime for Swift and Kotlin: the core's
//! [`ProcessRuntime`], one per process, started on first use. Every connection's engine
//! tasks run on it; host code never does (it runs on the host's own async
//! runtime, which drives the futures UniFFI hands it).
//!
//! The futures this crate returns are polled by the host's runtime (a
//! Kotlin coroutine, a Swift task), on its threads. [`InRuntime`] enters
//! this runtime around each poll, so a future that registers a timer (a
//! call's timeout) finds tokio's time driver.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use libacp_core::host::ProcessRuntime;

use crate::error::AcpError;

static RUNTIME: ProcessRuntime = ProcessRuntime::new();

/// The runtime's handle, or why it could not start.
pub(crate) fn handle() -> Result<&'static tokio::runtime::Handle, AcpError> {
    RUNTIME
        .get()
        .map(tokio::runtime::Runtime::handle)
        .map_err(|detail| AcpError::Internal { detail })
}

/// How many threads libacp's runtime has now (its two workers and the
/// blocking pool's threads, which end after 10 s idle; 0 before the first
/// connection). A diagnostic for leak checks: counting the process's
/// threads named `libacp` also counts threads a host's pool started from a
/// libacp thread, which inherit that name (Swift's Dispatch workers, since
/// handlers run on the thread that delivered their request).
#[uniffi::export]
pub fn runtime_threads() -> u32 {
    u32::try_from(RUNTIME.threads()).unwrap_or(u32::MAX)
}

/// A future polled with libacp's runtime entered (see the module docs).
pub(crate) struct InRuntime<F> {
    runtime: &'static tokio::runtime::Handle,
    inner: Pin<Box<F>>,
}

impl<F: Future> InRuntime<F> {
    pub(crate) fn new(runtime: &'static tokio::runtime::Handle, inner: F) -> Self {
        Self {
            runtime,
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for InRuntime<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _entered = self.runtime.enter();
        self.inner.as_mut().poll(cx)
    }
}
