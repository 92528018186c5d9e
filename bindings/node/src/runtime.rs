//! libacp's tokio runtime for Node: the core's `ProcessRuntime`, one per
//! process, started on first use. Every connection's engine tasks and
//! the completions JavaScript waits on (close, waits) run on it; host code
//! never does (it runs on the JavaScript thread).

use libacp_core::host::ProcessRuntime;

static RUNTIME: ProcessRuntime = ProcessRuntime::new();

/// The runtime's handle, or why it could not start.
pub(crate) fn handle() -> Result<&'static tokio::runtime::Handle, String> {
    RUNTIME.get().map(tokio::runtime::Runtime::handle)
}
