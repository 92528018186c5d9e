//! Keeping libacp's threads attached to the JVM: [`ensure`] attaches the
//! calling thread once, as a daemon thread (a non-daemon one would keep the
//! JVM from exiting: libacp's runtime threads live as long as the process),
//! and a thread-local guard detaches it when the thread exits. A thread
//! that is attached already (a JVM thread calling into libacp, or one JNA
//! attached for a UniFFI callback) is left as it is.
//!
//! The `jni` crate attaches non-daemon threads only, hence the raw
//! `AttachCurrentThreadAsDaemon` here.

use std::cell::RefCell;
use std::ffi::c_void;

use jni::JavaVM;
use jni::sys;

/// The JVM's name for the threads attached here (JNA's name for the same
/// threads, `NativeThreads.kt`): the native name stays `libacp-*`.
const THREAD_NAME: &std::ffi::CStr = c"libacp-callback";

/// Detaches the thread from the JVM when the thread exits.
struct Attachment {
    vm: *mut sys::JavaVM,
}

impl Drop for Attachment {
    fn drop(&mut self) {
        // SAFETY: `vm` is the process's JVM (it is never unloaded while the
        // process runs), and this thread attached itself in `ensure`; a
        // thread-local destructor runs on the thread being torn down.
        unsafe {
            let detach = (**self.vm).v1_1.DetachCurrentThread;
            let _ = detach(self.vm);
        }
    }
}

thread_local! {
    static ATTACHED: RefCell<Option<Attachment>> = const { RefCell::new(None) };
}

/// Attaches the calling thread to `vm` as a daemon thread unless it is
/// attached already; `false` if the JVM refused.
///
/// Asks the JVM each time (`GetEnv`, a thread-local read) rather than
/// trusting [`ATTACHED`]: another party may have detached the thread since
/// (JNA does, after a callback, on a thread it attached itself without a
/// `CallbackThreadInitializer`: `NativeThreads.kt`).
pub(super) fn ensure(vm: &JavaVM) -> bool {
    if vm.is_thread_attached().unwrap_or(false) {
        return true;
    }
    let raw = vm.get_raw();
    let mut env: *mut c_void = std::ptr::null_mut();
    let mut args = sys::JavaVMAttachArgs {
        version: sys::JNI_VERSION_1_4,
        name: THREAD_NAME.as_ptr().cast_mut(),
        group: std::ptr::null_mut(),
    };
    // SAFETY: `raw` is the JVM's invocation interface (from the `JavaVM`
    // the JVM gave us); the arguments outlive the call, which copies them.
    let res = unsafe {
        let attach = (**raw).v1_4.AttachCurrentThreadAsDaemon;
        attach(raw, &raw mut env, (&raw mut args).cast())
    };
    if res != sys::JNI_OK {
        return false;
    }
    // A guard from an earlier attachment (detached since by somebody else)
    // detaches this one at the thread's exit just as well.
    ATTACHED.with(|a| a.borrow_mut().get_or_insert(Attachment { vm: raw }).vm = raw);
    true
}
