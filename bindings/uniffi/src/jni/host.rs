//! Deliveries to Kotlin through JNI: [`JniHost`] calls the Kotlin bridge's
//! `jni*` methods, and [`Routed`] (the `HostHandler` every connection is
//! given) sends each delivery of the fast path there once a [`JniHost`] is
//! installed in its [`Slot`], to the host's UniFFI handler otherwise.
//!
//! The Kotlin side (`Bridge.kt`, `HostBridge`) implements:
//!
//! * `jniRequest(byte[])`: a request, as UniFFI writes an `IncomingRequest`;
//! * `jniNotifications(byte[], long)`: a batch, as UniFFI writes a
//!   `Vec<Notification>`, and the handle of its completion, which Kotlin
//!   hands back exactly once (`Jni.notificationsDone`) when the batch was
//!   handled, and never throws;
//! * `jniCallResult(long, byte[])`: a started call's result (UTF-8 JSON);
//! * `jniCallError(long, byte[])`: how it failed, as UniFFI writes an
//!   `AcpError`.
//!
//! They are called on libacp's runtime threads (attached once, `attach.rs`),
//! or on a JVM thread whose call into libacp ended a call at once; like the
//! UniFFI callbacks they replace, they return quickly and do not block.

use std::sync::{Arc, OnceLock};

use jni::objects::{Global, JMethodID, JObject, Reference};
use jni::signature::{Primitive, ReturnType};
use jni::sys::{jlong, jvalue};
use jni::{Env, JavaVM, jni_sig, jni_str};
use tokio::sync::oneshot;

use super::{attach, uniffi_bytes};
use crate::error::AcpError;
use crate::handler::{HostHandler, IncomingRequest, Notification};
use crate::options::{EngineEvent, WireDirection};

/// Where a connection's [`JniHost`] is installed (once, by `Jni.attach`).
/// Owned by the connection's [`Routed`] handler, so it lives exactly as long
/// as the UniFFI handler does: the bridge is let go of at the same time
/// either way.
pub(crate) type Slot = OnceLock<JniHost>;

/// The completion of a notification batch handed to Kotlin: boxed, its
/// address crosses as a `long` and comes back through
/// `Jni.notificationsDone`.
pub(crate) type Done = oneshot::Sender<()>;

/// A connection's Kotlin bridge, reached through JNI.
pub(crate) struct JniHost {
    vm: JavaVM,
    bridge: Global<JObject<'static>>,
    request: JMethodID,
    notifications: JMethodID,
    call_result: JMethodID,
    call_error: JMethodID,
}

impl std::fmt::Debug for JniHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JniHost").finish_non_exhaustive()
    }
}

impl Drop for JniHost {
    fn drop(&mut self) {
        // Deleting the global reference needs an attached thread: attach as
        // a daemon (the `jni` crate would attach a non-daemon thread).
        attach::ensure(&self.vm);
    }
}

/// How an up-call went wrong.
enum UpCall {
    /// Before Kotlin was called (nothing of it reached Kotlin).
    NotCalled(String),
    /// Kotlin was called and threw (cleared here).
    Threw(String),
}

impl UpCall {
    /// `None` if Kotlin was not called, the error if it threw.
    fn into_error_if_called(self, what: &str) -> Option<AcpError> {
        match self {
            Self::NotCalled(_) => None,
            threw @ Self::Threw(_) => Some(threw.into_error(what)),
        }
    }

    fn into_error(self, what: &str) -> AcpError {
        let detail = match self {
            Self::NotCalled(e) => format!("{what}: JNI failed before the call: {e}"),
            Self::Threw(e) => format!("{what}: the Kotlin bridge threw ({e})"),
        };
        AcpError::Internal { detail }
    }
}

impl JniHost {
    /// Looks up the bridge's `jni*` methods and keeps a global reference to
    /// it (which also keeps its class, and so the method ids, alive).
    pub(crate) fn new(env: &mut Env<'_>, bridge: &JObject<'_>) -> jni::errors::Result<Self> {
        let class = env.get_object_class(bridge)?;
        let request = env.get_method_id(&class, jni_str!("jniRequest"), jni_sig!("([B)V"))?;
        let notifications =
            env.get_method_id(&class, jni_str!("jniNotifications"), jni_sig!("([BJ)V"))?;
        let call_result =
            env.get_method_id(&class, jni_str!("jniCallResult"), jni_sig!("(J[B)V"))?;
        let call_error = env.get_method_id(&class, jni_str!("jniCallError"), jni_sig!("(J[B)V"))?;
        Ok(Self {
            vm: env.get_java_vm()?,
            bridge: env.new_global_ref(bridge)?,
            request,
            notifications,
            call_result,
            call_error,
        })
    }

    /// Calls `method` (a `void` method of the bridge) with one byte array
    /// made of `bytes` and, if `long` is `Some`, a `long` before or after it
    /// (`long_first`), in a local frame of its own.
    fn call(
        &self,
        method: JMethodID,
        bytes: &[u8],
        long: Option<(jlong, bool)>,
    ) -> Result<(), UpCall> {
        if !attach::ensure(&self.vm) {
            return Err(UpCall::NotCalled(
                "this thread could not be attached to the JVM".into(),
            ));
        }
        let outcome =
            self.vm
                .with_local_frame(4, |env| -> jni::errors::Result<Result<(), UpCall>> {
                    let array = match env.byte_array_from_slice(bytes) {
                        Ok(array) => array,
                        Err(e) => {
                            if env.exception_check() {
                                env.exception_clear();
                            }
                            return Ok(Err(UpCall::NotCalled(e.to_string())));
                        }
                    };
                    let bytes = jvalue { l: array.as_raw() };
                    let args: &[jvalue] = match long {
                        None => &[bytes],
                        Some((j, true)) => &[jvalue { j }, bytes],
                        Some((j, false)) => &[bytes, jvalue { j }],
                    };
                    // SAFETY: `method` is one of the bridge's methods looked up
                    // in `new` with the signature these arguments follow (a
                    // byte array and a long, in the order of its signature), it
                    // returns void, and the bridge is a live global reference.
                    let called = unsafe {
                        env.call_method_unchecked(
                            self.bridge.as_obj(),
                            method,
                            ReturnType::Primitive(Primitive::Void),
                            args,
                        )
                    };
                    if env.exception_check() {
                        env.exception_clear();
                        return Ok(Err(UpCall::Threw("a Java exception".into())));
                    }
                    Ok(called.map(drop).map_err(|e| UpCall::Threw(e.to_string())))
                });
        outcome.unwrap_or_else(|e| Err(UpCall::NotCalled(e.to_string())))
    }

    /// [`HostHandler::on_request`] through JNI.
    pub(crate) fn on_request(&self, request: IncomingRequest) -> Result<(), AcpError> {
        // Sized once: a request may carry megabytes of params.
        let size = request.id.len()
            + request.method.len()
            + request.params.as_ref().map_or(0, String::len)
            + 64;
        let bytes = uniffi_bytes(request, size);
        self.call(self.request, &bytes, None)
            .map_err(|e| e.into_error("on_request"))
    }

    /// [`HostHandler::on_call_result`] through JNI. `Err(None)` if JNI
    /// failed before Kotlin was called (the caller can deliver it another
    /// way), `Err(Some(_))` if Kotlin threw.
    fn on_call_result(&self, token: u64, result: &str) -> Result<(), Option<AcpError>> {
        self.call(
            self.call_result,
            result.as_bytes(),
            Some((token as jlong, true)),
        )
        .map_err(|e| e.into_error_if_called("on_call_result"))
    }

    /// [`HostHandler::on_call_error`] through JNI; errors as
    /// [`Self::on_call_result`]'s.
    fn on_call_error(&self, token: u64, error: &AcpError) -> Result<(), Option<AcpError>> {
        let bytes = uniffi_bytes(error.clone(), 0);
        self.call(self.call_error, &bytes, Some((token as jlong, true)))
            .map_err(|e| e.into_error_if_called("on_call_error"))
    }

    /// [`HostHandler::on_notifications`] through JNI: hands the batch over
    /// and waits until Kotlin says it was handled.
    pub(crate) async fn on_notifications(&self, batch: Vec<Notification>) -> Result<(), AcpError> {
        let size = batch
            .iter()
            .map(|n| n.method.len() + n.params.as_ref().map_or(0, String::len) + 16)
            .sum::<usize>();
        let bytes = uniffi_bytes(batch, size + 8);
        let (done, handled) = oneshot::channel();
        let done = Box::into_raw(Box::<Done>::new(done));
        match self.call(self.notifications, &bytes, Some((done as jlong, false))) {
            Ok(()) => {
                // Kotlin completes it once the batch was handled (it never
                // drops it: a closed channel means the same).
                let _ = handled.await;
                Ok(())
            }
            Err(UpCall::NotCalled(e)) => {
                // SAFETY: `done` comes from `Box::into_raw` above and never
                // reached Kotlin: this is its only owner.
                drop(unsafe { Box::from_raw(done) });
                Err(UpCall::NotCalled(e).into_error("on_notifications"))
            }
            // Kotlin may own `done` now (it threw after taking it): it is
            // not freed here, and not waited for.
            Err(threw) => Err(threw.into_error("on_notifications")),
        }
    }
}

/// The `HostHandler` libacp's tasks deliver to: the fast path's deliveries
/// go to the [`JniHost`] once one is installed, everything else (and
/// everything before it is installed) to the host's UniFFI handler.
pub(crate) struct Routed {
    foreign: Arc<dyn HostHandler>,
    jni: Arc<Slot>,
}

impl Routed {
    pub(crate) fn new(foreign: Arc<dyn HostHandler>, jni: Arc<Slot>) -> Self {
        Self { foreign, jni }
    }
}

#[async_trait::async_trait]
impl HostHandler for Routed {
    fn on_request(&self, request: IncomingRequest) -> Result<(), AcpError> {
        match self.jni.get() {
            Some(jni) => jni.on_request(request),
            None => self.foreign.on_request(request),
        }
    }

    async fn on_notifications(&self, batch: Vec<Notification>) -> Result<(), AcpError> {
        match self.jni.get() {
            Some(jni) => jni.on_notifications(batch).await,
            None => self.foreign.on_notifications(batch).await,
        }
    }

    fn on_cancel(&self, key: u64) -> Result<(), AcpError> {
        self.foreign.on_cancel(key)
    }

    // A call's outcome that JNI could not hand over goes through UniFFI
    // instead: lost, the Kotlin caller would wait for it forever.
    fn on_call_result(&self, token: u64, result: String) -> Result<(), AcpError> {
        match self.jni.get().map(|jni| jni.on_call_result(token, &result)) {
            Some(Ok(())) => Ok(()),
            Some(Err(Some(threw))) => Err(threw),
            Some(Err(None)) | None => self.foreign.on_call_result(token, result),
        }
    }

    fn on_call_error(&self, token: u64, error: AcpError) -> Result<(), AcpError> {
        match self.jni.get().map(|jni| jni.on_call_error(token, &error)) {
            Some(Ok(())) => Ok(()),
            Some(Err(Some(threw))) => Err(threw),
            Some(Err(None)) | None => self.foreign.on_call_error(token, error),
        }
    }

    fn on_stderr(&self, line: String) -> Result<(), AcpError> {
        self.foreign.on_stderr(line)
    }

    fn on_frame(&self, direction: WireDirection, frame: String) -> Result<(), AcpError> {
        self.foreign.on_frame(direction, frame)
    }

    fn on_engine_event(&self, event: EngineEvent) -> Result<(), AcpError> {
        self.foreign.on_engine_event(event)
    }
}
