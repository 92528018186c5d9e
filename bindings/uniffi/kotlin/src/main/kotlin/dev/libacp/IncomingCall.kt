package dev.libacp

import kotlinx.coroutines.Job
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive

/**
 * A request from the peer, as handlers see it. [paramsJson] and [idJson] are
 * the JSON text as it arrived: every field, known or not, is there.
 */
class IncomingCall internal constructor(
    /** The method name, as sent. */
    val method: String,
    /** The params as JSON text; `null` when absent. */
    val paramsJson: String?,
    /** The id the peer chose, as JSON text. */
    val idJson: String,
    /** Unique per connection. */
    val key: ULong,
) {
    /** Set (before [job] is cancelled) when the peer cancels the request. */
    @Volatile internal var cancelled = false

    /** The handler's coroutine, once it runs (Bridge.kt). */
    @Volatile internal var job: Job? = null

    /** The params, parsed; `null` when absent. */
    val params: JsonElement? by lazy { paramsJson?.let { Json.parseToJsonElement(it) } }

    /**
     * Whether the peer cancelled the request (or the connection closed). The
     * handler's coroutine is cancelled too; a handler that must finish
     * something (a prompt sending its last updates) does it under
     * `withContext(NonCancellable)`.
     */
    val isCancelled: Boolean
        get() = cancelled

    override fun toString() = "IncomingCall($method, id=$idJson)"
}

/**
 * The errors handlers throw for the standard JSON-RPC answers. An
 * [AcpException.Rpc] that escapes a handler is answered unchanged (code,
 * message, `data`): a nested call's error the handler does not catch reaches
 * the caller as the peer sent it, a `-32601` too (it is not rewritten into
 * [methodNotFound] for the handler's own method). Any other [AcpException]
 * that escapes (a nested call's local failure: [AcpException.InvalidParams]
 * of the handler's own call, [AcpException.Refused], a timeout, a
 * cancellation) answers `-32603` `"Internal error"` with its text as
 * `data`, as in every libacp binding: it never blames the caller's request.
 */
object AcpErrors {
    /** `-32601` with `data: {"method": method}`, as libacp answers unhandled methods. */
    fun methodNotFound(method: String): AcpException =
        AcpException.Rpc(-32601, "Method not found", """{"method":${JsonPrimitive(method)}}""")

    /**
     * `-32602` `"Invalid params"` with [detail] as `data`: the handler
     * refuses the peer's params (what libacp answers for params that break
     * the spec's rules, and the typed API for params that do not decode).
     */
    fun invalidParams(detail: String): AcpException =
        AcpException.Rpc(-32602, "Invalid params", JsonPrimitive(detail).toString())

    /** An error with this code, message and `data` (JSON). */
    fun rpc(code: Long, message: String, data: JsonElement? = null): AcpException =
        AcpException.Rpc(code, message, data?.toString())
}
