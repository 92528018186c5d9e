//! Entering the interpreter from libacp's own threads, and not entering it
//! once it shuts down.
//!
//! Threads created by Python (the host calling into the binding) already
//! hold the GIL and use their `Python` token. Every engine thread (tokio
//! workers running the handler, hooks and future completions) enters
//! Python only through `attach_alive`. The `atexit` hook registered by
//! `register_atexit_hook` runs on the interpreter's main thread at shutdown
//! and sets `FINALIZING`; from then on engine threads park instead of
//! attaching.

use pyo3::prelude::*;

/// Set once the interpreter starts shutting down (from an `atexit` hook).
/// libacp's engine threads outlive `asyncio.run`; one of them attaching to
/// the interpreter while it finalizes crashes the process, so from then on
/// they never touch Python again.
static FINALIZING: std::sync::RwLock<bool> = std::sync::RwLock::new(false);

/// `Python::attach` for libacp's own threads: during interpreter shutdown
/// the calling thread is parked for good instead (the process is exiting;
/// nothing waits for it). The read lock is held across the attach so the
/// `atexit` hook cannot mark shutdown while a thread is inside Python.
pub(crate) fn attach_alive<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    let guard = FINALIZING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if *guard {
        drop(guard);
        loop {
            std::thread::park();
        }
    }
    keep_thread_state();
    let result = Python::attach(f);
    drop(guard);
    result
}

thread_local! {
    /// This engine thread has a Python thread state of its own.
    static HAS_THREAD_STATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Gives the calling engine thread a Python thread state that lives as
/// long as the thread (with the GIL released), so that each `attach` reuses
/// it. Without one, every attach from a tokio thread creates a thread state
/// and deletes it again on release (an `mmap`/`munmap` pair and the
/// interpreter's bookkeeping, per message). Called with the `FINALIZING`
/// read lock held and false, without the GIL; threads that already have a
/// thread state (made by Python) are left alone. At interpreter shutdown
/// these thread states are cleared with the interpreter, after the
/// `atexit` hook has parked every engine thread for good.
fn keep_thread_state() {
    HAS_THREAD_STATE.with(|has| {
        if has.get() {
            return;
        }
        has.set(true);
        // SAFETY: the interpreter is running (FINALIZING is false under the
        // read lock our caller holds). This thread has no thread state, so
        // it does not hold the GIL: `PyGILState_Ensure` creates a thread
        // state and takes the GIL, `PyEval_SaveThread` releases the GIL and
        // keeps the thread state (its gilstate counter stays at 1, so the
        // `PyGILState_Release` of later attaches never deletes it).
        unsafe {
            if pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                let _ = pyo3::ffi::PyGILState_Ensure();
                let _ = pyo3::ffi::PyEval_SaveThread();
            }
        }
    });
}

/// Registered with `atexit`: marks shutdown, letting threads already inside
/// Python finish first (the GIL is released while waiting for them).
#[pyfunction]
fn _mark_finalizing(py: Python<'_>) {
    py.detach(|| {
        *FINALIZING
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
    });
}

/// Adds `_mark_finalizing` to the module and registers it with `atexit`.
pub(crate) fn register_atexit_hook(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_mark_finalizing, m)?)?;
    let atexit = m.py().import("atexit")?;
    atexit.call_method1("register", (m.getattr("_mark_finalizing")?,))?;
    Ok(())
}
