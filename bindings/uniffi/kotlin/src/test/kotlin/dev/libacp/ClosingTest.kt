package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import java.io.File
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertIs
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay

/** Closing: pending calls fail, nothing is left behind. */
class ClosingTest {
    @Test
    fun `closing fails pending calls at once and is idempotent`() = bounded {
        val started = CompletableDeferred<Unit>()
        val agent = object : EchoAgent() {
            override suspend fun extMethod(call: IncomingCall): kotlinx.serialization.json.JsonElement {
                started.complete(Unit)
                awaitCancellation()
            }
        }
        val pair = Pair(agent, RecordingClient())
        pair.client.initialize(initRequest())
        val pending = (1..5).map { async { runCatching { pair.client.connection.call("_test/park", null) } } }
        started.await()
        assertNull(pair.client.connection.closeReason)
        pair.client.shutdown()
        for (call in pending) assertIs<AcpException.Closed>(call.await().exceptionOrNull())
        assertNotNull(pair.client.connection.closeReason)
        pair.client.shutdown()
        // New calls fail at once too.
        assertFailsWith<AcpException.Closed> { pair.client.connection.call("_test/park", null) }
        // The agent side sees the end of the stream.
        assertTrue(pair.agentSide.connection.closed().isNotEmpty())
        pair.close()
        pair.close()
    }

    @Test
    fun `the peer closing fails the calls waiting on it`() = bounded {
        val started = CompletableDeferred<Unit>()
        val agent = object : EchoAgent() {
            override suspend fun extMethod(call: IncomingCall): kotlinx.serialization.json.JsonElement {
                started.complete(Unit)
                awaitCancellation()
            }
        }
        Pair(agent, RecordingClient()).use { pair ->
            pair.client.initialize(initRequest())
            val call = async { runCatching { pair.client.connection.call("_test/park", null) } }
            started.await()
            pair.agentSide.connection.shutdown()
            assertIs<AcpException.Closed>(call.await().exceptionOrNull())
        }
    }

    @Test
    fun `a spawned agent is gone after shutdown and no thread is left per connection`() = bounded {
        val agent = testBinary("official-rust-agent")
        check(agent.canExecute()) { "$agent is missing: run cargo build -p libacp-tests --bins" }
        fun libacpThreads() = Thread.getAllStackTraces().keys.count { it.isAlive }
        // Warm up: libacp's runtime (two threads for the whole process) and JNA's.
        AcpConnection.spawn(AgentCommand(agent.path)).use { it.shutdown() }
        val before = libacpThreads()
        repeat(5) {
            val conn = ClientConnection.spawn(AgentCommand(agent.path), RecordingClient())
            conn.initialize(initRequest())
            conn.newSession(NewSessionRequest("/tmp", emptyList()))
            val pid = assertNotNull(conn.connection.pid)
            conn.shutdown()
            assertTrue(!File("/proc/$pid").exists() || File("/proc/$pid/stat").readText().contains(") Z "), "agent $pid still runs")
            assertNotNull(conn.connection.exitStatus)
            conn.close()
        }
        // Threads that belong to the finished connections end shortly after.
        var after = libacpThreads()
        var waited = 0
        while (after > before && waited < 100) {
            delay(50)
            waited++
            after = libacpThreads()
        }
        assertTrue(after <= before, "threads before $before, after $after")
    }

    @Test
    fun `a program that cannot start throws Spawn`() = bounded {
        val e = assertFailsWith<AcpException.Spawn> {
            AcpConnection.spawn(AgentCommand("/nonexistent/agent"))
        }
        assertEquals("/nonexistent/agent", e.program)
        assertFailsWith<AcpException.InvalidArgument> { AcpConnection.spawn(AgentCommand("")) }
        assertFailsWith<AcpException.InvalidArgument> {
            AcpConnection.spawn(AgentCommand("x"), options = ConnectOptions(requireAuth = true))
        }
    }

    @Test
    fun `the agent's stderr reaches the host line by line`() = bounded {
        val lines = java.util.Collections.synchronizedList(mutableListOf<String>())
        val done = CompletableDeferred<Unit>()
        val handler = object : AcpHandler {
            override fun onStderr(line: String) {
                lines.add(line)
                if (line == "two") done.complete(Unit)
            }
        }
        val conn = AcpConnection.spawn(
            AgentCommand("/bin/sh", listOf("-c", "echo one >&2; echo two >&2; sleep 30")),
            handler,
            ConnectOptions(stderr = true),
        )
        done.await()
        assertEquals(listOf("one", "two"), lines.toList())
        conn.killNow()
        conn.shutdown()
        conn.close()
    }

    @Test
    fun `descriptors that are not open are refused and nothing is taken`() = bounded {
        val e = assertFailsWith<AcpException.InvalidArgument> {
            AcpConnection.fromFds(AcpRole.CLIENT, 100_000, 100_000)
        }
        assertTrue(e.detail.contains("100000"))
    }
}
