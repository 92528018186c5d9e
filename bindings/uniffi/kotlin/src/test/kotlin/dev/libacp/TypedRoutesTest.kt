package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import kotlin.test.Test
import kotlin.test.assertEquals
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put

/** The typed layer's routing tables (Typed.kt) against libacp's method table. */
class TypedRoutesTest {
    /** libacp's table for [side]: each method's name and kind. */
    private fun core(side: AcpRole) = protocolMethods(side).map { MethodRow(it.name, it.notification) }.toSet()

    @Test
    fun `the typed routing tables cover exactly libacp's method table`() {
        val agentMethods = protocolMethods(AcpRole.AGENT)
        val clientMethods = protocolMethods(AcpRole.CLIENT)
        assertTrue(agentMethods.any { it.name == "session/prompt" }, "the core's table")
        assertEquals(agentMethods.size, core(AcpRole.AGENT).size, "no method twice")
        // Stable and unstable, requests as requests and notifications as
        // notifications: mcp/message is a request to the client and a
        // notification to the agent.
        assertEquals(core(AcpRole.AGENT), AgentHost(EchoAgent()).methods, "Agent (Typed.kt) vs the core")
        assertEquals(core(AcpRole.CLIENT), ClientHost(RecordingClient()).methods, "Client (Typed.kt) vs the core")
        assertTrue(MethodRow("mcp/message", notification = false) in core(AcpRole.CLIENT))
        assertTrue(MethodRow("mcp/message", notification = true) in core(AcpRole.AGENT))
        // The proxy chain: a proxy (agent) handles proxy/initialize and
        // proxy/successor of both kinds, a conductor (client) proxy/successor.
        assertTrue(MethodRow("proxy/initialize", notification = false) in core(AcpRole.AGENT))
        for (side in listOf(AcpRole.AGENT, AcpRole.CLIENT)) {
            assertTrue(MethodRow("proxy/successor", notification = false) in core(side), "$side")
            assertTrue(MethodRow("proxy/successor", notification = true) in core(side), "$side")
        }
        assertEquals(clientMethods.size, core(AcpRole.CLIENT).size, "no client method twice")
    }

    @Test
    fun `libacp's table names each unstable method's feature`() {
        val agent = protocolMethods(AcpRole.AGENT).associate { it.name to it.feature }
        assertEquals("unstable_session_fork", agent["session/fork"])
        assertEquals("unstable_llm_providers", agent["providers/set"])
        assertTrue("session/prompt" in agent && agent["session/prompt"] == null, "a stable method has none")
        val features = (protocolMethods(AcpRole.AGENT) + protocolMethods(AcpRole.CLIENT)).mapNotNull { it.feature }.toSet()
        assertEquals(
            setOf(
                "unstable_auth_status",
                "unstable_llm_providers",
                "unstable_mcp_over_acp",
                "unstable_proxy_chains",
                "unstable_session_archive",
                "unstable_session_fork",
                "unstable_session_set_title",
                "unstable_session_status",
            ),
            features,
        )
    }

    @Test
    fun `a method without a model in the SDK reaches its typed handler as JSON`() = bounded {
        val agent = object : EchoAgent() {
            override suspend fun setSessionConfigOption(call: IncomingCall): JsonElement {
                val params = assertNotNull(call.params).jsonObject
                return buildJsonObject {
                    put("configOptions", JsonArray(emptyList()))
                    put("_meta", buildJsonObject { put("value", params["value"] ?: JsonNull) })
                }
            }
        }
        Pair(agent, RecordingClient()).use { pair ->
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val result = pair.client.connection.call(
                "session/set_config_option",
                buildJsonObject {
                    put("sessionId", "s1")
                    put("configId", "mode")
                    put("value", "fast")
                },
            ).jsonObject
            assertEquals(JsonPrimitive("fast"), result["_meta"]?.jsonObject?.get("value"))
        }
    }
}
