package dev.libacp

import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native

/**
 * libacp calls into Kotlin (the handler's methods, future wake-ups and
 * completions) from its own runtime threads, which are not JVM threads. By
 * default JNA attaches such a thread to the JVM for each call and detaches
 * it afterwards, which costs more than the call itself. Registered here, they
 * stay attached (as daemon threads named `libacp-callback`, so they never
 * keep the JVM alive) for as long as they live: libacp's runtime threads live
 * as long as the process.
 *
 * JNA takes a callback's initializer when it first hands the callback to
 * native code, which UniffiLib's initialiser does for every vtable, and it
 * remembers per thread that a thread it attached without one is detached
 * after each call (even one that libacp's JNI path attached since). So this
 * object must be initialised before UniffiLib: `scripts/uniffi/generate.sh`
 * puts a call of [ensure] first in UniffiLib's initialiser, whatever call
 * into the library comes first.
 *
 * Measured on W2 (sequential requests between two libacp Kotlin peers): see
 * bench/README.md.
 */
internal object NativeThreads {
    private val keepAttached = CallbackThreadInitializer(true, false, "libacp-callback")

    init {
        val callbacks = listOf(
            uniffiCallbackInterfaceHostHandler.`onRequest`,
            uniffiCallbackInterfaceHostHandler.`onNotifications`,
            uniffiCallbackInterfaceHostHandler.`onCancel`,
            uniffiCallbackInterfaceHostHandler.`onCallResult`,
            uniffiCallbackInterfaceHostHandler.`onCallError`,
            uniffiCallbackInterfaceHostHandler.`onStderr`,
            uniffiCallbackInterfaceHostHandler.`onFrame`,
            uniffiCallbackInterfaceHostHandler.`onEngineEvent`,
            uniffiCallbackInterfaceHostHandler.uniffiFree,
            uniffiCallbackInterfaceHostHandler.uniffiClone,
            uniffiCallbackInterfaceRemoteAgentFactory.`onConnection`,
            uniffiCallbackInterfaceRemoteAgentFactory.uniffiFree,
            uniffiCallbackInterfaceRemoteAgentFactory.uniffiClone,
            uniffiForeignFutureDroppedCallbackImpl,
            uniffiRustFutureContinuationCallbackImpl,
        )
        for (callback in callbacks) Native.setCallbackThreadInitializer(callback, keepAttached)
    }

    /** Makes sure the registration above ran (idempotent, cheap). */
    fun ensure() = Unit
}
