package dev.libacp.scenarios

import dev.libacp.AcpException
import kotlinx.coroutines.CancellationException
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * A failed call as the README's "Typed errors" table writes it:
 * [AcpException.Rpc] is `Rpc` (`code`, `message`, `data` if any),
 * [AcpException.Refused] `Refused.<kind>` with those of `method`,
 * `capability`, `sessionId` and `version` (parsed: it is JSON text) that it
 * has, and `InvalidParams`, `InvalidResult`, `Closed`, `Cancelled`,
 * `Timeout` as named. Every one has a `message`; anything else is
 * `Other: <class>`.
 */
fun errorJson(e: Throwable): JsonObject = buildJsonObject {
    when (e) {
        is AcpException.Rpc -> {
            put("kind", "Rpc")
            put("code", e.code)
            put("message", e.detail)
            e.data?.let(::parseOrText)?.takeIf { it != JsonNull }?.let { put("data", it) }
        }
        is AcpException.Refused -> {
            put("kind", "Refused.${e.kind}")
            e.method?.let { put("method", it) }
            e.capability?.let { put("capability", it) }
            e.sessionId?.let { put("sessionId", it) }
            e.version?.let { put("version", parseOrText(it)) }
            put("message", e.detail)
        }
        is AcpException.InvalidParams -> kind("InvalidParams", e.detail)
        is AcpException.InvalidResult -> kind("InvalidResult", e.detail)
        is AcpException.Closed -> kind("Closed", e.detail)
        // A remote transport's failure closed the connection: a close, in
        // the scenarios' vocabulary (as Python's and Node's RemoteError is a
        // ConnectionClosed).
        is AcpException.Remote -> kind("Closed", e.detail)
        is AcpException.Cancelled -> kind("Cancelled", e.detail)
        is AcpException.Timeout -> kind("Timeout", e.detail)
        else -> kind("Other: ${e::class.simpleName}", e.message ?: e.toString())
    }
}

private fun kotlinx.serialization.json.JsonObjectBuilder.kind(kind: String, message: String) {
    put("kind", kind)
    put("message", message)
}

/** JSON text as a value; text that does not parse stays a string. */
private fun parseOrText(text: String): JsonElement =
    try {
        Json.parseToJsonElement(text)
    } catch (e: SerializationException) {
        JsonPrimitive(text)
    }

/**
 * Runs [work] (a call, a notify, ...) and writes its outcome:
 * `{"result": R}` (`null` for nothing) or `{"error": E}` ([errorJson]).
 * A cancellation is thrown, not written.
 */
suspend fun outcome(work: suspend () -> JsonElement): JsonObject {
    val (key, value) = try {
        "result" to work()
    } catch (e: CancellationException) {
        throw e
    } catch (e: Exception) {
        "error" to errorJson(e)
    }
    return JsonObject(mapOf(key to value))
}
