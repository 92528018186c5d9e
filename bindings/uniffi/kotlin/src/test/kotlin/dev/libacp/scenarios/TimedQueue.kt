package dev.libacp.scenarios

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.withTimeoutOrNull

/**
 * A FIFO queue whose [get] gives up after a while without losing anything
 * that comes later (unlike a channel's `receive` under a timeout, which may
 * drop the element it was resumed with). Any thread may [put]; the consumer
 * is a coroutine.
 */
internal class TimedQueue<T : Any> {
    private val items = ArrayDeque<T>()
    private val waiters = ArrayDeque<CompletableDeferred<T>>()

    /** Adds [item]: to the oldest waiting [get], else to the queue. */
    fun put(item: T): Unit = synchronized(this) {
        val waiter = waiters.removeFirstOrNull()
        if (waiter != null) waiter.complete(item) else items.addLast(item)
    }

    /** Whether nothing is queued now. */
    fun isEmpty(): Boolean = synchronized(this) { items.isEmpty() }

    /** The next item if one is queued now, else `null`. */
    fun takeNow(): T? = synchronized(this) { items.removeFirstOrNull() }

    /** The next item, or `null` if none comes within [ms] milliseconds. */
    suspend fun get(ms: Long): T? {
        val waiter = synchronized(this) {
            items.removeFirstOrNull()?.let { return it }
            CompletableDeferred<T>().also { waiters.addLast(it) }
        }
        withTimeoutOrNull(ms) { waiter.await() }?.let { return it }
        synchronized(this) {
            if (waiters.remove(waiter)) return null
        }
        // A put took the waiter (and completed it) just as the time ran out.
        return waiter.await()
    }
}
