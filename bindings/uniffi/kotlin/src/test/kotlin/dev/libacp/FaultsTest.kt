package dev.libacp

import java.io.File
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertIs
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import kotlin.test.fail
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Timeout

/**
 * Fault injection through the Kotlin binding: the shared fault agents of
 * `tests/faults/` (see its README; tests/rust/faults.rs is the core's
 * version). Spawn failures are `AcpException.Spawn` naming the OS error; an
 * agent killed in the middle of a permission request, of a frame or while
 * its terminal runs, one that closes its stdout, one that stops reading and
 * one flooding its stderr never leave a call pending, the host's request
 * alive or a process running; and after rounds of every fault the process
 * holds no more descriptors, libacp threads or children than before.
 *
 * Every wait is a hang detector ([within], tens of seconds), never a speed
 * requirement. The class-wide `@Timeout` in a separate thread is the
 * backstop for a native call that blocks the test's thread (where
 * coroutine timeouts cannot reach).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FaultsTest {
    private val faults = File(repo, "tests/faults")

    /** A fault agent of tests/faults. */
    private fun agent(name: String, args: List<String> = emptyList()) = AgentCommand(File(faults, name).path, args)

    /** [options] with a short shutdown ladder, as every fault agent is spawned. */
    private fun quick(options: ConnectOptions = ConnectOptions()) =
        options.copy(graceAfterStdinCloseMs = 200UL, graceAfterSigtermMs = 200UL)

    /** Spawns [command], then `initialize` and `session/new` (session `s1`). */
    private suspend fun client(
        command: AgentCommand,
        handler: AcpHandler = object : AcpHandler {},
        options: ConnectOptions = ConnectOptions(),
        context: kotlin.coroutines.CoroutineContext = Dispatchers.Default,
    ): AcpConnection {
        val conn = AcpConnection.spawn(command, handler, quick(options), context)
        within("initialize") { conn.callJson("initialize", """{"protocolVersion":1}""") }
        within("session/new") { conn.callJson("session/new", """{"cwd":"/tmp","mcpServers":[]}""") }
        return conn
    }

    private fun prompt(text: String = "go") =
        """{"sessionId":"s1","prompt":[{"type":"text","text":${JsonPrimitive(text)}}]}"""

    private fun assertClosed(outcome: Result<*>) =
        assertIs<AcpException.Closed>(outcome.exceptionOrNull(), "the prompt's outcome: $outcome")

    /** Runs the fault agent [name]: the prompt fails with the close, and the agent is gone afterwards. */
    private suspend fun thePromptFailsWithTheClose(name: String) {
        val conn = client(agent(name))
        try {
            assertClosed(within("the prompt fails") { runCatching { conn.callJson("session/prompt", prompt()) } })
            within("terminated") { conn.terminated() }
            assertNotNull(conn.exitStatus, "the agent is gone")
        } finally {
            conn.close()
        }
    }

    // ---- the faults ------------------------------------------------------

    private fun spawnFailuresAreClearErrorsAtOnce() {
        val cases = listOf(
            Triple(AgentCommand("/nonexistent/acp-agent"), ConnectOptions(), "No such file"),
            Triple(agent("not_executable.sh"), ConnectOptions(), "ermission denied"),
            Triple(agent("stops_reading.sh"), ConnectOptions(cwd = "/nonexistent/missing-dir"), "No such file"),
        )
        for ((command, options, says) in cases) {
            val outcome = runCatching { AcpConnection.spawn(command, options = quick(options)) }
            outcome.getOrNull()?.let {
                it.close()
                fail("spawned $command")
            }
            val e = assertIs<AcpException.Spawn>(outcome.exceptionOrNull(), "$command")
            assertEquals(command.program, e.program)
            assertTrue(e.detail.contains(says), "${command.program}: ${e.detail}")
        }
    }

    private val rounds = AtomicInteger()

    /**
     * The agent asks permission during a prompt, then is killed (SIGKILL)
     * while the host's handler holds the request: the prompt fails with the
     * close, the handler's coroutine is cancelled (its dialog can close), and
     * a late answer (the handler returning afterwards) goes nowhere and
     * harms nothing (no exception escapes the binding's handler coroutine).
     */
    private suspend fun killedWhileTheHostHoldsAPermissionRequest() {
        val dir = Files.createTempDirectory("libacp-faults-${ProcessHandle.current().pid()}-${rounds.incrementAndGet()}-").toFile()
        val opened = CompletableDeferred<IncomingCall>()
        val cancelled = CompletableDeferred<Boolean>()
        val click = CompletableDeferred<Unit>()
        val escaped = java.util.Collections.synchronizedList(mutableListOf<Throwable>())
        // The handlers' coroutines are children of `handlers` (so the test can
        // wait for the late answer to be handed over), and anything escaping
        // them is recorded.
        val handlers = SupervisorJob()
        val context = Dispatchers.Default + handlers + CoroutineExceptionHandler { _, e -> escaped.add(e) }
        val handler = object : AcpHandler {
            override suspend fun onRequest(call: IncomingCall): JsonElement {
                opened.complete(call)
                try {
                    awaitCancellation()
                } catch (e: kotlinx.coroutines.CancellationException) {
                    cancelled.complete(call.isCancelled)
                    // The user clicks after the agent is gone: a late answer.
                    withContext(NonCancellable) { click.await() }
                    return JsonObject(mapOf("outcome" to JsonObject(mapOf(
                        "outcome" to JsonPrimitive("selected"),
                        "optionId" to JsonPrimitive("a"),
                    ))))
                }
            }
        }
        val conn = client(agent("killed_mid_permission.sh", listOf(dir.path)), handler, context = context)
        try {
            coroutineScope {
                val turn = async(start = CoroutineStart.UNDISPATCHED) {
                    runCatching { conn.callJson("session/prompt", prompt()) }
                }
                val request = within("the permission request reaches the handler") { opened.await() }
                assertEquals("session/request_permission", request.method)
                assertTrue(File(dir, "go").createNewFile())
                assertClosed(within("the prompt fails") { turn.await() })
                assertTrue(within("the handler's coroutine is cancelled") { cancelled.await() }, "call.isCancelled")
                click.complete(Unit)
                within("the late answer is handed over") { handlers.children.forEach { it.join() } }
                assertEquals(emptyList(), escaped.toList(), "the late answer")
                within("terminated") { conn.terminated() }
                assertEquals(9, conn.exitStatus?.signal, "killed: ${conn.exitStatus}")
            }
        } finally {
            conn.close()
            handlers.cancel()
            dir.deleteRecursively()
        }
    }

    /** The agent dies halfway through a frame: the half frame is never delivered, the prompt fails. */
    private suspend fun killedInTheMiddleOfWritingAFrame() = thePromptFailsWithTheClose("killed_mid_frame.sh")

    /** The agent closes its stdout but keeps reading: the prompt fails, the shutdown ladder ends it. */
    private suspend fun stdoutClosedWhileTheAgentRuns() = thePromptFailsWithTheClose("stdout_closed.sh")

    /** 20 MB of stderr while it answers: the answer arrives, the host got every line. */
    private suspend fun aStderrFloodDoesNotStopTheConnection() {
        val lines = AtomicInteger()
        val handler = object : AcpHandler {
            override fun onStderr(line: String) {
                lines.incrementAndGet()
            }
        }
        val conn = client(agent("stderr_flood.sh"), handler, ConnectOptions(stderr = true))
        try {
            val answer = within("the answer after the flood") { conn.callJson("session/prompt", prompt()) }
            assertEquals(
                "end_turn",
                kotlinx.serialization.json.Json.parseToJsonElement(answer).jsonObject["stopReason"]?.jsonPrimitive?.content,
            )
            within("every stderr line") { while (lines.get() < 20_000) delay(5) }
            assertEquals(20_000, lines.get())
            within("shutdown") { conn.shutdown() }
            within("terminated") { conn.terminated() }
        } finally {
            conn.close()
        }
    }

    /**
     * The agent has the core's terminal service start `sleep 300`, then is
     * killed: the prompt fails with the close, and the terminal's process is
     * stopped and reaped while the host still holds the connection.
     */
    private suspend fun killedWhileItsTerminalRuns() {
        val before = children()
        val conn = client(agent("killed_mid_terminal.sh"), options = ConnectOptions(terminals = true))
        try {
            assertClosed(within("the prompt fails") { runCatching { conn.callJson("session/prompt", prompt()) } })
            within("terminated") { conn.terminated() }
            val exit = conn.exitStatus
            assertEquals(9, exit?.signal, "the agent is killed after its terminal started ($exit; code 3: no terminalId)")
            // `conn` is still open here (not closed, not freed).
            within("the terminal's process is reaped (children now ${children()}, before $before)") {
                while (children() > before) delay(10)
            }
        } finally {
            conn.close()
        }
    }

    /**
     * The agent stops reading while a 16 MiB prompt is written: `shutdown`
     * (the close that waits) returns without waiting for the write, the
     * prompt fails with the close, the shutdown ladder ends the agent.
     */
    private suspend fun aPeerThatStopsReadingCannotHangTheClose() {
        // The trace hook runs when the writer takes a frame, before writing
        // it: once the prompt is traced, its write has begun (and cannot
        // finish), so the close below meets a blocked write.
        val writing = CompletableDeferred<Unit>()
        val tracer = object : AcpHandler {
            override fun onFrame(direction: WireDirection, frame: String) {
                if (direction == WireDirection.OUTGOING && frame.length > (1 shl 20)) writing.complete(Unit)
            }
        }
        val conn = client(agent("stops_reading.sh"), tracer, ConnectOptions(trace = true))
        try {
            coroutineScope {
                val big = prompt("x".repeat(16 shl 20))
                val turn = async(start = CoroutineStart.UNDISPATCHED) {
                    runCatching { conn.callJson("session/prompt", big) }
                }
                within("the prompt's write begins") { writing.await() }
                within("shutdown (close)") { conn.shutdown() }
                assertClosed(within("the prompt fails") { turn.await() })
                within("terminated") { conn.terminated() }
                assertNotNull(conn.exitStatus, "the agent is gone")
            }
        } finally {
            conn.close()
        }
    }

    /**
     * The agent writes a response to a request nobody made (id 99) before
     * its prompt's answer: with `trace` and `events` on, the handler
     * sees the frames both ways, the stray one among them, and an
     * `unmatched_response` event naming id 99; with them off, neither hook
     * is called.
     */
    private suspend fun aStrayResponseIsTracedAndReported() {
        for (on in listOf(true, false)) {
            val frames = java.util.Collections.synchronizedList(mutableListOf<String>())
            val events = java.util.Collections.synchronizedList(mutableListOf<EngineEvent>())
            val recorder = object : AcpHandler {
                override fun onFrame(direction: WireDirection, frame: String) {
                    frames.add("$direction $frame")
                }

                override fun onEngineEvent(event: EngineEvent) {
                    events.add(event)
                }
            }
            val conn = client(agent("stray_response.sh"), recorder, ConnectOptions(trace = on, events = on))
            try {
                within("the prompt's answer") { conn.callJson("session/prompt", prompt()) }
                if (!on) {
                    assertEquals(listOf<String>(), frames.toList(), "no trace unless asked")
                    assertEquals(listOf<EngineEvent>(), events.toList(), "no engine events unless asked")
                    continue
                }
                // The event is reported as the stray frame is read, before
                // the answer after it; polled all the same (a hang detector).
                within("the engine event") { while (events.isEmpty()) delay(5) }
                val event = events.first()
                assertEquals("unmatched_response", event.kind, "$event")
                assertEquals(
                    JsonPrimitive(99),
                    kotlinx.serialization.json.Json.parseToJsonElement(event.details).jsonObject["id"],
                    "$event",
                )
                val seen = frames.toList()
                assertTrue(seen.any { it.startsWith("OUTGOING ") && "\"initialize\"" in it }, "initialize traced: $seen")
                assertTrue(seen.any { it.startsWith("INCOMING ") && "\"id\":99" in it }, "the stray frame traced: $seen")
                assertTrue(seen.any { it.startsWith("INCOMING ") && "end_turn" in it }, "the answer traced: $seen")
            } finally {
                conn.close()
            }
        }
    }

    private suspend fun aRound() {
        spawnFailuresAreClearErrorsAtOnce()
        killedWhileTheHostHoldsAPermissionRequest()
        killedInTheMiddleOfWritingAFrame()
        stdoutClosedWhileTheAgentRuns()
        aStderrFloodDoesNotStopTheConnection()
        killedWhileItsTerminalRuns()
        aPeerThatStopsReadingCannotHangTheClose()
        aStrayResponseIsTracedAndReported()
    }

    // ---- one test per fault ----------------------------------------------

    @Test
    fun `spawn failures are Spawn errors naming the OS error`() = faultTest { spawnFailuresAreClearErrorsAtOnce() }

    @Test
    fun `killed while the host holds a permission request`() = faultTest { killedWhileTheHostHoldsAPermissionRequest() }

    @Test
    fun `killed in the middle of writing a frame`() = faultTest { killedInTheMiddleOfWritingAFrame() }

    @Test
    fun `stdout closed while the agent runs`() = faultTest { stdoutClosedWhileTheAgentRuns() }

    @Test
    fun `a stderr flood does not stop the connection`() = faultTest { aStderrFloodDoesNotStopTheConnection() }

    @Test
    fun `killed while its terminal runs, the terminal is reaped while the connection is held`() =
        faultTest { killedWhileItsTerminalRuns() }

    @Test
    fun `a peer that stops reading cannot hang the close`() = faultTest { aPeerThatStopsReadingCannotHangTheClose() }

    @Test
    fun `a stray response is traced and reported, only when asked`() = faultTest { aStrayResponseIsTracedAndReported() }

    /**
     * After a warm-up round (JNA, libacp's runtime, class loading), two
     * rounds of every fault leave the process with no more open descriptors,
     * libacp threads or child processes than before (polled for up to 60 s:
     * descriptors and threads are released asynchronously as tasks end, and
     * tokio keeps an idle blocking thread for 10 s).
     *
     * Threads: only libacp's are counted, from /proc/self/task/STAR/comm
     * (STAR meaning every task): its runtime names every thread it starts
     * (workers and blocking pool) `libacp`, and JNA's attachment keeps that
     * native name (`libacp-callback` is only the Java-side name). The JVM's
     * own threads (JIT compiler, GC, coroutine dispatcher workers, JUnit's
     * timeout thread) come and go on their own and say nothing about libacp.
     * All threads are printed for the record.
     */
    @Test
    fun `faults fail pending calls promptly and leak nothing`() = runBlocking {
        aRound()
        val baseline = held()
        println("FaultsTest baseline: $baseline")
        repeat(2) { aRound() }
        val settled = withTimeoutOrNull(60.seconds) {
            while (!held().noMoreThan(baseline)) delay(20)
            true
        }
        val after = held()
        println("FaultsTest after: $after")
        assertTrue(settled == true, "leaked: before $baseline, after $after")
    }

    // ---- what the process holds ----------------------------------------

    private data class Held(val fds: Int, val libacpThreads: Int, val children: Int, val allThreads: Int) {
        fun noMoreThan(baseline: Held) =
            fds <= baseline.fds && libacpThreads <= baseline.libacpThreads && children <= baseline.children
    }

    private fun held() = Held(
        fds = File("/proc/self/fd").list()?.size ?: 0,
        libacpThreads = libacpThreads(),
        children = children(),
        allThreads = File("/proc/self/task").list()?.size ?: 0,
    )

    private fun libacpThreads(): Int =
        File("/proc/self/task").listFiles()?.count { task ->
            runCatching { File(task, "comm").readText() }.getOrNull()?.startsWith("libacp") == true
        } ?: 0

    /** This process's children (zombies included): /proc/PID/stat whose ppid is this process. */
    private fun children(): Int {
        val me = ProcessHandle.current().pid().toString()
        return File("/proc").listFiles()?.count { entry ->
            entry.name.all(Char::isDigit) &&
                runCatching { File(entry, "stat").readText() }.getOrNull()
                    // pid (comm) state ppid ...
                    ?.substringAfterLast(')')?.trim()?.split(' ')?.getOrNull(1) == me
        } ?: 0
    }
}

/** A fault test: the whole test bounded by a generous hang detector. */
private fun faultTest(block: suspend kotlinx.coroutines.CoroutineScope.() -> Unit) = runBlocking {
    within("the test", 120.seconds) { block() }
}

/** Runs [block], failing with what was awaited if it takes longer than [limit] (a hang detector). */
private suspend fun <T> within(what: String, limit: Duration = 60.seconds, block: suspend kotlinx.coroutines.CoroutineScope.() -> T): T {
    var value: Result<T>? = null
    withTimeoutOrNull(limit) { value = Result.success(block()) }
    return value?.getOrThrow() ?: throw AssertionError("hang: $what did not happen within $limit")
}
