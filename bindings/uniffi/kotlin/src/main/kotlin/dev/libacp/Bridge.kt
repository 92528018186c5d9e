package dev.libacp

import java.lang.ref.Reference
import java.nio.ByteBuffer
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.job
import kotlinx.coroutines.launch
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext

/**
 * What the typed and dynamic layers give the bridge: the peer's requests and
 * notifications as JSON text, so the typed layer decodes straight into its
 * models.
 */
internal interface RawHost {
    /** Answers a request: its result as JSON text, or throws [AcpException]. */
    suspend fun request(call: IncomingCall): String

    /** Handles a notification (the next message waits for it). */
    suspend fun notification(method: String, params: String?)

    /** A line of the spawned agent's stderr (libacp runtime thread). */
    fun stderr(line: String)

    /** A traced frame (with `ConnectOptions.trace`; see [AcpHandler.onFrame]). */
    fun frame(direction: WireDirection, frame: String)

    /** An engine event (with `ConnectOptions.events`). */
    fun engineEvent(event: EngineEvent)
}

/**
 * Set while a notification handler of the connection with this bridge runs:
 * calls made under it skip the ordering barrier (their answers would
 * otherwise wait for that very handler: DESIGN.md, decision 1).
 */
internal class InNotification(val bridge: HostBridge) : AbstractCoroutineContextElement(Key) {
    companion object Key : CoroutineContext.Key<InNotification>
}

/**
 * The [HostHandler] libacp calls, and the calls the connection makes.
 *
 * **Requests.** Each runs as a coroutine in [context] (by default
 * `Dispatchers.Default`), started by [onRequest] and answered with one call
 * into libacp ([Connection.respond]): no Rust future is awaited, which costs
 * several JNA calls and a thread hop per request. The coroutine is cancelled
 * when the peer cancels the request (`$/cancel_request`, `session/cancel` for
 * a prompt, the end of the peer's input) and then answers `-32800` (a prompt:
 * `stopReason: "cancelled"`) unless it returns first. A handler that winds
 * down under `NonCancellable` and returns a result answers with it: the
 * engine writes it (the peer's input ended: requests in flight are still
 * answered), rewrites it (a cancelled prompt) or drops it (it answered
 * `-32800` itself).
 *
 * **Calls.** [call] starts the call ([Connection.startCall]) under a token
 * and suspends; libacp hands the outcome back to [onCallResult] or
 * [onCallError] on one of its threads. Cancelling the caller abandons the
 * call (`$/cancel_request`).
 *
 * **The JNI fast path** ([Jni]). When it is on, [attach] switches the
 * connection to it: answers and calls go through [Jni.respond] and
 * [Jni.startCall], and libacp delivers requests, notification batches and
 * call outcomes to the `jni*` methods below instead of the UniFFI callbacks
 * (what it delivered before the switch came through UniFFI, in order). Both
 * ways end in the same code here, so the behaviour is the same. After
 * [closing] the connection, UniFFI is used again (what it throws for a
 * freed connection is what callers see, as without the fast path).
 */
internal class HostBridge(
    private val context: CoroutineContext,
    private val notifications: Notifications,
) : HostHandler {
    /**
     * Where the peer's messages go: set once, before the bridge is handed
     * to libacp (which calls nothing before that), so a served connection's
     * host can be made with the connection it serves (AcpServer).
     */
    @Volatile lateinit var host: RawHost

    /** The peer's requests being handled, by key. */
    private val inflight = ConcurrentHashMap<ULong, IncomingCall>()

    /** The calls waiting for their outcome, by token. */
    private val calls = ConcurrentHashMap<ULong, CancellableContinuation<String>>()
    private val tokens = AtomicLong()

    /** The connection, once made: requests may arrive before [attach]. */
    @Volatile private var native: Connection? = null
    private val attached = CompletableDeferred<Unit>()

    /** The fast path's handle ([Jni.attach]); 0 when it is off for this connection. */
    @Volatile private var jni = 0L

    fun attach(connection: Connection) {
        native = connection
        if (Jni.enabled) {
            val handle = Jni.attach(connection.uniffiCloneHandle(), this)
            if (handle != 0L) {
                Jni.releaseWhenUnreachable(this, handle)
                jni = handle
            }
        }
        attached.complete(Unit)
    }

    /** Whether this connection uses the JNI fast path (for the tests). */
    val usesJni: Boolean
        get() = jni != 0L

    /** The connection is being freed ([AcpConnection.close]): back to UniFFI. */
    fun closing() {
        jni = 0L
    }

    /** The connection, for a caller that waits until it is made. */
    suspend fun made(): Connection = connection() ?: throw AcpException.Closed("the connection has ended")

    /** The connection will never be made: [made] throws [AcpException.Closed]. */
    fun abandon() {
        attached.completeExceptionally(AcpException.Closed("the connection was never started (its server refused it)"))
    }

    /** The connection, once made; `null` once [release]d. */
    private suspend fun connection(): Connection? {
        native?.let { return it }
        withContext(NonCancellable) { attached.await() }
        return native
    }

    /**
     * The connection has ended (terminated: nothing more is delivered):
     * lets go of the host and of the connection. libacp holds this bridge
     * for as long as the connection exists, and the connection exists for
     * as long as someone holds it; with this, that is only the host's own
     * code (a served connection's agent: AcpServer), not the bridge.
     */
    fun release() {
        host = Released
        native = null
    }

    /** A released bridge's host: nothing reaches it any more. */
    private object Released : RawHost {
        override suspend fun request(call: IncomingCall): String = throw AcpException.Closed("the connection has ended")

        override suspend fun notification(method: String, params: String?) {}

        override fun stderr(line: String) {}

        override fun frame(direction: WireDirection, frame: String) {}

        override fun engineEvent(event: EngineEvent) {}
    }

    /** Sends request [method] and waits for its outcome (see the class docs). */
    suspend fun call(
        native: Connection,
        method: String,
        params: String?,
        timeoutMs: ULong,
        noTimeout: Boolean,
        skipBarrier: Boolean,
    ): String =
        suspendCancellableCoroutine { cont ->
            val token = tokens.incrementAndGet().toULong()
            calls[token] = cont
            try {
                val handle = jni
                if (handle != 0L) {
                    val refused = Jni.startCall(
                        handle,
                        method,
                        params?.let(Jni::utf8),
                        token.toLong(),
                        timeoutMs.toLong(),
                        noTimeout,
                        skipBarrier,
                    )
                    Reference.reachabilityFence(this)
                    if (refused != null) throw Jni.refusal(refused)
                } else {
                    native.startCall(method, params, token, timeoutMs, noTimeout, skipBarrier)
                }
            } catch (e: Throwable) {
                calls.remove(token)
                throw e
            }
            // Whoever takes the continuation out acts: the outcome resumes
            // it, a cancellation abandons the call.
            cont.invokeOnCancellation { if (calls.remove(token) != null) native.abandonCall(token) }
        }

    override fun onCallResult(token: ULong, result: String) {
        calls.remove(token)?.resume(result)
    }

    override fun onCallError(token: ULong, error: AcpException) {
        calls.remove(token)?.resumeWithException(error)
    }

    /** [onCallResult] through JNI: the result as UTF-8 JSON. */
    fun jniCallResult(token: Long, result: ByteArray) = onCallResult(token.toULong(), result.decodeToString())

    /** [onCallError] through JNI: the error as UniFFI writes an `AcpError`. */
    fun jniCallError(token: Long, error: ByteArray) = onCallError(token.toULong(), Jni.refusal(error))

    /** [onRequest] through JNI: the request as UniFFI writes an `IncomingRequest`. */
    fun jniRequest(request: ByteArray) = onRequest(FfiConverterTypeIncomingRequest.read(ByteBuffer.wrap(request)))

    /**
     * [onNotifications] through JNI: the batch as UniFFI writes a list of
     * `Notification`. Returns at once; libacp waits until [done] is handed
     * back ([Jni.notificationsDone]), which happens exactly once, also when
     * this fails, and this never throws.
     */
    @OptIn(DelicateCoroutinesApi::class)
    fun jniNotifications(batch: ByteArray, done: Long) {
        try {
            val notifications = FfiConverterSequenceTypeNotification.read(ByteBuffer.wrap(batch))
            // ATOMIC: started even if cancelled before it runs, so `done` is
            // always handed back.
            GlobalScope.launch(Dispatchers.Unconfined, CoroutineStart.ATOMIC) {
                try {
                    onNotifications(notifications)
                } catch (e: Throwable) {
                    // As through UniFFI: the batch is done either way.
                } finally {
                    Jni.notificationsDone(done)
                }
            }
        } catch (e: Throwable) {
            Jni.notificationsDone(done)
        }
    }

    @OptIn(DelicateCoroutinesApi::class)
    override fun onRequest(request: IncomingRequest) {
        val call = IncomingCall(request.method, request.params, request.id, request.key)
        inflight[request.key] = call
        // ATOMIC: the handler runs even when cancelled before it was
        // dispatched, and sees the cancellation at its first suspension.
        GlobalScope.launch(context, CoroutineStart.ATOMIC) { serve(call) }
    }

    private suspend fun serve(call: IncomingCall) {
        // The job first, then the flag (onCancel sets them the other way
        // round): a cancellation is seen by one side or the other.
        val self = kotlin.coroutines.coroutineContext.job
        call.job = self
        if (call.isCancelled) self.cancel(peerCancelled(call.method))
        // A request may come before the connection is made: its handler
        // starts once it is (it may send, and it answers through it). Once
        // released, libacp has answered it already (the connection closed).
        val native = connection() ?: run {
            inflight.remove(call.key)
            return
        }
        var result: String? = null
        var error: AcpException? = null
        try {
            result = host.request(call)
        } catch (e: CancellationException) {
            // The peer's cancellation was answered by the engine (-32800,
            // a prompt stopReason "cancelled"): this answer is refused then.
            // Any other cancellation of the handler answers -32603.
            error = AcpException.Cancelled(
                if (call.isCancelled) "the peer cancelled ${call.method}"
                else "the handler of ${call.method} was cancelled: ${e.message}",
            )
        } catch (e: AcpException) {
            error = e
        } catch (e: Exception) {
            error = AcpException.Internal(e.toString())
        } finally {
            inflight.remove(call.key)
            withContext(NonCancellable) {
                // What the handler sent goes out before its answer (a
                // prompt's last updates before its stop reason), also when
                // it was cancelled; a refusal among them is thrown by the
                // connection's next notify, not as this answer.
                notifications.flushQuietly()
                val handle = jni
                if (result != null && handle != 0L) {
                    Jni.respond(handle, call.key.toLong(), Jni.utf8(result))
                    Reference.reachabilityFence(this@HostBridge)
                } else if (result != null) {
                    native.respond(call.key, result)
                } else {
                    native.respondError(call.key, error ?: AcpException.Internal("the handler failed"))
                }
            }
        }
    }

    override suspend fun onNotifications(batch: List<Notification>) {
        // As for requests: a handler may use the connection, so it runs
        // once the connection is made.
        connection() ?: return
        withContext(context + InNotification(this)) {
            for (n in batch) {
                try {
                    host.notification(n.method, n.params)
                } catch (e: CancellationException) {
                    throw e
                } catch (e: Exception) {
                    // A notification has no answer: its handler's failure
                    // ends that notification only.
                }
            }
        }
    }

    override fun onCancel(key: ULong) {
        val call = inflight[key] ?: return
        call.cancelled = true
        call.job?.cancel(peerCancelled(call.method))
    }

    override fun onStderr(line: String) {
        host.stderr(line)
    }

    override fun onFrame(direction: WireDirection, frame: String) {
        host.frame(direction, frame)
    }

    override fun onEngineEvent(event: EngineEvent) {
        host.engineEvent(event)
    }

    private fun peerCancelled(what: String) = CancellationException("the peer cancelled $what")
}
