package dev.libacp.scenarios

import dev.libacp.AcpConnection
import dev.libacp.AcpException
import dev.libacp.AcpRole
import dev.libacp.AcpServer
import dev.libacp.ConnectOptions
import dev.libacp.socketPair
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ConcurrentLinkedQueue
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.future.await
import kotlinx.coroutines.job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

// The shared scenarios (tests/scenarios, format in its README.md) through
// the Kotlin binding's dynamic API: a port of the Node runner
// (bindings/node/test/scenario-runner.mjs), itself a port of the Python one,
// with the same structure, names and reports.
//
// Per scenario: an `AcpConnection` made with `AcpConnection.fromFds` on one
// end of `socketPair()`, in the scenario's role, whose handler is the host
// (ScenarioHost.kt: the vocabulary's rules and programs); this file plays
// the scripted raw peer on the other end (RawPeer.kt: libc through JNA).
//
// Over a remote link ("websocket", "http" or "h2c"), as the Python runner
// does it: the other end of the socket pair is the stdin and stdout of
// `libacp-remote-splice` (tests/bin/remote_splice.rs, Splice.kt), which
// joins it to a remote connection, byte for byte. An agent is served by
// `AcpServer.serveDynamic` (its connection made when the splice, run with
// `--connect URL [--http2]`, connects); a client connects with
// `AcpConnection.connect` to the splice run with `--listen 127.0.0.1:0`
// (`http2PriorKnowledge` for h2c).

/** How long one waiting step may take, in milliseconds (a hang detector). */
const val STEP_LIMIT_MS = 5_000L

/** How long a whole scenario may take, in milliseconds (a hang detector). */
const val SCENARIO_LIMIT_MS = 60_000L

/**
 * Runs [scenario] on a fresh connection; returns why it failed (the step,
 * where and how it parted from the script), or `null` if it passed. Never
 * takes much longer than [SCENARIO_LIMIT_MS] plus the teardown's bounds.
 */
fun runScenario(scenario: Scenario, link: String? = null): String? = runBlocking { ScenarioRun(scenario, link).run() }

/** The remote links the scenarios run over, besides the socket pair. */
val REMOTE_LINKS = listOf("websocket", "http", "h2c")

/** `libacp-remote-splice`, built by `cargo build -p libacp-tests --bins` (scripts/test-kotlin.sh). */
private val SPLICE = dev.libacp.testBinary("libacp-remote-splice")

/**
 * One scenario's run: the connection, the raw peer, the host's events, and
 * the state shared by the script and the host's programs (captures, gates).
 *
 * The contract (README, "Implementing a runner"): unknown keys were refused
 * by [parseScenario]; every waiting step gives up after [STEP_LIMIT_MS],
 * the scenario after [SCENARIO_LIMIT_MS]; frames and host events are two
 * queues, each consumed in order; a failure names the step (number and
 * text), the JSON pointer where value and pattern part, both, and the whole
 * frame or event. At the end the programs still waiting are stopped, the
 * connection is shut down and closed, and the peer's descriptor closed.
 */
internal class ScenarioRun(val scenario: Scenario, private val link: String? = null) {
    /** Captured values, shared with the host's programs. */
    val captures: MutableMap<String, JsonElement> = ConcurrentHashMap()

    /** The host's programs and the background actions; cancelled at the end. */
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    /** The libacp side, once made (a served remote connection is made when the splice connects). */
    private val made = CompletableDeferred<AcpConnection>()

    /** The server of a remote agent, and the splice process of a remote link. */
    private var server: AcpServer? = null
    private var splice: Splice? = null

    /** The libacp side; a step waits for it up to [STEP_LIMIT_MS]. */
    suspend fun connection(): AcpConnection =
        withTimeoutOrNull(STEP_LIMIT_MS) { made.await() } ?: throw StepFailure("the connection was never made")

    private val gates = ConcurrentHashMap<String, CompletableDeferred<Unit>>()
    private val events = TimedQueue<JsonObject>()
    private val problems = ConcurrentLinkedQueue<String>()
    private lateinit var peer: RawPeer

    /** The step running now (number and text), for a scenario that runs out of time. */
    @Volatile
    private var currentStep = "0 (none yet)"

    // -- shared with the host

    /** Records a host event. */
    fun emit(event: JsonObject) = events.put(event)

    /** Records a host failure, reported with the current step. */
    fun problem(what: String) {
        problems.add(what)
    }

    /** Gate [name], opened by a `release` action (and never closed again). */
    fun gate(name: String): CompletableDeferred<Unit> = gates.computeIfAbsent(name) { CompletableDeferred() }

    /**
     * `call` (its result) or `notify` (`null`) through the dynamic API,
     * [params] `null` for none. Throws the binding's [AcpException].
     */
    suspend fun send(verb: String, method: String, params: JsonElement?): JsonElement =
        if (verb == "call") {
            Json.parseToJsonElement(connection().callJson(method, params?.toString()))
        } else {
            // Queued in a batch; flushed at once so that a notification
            // libacp refuses fails this `notify` (the scenario's outcome),
            // not a later one.
            connection().notifyJson(method, params?.toString())
            connection().flush()
            JsonNull
        }

    // -- the whole run

    /** Runs the script under the scenario's limit, then tears down; returns why it failed, or `null`. */
    suspend fun run(): String? {
        val fds = socketPair()
        val (libFd, peerFd) = fds[0] to fds[1]
        val role = if (scenario.role == ScenarioRole.AGENT) AcpRole.AGENT else AcpRole.CLIENT
        val options = ConnectOptions(requireAuth = if (scenario.requireAuth) true else null, unstable = scenario.unstable)
        val notMade = try {
            if (link == null) {
                made.complete(AcpConnection.fromFds(role, libFd, libFd, ScenarioHost(this), options))
                null
            } else {
                val done = withTimeoutOrNull(STEP_LIMIT_MS) { connectRemote(role, libFd, options) }
                if (done == null) "no remote connection within ${seconds(STEP_LIMIT_MS)}" else null
            }
        } catch (e: AcpException) {
            if (link == null) closeDescriptor(libFd) // refused: not taken over
            "the binding cannot make this connection: ${e.message}"
        } catch (e: StepFailure) {
            e.message
        } finally {
            if (link != null) closeDescriptor(libFd) // the splice process has its copy
        }
        if (notMade != null) {
            closeDescriptor(peerFd)
            teardownRemote()
            return notMade
        }
        peer = RawPeer(peerFd)
        try {
            var failure: String? = null
            withTimeoutOrNull(SCENARIO_LIMIT_MS) {
                failure = script()
                true
            } ?: return "the scenario took over ${seconds(SCENARIO_LIMIT_MS)}, at step $currentStep"
            return failure
        } finally {
            teardown()
        }
    }

    /**
     * The libacp side over the remote link: the raw peer's socket ([libFd])
     * is the stdin and stdout of `libacp-remote-splice`. An agent is served
     * (made when the splice connects: [connection] waits for it); a client
     * connects to the splice's server.
     */
    private suspend fun connectRemote(role: AcpRole, libFd: Int, options: ConnectOptions): Unit {
        check(SPLICE.canExecute()) { "$SPLICE is missing: run cargo build -p libacp-tests --bins" }
        val h2c = link == "h2c"
        val kind = if (link == "websocket") "websocket" else "http"
        if (role == AcpRole.AGENT) {
            val served = AcpServer.serveDynamic("127.0.0.1:0", options) { incoming ->
                made.complete(incoming.connection)
                ScenarioHost(this)
            }
            server = served
            val args = listOf("--connect", served.url(kind)) + (if (h2c) listOf("--http2") else emptyList())
            splice = Splice(SPLICE, args, libFd, captureStderr = false)
            return
        }
        val listening = Splice(SPLICE, listOf("--listen", "127.0.0.1:0"), libFd, captureStderr = true)
        splice = listening
        val line = listening.stderrLine.await()
        if (line == null || !line.startsWith("listening on ")) {
            throw StepFailure("libacp-remote-splice did not listen: $line")
        }
        val address = line.split(" ").last()
        val scheme = if (kind == "websocket") "ws" else "http"
        made.complete(
            AcpConnection.connect(
                "$scheme://$address/acp",
                ScenarioHost(this),
                options.copy(http2PriorKnowledge = if (h2c) true else null),
            ),
        )
    }

    /** Closes the server and waits for the splice (killing it past [STEP_LIMIT_MS]). */
    private suspend fun teardownRemote() {
        server?.close()
        splice?.waitOrKill(STEP_LIMIT_MS)
    }

    private suspend fun script(): String? {
        for ((i, s) in scenario.script.withIndex()) {
            currentStep = "${i + 1} ${s.text}"
            val details = mutableListOf<String>()
            try {
                step(s)
            } catch (e: StepFailure) {
                details += e.message.orEmpty()
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                details += "the runner failed: ${e.stackTraceToString()}"
            }
            details += drainProblems()
            if (details.isNotEmpty()) {
                return "step ${i + 1} ${s.text}\n    " + details.joinToString("\n").replace("\n", "\n    ")
            }
        }
        val left = drainProblems()
        return if (left.isEmpty()) null else "after the last step\n    " + left.joinToString("\n    ")
    }

    private fun drainProblems(): List<String> = generateSequence { problems.poll() }.toList()

    /**
     * Stops the programs and background actions still waiting (their gates
     * and cancellation waits give way), shuts the connection down and closes
     * it, then closes the peer's end. Each wait is bounded.
     */
    private suspend fun teardown() {
        withTimeoutOrNull(STEP_LIMIT_MS) { scope.coroutineContext.job.cancelAndJoin() }
        if (made.isCompleted) {
            val connection = made.await()
            withTimeoutOrNull(STEP_LIMIT_MS) { connection.shutdown() }
            connection.close()
        }
        peer.close()
        teardownRemote()
    }

    // -- the script

    private suspend fun step(s: Step) {
        val arg = s.arg
        when (s.verb) {
            "send" -> sendFrame(arg)
            "expect" -> match("frame", arg, nextFrame())
            "expect_unordered" -> expectUnordered("frame", arg as JsonArray) { nextFrame() }
            "expect_event" -> match("event", arg, nextEvent())
            "expect_events_unordered" -> expectUnordered("event", arg as JsonArray) { nextEvent() }
            "expect_no_frame" -> expectNoFrame(arg.intValue()!!)
            "expect_no_event" -> expectNoEvent(arg.intValue()!!)
            "close" -> peer.closeWrite()
            "expect_closed" -> expectClosed()
            else -> action(s.obj)
        }
    }

    /** `send`: a string as it is, anything else as a filled template in compact JSON. */
    private suspend fun sendFrame(arg: JsonElement) {
        val line = arg.stringOrNull() ?: fill(arg, captures).toString()
        peer.send(line + "\n", STEP_LIMIT_MS)
    }

    private suspend fun nextFrame(): JsonElement =
        when (val line = peer.nextLine(STEP_LIMIT_MS)) {
            null -> throw StepFailure("no frame within ${seconds(STEP_LIMIT_MS)}")
            Line.Eof -> throw StepFailure("got end of stream instead of a frame")
            is Line.Garbage -> throw StepFailure("got a line that is not JSON: ${short(JsonPrimitive(line.text))}")
            is Line.Frame -> line.value
        }

    private suspend fun nextEvent(): JsonElement =
        events.get(STEP_LIMIT_MS) ?: throw StepFailure("no host event within ${seconds(STEP_LIMIT_MS)}")

    /** Matches one frame or event ([what]), keeping its captures. */
    private fun match(what: String, pattern: JsonElement, value: JsonElement) {
        val bound = HashMap<String, JsonElement>()
        try {
            matches(pattern, value, captures, bound)
        } catch (m: Mismatch) {
            throw StepFailure(m.describe(what, pattern, value))
        }
        captures.putAll(bound)
    }

    /** The next N frames or events ([what], taken by [next]) match the N [patterns] in some order. */
    private suspend fun expectUnordered(what: String, patterns: JsonArray, next: suspend () -> JsonElement) {
        val got = mutableListOf<JsonElement>()
        while (got.size < patterns.size) {
            try {
                got += next()
            } catch (e: StepFailure) {
                throw StepFailure("after ${got.size} of ${patterns.size} ${what}s: ${e.message}")
            }
        }
        val bound = HashMap<String, JsonElement>()
        if (pairUp(patterns, got, BooleanArray(got.size), HashMap(captures), bound)) {
            captures.putAll(bound)
            return
        }
        val report = mutableListOf("the ${what}s do not match the patterns in any order")
        got.forEachIndexed { i, v -> report += "  got $what $i: ${short(v)}" }
        patterns.forEachIndexed { i, p -> report += whyUnpaired(what, p, i, got) }
        throw StepFailure(report.joinToString("\n"))
    }

    /** Which values one pattern of an `_unordered` step matches, and why not if none. */
    private fun whyUnpaired(what: String, p: JsonElement, i: Int, got: List<JsonElement>): List<String> {
        val fits = mutableListOf<Int>()
        val why = mutableListOf<String>()
        got.forEachIndexed { j, v ->
            try {
                matches(p, v, captures, HashMap())
                fits += j
            } catch (m: Mismatch) {
                why += "    vs $what $j: at ${m.path.ifEmpty { "(top level)" }}: expected ${m.expected}, got ${m.got}"
            }
        }
        val head = "  pattern $i: ${short(p)} matches ${what}s $fits"
        return if (fits.isEmpty()) listOf(head) + why else listOf(head)
    }

    private suspend fun expectNoFrame(ms: Long) {
        when (val line = peer.nextLine(ms)) {
            null -> return
            Line.Eof -> throw StepFailure("got end of stream: libacp closed the connection")
            is Line.Garbage ->
                throw StepFailure("got an unexpected line that is not JSON: ${short(JsonPrimitive(line.text))}")
            is Line.Frame -> throw StepFailure("got an unexpected frame: ${short(line.value)}")
        }
    }

    private suspend fun expectNoEvent(ms: Long) {
        val event = if (events.isEmpty() && ms > 0) events.get(ms) else events.takeNow()
        if (event != null) throw StepFailure("got an unexpected host event: ${short(event)}")
    }

    private suspend fun expectClosed() {
        when (val line = peer.nextLine(STEP_LIMIT_MS)) {
            null -> throw StepFailure("the connection was still open after ${seconds(STEP_LIMIT_MS)}")
            Line.Eof -> return
            is Line.Garbage -> throw StepFailure("expected end of stream, got a line: ${short(JsonPrimitive(line.text))}")
            is Line.Frame -> throw StepFailure("expected end of stream, got a frame: ${short(line.value)}")
        }
    }

    // -- actions

    /**
     * A host action. With `as` it runs in the background (started now, so
     * that actions reach libacp in script order) and its outcome becomes a
     * `returned` event; without, the step waits for it and fails unless it
     * succeeds.
     */
    private suspend fun action(step: JsonObject) {
        val name = step["as"]?.stringOrNull()
        val work = actionWork(step)
        if (name != null) {
            scope.launch(start = CoroutineStart.UNDISPATCHED) {
                val result = outcome(work)
                emit(JsonObject(mapOf("event" to JsonPrimitive("returned"), "as" to JsonPrimitive(name)) + result))
            }
            return
        }
        val result = withTimeoutOrNull(STEP_LIMIT_MS) { outcome(work) }
            ?: throw StepFailure("did not complete within ${seconds(STEP_LIMIT_MS)}")
        result["error"]?.let { throw StepFailure("failed: ${short(it)}") }
    }

    /** What an action does, its templates filled now. */
    private fun actionWork(step: JsonObject): suspend () -> JsonElement {
        when (val action = step.getValue("action").stringOrNull()) {
            "call", "notify" -> {
                val method = step.getValue("method").stringOrNull()!!
                val params = step["params"]?.let { fill(it, captures) }
                return { send(action, method, params) }
            }
            "cancel_session" -> {
                val sessionId = fill(step.getValue("sessionId"), captures).stringOrNull()
                    ?: throw StepFailure("`sessionId` must be a string")
                return {
                    connection().cancelSession(sessionId)
                    JsonNull
                }
            }
            "release" -> {
                gate(step.getValue("gate").stringOrNull()!!).complete(Unit)
                return { JsonNull }
            }
            else -> return { // close
                connection().shutdown()
                JsonNull
            }
        }
    }

    private fun seconds(ms: Long) = "${ms / 1000.0} s"
}
