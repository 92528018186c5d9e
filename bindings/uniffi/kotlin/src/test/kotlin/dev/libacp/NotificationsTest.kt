package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.SessionNotification
import java.util.concurrent.atomic.AtomicInteger
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertIs
import kotlin.test.assertTrue
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/** Outgoing notifications go to libacp in batches (Notifications.kt). */
class NotificationsTest {
    private fun update(i: Int) = Json.parseToJsonElement(
        """{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"$i"}}}""",
    )

    @Test
    fun `notifications reach the peer in order and before the request that follows them`() = bounded {
        val client = object : RecordingClient() {
            // How many updates the client had handled when the request came.
            override suspend fun extMethod(call: IncomingCall) = JsonPrimitive(seen.size)
        }
        Pair(EchoAgent(), client).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val agentSide = pair.agentSide.connection
            repeat(3) { round ->
                client.seen.clear()
                for (i in 0 until 2000) agentSide.notify("session/update", update(i))
                val handledBefore = agentSide.call("_test/count", null)
                assertEquals(JsonPrimitive(2000), handledBefore, "round $round")
                assertEquals((0 until 2000).map { "$it" }, client.seen.toList(), "round $round")
            }
        }
    }

    @Test
    fun `a refused notification is thrown once by the next notify or flush and the others still go out`() = bounded {
        val client = object : RecordingClient() {
            override suspend fun extMethod(call: IncomingCall) = JsonPrimitive("ok")
        }
        Pair(EchoAgent(), client).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val agentSide = pair.agentSide.connection
            agentSide.notify("session/update", update(1))
            // No sessionId: libacp refuses it (nothing sent).
            agentSide.notify("session/update", buildJsonObject { put("update", "x") })
            // A call is about itself only: it flushes the batch before it is
            // sent, but keeps the refusal for the next notify or flush.
            assertEquals(JsonPrimitive("ok"), agentSide.call("_test/ok", null))
            // The refusal surfaces once: from the next notify (whose own update
            // is queued all the same) if the batch was flushed in the
            // background by then, else from the flush.
            val refused = runCatching { agentSide.notify("session/update", update(2)) }.exceptionOrNull()
                ?: runCatching { agentSide.flush() }.exceptionOrNull()
            assertIs<AcpException.InvalidParams>(refused)
            assertTrue(refused.detail.contains("sessionId"), refused.detail)
            // Reported once; the connection goes on.
            agentSide.flush()
            agentSide.notify("session/update", update(3))
            agentSide.flush()
            val done = CompletableDeferred<Unit>()
            launch {
                while (client.seen.size < 3) delay(10)
                done.complete(Unit)
            }
            done.await()
            assertEquals(listOf("1", "2", "3"), client.seen.toList())
        }
    }

    @Test
    fun `a peer that stops reading makes notify wait instead of growing memory`() = bounded {
        val release = CompletableDeferred<Unit>()
        val client = object : RecordingClient() {
            override suspend fun sessionUpdate(notification: SessionNotification) {
                release.await()
                super.sessionUpdate(notification)
            }
        }
        Pair(EchoAgent(), client).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val agentSide = pair.agentSide.connection
            val total = 200_000
            val sent = AtomicInteger()
            val sender = launch {
                for (i in 0 until total) {
                    agentSide.notify("session/update", update(i))
                    sent.incrementAndGet()
                }
                agentSide.flush()
            }
            // The sender stalls: its batch, libacp's queues and the socket
            // hold a bounded number of notifications, far below the total.
            var last = -1
            while (sent.get() != last) {
                last = sent.get()
                delay(500)
            }
            assertTrue(last < total / 2, "sent $last of $total without the peer reading")
            release.complete(Unit)
            sender.join()
            while (client.seen.size < total) delay(10)
            assertEquals(total, client.seen.size)
        }
    }
}
