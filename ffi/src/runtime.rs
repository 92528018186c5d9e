//! The Tokio runtime behind every C connection: one per process, started
//! on first use, with two worker threads.

use std::sync::OnceLock;

static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();

/// The shared runtime, or `None` if it could not be started.
pub(crate) fn handle() -> Option<&'static tokio::runtime::Runtime> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("libacp-io")
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
}

/// Whether the current thread is one of libacp's runtime threads (where
/// blocking calls would deadlock).
pub(crate) fn on_runtime_thread() -> bool {
    tokio::runtime::Handle::try_current().is_ok()
}
