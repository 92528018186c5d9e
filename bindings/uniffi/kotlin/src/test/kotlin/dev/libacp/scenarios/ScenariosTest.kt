package dev.libacp.scenarios

import dev.libacp.repo
import java.io.File
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlin.test.fail
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Assumptions
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory

/** The directory of the shared scenarios (`-Dlibacp.scenarios=DIR` runs others, e.g. to check the runner). */
private val SCENARIOS = System.getProperty("libacp.scenarios")?.let(::File) ?: File(repo, "tests/scenarios")

/**
 * Scenarios that cannot mean the same over a remote link, and why (as in
 * the Rust and Python runners: tests/rust/scenarios.rs,
 * bindings/python/tests/test_scenarios.py); every other one must pass over
 * every link.
 */
private val NOT_REMOTE = mapOf(
    "peer_closes_mid_turn" to "a remote transport has no half-close: the agent ending its " +
        "output ends the connection, so no answer can follow",
)

/**
 * The shared, language-neutral scenarios (the `.json` files of
 * tests/scenarios) through the Kotlin binding: one dynamic test per file,
 * in name order (adding a file adds a test), named after the file. As with
 * the Rust runner, the environment variable `SCENARIO=<text>` runs only the
 * scenarios whose name contains `<text>`.
 *
 * A scenario marked `known_failure` that fails is an XFAIL: printed, and
 * reported to JUnit as aborted (an assumption failure), which surefire
 * counts as skipped, so it neither fails the build nor passes unnoticed.
 * One that passes fails its test (XPASS: remove the marker). The runner is
 * ScenarioRunner.kt; the last tests here check the runner itself (a runner
 * that passes everything is worthless), the same checks as the Python and
 * Node runners'.
 */
class ScenariosTest {
    @TestFactory
    fun `the shared scenarios`(): List<DynamicTest> {
        val files = SCENARIOS.listFiles { f -> f.isFile && f.name.endsWith(".json") }.orEmpty().sortedBy { it.name }
        assertTrue(files.isNotEmpty(), "no scenarios in $SCENARIOS")
        val only = System.getenv("SCENARIO").orEmpty()
        return files.filter { only in it.nameWithoutExtension }.map { file -> DynamicTest.dynamicTest(file.nameWithoutExtension, file.toURI()) { runFile(file) } }
    }

    /**
     * The same scenarios over each remote link ([REMOTE_LINKS]: WebSocket,
     * Streamable HTTP/1.1, h2c) through `libacp-remote-splice`, as the
     * Python runner runs them (ScenarioRunner.kt): one dynamic test per
     * file and link, named `<file> over <link>`. A scenario that cannot mean
     * the same remotely ([NOT_REMOTE]) is skipped, with the reason.
     */
    @TestFactory
    fun `the shared scenarios over a remote link`(): List<DynamicTest> {
        val files = SCENARIOS.listFiles { f -> f.isFile && f.name.endsWith(".json") }.orEmpty().sortedBy { it.name }
        assertTrue(files.isNotEmpty(), "no scenarios in $SCENARIOS")
        val only = System.getenv("SCENARIO").orEmpty()
        return files.filter { only in it.nameWithoutExtension }.flatMap { file ->
            REMOTE_LINKS.map { link ->
                DynamicTest.dynamicTest("${file.nameWithoutExtension} over $link", file.toURI()) {
                    NOT_REMOTE[file.nameWithoutExtension]?.let { Assumptions.abort<Unit>(it) }
                    runFile(file, link)
                }
            }
        }
    }

    /** Runs one scenario file and reports PASS, XFAIL (aborted), or fails (FAIL, XPASS). */
    private fun runFile(file: File, link: String? = null) {
        val name = file.nameWithoutExtension + (link?.let { " over $it" } ?: "")
        val scenario = parseScenario(file.readText())
        val failure = runScenario(scenario, link)
        val known = scenario.knownFailure
        when {
            known != null && failure != null -> {
                println("XFAIL $name (known failure: $known)\n  $failure")
                Assumptions.abort<Unit>("XFAIL, known failure: $known\n  $failure")
            }
            known != null -> {
                println("XPASS $name")
                fail("scenario $name: marked known_failure ($known) but passed (XPASS): remove the marker")
            }
            failure != null -> {
                println("FAIL $name\n  $failure")
                fail("scenario $name: $failure")
            }
            else -> println("PASS $name")
        }
    }

    // -- the runner's own checks

    private fun json(text: String): JsonElement = Json.parseToJsonElement(text)

    private fun ok(pattern: String, actual: String, known: Map<String, JsonElement> = emptyMap()): Boolean =
        try {
            matches(json(pattern), json(actual), known, HashMap())
            true
        } catch (m: Mismatch) {
            false
        }

    @Test
    fun `patterns match as documented`() {
        assertTrue(ok("""{"a": 1}""", """{"a": 1.0, "b": 2}"""), "subset, numbers by value")
        assertTrue(ok("""{"a": "${'$'}absent"}""", """{"b": 1}"""))
        assertFalse(ok("""{"a": "${'$'}absent"}""", """{"a": null}"""))
        assertTrue(ok("""{"a": "${'$'}any"}""", """{"a": null}"""))
        assertFalse(ok("""{"a": "${'$'}any"}""", """{}"""))
        assertFalse(ok("[1]", "[1, 2]"), "arrays match whole")
        assertTrue(ok("""{"${'$'}one_of": ["x", "y"]}""", "\"y\""))
        assertFalse(ok("""{"${'$'}one_of": ["x", "y"]}""", "\"z\""))
        assertTrue(ok("\"${'$'}${'$'}any\"", "\"${'$'}any\""))
        assertFalse(ok("\"${'$'}${'$'}any\"", "\"other\""))
        assertTrue(ok("\"${'$'}/cancel_request\"", "\"${'$'}/cancel_request\""))
        assertTrue(!ok("1", "true") && !ok("true", "1") && !ok("0", "false"), "booleans are not numbers")
        assertTrue(!ok("null", "0") && !ok("\"1\"", "1"))

        val bound = HashMap<String, JsonElement>()
        matches(json("""{"id": "${'$'}capture:id"}"""), json("""{"id": 7}"""), emptyMap(), bound)
        assertEquals<Map<String, JsonElement>>(mapOf("id" to JsonPrimitive(7)), bound)
        assertTrue(ok("\"${'$'}ref:id\"", "7", bound))
        assertFalse(ok("\"${'$'}ref:id\"", "8", bound))
        assertFalse(ok("\"${'$'}ref:nothing\"", "8", bound))

        val m = assertFailsWith<Mismatch> {
            matches(
                json("""{"result": {"stopReason": "cancelled"}}"""),
                json("""{"id": 3, "result": {"stopReason": "end_turn"}}"""),
                emptyMap(),
                HashMap(),
            )
        }
        assertEquals(Triple("/result/stopReason", "\"cancelled\"", "\"end_turn\""), Triple(m.path, m.expected, m.got))

        assertEquals(
            json("""{"id": 7, "m": "${'$'}x", "l": [7]}"""),
            fill(json("""{"id": "${'$'}ref:id", "m": "${'$'}${'$'}x", "l": ["${'$'}ref:id"]}"""), bound),
        )
        assertFailsWith<StepFailure> { fill(json("""{"a": "${'$'}any"}"""), emptyMap()) }
        assertFailsWith<StepFailure> { fill(json("\"${'$'}ref:nothing\""), emptyMap()) }

        val paired = HashMap<String, JsonElement>()
        val patterns = json("""[{"id": "${'$'}capture:x"}, {"id": 1}]""") as JsonArray
        val values = json("""[{"id": 2}, {"id": 1}]""") as JsonArray
        assertTrue(pairUp(patterns, values, BooleanArray(2), emptyMap(), paired))
        assertEquals(JsonPrimitive(2), paired["x"], "backtracks past the first fit")
    }

    @Test
    fun `bad scenario files are refused`() {
        val bad = listOf(
            """{"role": "agent", "script": []}""",
            """{"description": "", "role": "editor", "script": []}""",
            """{"description": "", "role": "agent", "script": [], "extra": 1}""",
            """{"description": "", "role": "agent", "script": [{"sned": {}}]}""",
            """{"description": "", "role": "agent", "script": [{"send": {}, "expect": {}}]}""",
            """{"description": "", "role": "agent", "script": [{"action": "dance"}]}""",
            """{"description": "", "role": "agent", "script": [{"expect_no_frame": "long"}]}""",
            """{"description": "", "role": "client", "options": {"require_auth": true}, "script": []}""",
            """{"description": "", "role": "client", "options": {"unstable": ["all", 1]}, "script": []}""",
            """{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"reply": 1}]}]}, "script": []}""",
            """{"description": "", "role": "agent", "host": {"requests": [{"method": "x", "do": [{"error": {"code": "x", "message": ""}}]}]}, "script": []}""",
        )
        for (text in bad) assertFailsWith<FormatError>(text) { parseScenario(text) }
    }

    @Test
    fun `a wrong expectation fails with a precise diff`() {
        var err = runScenario(
            parseScenario(
                """{"description": "", "role": "agent",
                "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
                "script": [
                  {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
                  {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
                ]}""",
            ),
        )
        assertNotNull(err)
        assertTrue(err.startsWith("step 2 "), err)
        assertTrue("at /result/protocolVersion: expected 2, got 1" in err, err)
        assertTrue("""got frame:      {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}""" in err, err)

        // The quiet period is the hang detector's: the -32700 answer ends it at once.
        err = runScenario(
            parseScenario(
                """{"description": "", "role": "agent",
                "script": [{"send": "garbage"}, {"expect_no_frame": $STEP_LIMIT_MS}]}""",
            ),
        )
        assertNotNull(err)
        assertTrue("unexpected frame" in err && "-32700" in err, err)
    }

    @Test
    fun `over a remote link too, a wrong expectation fails and the libacp side is remote`() {
        for (link in REMOTE_LINKS) {
            val err = runScenario(
                parseScenario(
                    """{"description": "", "role": "agent",
                    "host": {"requests": [{"method": "initialize", "do": [{"respond": {"protocolVersion": 1}}]}]},
                    "script": [
                      {"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
                      {"expect": {"id": 1, "result": {"protocolVersion": 2}}}
                    ]}""",
                ),
                link,
            )
            assertNotNull(err, link)
            assertTrue("at /result/protocolVersion: expected 2, got 1" in err, "$link: $err")
            // A client: the script's call reaches the raw peer through the splice's server.
            val client = runScenario(
                parseScenario(
                    """{"description": "", "role": "client",
                    "script": [
                      {"action": "call", "method": "initialize", "params": {"protocolVersion": 1}, "as": "init"},
                      {"expect": {"id": "${'$'}capture:id", "method": "initialize", "params": {"protocolVersion": 1}}},
                      {"send": {"jsonrpc": "2.0", "id": "${'$'}ref:id", "result": {"protocolVersion": 1}}},
                      {"expect_event": {"event": "returned", "as": "init", "result": {"protocolVersion": 1}}}
                    ]}""",
                ),
                link,
            )
            assertNull(client, "$link: $client")
        }
    }

    @Test
    fun `without a rule the host answers method not found`() {
        val err = runScenario(
            parseScenario(
                """{"description": "", "role": "agent",
                "script": [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}},
                           {"expect": {"id": 1, "error": {"code": -32601, "data": {"method": "initialize"}}}}]}""",
            ),
        )
        assertNull(err, err)
    }
}
