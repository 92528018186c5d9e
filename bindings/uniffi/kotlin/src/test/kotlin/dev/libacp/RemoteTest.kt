package dev.libacp

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PlanEntry
import com.agentclientprotocol.model.PlanEntryPriority
import com.agentclientprotocol.model.PlanEntryStatus
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionRequest
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.ToolCallId
import java.util.Collections
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertIs
import kotlin.test.assertTrue
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put

/**
 * Remote ACP through the Kotlin layer, on 127.0.0.1: an [AcpServer] and
 * clients connecting by URL (WebSocket, Streamable HTTP, h2c), typed and
 * dynamic; the typed errors of connecting; refused connections and
 * options.
 */
class RemoteTest {
    /**
     * One session `s1`. A prompt sends a plan, asks permission for tool
     * call `t1`, streams the prompt's words, then the option chosen, and
     * ends the turn.
     */
    private class TurnAgent(val connection: AgentConnection) : Agent {
        override suspend fun initialize(request: InitializeRequest, call: IncomingCall) =
            InitializeResponse(1, AgentCapabilities())

        override suspend fun newSession(request: NewSessionRequest, call: IncomingCall) =
            NewSessionResponse(SessionId("s1"))

        override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
            suspend fun send(update: SessionUpdate) = connection.sessionUpdate(SessionNotification(request.sessionId, update))
            send(SessionUpdate.PlanUpdate(listOf(PlanEntry("echo", PlanEntryPriority.HIGH, PlanEntryStatus.IN_PROGRESS))))
            val permission = connection.requestPermission(
                RequestPermissionRequest(
                    request.sessionId,
                    SessionUpdate.ToolCallUpdate(ToolCallId("t1")),
                    listOf(PermissionOption(PermissionOptionId("ok"), "OK", PermissionOptionKind.ALLOW_ONCE)),
                ),
            )
            val chosen = (permission.outcome as? RequestPermissionOutcome.Selected)?.optionId?.value ?: "(none)"
            for (word in request.prompt.filterIsInstance<ContentBlock.Text>().flatMap { it.text.split(" ") }) {
                send(SessionUpdate.AgentMessageChunk(text(word)))
            }
            send(SessionUpdate.AgentMessageChunk(text(chosen)))
            return PromptResponse(StopReason.END_TURN)
        }
    }

    /** Records what the turn shows, in order, and allows every tool call with its first option. */
    private class TurnClient : Client {
        val seen: MutableList<String> = Collections.synchronizedList(mutableListOf())

        override suspend fun sessionUpdate(notification: SessionNotification) {
            when (val u = notification.update) {
                is SessionUpdate.PlanUpdate -> seen.add("plan: " + u.entries.joinToString { it.content })
                is SessionUpdate.AgentMessageChunk -> seen.add((u.content as? ContentBlock.Text)?.text ?: "?")
                else -> seen.add("other update")
            }
        }

        override suspend fun requestPermission(request: RequestPermissionRequest, call: IncomingCall): RequestPermissionResponse {
            seen.add("permission for ${request.toolCall.toolCallId.value}")
            return RequestPermissionResponse(RequestPermissionOutcome.Selected(request.options[0].optionId))
        }
    }

    @Test
    fun `a typed client and server run a whole turn over WebSocket, Streamable HTTP and h2c`() = bounded {
        val agents = Collections.synchronizedList(mutableListOf<TurnAgent>())
        val offered = Collections.synchronizedList(mutableListOf<RemoteIncoming<AgentConnection>>())
        AcpServer.serve("127.0.0.1:0") { incoming ->
            offered.add(incoming)
            TurnAgent(incoming.connection).also { agents.add(it) }
        }.use { server ->
            assertTrue(server.port > 0)
            assertEquals("127.0.0.1:${server.port}", server.localAddress)
            assertEquals("ws://127.0.0.1:${server.port}/acp", server.url("websocket"))
            assertEquals("http://127.0.0.1:${server.port}/acp", server.url("http"))
            assertFailsWith<AcpException.InvalidArgument> { server.url("carrier-pigeon") }
            val links = listOf(
                Triple("websocket", server.url("websocket"), ConnectOptions()),
                Triple("http", server.url("http"), ConnectOptions()),
                Triple("http", server.url("http"), ConnectOptions(http2PriorKnowledge = true)),
            )
            for ((i, link) in links.withIndex()) {
                val (kind, url, options) = link
                val client = TurnClient()
                val conn = ClientConnection.connect(url, client, options)
                assertEquals(1, conn.initialize(initRequest()).protocolVersion)
                assertEquals("s1", conn.newSession(NewSessionRequest("/tmp", emptyList())).sessionId.value)
                val answer = conn.prompt(promptRequest("s1", "one two"))
                assertEquals(StopReason.END_TURN, answer.stopReason)
                // Every update and the permission request, in order, before the answer.
                assertEquals(listOf("plan: echo", "permission for t1", "one", "two", "ok"), client.seen.toList(), url)
                assertEquals(kind, offered[i].kind)
                assertTrue(offered[i].remoteAddress.startsWith("127.0.0.1:"), offered[i].remoteAddress)
                assertTrue(offered[i].connectionId.isNotEmpty())
                assertTrue(server.connections >= 1)
                conn.shutdown()
                conn.close()
                // The agent's side sees the end; its calls then fail as closed.
                val agentSide = agents[i].connection.connection
                agentSide.terminated()
                assertIs<AcpException.Closed>(runCatching { agentSide.call("_test/late") }.exceptionOrNull())
            }
            assertEquals(3, agents.size, "one agent per remote connection")
            server.shutdown()
            assertEquals(0L, server.connections)
        }
    }

    @Test
    fun `a dynamic server and client`() = bounded {
        AcpServer.serveDynamic("127.0.0.1:0") { incoming ->
            val connection = incoming.connection
            object : AcpHandler {
                override suspend fun onRequest(call: IncomingCall): JsonElement = when (call.method) {
                    "initialize" -> buildJsonObject { put("protocolVersion", 1) }
                    "_test/echo" -> {
                        connection.notify("_test/note", buildJsonObject { put("before", "the answer") })
                        call.params ?: JsonNull
                    }
                    else -> throw AcpErrors.methodNotFound(call.method)
                }
            }
        }.use { server ->
            val notes = Collections.synchronizedList(mutableListOf<String>())
            val client = AcpConnection.connect(
                server.url("websocket"),
                object : AcpHandler {
                    override suspend fun onNotification(method: String, params: JsonElement?) {
                        notes.add("$method $params")
                    }
                },
            )
            client.use {
                assertEquals(AcpRole.CLIENT, it.role)
                it.call("initialize", buildJsonObject { put("protocolVersion", 1) })
                val echo = it.call("_test/echo", buildJsonObject { put("n", 7) })
                assertEquals(JsonPrimitive(7), echo.jsonObject["n"])
                assertEquals(listOf("""_test/note {"before":"the answer"}"""), notes.toList())
                it.shutdown()
            }
            server.shutdown()
        }
    }

    @Test
    fun `a factory that refuses, or fails, ends that connection only`() = bounded {
        var n = 0
        AcpServer.serve("127.0.0.1:0") { incoming ->
            when (++n) {
                1 -> null
                2 -> throw IllegalStateException("this factory fails (on purpose)")
                else -> TurnAgent(incoming.connection)
            }
        }.use { server ->
            repeat(2) {
                val outcome = runCatching {
                    ClientConnection.connect(server.url("websocket"), TurnClient()).use { it.initialize(initRequest()) }
                }
                assertIs<AcpException>(outcome.exceptionOrNull(), "refused: $outcome")
            }
            ClientConnection.connect(server.url("websocket"), TurnClient()).use {
                assertEquals(1, it.initialize(initRequest()).protocolVersion)
                it.shutdown()
            }
        }
    }

    @Test
    fun `a refused connection is a typed Remote error`() = bounded {
        // Nobody listens on port 1 of loopback.
        for (url in listOf("ws://127.0.0.1:1/acp", "http://127.0.0.1:1/acp")) {
            val e = assertFailsWith<AcpException.Remote>(url) {
                ClientConnection.connect(url, TurnClient()).use { it.initialize(initRequest()) }
            }
            assertEquals("refused", e.kind, "$url: $e")
        }
    }

    @Test
    fun `a bearer token is required when the server has some`() = bounded {
        val started = java.util.concurrent.atomic.AtomicInteger()
        AcpServer.serve("127.0.0.1:0", ConnectOptions(bearerTokens = listOf("secret"))) {
            started.incrementAndGet()
            TurnAgent(it.connection)
        }.use { server ->
            // WebSocket: the upgrade is refused, so connect throws.
            val e = assertFailsWith<AcpException.Remote> { ClientConnection.connect(server.url("websocket"), TurnClient()) }
            assertEquals("unauthorized" to 401, e.kind to e.status?.toInt(), "$e")
            val wrong = ConnectOptions(headers = mapOf("Authorization" to "Bearer guess"))
            val again = assertFailsWith<AcpException.Remote> {
                ClientConnection.connect(server.url("websocket"), TurnClient(), wrong)
            }
            assertEquals("unauthorized" to 401, again.kind to again.status?.toInt(), "$again")
            // Streamable HTTP: the first POST, initialize, is refused and the
            // connection closes with the 401: the call fails with the same
            // typed error.
            ClientConnection.connect(server.url("http"), TurnClient()).use { conn ->
                val refused = assertFailsWith<AcpException.Remote> { conn.initialize(initRequest()) }
                assertEquals("unauthorized" to 401, refused.kind to refused.status?.toInt(), "$refused")
                assertTrue("401" in conn.connection.closed(), "the close reason names the 401")
            }
            assertEquals(0, started.get(), "no agent code ran without the token")
            for (kind in listOf("websocket", "http")) {
                // With it, the whole turn.
                val client = TurnClient()
                val options = ConnectOptions(headers = mapOf("Authorization" to "Bearer secret"))
                ClientConnection.connect(server.url(kind), client, options).use {
                    it.initialize(initRequest())
                    it.newSession(NewSessionRequest("/tmp", emptyList()))
                    assertEquals(StopReason.END_TURN, it.prompt(promptRequest("s1", "hi")).stopReason)
                    assertEquals(listOf("plan: echo", "permission for t1", "hi", "ok"), client.seen.toList())
                    it.shutdown()
                }
            }
            server.shutdown()
        }
    }

    @Test
    fun `an option that does not apply is refused by name`() = bounded {
        // A server's option on a client, a spawned agent's on a client by URL.
        val serverOption = assertFailsWith<AcpException.InvalidArgument> {
            ClientConnection.connect("ws://127.0.0.1:1/acp", TurnClient(), ConnectOptions(bearerTokens = listOf("t")))
        }
        assertTrue("bearer_tokens" in serverOption.detail, serverOption.detail)
        val spawnOption = assertFailsWith<AcpException.InvalidArgument> {
            AcpConnection.connect("ws://127.0.0.1:1/acp", options = ConnectOptions(cwd = "/tmp"))
        }
        assertTrue("cwd" in spawnOption.detail, spawnOption.detail)
        // A client's option on a server.
        val clientOption = assertFailsWith<AcpException.InvalidArgument> {
            AcpServer.serve("127.0.0.1:0", ConnectOptions(headers = mapOf("a" to "b"))) { TurnAgent(it.connection) }
        }
        assertTrue("headers" in clientOption.detail, clientOption.detail)
        // An address that does not parse, and one already in use.
        val unparsed = assertFailsWith<AcpException.InvalidArgument> {
            AcpServer.serveDynamic("no port here") { object : AcpHandler {} }
        }
        assertTrue("no port here" in unparsed.detail, unparsed.detail)
        AcpServer.serveDynamic("127.0.0.1:0") { object : AcpHandler {} }.use { taken ->
            val inUse = assertFailsWith<AcpException.Remote> {
                AcpServer.serveDynamic("127.0.0.1:${taken.port}") { object : AcpHandler {} }
            }
            assertEquals("io", inUse.kind, "$inUse")
        }
    }
}
