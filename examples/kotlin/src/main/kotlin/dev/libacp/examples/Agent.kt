// An ACP agent in Kotlin: it answers every prompt by streaming the prompt's
// words back as message chunks, with a plan, and ends the turn. Serves on
// stdin/stdout (an editor spawns it); logs go to stderr.
//
//   java -cp <classpath> dev.libacp.examples.AgentKt
package dev.libacp.examples

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PlanEntry
import com.agentclientprotocol.model.PlanEntryPriority
import com.agentclientprotocol.model.PlanEntryStatus
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import dev.libacp.Agent
import dev.libacp.AgentConnection
import dev.libacp.IncomingCall
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.runBlocking

class EchoAgent : Agent {
    lateinit var connection: AgentConnection
    private val sessions = AtomicInteger()

    override suspend fun initialize(request: InitializeRequest, call: IncomingCall) =
        InitializeResponse(
            protocolVersion = 1,
            agentCapabilities = AgentCapabilities(),
            agentInfo = Implementation("libacp-kotlin-example-agent", "0.1.0"),
        )

    override suspend fun newSession(request: NewSessionRequest, call: IncomingCall): NewSessionResponse {
        System.err.println("agent: new session in ${request.cwd}")
        return NewSessionResponse(SessionId("session-${sessions.incrementAndGet()}"))
    }

    override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
        val text = request.prompt.filterIsInstance<ContentBlock.Text>().joinToString(" ") { it.text }
        suspend fun send(update: SessionUpdate) = connection.sessionUpdate(SessionNotification(request.sessionId, update))
        send(
            SessionUpdate.PlanUpdate(
                listOf(PlanEntry("Echo the prompt back", PlanEntryPriority.HIGH, PlanEntryStatus.IN_PROGRESS)),
            ),
        )
        // A cancelled turn (session/cancel) cancels this coroutine at the
        // next suspension; libacp then answers `cancelled`.
        for (word in "You said: $text".split(" ")) {
            send(SessionUpdate.AgentMessageChunk(ContentBlock.Text("$word ")))
        }
        return PromptResponse(StopReason.END_TURN)
    }
}

fun main() = runBlocking {
    val agent = EchoAgent()
    val connection = AgentConnection.serveStdio(agent)
    agent.connection = connection
    System.err.println("agent: ready")
    // Serve until the client closes the connection; everything is written then.
    connection.terminated()
    connection.close()
}
