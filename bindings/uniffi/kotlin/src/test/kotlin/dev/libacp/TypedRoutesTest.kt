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
    @Test
    fun `the typed routing tables cover exactly libacp's method table`() {
        val agentMethods = protocolMethods(AcpRole.AGENT)
        val clientMethods = protocolMethods(AcpRole.CLIENT)
        assertTrue("session/prompt" in agentMethods && "session/update" in clientMethods, "the core's table")
        assertEquals(agentMethods.toSet().size, agentMethods.size, "no method twice")
        assertEquals(agentMethods.sorted(), AgentHost(EchoAgent()).methods.sorted(), "Agent (Typed.kt) vs the core")
        assertEquals(clientMethods.sorted(), ClientHost(RecordingClient()).methods.sorted(), "Client (Typed.kt) vs the core")
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
