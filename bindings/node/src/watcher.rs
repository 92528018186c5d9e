//! Reading on Node's own event loop: a libuv poll handle on the transport's
//! descriptor that calls a JavaScript function when it is readable, so the
//! core's `HostReader` is pumped on the JavaScript thread (DESIGN.md,
//! decision 10). A request is then read, handed to its handler and answered
//! without leaving that thread, and a call's answer resolves its promise in
//! the same turn: no engine thread wakes JavaScript per message.
//!
//! libuv is Node's (and Electron's): its functions are resolved from the
//! host process when the module loads, like the `napi_*` ones. The poll
//! handle's size comes from `uv_handle_size`, so no libuv header is needed.
//!
//! The handle is always unref'd: it never keeps the process alive by itself
//! (the connection's wake-up does, while it is open; see `keepAlive`).
//!
//! Threads: everything here runs on the JavaScript thread of the env that
//! made it.
//!
//! Ownership: a `Watcher` owns its poll handle and a reference to the
//! callback. `close()` (or drop) stops the handle and hands it to
//! `uv_close`; libuv's close callback frees the memory and the reference
//! once no callback of the handle can run any more. When the env goes away
//! first (a worker thread terminated with the connection open), an env
//! cleanup hook closes the handle while the loop and the env are still
//! alive, and the `Watcher` left behind does nothing any more.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use napi::sys;

/// `uv_handle_type::UV_POLL` (stable across libuv 1.x).
const UV_POLL: c_int = 8;
/// `uv_poll_event::UV_READABLE`.
const UV_READABLE: c_int = 1;

type PollCallback = unsafe extern "C" fn(handle: *mut c_void, status: c_int, events: c_int);
type CloseCallback = unsafe extern "C" fn(handle: *mut c_void);

unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut sys::uv_loop_s, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, callback: PollCallback) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, callback: Option<CloseCallback>);
    fn uv_unref(handle: *mut c_void);
    fn uv_handle_set_data(handle: *mut c_void, data: *mut c_void);
    fn uv_handle_get_data(handle: *const c_void) -> *mut c_void;
}

/// What the poll callback needs: the env, the JavaScript function and the
/// async context it is called in. Owned by the handle (its data pointer).
struct Target {
    env: sys::napi_env,
    callback: sys::napi_ref,
    context: sys::napi_async_context,
    /// The handle's memory (`uv_handle_size(UV_POLL)` bytes, 8-aligned).
    memory: *mut [u64],
    /// Shared with the `Watcher`: `false` once the handle was handed to
    /// `uv_close` (by `close` or the env cleanup hook).
    open: Rc<Cell<bool>>,
}

/// A poll handle watching one descriptor for readability.
#[derive(Debug)]
pub(crate) struct Watcher {
    handle: *mut c_void,
    watching: bool,
    open: Rc<Cell<bool>>,
    env: sys::napi_env,
}

impl Watcher {
    /// A watcher of `fd` on the env's loop that calls `callback()` (a
    /// JavaScript function, no arguments) when it is readable, once
    /// started. Errors say which step failed.
    pub(crate) fn new(
        env: sys::napi_env,
        callback: sys::napi_value,
        fd: c_int,
    ) -> Result<Self, String> {
        // SAFETY: every call below is made on the JavaScript thread of
        // `env` with values of that env; the handle memory is allocated
        // with the size libuv reports and lives until libuv's close
        // callback (`closed`) frees it.
        unsafe {
            let mut event_loop = std::ptr::null_mut();
            check(
                sys::napi_get_uv_event_loop(env, &mut event_loop),
                "napi_get_uv_event_loop",
            )?;
            let words = uv_handle_size(UV_POLL).div_ceil(8);
            let memory: *mut [u64] = Box::into_raw(vec![0u64; words].into_boxed_slice());
            let handle = memory.cast::<c_void>();
            let status = uv_poll_init(event_loop, handle, fd);
            if status != 0 {
                drop(Box::from_raw(memory));
                return Err(format!("uv_poll_init failed ({status})"));
            }
            uv_unref(handle);
            let open = Rc::new(Cell::new(true));
            let mut target = Target {
                env,
                callback: std::ptr::null_mut(),
                context: std::ptr::null_mut(),
                memory,
                open: Rc::clone(&open),
            };
            let made = make_target(&mut target, callback);
            uv_handle_set_data(handle, Box::into_raw(Box::new(target)).cast());
            let watcher = Self {
                handle,
                watching: false,
                open,
                env,
            };
            made?;
            check(
                sys::napi_add_env_cleanup_hook(env, Some(env_cleanup), handle),
                "napi_add_env_cleanup_hook",
            )?;
            Ok(watcher)
        }
    }

    /// Starts or stops watching (idempotent).
    pub(crate) fn watch(&mut self, on: bool) -> Result<(), String> {
        if on == self.watching || !self.open.get() {
            return Ok(());
        }
        // SAFETY: a live poll handle (not closed: `handle` is nulled by
        // `close`), on the loop's thread.
        let status = unsafe {
            if on {
                uv_poll_start(self.handle, UV_READABLE, readable)
            } else {
                uv_poll_stop(self.handle)
            }
        };
        if status != 0 {
            return Err(format!(
                "uv_poll_{} failed ({status})",
                if on { "start" } else { "stop" }
            ));
        }
        self.watching = on;
        Ok(())
    }

    /// Stops watching and closes the handle (idempotent). Safe inside the
    /// handle's own callback: libuv frees it after the callback returns.
    pub(crate) fn close(&mut self) {
        if !self.open.get() {
            return; // closed already, here or by the env cleanup hook
        }
        // SAFETY: a live poll handle of a live env, on the loop's thread;
        // the hook registered in `new` (same function and argument) is
        // removed first; after `uv_close` no callback of the handle runs
        // but `closed`.
        unsafe {
            sys::napi_remove_env_cleanup_hook(self.env, Some(env_cleanup), self.handle);
            shut(self.handle);
        }
        self.watching = false;
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.close();
    }
}

/// Makes the reference to the callback and its async context.
///
/// SAFETY: on the JavaScript thread of `target.env`, `callback` a value of it.
unsafe fn make_target(target: &mut Target, callback: sys::napi_value) -> Result<(), String> {
    const NAME: &str = "libacp.read";
    // SAFETY: as the function's contract says.
    unsafe {
        check(
            sys::napi_create_reference(target.env, callback, 1, &mut target.callback),
            "napi_create_reference",
        )?;
        let mut resource = std::ptr::null_mut();
        check(
            sys::napi_create_object(target.env, &mut resource),
            "napi_create_object",
        )?;
        let mut name = std::ptr::null_mut();
        check(
            sys::napi_create_string_utf8(
                target.env,
                NAME.as_ptr().cast(),
                NAME.len() as isize,
                &mut name,
            ),
            "napi_create_string_utf8",
        )?;
        check(
            sys::napi_async_init(target.env, resource, name, &mut target.context),
            "napi_async_init",
        )
    }
}

fn check(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("{what} failed (status {status})"))
    }
}

/// libuv's poll callback: calls the JavaScript function in a callback
/// scope (so promise reactions and `process.nextTick` run after it, as
/// for any I/O callback). An exception it throws goes to
/// `uncaughtException`, as from any callback. On an error `status` the
/// function is called too: the pump then reads the error.
unsafe extern "C" fn readable(handle: *mut c_void, _status: c_int, _events: c_int) {
    // SAFETY: libuv calls this on the loop's thread with our live handle,
    // whose data is the `Target` made in `Watcher::new`.
    unsafe {
        let target = uv_handle_get_data(handle).cast::<Target>();
        let Some(target) = target.as_ref() else {
            return;
        };
        if target.callback.is_null() || target.context.is_null() {
            return;
        }
        let env = target.env;
        let mut scope = std::ptr::null_mut();
        if sys::napi_open_handle_scope(env, &mut scope) != sys::Status::napi_ok {
            return;
        }
        let mut function = std::ptr::null_mut();
        let mut receiver = std::ptr::null_mut();
        if sys::napi_get_reference_value(env, target.callback, &mut function)
            == sys::Status::napi_ok
            && !function.is_null()
            && sys::napi_get_global(env, &mut receiver) == sys::Status::napi_ok
        {
            let mut result = std::ptr::null_mut();
            let status = sys::napi_make_callback(
                env,
                target.context,
                receiver,
                function,
                0,
                std::ptr::null(),
                &mut result,
            );
            if status == sys::Status::napi_pending_exception {
                let mut error = std::ptr::null_mut();
                if sys::napi_get_and_clear_last_exception(env, &mut error) == sys::Status::napi_ok {
                    sys::napi_fatal_exception(env, error);
                }
            }
        }
        sys::napi_close_handle_scope(env, scope);
    }
}

/// Stops the handle and hands it to `uv_close`, once.
///
/// SAFETY: `handle` is a poll handle made by `Watcher::new` whose close
/// callback has not run; on the loop's thread.
unsafe fn shut(handle: *mut c_void) {
    // SAFETY: as the function's contract says.
    unsafe {
        let target = uv_handle_get_data(handle).cast::<Target>();
        if let Some(target) = target.as_ref()
            && !target.open.replace(false)
        {
            return;
        }
        uv_poll_stop(handle);
        uv_close(handle, Some(closed));
    }
}

/// The env is going away with the handle open (a worker terminated): the
/// handle is closed now, while the loop and the env still work.
unsafe extern "C" fn env_cleanup(handle: *mut c_void) {
    // SAFETY: registered in `Watcher::new` with our handle and removed by
    // `Watcher::close` before it closes the handle, so the handle is open.
    // The reference and the async context are released here, while the env
    // works (the close callback may run after the env is gone); no
    // callback of ours is running during the env's cleanup.
    unsafe {
        if let Some(target) = uv_handle_get_data(handle).cast::<Target>().as_mut() {
            if !target.callback.is_null() {
                sys::napi_delete_reference(target.env, target.callback);
                target.callback = std::ptr::null_mut();
            }
            if !target.context.is_null() {
                sys::napi_async_destroy(target.env, target.context);
                target.context = std::ptr::null_mut();
            }
        }
        shut(handle);
    }
}

/// libuv's close callback: frees the handle and what it owned.
unsafe extern "C" fn closed(handle: *mut c_void) {
    // SAFETY: libuv calls this once, on the loop's thread, after the last
    // callback of the handle; the data is the boxed `Target`, which owns the
    // handle's memory.
    unsafe {
        let target = Box::from_raw(uv_handle_get_data(handle).cast::<Target>());
        if !target.callback.is_null() {
            sys::napi_delete_reference(target.env, target.callback);
        }
        if !target.context.is_null() {
            sys::napi_async_destroy(target.env, target.context);
        }
        drop(Box::from_raw(target.memory));
    }
}
