// A remote ACP client in Kotlin: connects to an agent by URL (ws://, wss://:
// WebSocket; http://, https://: Streamable HTTP), opens a session, sends one
// prompt and prints the turn as it streams (PrintingClient, Client.kt).
//
//   java -cp <classpath> dev.libacp.examples.RemoteClientKt URL [TOKEN]
package dev.libacp.examples

import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.PromptRequest
import dev.libacp.ClientConnection
import dev.libacp.ConnectOptions
import kotlinx.coroutines.runBlocking

fun main(args: Array<String>) = runBlocking {
    val url = args.firstOrNull() ?: "ws://127.0.0.1:8080/acp"
    // A server started with bearer tokens wants one: `Authorization: Bearer <token>`.
    val headers = args.getOrNull(1)?.let { mapOf("Authorization" to "Bearer $it") }
    ClientConnection.connect(url, PrintingClient(), ConnectOptions(headers = headers)).use { client ->
        client.initialize(InitializeRequest(1, ClientCapabilities()))
        val session = client.newSession(NewSessionRequest("/", emptyList()))
        val answer = client.prompt(PromptRequest(session.sessionId, listOf(ContentBlock.Text("Hello over $url"))))
        println()
        println("turn ended: ${answer.stopReason}")
        client.shutdown()
    }
}
