package dev.libacp

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock

/**
 * The connection's outgoing notifications, gathered into batches: each call
 * into the native library costs JNA allocations (measured: most of a
 * streaming agent's time went to one `tryNotify` per `session/update`), so
 * [send] adds the notification to a batch and returns, and the batch goes
 * to libacp with one call ([Connection.tryNotifyBatch]).
 *
 * **Order.** A batch is flushed, in order, by a coroutine started with its
 * first notification, and before anything else the connection sends after
 * it: [AcpConnection.call] flushes first, and so does a request handler
 * before its answer is returned (Bridge.kt), so the peer sees every
 * notification before the requests and answers that followed it.
 *
 * **Back-pressure.** When [LIMIT] notifications wait, [send] flushes them
 * itself, waiting while libacp's outgoing queue is full: memory stays
 * bounded when the peer reads slowly.
 *
 * **Errors.** A notification libacp refuses (invalid params, the connection
 * closed) is found when its batch is flushed: the error is thrown by the next
 * [send] (whose own notification is queued all the same) or [flush] on this
 * connection, so no failure is lost, and never by a call, cancellation or
 * answer (those flush with [flushQuietly]: what they throw is their own);
 * [flush] makes it synchronous for a caller that wants to know at once.
 */
internal class Notifications(private val native: suspend () -> Connection) {
    private val lock = Any()
    private var pending = ArrayList<OutgoingNotification>()
    private var flushScheduled = false
    private var failure: AcpException? = null
    private val flushing = Mutex()
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    /**
     * Adds a notification to the batch (see the class docs). It is queued
     * even when this throws: what it throws is the refusal of an earlier
     * notification, not of this one.
     */
    suspend fun send(method: String, params: String?) {
        val (full, earlier) = synchronized(lock) {
            pending.add(OutgoingNotification(method, params))
            if (!flushScheduled) {
                flushScheduled = true
                scope.launch { flushQuietly() }
            }
            (pending.size >= LIMIT) to takeFailure()
        }
        earlier?.let { throw it }
        if (full) flush()
    }

    /**
     * Sends every gathered notification now, in order (waiting while libacp's
     * outgoing queue is full), and throws the first error of this or an
     * earlier batch.
     */
    suspend fun flush() {
        flushPending()
        synchronized(lock) { takeFailure() }?.let { throw it }
    }

    /** A flush whose errors wait for the next [send] or [flush]. */
    suspend fun flushQuietly() {
        try {
            flushPending()
        } catch (e: AcpException) {
            remember(e)
        }
    }

    private suspend fun flushPending() {
        // Always under the mutex, even with nothing pending: a batch another
        // coroutine is sending must be out before what the caller sends next.
        // Uncontended, it costs no native call.
        flushing.withLock {
            while (true) {
                val batch = synchronized(lock) {
                    flushScheduled = false
                    if (pending.isEmpty()) return
                    pending.also { pending = ArrayList() }
                }
                sendBatch(batch)
            }
        }
    }

    private suspend fun sendBatch(batch: List<OutgoingNotification>) {
        var rest = batch
        while (rest.isNotEmpty()) {
            val outcome = native().tryNotifyBatch(rest)
            outcome.errors.firstOrNull()?.let { remember(it.error) }
            val handled = outcome.handled.toInt()
            if (handled >= rest.size) return
            // The outgoing queue is full: wait for room with the first one
            // left, then go on with the others.
            val next = rest[handled]
            try {
                native().notify(next.method, next.params)
            } catch (e: AcpException) {
                remember(e)
            }
            rest = rest.subList(handled + 1, rest.size)
        }
    }

    /** Sends what is gathered to [native] without waiting (for a close that does not wait). */
    fun flushNow(native: Connection) {
        val batch = synchronized(lock) { pending.also { pending = ArrayList() } }
        if (batch.isNotEmpty()) {
            try {
                native.tryNotifyBatch(batch)
            } catch (e: AcpException) {
                // Closing: nothing is waiting for the outcome.
            }
        }
    }

    private fun remember(e: AcpException) {
        synchronized(lock) { if (failure == null) failure = e }
    }

    private fun takeFailure(): AcpException? = failure.also { failure = null }

    private companion object {
        /** Notifications gathered before [send] flushes them itself. */
        const val LIMIT = 1024
    }
}
