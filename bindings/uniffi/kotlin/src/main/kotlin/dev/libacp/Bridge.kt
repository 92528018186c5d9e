package dev.libacp

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.job
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
 * The [HostHandler] libacp calls. Handlers run in [context] (by default
 * `Dispatchers.Default`); a request handler runs as a child coroutine that
 * is cancelled when the peer cancels the request (`$/cancel_request`,
 * `session/cancel` for a prompt, the end of the peer's input), and then
 * answers `-32800` (a prompt: `stopReason: "cancelled"`) unless it returns
 * first. A handler that winds down under `NonCancellable` and returns a
 * result answers with it: the engine writes it (the peer's input ended:
 * requests in flight are still answered), rewrites it (a cancelled prompt)
 * or refuses it (it answered `-32800` itself).
 */
internal class HostBridge(
    private val host: RawHost,
    private val context: CoroutineContext,
    private val notifications: Notifications,
) : HostHandler {
    private val inflight = ConcurrentHashMap<ULong, Job>()

    override suspend fun onRequest(request: IncomingRequest, signals: RequestSignals): String {
        try {
            val call = IncomingCall(request.method, request.params, request.id, request.key, signals)
            return coroutineScope {
                // What the handler returned: a cancelled job's own result is
                // lost (it completes as cancelled), even when the handler
                // returned after winding down.
                val answer = AtomicReference<String?>()
                val work = async(context) {
                    // The job registers itself once it runs: cancelled before
                    // it was dispatched, it would never run, and the handler
                    // would not see the request at all. A cancellation that
                    // came before the registration is seen here (the flag is
                    // set before onCancel is called); a later one finds the
                    // job in the map (onCancel). Either way the handler runs
                    // and is cancelled at its first suspension.
                    val self = coroutineContext.job
                    inflight[request.key] = self
                    if (signals.isCancelled()) self.cancel(peerCancelled(request.method))
                    host.request(call).also(answer::set)
                }
                try {
                    work.await()
                } catch (e: CancellationException) {
                    answer.get()?.let { return@coroutineScope it }
                    if (!signals.isCancelled()) throw e
                    throw AcpException.Cancelled("the peer cancelled ${request.method}")
                } finally {
                    inflight.remove(request.key)
                    // What the handler sent goes out before its answer (a
                    // prompt's last updates before its stop reason), also
                    // when it was cancelled; a refusal among them is thrown
                    // by the connection's next notify, not as this answer.
                    withContext(NonCancellable) { notifications.flushQuietly() }
                }
            }
        } finally {
            signals.destroy()
        }
    }

    override suspend fun onNotifications(batch: List<Notification>) {
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
        inflight[key]?.cancel(peerCancelled("the request"))
    }

    override fun onStderr(line: String) {
        host.stderr(line)
    }

    private fun peerCancelled(what: String) = CancellationException("the peer cancelled $what")
}
