//! The Tokio runtime behind every C connection: one per process, started
//! on first use, with two worker threads.

use std::cell::Cell;

use libacp_core::host::ProcessRuntime;

static RUNTIME: ProcessRuntime = ProcessRuntime::new();

/// The shared runtime (the core's [`ProcessRuntime`]: two workers, SIGPIPE
/// blocked on them, since a C or C++ host usually keeps SIGPIPE's default
/// action, and the host's signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT), or
/// `None` if it could not be started.
pub(crate) fn handle() -> Option<&'static tokio::runtime::Runtime> {
    RUNTIME.get().ok()
}

thread_local! {
    /// How many libacp hooks (the trace callback) this thread is inside.
    static IN_HOOK: Cell<u32> = const { Cell::new(0) };
}

/// Runs a host hook that libacp calls from inside its own work: on its
/// threads, or on the host's thread while it writes a frame directly (a
/// request or an answer sent while the writer is idle). Blocking calls made
/// from `f` are refused with `ACP_ERR_WRONG_THREAD` on every thread alike:
/// on the host's thread they would wait for the write `f` is part of.
pub(crate) fn in_hook<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_HOOK.with(|n| n.set(n.get().saturating_sub(1)));
        }
    }
    IN_HOOK.with(|n| n.set(n.get() + 1));
    let _leave = Leave;
    f()
}

/// Whether blocking here would deadlock: on one of libacp's runtime
/// threads, or inside a hook run by [`in_hook`].
pub(crate) fn on_runtime_thread() -> bool {
    IN_HOOK.with(|n| n.get() > 0) || tokio::runtime::Handle::try_current().is_ok()
}
