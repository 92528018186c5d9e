package dev.libacp.scenarios

import java.math.BigDecimal
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull

// Patterns and templates of the scenario format (tests/scenarios/README.md,
// "Patterns"): the same functions, names and reports as the Python and Node
// runners (`matches`, `fill`, `pairUp`, `Mismatch`), so that a failure reads
// the same in every binding.

/** Captured values by name, shared by the script and the host's programs. */
typealias Captures = Map<String, JsonElement>

private const val ANY = "\$any"
private const val ABSENT = "\$absent"
private const val CAPTURE = "\$capture:"
private const val REF = "\$ref:"
private const val ONE_OF = "\$one_of"
private const val LITERAL = "\$\$"

/** How much of a JSON value a report shows. */
private const val SHORT_LIMIT = 2000

/**
 * Where a value parts from a pattern: at JSON pointer [path] (empty for the
 * top level) the pattern wanted [expected] and the value had [got].
 */
class Mismatch(val path: String, val expected: String, val got: String) :
    Exception("at ${path.ifEmpty { "(top level)" }}: expected $expected, got $got") {
    /**
     * The report of a failed `expect` step: where and how [actual] (a
     * `frame` or an `event`, says [what]) parts from [pattern], then both
     * whole.
     */
    fun describe(what: String, pattern: JsonElement, actual: JsonElement): String =
        "$what does not match, at ${path.ifEmpty { "(top level)" }}: expected $expected, got $got\n" +
            "  expected $what: ${short(pattern)}\n" +
            "  got $what:      ${short(actual)}"
}

/** Compact JSON, cut at 2000 characters. */
fun short(v: JsonElement): String {
    val s = v.toString()
    return if (s.length <= SHORT_LIMIT) s else s.take(SHORT_LIMIT) + "..."
}

/** The text of a JSON string; `null` for anything else. */
internal fun JsonElement.stringOrNull(): String? = (this as? JsonPrimitive)?.takeIf { it.isString }?.content

/** The value of a JSON number; `null` for anything else (strings, booleans, `null`). */
private fun JsonPrimitive.numberOrNull(): BigDecimal? =
    if (isString || this is JsonNull || booleanOrNull != null) null else content.toBigDecimalOrNull()

/**
 * JSON equality: numbers by value (`1` equals `1.0`), booleans never equal
 * numbers, strings never equal anything else, the rest structurally (object
 * members in any order).
 */
fun jsonEq(a: JsonElement, b: JsonElement): Boolean = when {
    a is JsonNull || b is JsonNull -> a is JsonNull && b is JsonNull
    a is JsonArray && b is JsonArray -> a.size == b.size && a.indices.all { jsonEq(a[it], b[it]) }
    a is JsonObject && b is JsonObject ->
        a.size == b.size && a.all { (k, v) -> b[k]?.let { jsonEq(v, it) } ?: false }
    a is JsonPrimitive && b is JsonPrimitive -> primitiveEq(a, b)
    else -> false
}

private fun primitiveEq(a: JsonPrimitive, b: JsonPrimitive): Boolean {
    if (a.isString || b.isString) return a.isString && b.isString && a.content == b.content
    val x = a.numberOrNull()
    val y = b.numberOrNull()
    if (x != null || y != null) return x != null && y != null && x.compareTo(y) == 0
    return a.content == b.content // both booleans
}

/**
 * Throws [Mismatch] where [actual] parts from [pattern]. [known] holds the
 * captures so far; new ones go to [bound] (the caller keeps them only when
 * the whole pattern matched).
 */
fun matches(pattern: JsonElement, actual: JsonElement, known: Captures, bound: MutableMap<String, JsonElement>) {
    matchAt(pattern, actual, "", known, bound)
}

private fun matchAt(
    p: JsonElement,
    a: JsonElement,
    path: String,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
) {
    val s = p.stringOrNull()
    if (s != null && matchPlaceholder(s, a, path, known, bound)) return
    when {
        p is JsonObject && p.size == 1 && ONE_OF in p -> matchOneOf(p.getValue(ONE_OF), a, path, known, bound)
        p is JsonObject -> matchObject(p, a, path, known, bound)
        p is JsonArray -> matchArray(p, a, path, known, bound)
        !jsonEq(p, a) -> throw Mismatch(path, short(p), short(a))
    }
}

/**
 * A pattern string's own meaning (`$$...`, `$any`, `$absent`, `$capture:`,
 * `$ref:`): true when [p] was one and matched, false for a literal string.
 */
private fun matchPlaceholder(
    p: String,
    a: JsonElement,
    path: String,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
): Boolean {
    when {
        p.startsWith(LITERAL) -> {
            if (a.stringOrNull() == p.substring(1)) return true
            throw Mismatch(path, short(JsonPrimitive(p.substring(1))), short(a))
        }
        p == ANY -> return true
        p == ABSENT -> throw Mismatch(path, "\"$ABSENT\" (only valid as the value of an object member)", short(a))
        p.startsWith(CAPTURE) -> {
            bound[p.removePrefix(CAPTURE)] = a
            return true
        }
        p.startsWith(REF) -> {
            val name = p.removePrefix(REF)
            val v = bound[name] ?: known[name]
                ?: throw Mismatch(path, "$p (but nothing was captured under `$name`)", short(a))
            if (jsonEq(v, a)) return true
            throw Mismatch(path, "${short(v)} ($p)", short(a))
        }
        else -> return false
    }
}

private fun matchOneOf(
    alternatives: JsonElement,
    a: JsonElement,
    path: String,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
) {
    if (alternatives !is JsonArray) throw Mismatch(path, "`$ONE_OF` with an array", "a pattern error")
    val why = mutableListOf<String>()
    for (alt in alternatives) {
        val trial = HashMap(bound)
        try {
            matchAt(alt, a, path, known, trial)
        } catch (m: Mismatch) {
            why += m.expected
            continue
        }
        bound.clear()
        bound.putAll(trial)
        return
    }
    throw Mismatch(path, "one of [${why.joinToString(", ")}]", short(a))
}

private fun matchObject(
    p: JsonObject,
    a: JsonElement,
    path: String,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
) {
    if (a !is JsonObject) throw Mismatch(path, "an object", short(a))
    for ((key, sub) in p) {
        val here = "$path/${pointerToken(key)}"
        val member = a[key]
        if (sub.stringOrNull() == ABSENT) {
            if (member != null) throw Mismatch(here, "no such member", short(member))
            continue
        }
        if (member == null) throw Mismatch(here, short(sub), "no such member")
        matchAt(sub, member, here, known, bound)
    }
}

private fun matchArray(
    p: JsonArray,
    a: JsonElement,
    path: String,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
) {
    if (a !is JsonArray) throw Mismatch(path, "an array", short(a))
    if (p.size != a.size) throw Mismatch(path, "an array of ${p.size} items", "${a.size} items: ${short(a)}")
    p.forEachIndexed { i, sub -> matchAt(sub, a[i], "$path/$i", known, bound) }
}

/** A member name as a JSON pointer token (RFC 6901). */
private fun pointerToken(key: String): String = key.replace("~", "~0").replace("/", "~1")

/**
 * A template as a value: `"$ref:NAME"` becomes the value captured as NAME,
 * `"$$x"` the string `"$x"`. Throws [StepFailure] for a name nothing was
 * captured under and for pattern-only placeholders (`$any`, `$absent`,
 * `$capture:`, `$one_of`).
 */
fun fill(template: JsonElement, known: Captures): JsonElement = when (template) {
    is JsonObject -> {
        if (ONE_OF in template) throw StepFailure("`$ONE_OF` is a pattern, not a value")
        JsonObject(template.mapValues { (_, v) -> fill(v, known) })
    }
    is JsonArray -> JsonArray(template.map { fill(it, known) })
    is JsonPrimitive -> template.stringOrNull()?.let { fillString(it, known) } ?: template
}

private fun fillString(s: String, known: Captures): JsonElement = when {
    s.startsWith(LITERAL) -> JsonPrimitive(s.substring(1))
    s.startsWith(REF) -> {
        val name = s.removePrefix(REF)
        known[name] ?: throw StepFailure("$s: nothing was captured under `$name`")
    }
    s == ANY || s == ABSENT || s.startsWith(CAPTURE) -> throw StepFailure("$s is a pattern, not a value")
    else -> JsonPrimitive(s)
}

/**
 * Pairs each of [patterns] with a distinct one of [values] (backtracking;
 * the lists are short), [used] marking the values taken. Captures of
 * earlier pairs are visible to later ones; on success they are in [bound].
 */
fun pairUp(
    patterns: List<JsonElement>,
    values: List<JsonElement>,
    used: BooleanArray,
    known: Captures,
    bound: MutableMap<String, JsonElement>,
): Boolean {
    if (patterns.isEmpty()) return true
    val first = patterns.first()
    val rest = patterns.drop(1)
    for (j in values.indices) {
        if (used[j]) continue
        val trial = HashMap(bound)
        try {
            matches(first, values[j], known + bound, trial)
        } catch (m: Mismatch) {
            continue
        }
        used[j] = true
        if (pairUp(rest, values, used, known, trial)) {
            bound.clear()
            bound.putAll(trial)
            return true
        }
        used[j] = false
    }
    return false
}
