//! The Tokio runtime a binding runs its connections on: one per process,
//! started on first use, shared by every connection of that binding.
//!
//! [`ProcessRuntime::get`] builds it the same way for every binding: two
//! worker threads named `libacp`, I/O and timers enabled, and these signals
//! blocked on its threads ([`block_signals`]):
//!
//! * **SIGPIPE**: libacp's threads write to pipes and sockets whose reader
//!   may be gone (an agent that exited or closed its stdin); the write must
//!   fail with `EPIPE`, not kill the host. Rust programs ignore SIGPIPE at
//!   startup, but a C or C++ host usually keeps the default action
//!   (terminate), so libacp blocks it on its own threads only and leaves the
//!   host's disposition alone.
//! * **SIGINT, SIGTERM, SIGHUP, SIGQUIT**: the signals sent to a process
//!   (Ctrl+C, a service manager) are the host's. The kernel may hand such a
//!   signal to any thread that does not block it: the host's handler would
//!   then run on a libacp thread, and Python only notes it there for its
//!   main thread, which an idle asyncio loop (`asyncio.run`'s Ctrl+C
//!   handler sets no wake-up descriptor) does not notice. Blocked here, they
//!   always reach a host thread, and a host that waits for them with
//!   `sigwait` in a thread of its own gets them there.
//!
//! (Spawned processes start with an empty signal mask: the standard library
//! resets it in the child.)

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::runtime::{Builder, Runtime};

/// A lazily started, process-wide runtime (a `static` of the binding).
#[derive(Debug)]
pub struct ProcessRuntime {
    cell: OnceLock<Result<Runtime, String>>,
    /// The binding's hook run on each of the runtime's threads as it ends.
    on_thread_stop: Option<fn()>,
    /// The runtime's threads alive now (workers and blocking pool).
    threads: AtomicUsize,
}

impl Default for ProcessRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessRuntime {
    /// A runtime not started yet.
    pub const fn new() -> Self {
        Self::hooked(None)
    }

    /// A runtime not started yet whose threads each run `hook` as they end
    /// (Python forgets the thread's interpreter state there).
    pub const fn with_thread_stop(hook: fn()) -> Self {
        Self::hooked(Some(hook))
    }

    const fn hooked(on_thread_stop: Option<fn()>) -> Self {
        Self {
            cell: OnceLock::new(),
            on_thread_stop,
            threads: AtomicUsize::new(0),
        }
    }

    /// The runtime, started on the first call with libacp's settings (see
    /// the module docs); later calls return the same runtime, or the same
    /// error: why the OS refused its threads or its I/O driver.
    pub fn get(&'static self) -> Result<&'static Runtime, String> {
        self.cell
            .get_or_init(|| {
                Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name("libacp")
                    .on_thread_start(|| {
                        block_signals();
                        self.threads.fetch_add(1, Ordering::Relaxed);
                    })
                    .on_thread_stop(|| {
                        if let Some(hook) = self.on_thread_stop {
                            hook();
                        }
                        self.threads.fetch_sub(1, Ordering::Relaxed);
                    })
                    .enable_all()
                    .build()
                    .map_err(|e| format!("libacp could not start its runtime: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// How many threads the runtime has now: its workers and the blocking
    /// pool's threads (which end after 10 s idle); 0 before it started. A
    /// diagnostic for leak checks: the OS's view (`/proc/self/task/*/comm`
    /// named `libacp`) also counts threads a host's thread pool started from
    /// a libacp thread, which inherit its name (Swift's Dispatch workers,
    /// when a handler runs on the thread that delivered its request).
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::Relaxed)
    }
}

/// The signals libacp's threads block (see the module docs).
const BLOCKED_SIGNALS: [libc::c_int; 5] = [
    libc::SIGPIPE,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
];

/// Blocks SIGPIPE, SIGINT, SIGTERM, SIGHUP and SIGQUIT on the calling
/// thread: the first thing every thread libacp starts does (the runtime's,
/// and a binding's own threads), so that the host's signals reach the
/// host's threads (see the module docs). Never call it on a host thread.
pub fn block_signals() {
    // SAFETY: plain libc calls on a local, initialized signal set; they only
    // change this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        for signal in BLOCKED_SIGNALS {
            libc::sigaddset(&raw mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_once_with_the_host_signals_blocked() {
        static RT: ProcessRuntime = ProcessRuntime::new();
        assert_eq!(RT.threads(), 0);
        let rt = RT.get().expect("runtime");
        let again = RT.get().expect("runtime");
        assert!(std::ptr::eq(rt, again));
        let (name, blocked) = rt.block_on(async {
            tokio::spawn(async {
                // SAFETY: reads this thread's signal mask into a local set.
                let blocked = unsafe {
                    let mut set: libc::sigset_t = std::mem::zeroed();
                    libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &raw mut set);
                    BLOCKED_SIGNALS.map(|s| libc::sigismember(&raw const set, s) == 1)
                };
                (std::thread::current().name().map(str::to_owned), blocked)
            })
            .await
            .expect("task")
        });
        assert_eq!(name.as_deref(), Some("libacp"));
        assert_eq!(blocked, [true; 5]);
    }

    /// Polls `ok` for up to 60 s (a hang detector: threads start and end
    /// asynchronously).
    fn eventually(what: &str, ok: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ok() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn counts_its_threads_and_runs_the_stop_hook() {
        static STOPPED: AtomicUsize = AtomicUsize::new(0);
        fn stopped() {
            STOPPED.fetch_add(1, Ordering::Relaxed);
        }
        static RT: ProcessRuntime = ProcessRuntime::with_thread_stop(stopped);
        let rt = RT.get().expect("runtime");
        eventually("the two workers are counted", || RT.threads() == 2);
        // A blocking thread is counted while it lives...
        let during = rt.block_on(async {
            tokio::task::spawn_blocking(|| RT.threads())
                .await
                .expect("blocking")
        });
        assert_eq!(during, 3);
        // ...and uncounted, its stop hook run, when it ends (after tokio's
        // 10 s keep-alive).
        eventually("the blocking thread ends", || {
            RT.threads() == 2 && STOPPED.load(Ordering::Relaxed) == 1
        });
    }
}
