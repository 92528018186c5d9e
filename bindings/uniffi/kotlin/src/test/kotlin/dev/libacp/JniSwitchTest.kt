package dev.libacp

import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.StopReason
import kotlin.test.Test
import kotlin.test.assertEquals

/**
 * The JNI fast path's switch (Jni.kt): on unless `-Dlibacp.jni=false` or
 * `LIBACP_JNI=0`, and a connection then uses it from its first message on.
 * `scripts/test-kotlin.sh` runs the shared scenarios and fault tests both
 * ways; this checks that each run really is the way it says.
 */
class JniSwitchTest {
    private val expected = System.getProperty("libacp.jni")?.trim()?.lowercase() != "false" &&
        System.getenv("LIBACP_JNI")?.trim() != "0"

    @Test
    fun `the fast path is on exactly when the switch says so`() {
        println("JniSwitchTest: libacp.jni=${System.getProperty("libacp.jni")} LIBACP_JNI=${System.getenv("LIBACP_JNI")} -> fast path ${if (Jni.enabled) "on" else "off"}")
        assertEquals(expected, Jni.enabled)
    }

    @Test
    fun `both ends of a pair use the fast path when it is on, and a round trip works either way`() = bounded {
        val client = RecordingClient()
        Pair(EchoAgent(), client).use { pair ->
            assertEquals(expected, pair.client.connection.bridge.usesJni)
            assertEquals(expected, pair.agentSide.connection.bridge.usesJni)
            pair.client.initialize(initRequest())
            pair.client.newSession(NewSessionRequest("/tmp", emptyList()))
            val answer = pair.client.prompt(promptRequest("s1", "a b c"))
            assertEquals(StopReason.END_TURN, answer.stopReason)
            assertEquals(listOf("a", "b", "c"), client.seen.toList())
        }
    }
}
