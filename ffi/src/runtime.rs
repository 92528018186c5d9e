//! The Tokio runtime behind every C connection: one per process, started
//! on first use, with two worker threads.

use std::cell::Cell;
use std::sync::OnceLock;

static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();

/// Blocks SIGPIPE on the calling thread. libacp's threads write to pipes and
/// sockets whose reader may be gone (an agent that exited or closed its
/// stdin); the write must fail with `EPIPE`, not kill the host. Rust
/// programs ignore SIGPIPE at startup, but a C or C++ host usually keeps the
/// default action (terminate), so libacp blocks it on its own threads only
/// and leaves the host's disposition alone. (Spawned processes start with
/// an empty signal mask: the standard library resets it in the child.)
fn block_sigpipe() {
    // SAFETY: plain libc calls on a local, initialized signal set; they only
    // change this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut());
    }
}

/// The shared runtime, or `None` if it could not be started.
pub(crate) fn handle() -> Option<&'static tokio::runtime::Runtime> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("libacp-io")
                .on_thread_start(block_sigpipe)
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
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
