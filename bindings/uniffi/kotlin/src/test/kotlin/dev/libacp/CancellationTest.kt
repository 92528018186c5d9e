package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionRequest
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.ToolCallId
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.TimeoutCancellationException

/** Cancellation both ways, mapped onto coroutines. */
class CancellationTest {
    /** An agent whose `_test/park` handler waits until it is cancelled. */
    private class ParkingAgent : EchoAgent() {
        val started = CompletableDeferred<Unit>()
        val sawCancel = CompletableDeferred<Boolean>()

        override suspend fun extMethod(call: IncomingCall): kotlinx.serialization.json.JsonElement {
            started.complete(Unit)
            try {
                awaitCancellation()
            } catch (e: CancellationException) {
                sawCancel.complete(call.isCancelled)
                throw e
            }
        }
    }

    @Test
    fun `cancelling the caller's coroutine sends cancel_request and cancels the handler`() = bounded {
        val agent = ParkingAgent()
        Pair(agent, RecordingClient()).use { pair ->
            pair.client.initialize(initRequest())
            val call = async { pair.client.connection.call("_test/park", null) }
            agent.started.await()
            call.cancel()
            assertFailsWith<CancellationException> { call.await() }
            // The agent's handler coroutine was cancelled because the peer
            // sent $/cancel_request (its flag says so).
            assertTrue(agent.sawCancel.await())
            // The connection goes on.
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
        }
    }

    @Test
    fun `a call's timeout cancels it on both sides`() = bounded {
        val agent = ParkingAgent()
        Pair(agent, RecordingClient()).use { pair ->
            pair.client.initialize(initRequest())
            assertFailsWith<AcpException.Timeout> {
                pair.client.connection.call("_test/park", null, timeout = 50.milliseconds)
            }
            assertTrue(agent.sawCancel.await())
        }
    }

    @Test
    fun `session cancel cancels the prompt's coroutine and the turn ends cancelled`() = bounded {
        val finished = CompletableDeferred<Unit>()
        val agent = object : EchoAgent() {
            val started = CompletableDeferred<Unit>()

            override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
                connection.sessionUpdate(SessionNotification(request.sessionId, SessionUpdate.AgentMessageChunk(text("working"))))
                started.complete(Unit)
                try {
                    awaitCancellation()
                } finally {
                    // Winding down: the last update goes out before the answer.
                    withContext(NonCancellable) {
                        connection.sessionUpdate(
                            SessionNotification(request.sessionId, SessionUpdate.AgentMessageChunk(text("stopped"))),
                        )
                        finished.complete(Unit)
                    }
                }
            }
        }
        val client = RecordingClient()
        Pair(agent, client).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val turn = async { pair.client.prompt(promptRequest("s1", "go")) }
            agent.started.await()
            pair.client.cancel("s1")
            assertEquals(StopReason.CANCELLED, turn.await().stopReason)
            finished.await()
            assertEquals(listOf("working", "stopped"), client.seen.toList())
        }
    }

    @Test
    fun `cancelling a session cancels the client's pending permission handler`() = bounded {
        val asked = CompletableDeferred<Unit>()
        val handlerCancelled = CompletableDeferred<Unit>()
        val agent = object : EchoAgent() {
            override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
                val answer = connection.requestPermission(
                    RequestPermissionRequest(
                        request.sessionId,
                        SessionUpdate.ToolCallUpdate(ToolCallId("t1")),
                        listOf(PermissionOption(PermissionOptionId("ok"), "OK", PermissionOptionKind.ALLOW_ONCE)),
                    ),
                )
                // The client's libacp answered `cancelled` on its own.
                check(answer.outcome is RequestPermissionOutcome.Cancelled) { "got ${answer.outcome}" }
                return PromptResponse(StopReason.CANCELLED)
            }
        }
        val client = object : RecordingClient() {
            override suspend fun requestPermission(request: RequestPermissionRequest, call: IncomingCall): RequestPermissionResponse {
                asked.complete(Unit)
                try {
                    awaitCancellation()
                } finally {
                    handlerCancelled.complete(Unit)
                }
            }
        }
        Pair(agent, client).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val turn = async { pair.client.prompt(promptRequest("s1", "go")) }
            asked.await()
            pair.client.cancel("s1")
            handlerCancelled.await()
            assertEquals(StopReason.CANCELLED, turn.await().stopReason)
        }
    }

    @Test
    fun `a notification handler's call does not wait for the handler itself`() = bounded {
        // The ordering barrier holds answers behind the notification being
        // handled; a call made inside the handler skips it (else: deadlock).
        val agent = object : EchoAgent() {
            override suspend fun extMethod(call: IncomingCall) = kotlinx.serialization.json.JsonPrimitive("pong")
        }
        val got = CompletableDeferred<String>()
        lateinit var pair: Pair<EchoAgent>
        val client = object : RecordingClient() {
            override suspend fun sessionUpdate(notification: SessionNotification) {
                val answer = pair.client.connection.call("_test/ping", null)
                got.complete(answer.toString())
            }
        }
        pair = Pair(agent, client)
        pair.use {
            it.client.initialize(initRequest())
            it.client.newSession(NewSessionRequest("/tmp", emptyList()))
            it.client.prompt(promptRequest("s1", "x"))
            assertEquals("\"pong\"", got.await())
        }
    }

    @Test
    fun `a call without an answer stays pending until cancelled`() = bounded {
        val agent = ParkingAgent()
        Pair(agent, RecordingClient()).use { pair ->
            pair.client.initialize(initRequest())
            assertFailsWith<TimeoutCancellationException> {
                withTimeout(200.milliseconds) { pair.client.connection.call("_test/park", null) }
            }
            assertTrue(agent.sawCancel.await())
        }
    }
}
