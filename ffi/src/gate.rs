//! [`CallbackGate`]: makes "`user_data` lives until `acp_connection_free`
//! returns" true for the trace callback, which libacp's threads may call
//! while the connection winds down (a frame written during the close).

use std::sync::{Condvar, Mutex, PoisonError};
use std::thread::{self, ThreadId};

/// Lets calls of a host callback through until [`CallbackGate::close`],
/// which waits for the calls in progress on other threads and lets no new
/// one through: once it returns, the callback is not running elsewhere and
/// never called again. Shared (`Arc`) by the hook and the connection.
#[derive(Debug)]
pub(crate) struct CallbackGate {
    state: Mutex<State>,
    idle: Condvar,
}

#[derive(Debug)]
struct State {
    open: bool,
    /// The threads inside the callback now (a thread appears once per
    /// nested call).
    inside: Vec<ThreadId>,
}

impl CallbackGate {
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                open: true,
                inside: Vec::new(),
            }),
            idle: Condvar::new(),
        }
    }

    /// Runs `f` (the host's callback) unless the gate is closed.
    pub(crate) fn run(&self, f: impl FnOnce()) {
        let me = thread::current().id();
        {
            let mut state = self.lock();
            if !state.open {
                return;
            }
            state.inside.push(me);
        }
        // Left even if `f` unwinds.
        struct Leave<'a>(&'a CallbackGate, ThreadId);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let mut state = self.0.lock();
                if let Some(i) = state.inside.iter().position(|t| *t == self.1) {
                    state.inside.swap_remove(i);
                }
                drop(state);
                self.0.idle.notify_all();
            }
        }
        let _leave = Leave(self, me);
        f();
    }

    /// Closes the gate and waits until no other thread is inside the
    /// callback. Called from inside the callback itself, it does not wait
    /// for that call (its own thread). Idempotent.
    pub(crate) fn close(&self) {
        let me = thread::current().id();
        let mut state = self.lock();
        state.open = false;
        while state.inside.iter().any(|t| *t != me) {
            state = self
                .idle
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc::channel;
    use std::time::Duration;

    use super::CallbackGate;

    #[test]
    fn nothing_runs_after_close() {
        let gate = CallbackGate::new();
        let calls = AtomicUsize::new(0);
        gate.run(|| {
            calls.fetch_add(1, Ordering::SeqCst);
        });
        gate.close();
        gate.run(|| {
            calls.fetch_add(1, Ordering::SeqCst);
        });
        gate.close();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn close_waits_for_a_call_in_progress_on_another_thread() {
        let gate = Arc::new(CallbackGate::new());
        let finished = Arc::new(AtomicBool::new(false));
        let (entered_tx, entered) = channel();
        let caller = std::thread::spawn({
            let gate = Arc::clone(&gate);
            let finished = Arc::clone(&finished);
            move || {
                let inner = Arc::clone(&gate);
                gate.run(move || {
                    entered_tx.send(()).expect("entered");
                    // Returns only once close() has started (it closed the
                    // gate): close() is then waiting for this very call.
                    let mut waited = 0;
                    while inner.lock().open {
                        waited += 1;
                        assert!(waited < 60_000, "close() never started");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    finished.store(true, Ordering::SeqCst);
                });
            }
        });
        entered
            .recv_timeout(Duration::from_secs(60))
            .expect("the call started");
        gate.close();
        // close() returned after the call in progress ended.
        assert!(
            finished.load(Ordering::SeqCst),
            "close returned during the call"
        );
        caller.join().expect("caller");
    }

    #[test]
    fn close_from_inside_the_callback_does_not_wait_for_itself() {
        let gate = CallbackGate::new();
        let mut closed = false;
        gate.run(|| {
            gate.close();
            closed = true;
        });
        assert!(closed);
        let mut again = false;
        gate.run(|| again = true);
        assert!(!again);
    }
}
