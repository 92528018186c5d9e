//! The Kotlin fast path: a narrow hand-written JNI surface beside UniFFI
//! for the per-message operations (DESIGN.md, decision 17).
//!
//! **Why it exists.** UniFFI's Kotlin code reaches the library through JNA,
//! and on this machine a JNA crossing costs 17-50 us under load (each call
//! clones the object's handle and allocates a call status and a buffer per
//! string, native memory that JNA tracks in a global table and frees from a
//! cleaner thread). A W2 round trip (one `fs/read_text_file` request and its
//! answer between two Kotlin peers) took about 11 of them, and W2 stayed
//! 1.21-1.44x slower than the official Kotlin SDK after every other fix
//! (bench/README.md, "Gaps left"; issue 24). A JNI call costs well under a
//! microsecond. So the four operations a round trip is made of go through
//! JNI when the Kotlin layer turns this path on:
//!
//! * answering a request ([`natives`]: `respond`),
//! * starting a call (`startCall`),
//! * delivering the inbox to the host: requests and notification batches
//!   ([`host::JniHost::on_request`], [`host::JniHost::on_notifications`]),
//! * delivering the outcomes of started calls
//!   ([`host::JniHost::on_call_result`], [`host::JniHost::on_call_error`]).
//!
//! **Rules.** UniFFI stays the public surface and the source of every
//! type: this path passes handles (`long`), strings and byte arrays only.
//! A record or an error crosses as the bytes UniFFI's own converters write
//! and read (`Lower::write` here, `FfiConverter*.read` in the generated
//! Kotlin), never as a hand-marshalled structure. Everything else
//! (constructors, cancellation, close, the trace and events hooks, outgoing
//! notification batches) stays on UniFFI. It is the only hand-written FFI
//! surface besides the C ABI (`ffi/`).
//!
//! **The switch.** Kotlin decides (`Jni.kt`: the system property
//! `libacp.jni=false` or the environment variable `LIBACP_JNI=0` turn it
//! off); off, nothing here is called and every delivery goes to the
//! UniFFI `HostHandler`. On, a connection starts on UniFFI like any other
//! and is switched by `attach` right after its constructor returned: what
//! was delivered before went through UniFFI, in order, to the same Kotlin
//! bridge, so the host sees one stream either way. The shared scenarios and
//! fault tests run both ways (`scripts/test-kotlin.sh`).
//!
//! **Loading.** One library, both surfaces: Kotlin asks JNA for the very
//! library UniFFI loaded and calls [`natives::libacp_jni_register`] in it
//! (through JNA, with the `JNIEnv`), which registers the natives of
//! `dev.libacp.Jni` with `RegisterNatives`. That works also when JNA
//! unpacked the library from the jar into a temporary file it deleted at
//! once (where `System.load` of JNA's path would fail).
//!
//! **Threads.** libacp's runtime threads call Kotlin from here; each is
//! attached to the JVM once, as a daemon thread named `libacp-callback`,
//! and stays attached until it exits ([`attach`]): attaching per call cost
//! more than the call (bench/README.md, issue 12). UniFFI's callbacks run
//! on the same threads through JNA, which keeps them attached only if its
//! thread initializers (`NativeThreads.kt`) were registered before UniFFI
//! handed it the vtables (`scripts/uniffi/generate.sh` sees to that);
//! otherwise JNA detaches a thread after each of its callbacks, even one
//! attached here, and the next up-call found it detached (the hang of
//! 2026-11-28). So [`attach`] asks the JVM each time, and a call outcome
//! that JNI could not hand over goes through UniFFI ([`host::Routed`]).
//!
//! **Safety.** No panic crosses into the JVM: every native runs under
//! `EnvUnowned::with_env` (which catches unwinds) and turns a panic or an
//! error into a Java `RuntimeException`. Nothing the peer sends is trusted
//! by this layer: it only moves bytes the core has already checked.

mod attach;
pub(crate) mod host;
pub(crate) mod natives;

pub(crate) use host::{Routed, Slot};

/// `value` as UniFFI writes it and the generated Kotlin reads it back
/// (`FfiConverter*.read`), in a buffer of `capacity` bytes to start with:
/// how records and errors cross this path.
fn uniffi_bytes<T: uniffi::Lower<crate::UniFfiTag>>(value: T, capacity: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(capacity);
    T::write(value, &mut bytes);
    bytes
}
