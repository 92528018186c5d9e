//! The natives of `dev.libacp.Jni` (Kotlin, `Jni.kt`), and
//! [`libacp_jni_register`], which registers them.
//!
//! A connection's JNI handle is a `Weak<Connection>` turned into a `long`
//! (`Weak::into_raw`) by `attach`: it does not keep the connection alive
//! (freeing the UniFFI object frees it as before), and a call through it
//! after the connection was freed fails as a closed connection does. Kotlin
//! frees the handle once (`release`), when the object holding it is
//! unreachable, so no call can be using it then.
//!
//! Every native runs under `EnvUnowned::with_env`, which catches panics;
//! an error or a panic is thrown to Kotlin as a `RuntimeException` and the
//! native returns its default (0, `false`, `null`).

use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Weak};

use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JByteArray, JClass, JObject, JString};
use jni::sys::{self, jboolean, jint, jlong};
use jni::{EnvUnowned, NativeMethod, Outcome, jni_str};

use super::host::{Done, JniHost};
use super::uniffi_bytes;
use crate::connection::Connection;
use crate::error::AcpError;

/// An error of a native: thrown to Kotlin as a `RuntimeException`.
#[derive(Debug)]
struct Failure(String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Self(format!("libacp JNI: {e}"))
    }
}

/// The connection behind a JNI handle, unless it was freed.
fn connection(handle: jlong) -> Option<Arc<Connection>> {
    if handle == 0 {
        return None;
    }
    // SAFETY: a non-zero handle comes from `attach` (`Weak::into_raw`) and
    // is freed only by `release`, which Kotlin calls once, when nothing can
    // use the handle any more (Jni.kt). ManuallyDrop: the handle stays
    // Kotlin's.
    let weak = ManuallyDrop::new(unsafe { Weak::from_raw(handle as usize as *const Connection) });
    weak.upgrade()
}

/// `Jni.attach(connection, bridge)`: switches the connection's fast-path
/// deliveries to `bridge` (its `jni*` methods) and returns the handle of
/// the fast-path calls, or 0 when the connection cannot switch (it has
/// ended, or was switched already): the caller stays on UniFFI then.
/// `connection` is a handle UniFFI cloned for this call
/// (`uniffiCloneHandle()`), which this consumes.
extern "system" fn attach<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    connection: jlong,
    bridge: JObject<'local>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, Failure> {
        // SAFETY: `connection` is a handle UniFFI cloned for this call
        // (Jni.kt: `uniffiCloneHandle()`), which lifting consumes.
        let Some(handle) = (unsafe { uniffi::Handle::from_raw(connection as u64) }) else {
            return Err(Failure("libacp JNI: attach without a connection".into()));
        };
        let conn = <Arc<Connection> as uniffi::Lift<crate::UniFfiTag>>::try_lift(handle)
            .map_err(|e| Failure(format!("libacp JNI: not a connection handle: {e}")))?;
        if bridge.is_null() {
            return Err(Failure("libacp JNI: attach without a bridge".into()));
        }
        let host = JniHost::new(env, &bridge)?;
        if !conn.use_jni(host) {
            return Ok(0);
        }
        Ok(Weak::into_raw(Arc::downgrade(&conn)) as usize as jlong)
    })
    .resolve::<ThrowRuntimeExAndDefault>()
}

/// `Jni.release(handle)`: frees a handle `attach` returned (once).
extern "system" fn release<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), Failure> {
        if handle != 0 {
            // SAFETY: a handle from `attach`, released once (Jni.kt).
            drop(unsafe { Weak::from_raw(handle as usize as *const Connection) });
        }
        Ok(())
    })
    .resolve::<ThrowRuntimeExAndDefault>();
}

/// `Jni.respond(handle, key, result)`: `Connection::respond` with the
/// result as UTF-8 JSON. `false` as `respond` says, and when the connection
/// was freed.
extern "system" fn respond<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    key: jlong,
    result: JByteArray<'local>,
) -> jboolean {
    env.with_env(|env| -> Result<jboolean, Failure> {
        let Some(conn) = connection(handle) else {
            return Ok(false);
        };
        let bytes = env.convert_byte_array(&result)?;
        Ok(conn.respond_utf8(key as u64, bytes))
    })
    .resolve::<ThrowRuntimeExAndDefault>()
}

/// `Jni.startCall(handle, method, params, token, timeoutMs, noTimeout,
/// skipBarrier)`: `Connection::start_call` with the params as UTF-8 JSON
/// (`null` for none). Returns `null` once the call is started, or the
/// error it was refused with as UniFFI writes an `AcpError` (Kotlin reads
/// it with `FfiConverterTypeAcpError`).
#[allow(clippy::too_many_arguments)] // The JNI signature of one call.
extern "system" fn start_call<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    method: JString<'local>,
    params: JByteArray<'local>,
    token: jlong,
    timeout_ms: jlong,
    no_timeout: jboolean,
    skip_barrier: jboolean,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, Failure> {
        let started = match connection(handle) {
            None => Err(closed()),
            Some(conn) => {
                let method = method.try_to_string(env)?;
                let params = if params.is_null() {
                    None
                } else {
                    Some(env.convert_byte_array(&params)?)
                };
                conn.start_call_utf8(
                    method,
                    params,
                    token as u64,
                    timeout_ms as u64,
                    no_timeout,
                    skip_barrier,
                )
            }
        };
        match started {
            Ok(()) => Ok(JByteArray::default()),
            Err(error) => Ok(env.byte_array_from_slice(&uniffi_bytes(error, 0))?),
        }
    })
    .resolve::<ThrowRuntimeExAndDefault>()
}

/// `Jni.notificationsDone(done)`: the batch handed over with `done`
/// (`jniNotifications`) was handled. Called once per batch.
extern "system" fn notifications_done<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    done: jlong,
) {
    env.with_env(|_env| -> Result<(), Failure> {
        if done != 0 {
            // SAFETY: `done` comes from `Box::into_raw` in
            // `JniHost::on_notifications`, handed to Kotlin, which gives it
            // back here once (Bridge.kt).
            let done = unsafe { Box::from_raw(done as usize as *mut Done) };
            let _ = done.send(());
        }
        Ok(())
    })
    .resolve::<ThrowRuntimeExAndDefault>();
}

/// The outcome of a call through a freed connection.
fn closed() -> AcpError {
    libacp_core::CallError::Connection(libacp_core::ConnectionError::Closed(
        libacp_core::CloseReason::Local,
    ))
    .into()
}

/// The natives of `dev.libacp.Jni`, with their JNI signatures (Jni.kt).
fn methods() -> [NativeMethod<'static>; 5] {
    // SAFETY: each function is an `extern "system"` native of a static
    // method (env, class, then the arguments) whose parameters and return
    // type follow the signature next to it.
    unsafe {
        [
            NativeMethod::from_raw_parts(
                jni_str!("attach"),
                jni_str!("(JLjava/lang/Object;)J"),
                attach as *mut c_void,
            ),
            NativeMethod::from_raw_parts(
                jni_str!("release"),
                jni_str!("(J)V"),
                release as *mut c_void,
            ),
            NativeMethod::from_raw_parts(
                jni_str!("respond"),
                jni_str!("(JJ[B)Z"),
                respond as *mut c_void,
            ),
            NativeMethod::from_raw_parts(
                jni_str!("startCall"),
                jni_str!("(JLjava/lang/String;[BJJZZ)[B"),
                start_call as *mut c_void,
            ),
            NativeMethod::from_raw_parts(
                jni_str!("notificationsDone"),
                jni_str!("(J)V"),
                notifications_done as *mut c_void,
            ),
        ]
    }
}

/// Registers the natives of `class` (`dev.libacp.Jni`). Called by Kotlin
/// through JNA, in the library UniFFI loaded (Jni.kt), with the calling
/// thread's `JNIEnv` (`JNIEnv.CURRENT`) and the class (a local reference
/// JNA passes as an object). Returns 0 on success, -1 otherwise (the
/// Kotlin layer then stays on UniFFI).
///
/// # Safety
///
/// `env` must be the calling thread's JNI environment and `class` a live
/// reference to `dev.libacp.Jni`, for the duration of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn libacp_jni_register(env: *mut sys::JNIEnv, class: sys::jclass) -> jint {
    if env.is_null() || class.is_null() {
        return -1;
    }
    // SAFETY: the caller passes the calling thread's JNIEnv (see above).
    let mut unowned = unsafe { EnvUnowned::from_raw(env) };
    let outcome = unowned
        .with_env(|env| -> Result<(), Failure> {
            // SAFETY: `class` is a live local reference to a class for the
            // duration of this call (see above).
            let class = unsafe { JClass::from_raw(env, class) };
            let methods = methods();
            // SAFETY: `methods` describe static natives of `class` whose
            // functions match their signatures (see `methods`).
            let registered = unsafe { env.register_native_methods(&class, &methods) };
            if env.exception_check() {
                env.exception_clear();
            }
            registered?;
            Ok(())
        })
        .into_outcome();
    match outcome {
        Outcome::Ok(()) => 0,
        Outcome::Err(_) | Outcome::Panic(_) => -1,
    }
}
