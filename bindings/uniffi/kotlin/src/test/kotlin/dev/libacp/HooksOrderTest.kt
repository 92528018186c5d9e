package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileRequest
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import java.io.File
import java.util.Collections
import kotlin.io.path.createTempDirectory
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import kotlinx.coroutines.delay

/**
 * The trace and the engine's events reach the host in wire order with the
 * handlers, before the answer that follows them (issue 24, DESIGN.md
 * "Ordering"); `ordered_hooks = false` delivers them at once.
 */
class HooksOrderTest {
    /** An agent whose prompt streams an update, then reads a file through the client, three times. */
    private class ReadingAgent(private val file: File) : EchoAgent() {
        override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
            repeat(3) { i ->
                connection.sessionUpdate(SessionNotification(request.sessionId, SessionUpdate.AgentMessageChunk(text("$i"))))
                connection.readTextFile(ReadTextFileRequest(sessionId = request.sessionId, path = file.path))
            }
            return PromptResponse(StopReason.END_TURN)
        }
    }

    /** A client recording its handler, trace and events in the order they run. */
    private class LoggingClient : Client {
        val log: MutableList<String> = Collections.synchronizedList(mutableListOf())

        /** The JVM's view of the threads the hooks ran on: name and daemon flag. */
        val threads: MutableSet<String> = Collections.synchronizedSet(mutableSetOf())

        private fun seen() {
            val thread = Thread.currentThread()
            threads.add("${thread.name} daemon=${thread.isDaemon}")
        }

        override suspend fun sessionUpdate(notification: SessionNotification) {
            log.add("handled")
        }

        override fun onFrame(direction: WireDirection, frame: String) {
            seen()
            log.add("$direction $frame")
        }

        override fun onEngineEvent(event: EngineEvent) {
            seen()
            log.add("event ${event.kind}")
        }
    }

    private fun shape(entry: String) = when {
        entry.startsWith("INCOMING") && "session/update" in entry -> "update"
        entry == "handled" -> "handled"
        entry.startsWith("INCOMING") && "fs/read_text_file" in entry -> "read"
        entry == "event served" -> "served"
        entry.startsWith("OUTGOING") && "\"content\":\"x\"" in entry -> "answered"
        entry.startsWith("INCOMING") && "stopReason" in entry -> "done"
        entry.startsWith("OUTGOING") && "session/prompt" in entry -> "prompt"
        else -> "other: $entry"
    }

    private fun withPair(ordered: Boolean?, block: suspend (Pair<ReadingAgent>, LoggingClient) -> Unit) = bounded {
        val dir = createTempDirectory("libacp-kt-hooks").toFile()
        try {
            val file = File(dir, "f.txt").apply { writeText("x") }
            val client = LoggingClient()
            val options = ConnectOptions(fs = true, trace = true, events = true, orderedHooks = ordered)
            Pair(ReadingAgent(file), client, options).use { pair ->
                pair.client.initialize(initRequest())
                pair.client.newSession(NewSessionRequest(dir.path, emptyList()))
                block(pair, client)
            }
        } finally {
            dir.deleteRecursively()
        }
    }

    @Test
    fun `trace and engine events reach the host in wire order before the answer that follows them`() =
        withPair(null) { pair, client ->
            val step = listOf("update", "handled", "read", "served", "answered")
            repeat(20) { turn ->
                client.log.clear()
                pair.client.prompt(promptRequest("s1", "go"))
                val seen = client.log.toList()
                assertEquals(listOf("prompt") + step + step + step + "done", seen.map(::shape), "turn $turn: $seen")
            }
            // libacp's threads stay attached as the daemon threads NativeThreads
            // names, however JNA and the JNI path take turns on them: a thread
            // JNA attached without its initializer is named Thread-N and
            // detached after each call, even after the JNI path attached it
            // (which lost JNI up-calls: the agent's readTextFile never ended).
            assertEquals(setOf("libacp-callback daemon=true"), client.threads.toSet())
        }

    @Test
    fun `ordered_hooks false still delivers every frame and event`() = withPair(false) { pair, client ->
        pair.client.prompt(promptRequest("s1", "go"))
        // Every served event and the answer's trace come (bounded: a hang detector).
        while (client.log.toList().map(::shape).let { s -> s.count { it == "served" } < 3 || "done" !in s }) {
            delay(5)
        }
        assertTrue(client.log.isNotEmpty())
    }
}
