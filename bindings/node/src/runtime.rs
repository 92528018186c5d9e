//! libacp's tokio runtime for Node: one per process, started on first use,
//! two worker threads named `libacp`. Every connection's engine tasks and
//! the completions JavaScript waits on (close, waits) run on it; host code
//! never does (it runs on the JavaScript thread).

use std::sync::OnceLock;

static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();

/// The runtime's handle, or why it could not start.
pub(crate) fn handle() -> Result<&'static tokio::runtime::Handle, String> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("libacp")
                .enable_all()
                .build()
                .map_err(|e| format!("libacp could not start its runtime: {e}"))
        })
        .as_ref()
        .map(tokio::runtime::Runtime::handle)
        .map_err(Clone::clone)
}
