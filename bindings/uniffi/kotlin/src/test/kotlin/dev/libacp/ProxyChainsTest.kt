package dev.libacp

import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.rpc.ACPJson
import dev.libacp.models.InitializeProxyRequest
import dev.libacp.models.InitializeProxyResponse
import dev.libacp.models.ProxySuccessorNotification
import dev.libacp.models.ProxySuccessorRequest
import dev.libacp.models.ProxySuccessorResponse
import java.util.Collections
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull
import kotlin.test.assertTrue
import kotlinx.coroutines.CompletableDeferred
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put
import kotlinx.serialization.json.putJsonObject

/**
 * A proxy chain (unstable `proxy_chains`) through the typed API: a Kotlin
 * conductor (a client) and a Kotlin proxy (an agent) in this process, both
 * with the feature on. The conductor stands in for the proxy's successor.
 */
class ProxyChainsTest {
    private val proxyChains = ConnectOptions(unstable = listOf("proxy_chains"))

    /**
     * A proxy: `proxy/initialize` forwards `initialize` to its successor and
     * answers with the successor's capabilities (plus its own extra ones);
     * it records what the conductor delivers from the successor.
     */
    class Proxy : EchoAgent() {
        val initialized = CompletableDeferred<InitializeProxyRequest>()
        val delivered = CompletableDeferred<ProxySuccessorNotification>()

        override val extraCapabilities = buildJsonObject {
            putJsonObject("sessionCapabilities") { putJsonObject("fork") {} }
        }

        override suspend fun initialize(request: InitializeRequest, call: IncomingCall): InitializeResponse =
            throw AcpErrors.rpc(-32600, "this proxy expects proxy/initialize")

        override suspend fun proxyInitialize(request: InitializeProxyRequest, call: IncomingCall): InitializeProxyResponse {
            initialized.complete(request)
            val params = ACPJson.encodeToJsonElement(InitializeRequest.serializer(), request)
            val successor = connection.proxySuccessor(ProxySuccessorRequest("initialize", params))
            return ACPJson.decodeFromJsonElement(InitializeResponse.serializer(), successor)
        }

        override suspend fun proxySuccessor(request: ProxySuccessorRequest, call: IncomingCall): ProxySuccessorResponse =
            buildJsonObject {
                put("outcome", buildJsonObject { put("outcome", "selected"); put("optionId", "allow") })
                put("asked", request.method)
                put("tool", request.params?.jsonObject?.get("toolCall") ?: JsonNull)
            }

        override suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) {
            delivered.complete(notification)
        }
    }

    /**
     * A conductor: answers what the proxy forwards as its successor would
     * (an `initialize` answer, a session).
     */
    class Conductor : Client {
        val forwarded: MutableList<ProxySuccessorRequest> = Collections.synchronizedList(mutableListOf())
        val notified = CompletableDeferred<ProxySuccessorNotification>()

        override suspend fun proxySuccessor(request: ProxySuccessorRequest, call: IncomingCall): ProxySuccessorResponse {
            forwarded.add(request)
            return when (request.method) {
                "initialize" -> buildJsonObject {
                    put("protocolVersion", request.params?.jsonObject?.get("protocolVersion") ?: JsonNull)
                    putJsonObject("agentCapabilities") { put("loadSession", true) }
                }
                "session/new" -> buildJsonObject { put("sessionId", "final-1") }
                else -> throw AcpErrors.methodNotFound(request.method)
            }
        }

        override suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) {
            notified.complete(notification)
        }
    }

    @Test
    fun `a conductor and a proxy round-trip every proxy-chain method typed`() = bounded {
        val proxy = Proxy()
        val conductor = Conductor()
        Pair(proxy, conductor, proxyChains, proxyChains).use { pair ->
            val c = pair.client

            // proxy/initialize: the proxy forwarded initialize through
            // proxy/successor and answered with its successor's capabilities.
            val init = c.proxyInitialize(initRequest())
            assertEquals(1, proxy.initialized.await().protocolVersion)
            assertTrue(init.agentCapabilities.loadSession)
            assertEquals(1, init.protocolVersion)
            val forwardedInit = conductor.forwarded.single()
            assertEquals("initialize", forwardedInit.method)
            assertEquals(JsonPrimitive(1), forwardedInit.params?.jsonObject?.get("protocolVersion"))
            // The proxy's extraCapabilities were merged into its answer.
            val caps = c.connection.peerCapabilities
            assertEquals(JsonObject(emptyMap()), caps["sessionCapabilities"]?.jsonObject?.get("fork"), "$caps")
            // proxy/initialize was this connection's initialize.
            val again = assertFailsWith<AcpException.Refused> { c.initialize(initRequest()) }
            assertEquals("AlreadyInitialized", again.kind)

            // The proxy reaches its successor: a request (the answer
            // round-trips unchanged) and a notification.
            val a = pair.agentSide
            val params = buildJsonObject { put("cwd", "/work"); put("mcpServers", JsonArray(emptyList())) }
            val session = a.proxySuccessor(ProxySuccessorRequest("session/new", params))
            assertEquals(buildJsonObject { put("sessionId", "final-1") }, session)
            assertEquals(params, conductor.forwarded.last().params)
            val missing = assertFailsWith<AcpException.Rpc> { a.proxySuccessor(ProxySuccessorRequest("ext/missing")) }
            assertEquals(-32601L, missing.code)
            val meta = buildJsonObject { put("hop", 1) }
            val cancel = buildJsonObject { put("sessionId", "final-1") }
            a.proxySuccessorNotification(ProxySuccessorNotification("session/cancel", cancel, meta))
            assertEquals(ProxySuccessorNotification("session/cancel", cancel, meta), conductor.notified.await())

            // The conductor delivers the successor's messages to the proxy.
            val ask = buildJsonObject {
                put("sessionId", "final-1")
                putJsonObject("toolCall") { put("toolCallId", "t1") }
            }
            val answer: JsonElement = c.proxySuccessor(ProxySuccessorRequest("session/request_permission", ask))
            assertEquals(JsonPrimitive("session/request_permission"), answer.jsonObject["asked"])
            assertEquals(buildJsonObject { put("toolCallId", "t1") }, answer.jsonObject["tool"])
            val update = buildJsonObject { put("sessionId", "final-1") }
            c.proxySuccessorNotification(ProxySuccessorNotification("session/update", update))
            val delivered = proxy.delivered.await()
            assertEquals("session/update", delivered.method)
            assertEquals(update, delivered.params)
            assertNull(delivered._meta)
        }
    }

    /** A client recording the notifications that reach `extNotification`. */
    class ExtRecordingClient : RecordingClient() {
        val ext: MutableList<String> = Collections.synchronizedList(mutableListOf())

        override suspend fun extNotification(method: String, params: JsonElement?) {
            ext.add(method)
        }
    }

    /**
     * Without handlers, the proxy-chain requests answer `-32601` (a typed
     * error) both ways and the notifications are ignored (not handed to
     * `extNotification`); a failed `proxy/initialize` leaves the connection
     * to `initialize`.
     */
    @Test
    fun `the default proxy-chain handlers answer method not found`() = bounded {
        val agent = object : EchoAgent() {
            val ext: MutableList<String> = Collections.synchronizedList(mutableListOf())

            override suspend fun extNotification(method: String, params: JsonElement?) {
                ext.add(method)
            }
        }
        val client = ExtRecordingClient()
        Pair(agent, client, proxyChains, proxyChains).use { pair ->
            val c = pair.client
            val init = assertFailsWith<AcpException.Rpc> { c.proxyInitialize(initRequest()) }
            assertEquals(-32601L, init.code)
            c.initialize(initRequest())

            // Each notification is handled before the request sent after it.
            pair.agentSide.proxySuccessorNotification(ProxySuccessorNotification("session/update"))
            val toConductor = assertFailsWith<AcpException.Rpc> {
                pair.agentSide.proxySuccessor(ProxySuccessorRequest("session/new"))
            }
            assertEquals(-32601L, toConductor.code)
            c.proxySuccessorNotification(ProxySuccessorNotification("session/cancel"))
            val toProxy = assertFailsWith<AcpException.Rpc> { c.proxySuccessor(ProxySuccessorRequest("session/request_permission")) }
            assertEquals(-32601L, toProxy.code)
            assertTrue(client.ext.isEmpty() && agent.ext.isEmpty(), "${client.ext} ${agent.ext}")
        }
    }
}
