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

/// The thread state an engine thread keeps (see `keep_thread_state`).
struct KeptState {
    /// What `PyGILState_Ensure` returned, for the matching release.
    gstate: pyo3::ffi::PyGILState_STATE,
    /// What `PyEval_SaveThread` returned, to restore before releasing.
    tstate: *mut pyo3::ffi::PyThreadState,
}

thread_local! {
    /// `None`: not set up yet on this thread; `Some(None)`: this thread had
    /// a thread state of its own (made by Python); `Some(Some(_))`: kept.
    static KEPT: std::cell::Cell<Option<Option<KeptState>>> = const { std::cell::Cell::new(None) };
}

/// Gives the calling engine thread a Python thread state that lives as
/// long as the thread (with the GIL released), so that each `attach` reuses
/// it. Without one, every attach from a tokio thread creates a thread state
/// and deletes it again on release (an `mmap`/`munmap` pair and the
/// interpreter's bookkeeping, per message). Called with the `FINALIZING`
/// read lock held and false, without the GIL; threads that already have a
/// thread state (made by Python) are left alone. Given back by
/// `forget_thread_state` when a runtime thread stops; at interpreter
/// shutdown, the interpreter clears those left, after the `atexit` hook
/// has parked every engine thread for good.
fn keep_thread_state() {
    KEPT.with(|kept| {
        let current = kept.take();
        if current.is_some() {
            kept.set(current);
            return;
        }
        // SAFETY: the interpreter is running (FINALIZING is false under the
        // read lock our caller holds). A thread without a thread state does
        // not hold the GIL: `PyGILState_Ensure` creates one and takes the
        // GIL, `PyEval_SaveThread` releases the GIL and keeps the thread
        // state (its gilstate counter stays at 1, so the
        // `PyGILState_Release` of later attaches never deletes it).
        let state = unsafe {
            if pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                let gstate = pyo3::ffi::PyGILState_Ensure();
                let tstate = pyo3::ffi::PyEval_SaveThread();
                Some(KeptState { gstate, tstate })
            } else {
                None
            }
        };
        kept.set(Some(state));
    });
}

/// Gives back the thread state `keep_thread_state` kept, if any (the
/// runtime's `on_thread_stop` hook: tokio's blocking threads come and go).
/// Nothing is touched once the interpreter shuts down.
pub(crate) fn forget_thread_state() {
    let Some(Some(state)) = KEPT.with(std::cell::Cell::take) else {
        return;
    };
    let guard = FINALIZING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if *guard {
        return; // the interpreter clears its thread states itself
    }
    // SAFETY: the interpreter is running (checked under the read lock,
    // held across); `state` is this thread's kept thread state, not
    // attached: restoring it takes the GIL, releasing the gilstate counter
    // to 0 deletes it and releases the GIL.
    unsafe {
        pyo3::ffi::PyEval_RestoreThread(state.tstate);
        pyo3::ffi::PyGILState_Release(state.gstate);
    }
    drop(guard);
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
