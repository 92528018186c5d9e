package dev.libacp.scenarios

import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.longOrNull

// The scenario format (tests/scenarios/README.md), checked before anything
// runs: unknown keys are errors (they are typos), except `note`.

/** The scenario file breaks the format. */
class FormatError(message: String) : Exception(message)

/** A step (or a host program) failed; the message says how. */
class StepFailure(message: String) : Exception(message)

/** The role libacp plays in a scenario (the scripted peer plays the other). */
enum class ScenarioRole { AGENT, CLIENT }

/**
 * One rule of `host.requests`: requests for [method] whose params match
 * [params] (`null`: any params) run [program], a list of operations.
 */
class Rule(val method: String, val params: JsonElement?, val program: List<JsonObject>)

/** One script step: its [verb], the whole step [obj], and [text] for reports. */
class Step(val text: String, val verb: String, val obj: JsonObject) {
    /** The verb's argument. */
    val arg: JsonElement
        get() = obj.getValue(verb)
}

/** A checked scenario file. */
class Scenario(
    val role: ScenarioRole,
    val requireAuth: Boolean,
    /** `options.unstable`: the unstable features to turn on (`null`: none). */
    val unstable: List<String>?,
    val rules: List<Rule>,
    val script: List<Step>,
    /** Why the scenario fails today (XFAIL expected); `null` when it must pass. */
    val knownFailure: String?,
)

private val OPS = listOf("respond", "error", "notify", "call", "wait_for_cancel", "wait", "emit")
private val STEPS = listOf(
    "send",
    "expect",
    "expect_unordered",
    "expect_event",
    "expect_events_unordered",
    "expect_no_frame",
    "expect_no_event",
    "close",
    "expect_closed",
    "action",
)

/** Each action and the keys it takes besides `action`, `as` and `note`. */
private val ACTIONS = mapOf(
    "call" to listOf("method", "params"),
    "notify" to listOf("method", "params"),
    "cancel_session" to listOf("sessionId"),
    "release" to listOf("gate"),
    "close" to emptyList(),
)

/**
 * Parses and checks a scenario file's [text]; throws [FormatError] naming
 * the first thing that breaks the format.
 */
fun parseScenario(text: String): Scenario {
    val v = try {
        Json.parseToJsonElement(text)
    } catch (e: SerializationException) {
        throw FormatError("not valid JSON: ${e.message}")
    }
    val top = v.obj("the scenario")
    top.onlyKeys(listOf("description", "role", "options", "host", "script", "known_failure"), "the scenario")
    top.string("description", "the scenario")
    val role = when (val r = top.string("role", "the scenario")) {
        "agent" -> ScenarioRole.AGENT
        "client" -> ScenarioRole.CLIENT
        else -> throw FormatError("`role` must be \"agent\" or \"client\", not ${short(JsonPrimitive(r))}")
    }
    val options = top["options"]?.let { parseOptions(it, role) } ?: Options(requireAuth = false, unstable = null)
    val rules = top["host"]?.let(::parseHost) ?: emptyList()
    val script = top["script"] as? JsonArray ?: throw FormatError("`script` must be an array of steps")
    return Scenario(
        role = role,
        requireAuth = options.requireAuth,
        unstable = options.unstable,
        rules = rules,
        script = script.mapIndexed { i, s -> checkStep(s, "script[$i]") },
        knownFailure = if ("known_failure" in top) top.string("known_failure", "the scenario") else null,
    )
}

/** The scenario's `options`. */
private class Options(val requireAuth: Boolean, val unstable: List<String>?)

/** `options`: `require_auth` (an agent option) and `unstable` (feature names). */
private fun parseOptions(value: JsonElement, role: ScenarioRole): Options {
    val options = value.obj("`options`")
    options.onlyKeys(listOf("require_auth", "unstable"), "`options`")
    val requireAuth = options["require_auth"]?.let {
        it.booleanValue() ?: throw FormatError("`options.require_auth` must be a boolean")
    } ?: false
    if (requireAuth && role != ScenarioRole.AGENT) throw FormatError("`options.require_auth` is an agent option")
    val unstable = options["unstable"]?.let { v ->
        val items = v as? JsonArray ?: throw FormatError("`options.unstable` must be an array of strings")
        items.map {
            (it as? JsonPrimitive)?.takeIf { p -> p.isString }?.content
                ?: throw FormatError("`options.unstable` must be an array of strings")
        }
    }
    return Options(requireAuth, unstable)
}

private fun parseHost(value: JsonElement): List<Rule> {
    val host = value.obj("`host`")
    host.onlyKeys(listOf("requests"), "`host`")
    val requests = host["requests"] as? JsonArray ?: throw FormatError("`host.requests` must be an array")
    return requests.mapIndexed { i, r ->
        val what = "host.requests[$i]"
        val rule = r.obj(what)
        rule.onlyKeys(listOf("method", "params", "do", "note"), what)
        val program = rule["do"] as? JsonArray ?: throw FormatError("$what: `do` must be an array of operations")
        program.forEachIndexed { j, op -> checkOp(op, "$what.do[$j]") }
        Rule(rule.string("method", what), rule["params"], program.map { it as JsonObject })
    }
}

private fun checkOp(value: JsonElement, what: String) {
    val op = value.obj(what)
    val name = op.verb(OPS, what)
    if (name == "notify" || name == "call") {
        val escape = if (name == "call") listOf("escape") else emptyList()
        op.onlyKeys(listOf(name, "note", "params", "as") + escape, what)
        op.string(name, what)
        if ("as" in op) op.string("as", what)
        if ("escape" in op) op.getValue("escape").isTrue(what)
        return
    }
    op.onlyKeys(listOf(name, "note"), what)
    when (name) {
        "error" -> {
            val e = op.getValue("error").obj(what)
            e.onlyKeys(listOf("code", "message", "data"), what)
            if (e["code"]?.intValue() == null) throw FormatError("$what: `error.code` must be an integer")
            e.string("message", what)
        }
        "wait_for_cancel" -> op.getValue(name).isTrue(what)
        "wait" -> op.string("wait", what)
    }
}

private fun checkStep(value: JsonElement, what: String): Step {
    val step = value.obj(what)
    val name = step.verb(STEPS, what)
    if (name != "action") step.onlyKeys(listOf(name, "note"), what)
    val arg = step.getValue(name)
    when (name) {
        "expect_unordered", "expect_events_unordered" ->
            if (arg !is JsonArray || arg.isEmpty()) throw FormatError("$what: `$name` takes a non-empty array")
        "expect_no_frame", "expect_no_event" ->
            if ((arg.intValue() ?: -1) < 0) throw FormatError("$what: a quiet period in milliseconds, not ${short(arg)}")
        "close", "expect_closed" -> arg.isTrue(what)
        "action" -> checkAction(step, what)
    }
    return Step(short(step), name, step)
}

private fun checkAction(step: JsonObject, what: String) {
    val action = step.string("action", what)
    if ("as" in step) step.string("as", what)
    val keys = ACTIONS[action] ?: throw FormatError(
        "$what: unknown action ${short(JsonPrimitive(action))} (call, notify, cancel_session, release, close)",
    )
    step.onlyKeys(listOf("action", "as", "note") + keys, what)
    keys.filter { it != "params" }.forEach { step.string(it, what) }
}

private fun JsonElement.obj(what: String): JsonObject =
    this as? JsonObject ?: throw FormatError("$what must be a JSON object, not ${short(this)}")

private fun JsonObject.onlyKeys(allowed: List<String>, what: String) {
    keys.firstOrNull { it !in allowed }?.let {
        throw FormatError("$what: unknown key `$it` (allowed: ${allowed.joinToString(", ")})")
    }
}

private fun JsonObject.string(key: String, what: String): String {
    val v = this[key] ?: throw FormatError("$what: `$key` is required")
    return v.stringOrNull() ?: throw FormatError("$what: `$key` must be a string, not ${short(v)}")
}

/** The one key of [verbs] this object has. */
private fun JsonObject.verb(verbs: List<String>, what: String): String {
    val found = keys.filter { it in verbs }
    if (found.isEmpty()) throw FormatError("$what: no verb (one of: ${verbs.joinToString(", ")}) in ${short(this)}")
    if (found.size > 1) throw FormatError("$what: more than one verb in one object")
    return found.single()
}

private fun JsonElement.isTrue(what: String) {
    if (booleanValue() != true) throw FormatError("$what: the value must be `true`")
}

/** A JSON boolean's value; `null` for anything else. */
private fun JsonElement.booleanValue(): Boolean? =
    (this as? JsonPrimitive)?.takeIf { !it.isString }?.content?.let {
        when (it) {
            "true" -> true
            "false" -> false
            else -> null
        }
    }

/** A JSON integer's value; `null` for anything else (strings, fractions, booleans). */
internal fun JsonElement.intValue(): Long? =
    (this as? JsonPrimitive)?.takeIf { !it.isString }?.let {
        try {
            it.longOrNull
        } catch (e: NumberFormatException) {
            null
        }
    }
