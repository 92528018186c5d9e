package dev.libacp.scenarios

import dev.libacp.AcpErrors
import dev.libacp.AcpHandler
import dev.libacp.IncomingCall
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put

/**
 * The libacp side's handler in a scenario (README, "Host behaviour"): each
 * request runs the program of the first rule whose method equals the
 * request's and whose params pattern matches its params (absent params
 * match as `null`), keeping that pattern's captures; without one it is
 * answered `-32601`. Every notification is recorded as the event
 * `{"event": "notification", "method": M, "params": P}`.
 *
 * **Cancellation.** The binding cancels a request handler's coroutine when
 * the peer cancels the request (`session/cancel` for a prompt,
 * `$/cancel_request`, a client cancelling a permission request) and when
 * the answer is no longer the handler's (libacp answered, the connection
 * closed). The vocabulary's programs carry on after that (`wait_for_cancel`
 * then `emit`; a pending `call` that fails `Closed`, then `emit`), so a
 * program runs in the run's own scope; the handler's cancellation is its
 * `wait_for_cancel` signal. The cancelled handler then waits for its
 * program without being cancellable (the binding's way for a handler to
 * wind down), so what the program sends before answering precedes
 * libacp's answer; that answer is libacp's (`-32800`, a prompt's
 * `stopReason: "cancelled"`), or none when libacp answered already: "a
 * refused answer is ignored".
 *
 * **No answer.** A handler cannot end without answering (returning answers
 * a result), so a program that ends without answering throws `-32603`,
 * which is what the engine's dropped responder answers. A program's
 * failure (a bad template, a failed `call` without `as`) is reported
 * against the current step and ends the program.
 */
internal class ScenarioHost(private val run: ScenarioRun) : AcpHandler {
    override suspend fun onRequest(call: IncomingCall): JsonElement {
        val rule = pickRule(call.method, call.params ?: JsonNull) ?: throw AcpErrors.methodNotFound(call.method)
        val cancelled = CompletableDeferred<Unit>()
        val program = run.scope.async { program(rule, call.method, cancelled) }
        return try {
            program.await()
        } catch (e: CancellationException) {
            // Still active: the program itself was stopped (the scenario is over).
            if (currentCoroutineContext().isActive) throw e
            cancelled.complete(Unit)
            withContext(NonCancellable) { program.await() }
        }
    }

    override suspend fun onNotification(method: String, params: JsonElement?) {
        run.emit(
            buildJsonObject {
                put("event", "notification")
                put("method", method)
                put("params", params ?: JsonNull)
            },
        )
    }

    /** The first rule for this request; its pattern's captures are kept. */
    private fun pickRule(method: String, params: JsonElement): Rule? {
        for (rule in run.scenario.rules) {
            if (rule.method != method) continue
            val bound = HashMap<String, JsonElement>()
            if (rule.params != null) {
                try {
                    matches(rule.params, params, run.captures, bound)
                } catch (m: Mismatch) {
                    continue
                }
            }
            run.captures.putAll(bound)
            return rule
        }
        return null
    }

    /** Runs [rule]'s operations in order; returns the answer or throws the error to answer with. */
    private suspend fun program(rule: Rule, method: String, cancelled: Deferred<Unit>): JsonElement {
        val what = "the host's `$method` handler"
        for (op in rule.program) {
            try {
                operation(op, cancelled, what)?.let { return it }
            } catch (e: StepFailure) {
                run.problem("$what: ${e.message}")
                break
            }
        }
        throw AcpErrors.rpc(-32603, "Internal error", JsonPrimitive("the host's program ended without answering"))
    }

    /**
     * One operation: the result when it answers, `null` to go on; an `error`
     * operation throws the JSON-RPC error to answer with.
     */
    private suspend fun operation(op: JsonObject, cancelled: Deferred<Unit>, what: String): JsonElement? {
        when {
            "respond" in op -> return fill(op.getValue("respond"), run.captures)
            "error" in op -> {
                val e = fill(op.getValue("error"), run.captures).jsonObject
                throw AcpErrors.rpc(e.getValue("code").intValue()!!, e.getValue("message").stringOrNull()!!, e["data"])
            }
            "notify" in op || "call" in op -> send(op, what)
            "wait_for_cancel" in op -> cancelled.await()
            "wait" in op -> run.gate(op.getValue("wait").stringOrNull()!!).await()
            "emit" in op -> run.emit(
                buildJsonObject {
                    put("event", "emit")
                    put("value", fill(op.getValue("emit"), run.captures))
                },
            )
        }
        return null
    }

    /**
     * A program's `call` or `notify`: its outcome goes to the capture `as`, a
     * failure without `as` is a problem. With `escape`, a failed call's
     * [dev.libacp.AcpException] is rethrown: it escapes the handler as it is.
     */
    private suspend fun send(op: JsonObject, what: String) {
        val verb = if ("call" in op) "call" else "notify"
        val method = op.getValue(verb).stringOrNull()!!
        val params = op["params"]?.let { fill(it, run.captures) }
        val alias = op["as"]?.stringOrNull()
        var escaped: Exception? = null
        val result = outcome {
            try {
                run.send(verb, method, params)
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                if ("escape" in op) escaped = e
                throw e
            }
        }
        if (alias != null) run.captures[alias] = result
        escaped?.let { throw it }
        if (alias == null) result["error"]?.let { run.problem("$what: $verb $method failed: ${short(it)}") }
    }
}
