package dev.libacp

import com.sun.jna.JNIEnv
import com.sun.jna.Library
import com.sun.jna.Native

/**
 * The JNI fast path (DESIGN.md, decision 17; the Rust side and why it
 * exists: `bindings/uniffi/src/jni/`). The per-message operations go through
 * these natives instead of UniFFI's JNA calls: answering a request
 * ([respond]), starting a call ([startCall]), and, the other way, the
 * inbox's requests and notification batches and the outcomes of calls
 * (`HostBridge.jni*`, called by libacp). A JNA crossing costs 17-50 us here
 * and a round trip needed about 11; a JNI call costs well under one.
 *
 * UniFFI stays the public surface and the source of every type: only
 * handles, strings and byte arrays cross here, records and errors as the
 * bytes UniFFI's own converters read and write.
 *
 * **The switch.** On by default; off with the system property
 * `-Dlibacp.jni=false` or the environment variable `LIBACP_JNI=0`, or when
 * the natives cannot be registered (then a warning is logged). Off, every
 * operation goes through UniFFI, as before; the behaviour is the same
 * either way (the shared scenarios and fault tests run both ways).
 *
 * **Loading.** No second library: the natives are registered (JNI
 * `RegisterNatives`) by a function of the library UniFFI loaded, called
 * through JNA in that very library, so it works also when JNA unpacked the
 * library from the jar into a temporary file and deleted it.
 */
internal object Jni {
    /** Whether the fast path is on (see the object docs). */
    @JvmField
    val enabled: Boolean = switchedOn() && register()

    private fun switchedOn(): Boolean =
        System.getProperty("libacp.jni")?.trim()?.lowercase() != "false" &&
            System.getenv("LIBACP_JNI")?.trim() != "0"

    private fun register(): Boolean {
        val failure = try {
            // UniFFI's library (loaded by UniffiLib's initialiser, which
            // reading CLEANER runs), exactly as JNA holds it.
            UniffiLib.CLEANER
            val library = Native.getNativeLibrary(UniffiLib::class.java)
            val status = library.getFunction("libacp_jni_register").invoke(
                Int::class.javaPrimitiveType,
                arrayOf(JNIEnv.CURRENT, Jni::class.java),
                mapOf(Library.OPTION_ALLOW_OBJECTS to true),
            ) as Int
            if (status == 0) return true
            "libacp_jni_register returned $status"
        } catch (e: Throwable) {
            e.toString()
        }
        System.getLogger("dev.libacp").log(
            System.Logger.Level.WARNING,
            "libacp: the JNI fast path is off, its natives could not be registered ($failure); using UniFFI only",
        )
        return false
    }

    /**
     * Switches [connection]'s deliveries of the fast path to [bridge]'s `jni*`
     * methods and returns the handle of its fast-path calls, or 0 when it
     * cannot switch (the connection has ended): it stays on UniFFI then.
     * [connection] is a handle UniFFI cloned for this call, consumed here.
     * The handle must be given to [release] once, when nothing can use it
     * any more.
     */
    @JvmStatic external fun attach(connection: Long, bridge: Any): Long

    /** Frees a handle [attach] returned. */
    @JvmStatic external fun release(handle: Long)

    /** `Connection.respond` with the result as UTF-8 JSON. */
    @JvmStatic external fun respond(handle: Long, key: Long, result: ByteArray): Boolean

    /**
     * `Connection.startCall` with the params as UTF-8 JSON: `null` once the
     * call is started, or the error it was refused with as UniFFI writes an
     * `AcpError` ([refusal] reads it).
     */
    @JvmStatic external fun startCall(
        handle: Long,
        method: String,
        params: ByteArray?,
        token: Long,
        timeoutMs: Long,
        noTimeout: Boolean,
        skipBarrier: Boolean,
    ): ByteArray?

    /** The notification batch handed over with [done] was handled (once per batch). */
    @JvmStatic external fun notificationsDone(done: Long)

    /**
     * [text] as UTF-8, refusing what UniFFI refuses (a lone surrogate throws
     * `CharacterCodingException`, as UniFFI's string conversion does). Text
     * without surrogates (JSON is mostly ASCII) takes the JDK's intrinsic
     * encoder: the strict one goes through a `CharBuffer` char by char, which
     * cost tens of milliseconds on W3's 8 MiB payloads.
     */
    fun utf8(text: String): ByteArray {
        for (i in text.indices) {
            if (text[i].isSurrogate()) return text.encodeToByteArray(0, text.length, throwOnInvalidSequence = true)
        }
        return text.toByteArray(Charsets.UTF_8)
    }

    /** An error as libacp wrote it (UniFFI's own format for `AcpError`). */
    fun refusal(bytes: ByteArray): AcpException = FfiConverterTypeAcpError.read(java.nio.ByteBuffer.wrap(bytes))

    /** Releases [handle] once [owner] is unreachable (no call can be using it then). */
    fun releaseWhenUnreachable(owner: Any, handle: Long) {
        UniffiLib.CLEANER.register(owner, Releaser(handle))
    }

    /** Not a lambda: it must not hold the owner. */
    private class Releaser(private val handle: Long) : Runnable {
        override fun run() = release(handle)
    }
}
