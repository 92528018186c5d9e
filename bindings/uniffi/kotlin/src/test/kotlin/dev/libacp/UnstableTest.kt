package dev.libacp

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.rpc.ACPJson
import dev.libacp.models.ArchiveSessionRequest
import dev.libacp.models.ArchiveSessionResponse
import dev.libacp.models.AuthAccount
import dev.libacp.models.AuthState
import dev.libacp.models.AuthStatusRequest
import dev.libacp.models.AuthStatusResponse
import dev.libacp.models.AuthStatusUpdateNotification
import dev.libacp.models.DisableProviderRequest
import dev.libacp.models.DisableProviderResponse
import dev.libacp.models.ForkSessionRequest
import dev.libacp.models.ForkSessionResponse
import dev.libacp.models.ListProvidersRequest
import dev.libacp.models.ListProvidersResponse
import dev.libacp.models.LlmProtocol
import dev.libacp.models.McpError
import dev.libacp.models.McpRequestId
import dev.libacp.models.McpServerAcpId
import dev.libacp.models.MessageMcpNotification
import dev.libacp.models.MessageMcpRequest
import dev.libacp.models.MessageMcpResponse
import dev.libacp.models.ProviderCurrentConfig
import dev.libacp.models.ProviderId
import dev.libacp.models.ProviderInfo
import dev.libacp.models.SessionConfigId
import dev.libacp.models.SessionConfigOption
import dev.libacp.models.SessionStatus
import dev.libacp.models.SessionStatusRequest
import dev.libacp.models.SessionStatusResponse
import dev.libacp.models.SetProviderRequest
import dev.libacp.models.SetProviderResponse
import dev.libacp.models.SetSessionTitleRequest
import dev.libacp.models.SetSessionTitleResponse
import dev.libacp.models.UnarchiveSessionRequest
import dev.libacp.models.UnarchiveSessionResponse
import dev.libacp.scenarios.closeDescriptor
import java.util.Collections
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertIs
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlinx.coroutines.CompletableDeferred
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonObject

/**
 * The unstable v1 extensions through the typed API (models: dev.libacp.models):
 * a Kotlin client and a Kotlin agent, both with `ConnectOptions(unstable = listOf("all"))`.
 */
class UnstableTest {
    /**
     * An agent advertising every unstable capability; its handlers record
     * what they get and answer from it.
     */
    class UnstableAgent : Agent {
        val seen: MutableList<String> = Collections.synchronizedList(mutableListOf())
        val mcpNotification = CompletableDeferred<MessageMcpNotification>()
        val events: MutableList<EngineEvent> = Collections.synchronizedList(mutableListOf())

        override val extraCapabilities = buildJsonObject {
            putJsonObject("sessionCapabilities") {
                putJsonObject("fork") {}
                putJsonObject("archive") {}
                putJsonObject("status") {}
                putJsonObject("title") {}
            }
            putJsonObject("auth") { putJsonObject("status") {} }
            putJsonObject("providers") {}
        }

        override suspend fun initialize(request: InitializeRequest, call: IncomingCall) =
            InitializeResponse(1, AgentCapabilities(loadSession = true))

        override suspend fun newSession(request: NewSessionRequest, call: IncomingCall) = NewSessionResponse(SessionId("s1"))

        override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
            seen.add("prompt ${request.sessionId.value}")
            return PromptResponse(StopReason.END_TURN)
        }

        /**
         * The fork also offers a boolean config option, which the client did
         * not advertise: libacp withholds it (the `payload_rule` event).
         */
        override suspend fun forkSession(request: ForkSessionRequest, call: IncomingCall): ForkSessionResponse {
            seen.add("fork ${request.sessionId.value} ${request.cwd}")
            val toggle = SessionConfigOption.Boolean(SessionConfigId("verbose"), "Verbose", currentValue = true)
            return ForkSessionResponse(SessionId("s2"), configOptions = listOf(toggle))
        }

        override suspend fun archiveSession(request: ArchiveSessionRequest, call: IncomingCall): ArchiveSessionResponse {
            seen.add("archive ${request.sessionId.value}")
            return ArchiveSessionResponse()
        }

        override suspend fun unarchiveSession(request: UnarchiveSessionRequest, call: IncomingCall): UnarchiveSessionResponse {
            seen.add("unarchive ${request.sessionId.value}")
            return UnarchiveSessionResponse()
        }

        override suspend fun sessionStatus(request: SessionStatusRequest, call: IncomingCall) =
            SessionStatusResponse(if (request.sessionId.value == "s2") SessionStatus.OPEN else SessionStatus.SAVED)

        override suspend fun setSessionTitle(request: SetSessionTitleRequest, call: IncomingCall) =
            SetSessionTitleResponse(request.title.uppercase())

        override suspend fun authStatus(request: AuthStatusRequest, call: IncomingCall) =
            AuthStatusResponse(AuthState.AUTHENTICATED, listOf(AuthAccount("Work", active = true)))

        override suspend fun listProviders(request: ListProvidersRequest, call: IncomingCall) = ListProvidersResponse(
            listOf(
                ProviderInfo(
                    ProviderId("main"),
                    listOf(LlmProtocol.ANTHROPIC, LlmProtocol("local")),
                    required = true,
                    current = ProviderCurrentConfig(LlmProtocol.ANTHROPIC, "https://llm.example"),
                ),
            ),
        )

        override suspend fun setProvider(request: SetProviderRequest, call: IncomingCall): SetProviderResponse {
            seen.add("set ${request.providerId} ${request.apiType} ${request.baseUrl} ${request.headers}")
            return SetProviderResponse()
        }

        override suspend fun disableProvider(request: DisableProviderRequest, call: IncomingCall): DisableProviderResponse {
            seen.add("disable ${request.providerId}")
            return DisableProviderResponse()
        }

        override suspend fun mcpMessage(notification: MessageMcpNotification) {
            mcpNotification.complete(notification)
        }

        override fun onEngineEvent(event: EngineEvent) {
            events.add(event)
        }
    }

    /** A client serving one MCP server over ACP (`mcp/message`) and recording `auth/status_update`. */
    class McpClient : Client {
        val statusUpdate = CompletableDeferred<AuthStatusUpdateNotification>()

        override suspend fun mcpMessage(request: MessageMcpRequest, call: IncomingCall): MessageMcpResponse {
            if (request.method != "tools/list") {
                return MessageMcpResponse(error = McpError(-32601, "no ${request.method}"))
            }
            return MessageMcpResponse(
                result = buildJsonObject {
                    put("tools", JsonArray(emptyList()))
                    put("server", request.serverId.value)
                },
            )
        }

        override suspend fun authStatusUpdate(notification: AuthStatusUpdateNotification) {
            statusUpdate.complete(notification)
        }
    }

    private val all = ConnectOptions(unstable = listOf("all"))

    @Test
    fun `every unstable method round-trips typed`() = bounded {
        val agent = UnstableAgent()
        val client = McpClient()
        Pair(agent, client, all, all.copy(events = true)).use { pair ->
            val c = pair.client
            c.initialize(initRequest())
            c.newSession(NewSessionRequest("/tmp", emptyList()))

            // session/fork opens the session its answer names; the boolean
            // option the client did not advertise was withheld.
            val fork = c.forkSession(ForkSessionRequest(SessionId("s1"), "/work"))
            assertEquals("s2", fork.sessionId.value)
            assertEquals(emptyList(), fork.configOptions)
            assertTrue("s2" in c.connection.sessions, "${c.connection.sessions}")
            assertEquals(StopReason.END_TURN, c.prompt(promptRequest("s2", "hi")).stopReason)

            assertEquals(SessionStatus.OPEN, c.sessionStatus(SessionStatusRequest(SessionId("s2"))).status)
            assertEquals(SessionStatus.SAVED, c.sessionStatus(SessionStatusRequest(SessionId("listed"))).status)
            assertEquals("FIX TESTS", c.setSessionTitle(SetSessionTitleRequest(SessionId("s2"), "fix tests")).title)

            val auth = c.authStatus(AuthStatusRequest())
            assertEquals(AuthState.AUTHENTICATED, auth.state)
            assertEquals(listOf(AuthAccount("Work", active = true)), auth.accounts)

            val providers = c.listProviders(ListProvidersRequest()).providers
            assertEquals(listOf(ProviderId("main")), providers.map { it.providerId })
            assertEquals(listOf(LlmProtocol.ANTHROPIC, LlmProtocol("local")), providers[0].supported)
            assertEquals("https://llm.example", providers[0].current?.baseUrl)
            c.setProvider(SetProviderRequest(ProviderId("main"), LlmProtocol.OPENAI, "https://proxy.example", mapOf("X-Team" to "7")))
            c.disableProvider(DisableProviderRequest(ProviderId("main")))

            // session/archive closes the session it names on this connection.
            c.archiveSession(ArchiveSessionRequest(SessionId("s2")))
            assertTrue("s2" !in c.connection.sessions)
            c.unarchiveSession(UnarchiveSessionRequest(SessionId("s2")))

            assertEquals(
                listOf(
                    "fork s1 /work",
                    "prompt s2",
                    "set main openai https://proxy.example {X-Team=7}",
                    "disable main",
                    "archive s2",
                    "unarchive s2",
                ),
                agent.seen.toList(),
            )

            // mcp/message both ways: a notification to the agent, a request to the client.
            val progress = buildJsonObject { put("progress", 1) }
            c.mcpMessage(MessageMcpNotification(McpServerAcpId("agent-tools"), McpRequestId("n1"), "notifications/progress", progress))
            val toAgent = agent.mcpNotification.await()
            assertEquals("agent-tools", toAgent.serverId.value)
            assertEquals(progress, toAgent.params)
            val a = pair.agentSide
            val listed = a.mcpMessage(MessageMcpRequest(McpServerAcpId("editor"), McpRequestId("r1"), "tools/list"))
            assertEquals(buildJsonObject { put("tools", JsonArray(emptyList())); put("server", "editor") }, listed.result)
            assertNull(listed.error)
            val missing = a.mcpMessage(MessageMcpRequest(McpServerAcpId("editor"), McpRequestId("r2"), "nope"))
            assertNull(missing.result)
            assertEquals(-32601, missing.error?.code)

            // auth/status_update to the client; a state this schema does not name passes.
            a.authStatusUpdate(AuthStatusUpdateNotification(AuthState("expired")))
            assertEquals(AuthState("expired"), client.statusUpdate.await().state)

            // The fork's withheld option reached the agent's events callback.
            val rules = agent.events.filter { it.kind == "payload_rule" }
            assertEquals(1, rules.size, "${agent.events}")
            val details = Json.parseToJsonElement(rules[0].details).jsonObject
            assertEquals(JsonPrimitive("session/fork"), details["method"])
            assertEquals(JsonPrimitive("boolean_config_option"), details["rule"])
            assertEquals(JsonPrimitive(true), details["withheld"])
            assertEquals(JsonPrimitive("clientCapabilities.session.configOptions.boolean"), details["capability"])
        }
    }

    /**
     * Without its feature, an unstable call is an extension method to
     * libacp: sent unchecked, and an agent that did not implement it answers
     * `-32601` through its typed default. With the feature, a call the agent
     * did not advertise is refused locally.
     */
    @Test
    fun `an unstable call is gated only when its feature is on`() = bounded {
        Pair(EchoAgent(), McpClient(), ConnectOptions(unstable = listOf("session_status"))).use { pair ->
            pair.client.initialize(initRequest())
            val refused = assertFailsWith<AcpException.Refused> {
                pair.client.sessionStatus(SessionStatusRequest(SessionId("s1")))
            }
            assertEquals("CapabilityNotAdvertised", refused.kind)
            assertEquals("agentCapabilities.sessionCapabilities.status", refused.capability)
            val sent = assertFailsWith<AcpException.Rpc> {
                pair.client.forkSession(ForkSessionRequest(SessionId("s1"), "relative"))
            }
            assertEquals(-32601L, sent.code)
        }
    }

    /** An unknown feature name is refused when the connection is made, naming the option and the entry. */
    @Test
    fun `an unknown feature is a typed error`() {
        val fds = socketPair()
        try {
            val e = assertFailsWith<AcpException.InvalidArgument> {
                ClientConnection.fromFds(fds[0], fds[0], McpClient(), ConnectOptions(unstable = listOf("session_forks")))
            }
            assertTrue("unstable" in e.detail && "session_forks" in e.detail, e.detail)
        } finally {
            closeDescriptor(fds[0])
            closeDescriptor(fds[1])
        }
    }

    /** The generated models keep `null` and absent apart, and unknown tagged variants whole. */
    @Test
    fun `the generated models keep what the wire says`() {
        val nullResult = ACPJson.decodeFromString(MessageMcpResponse.serializer(), """{"result":null}""")
        assertEquals(JsonNull, nullResult.result)
        assertEquals("""{"result":null}""", ACPJson.encodeToString(MessageMcpResponse.serializer(), nullResult))
        val error = ACPJson.decodeFromString(MessageMcpResponse.serializer(), """{"error":{"code":1,"message":"m"}}""")
        assertNull(error.result)
        assertEquals("""{"error":{"code":1,"message":"m"}}""", ACPJson.encodeToString(MessageMcpResponse.serializer(), error))
        val text = """{"sessionId":"s","configOptions":[{"type":"slider","id":"x","min":0}]}"""
        val fork = ACPJson.decodeFromString(ForkSessionResponse.serializer(), text)
        assertIs<SessionConfigOption.Unknown>(fork.configOptions?.single())
        assertEquals(Json.parseToJsonElement(text), Json.parseToJsonElement(ACPJson.encodeToString(ForkSessionResponse.serializer(), fork)))
        val boolean = """{"type":"boolean","id":"v","name":"V","currentValue":false}"""
        val option = ACPJson.decodeFromString(SessionConfigOption.serializer(), boolean)
        assertEquals(SessionConfigOption.Boolean(SessionConfigId("v"), "V", currentValue = false), option)
        assertEquals(Json.parseToJsonElement(boolean), Json.parseToJsonElement(ACPJson.encodeToString(SessionConfigOption.serializer(), option)))
    }
}
