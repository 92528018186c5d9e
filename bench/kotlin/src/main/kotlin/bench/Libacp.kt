// The bench client and agent on libacp's Kotlin binding (typed API):
//   java -cp ... bench.LibacpKt client WORKLOAD [ARGS] -- AGENT_COMMAND...
//   java -cp ... bench.LibacpKt agent
// `prompt()` returns after every session/update of the turn was handled
// (the core's ordering), so the driver has nothing to wait for.
package bench

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.EmbeddedResourceResource
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PromptCapabilities
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileRequest
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.WriteTextFileRequest
import com.agentclientprotocol.model.WriteTextFileResponse
import dev.libacp.AcpErrors
import dev.libacp.Agent
import dev.libacp.AgentCommand
import dev.libacp.AgentConnection
import dev.libacp.Client
import dev.libacp.ClientConnection
import dev.libacp.IncomingCall
import java.util.concurrent.atomic.AtomicInteger
import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking

private const val IMPL = "libacp-kotlin"

fun stopName(stop: StopReason) = if (stop == StopReason.END_TURN) "end_turn" else stop.name.lowercase()

private class BenchAgent : Agent {
    lateinit var client: AgentConnection
    private val sessions = AtomicInteger()

    override suspend fun initialize(request: InitializeRequest, call: IncomingCall) =
        InitializeResponse(1, AgentCapabilities(promptCapabilities = PromptCapabilities(embeddedContext = true)))

    override suspend fun newSession(request: NewSessionRequest, call: IncomingCall) =
        NewSessionResponse(SessionId("libacp-kotlin-${sessions.incrementAndGet()}"))

    override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
        val text = request.prompt.filterIsInstance<ContentBlock.Text>().firstOrNull()?.text ?: ""
        val (kind, n) = parseCommand(text) ?: throw AcpErrors.invalidParams("unknown bench command: $text")
        when (kind) {
            "stream" -> for (i in 0 until n) {
                client.sessionUpdate(SessionNotification(request.sessionId, SessionUpdate.AgentMessageChunk(ContentBlock.Text(chunkText(i)))))
            }
            "read" -> for (i in 0 until n) {
                val content = client.readTextFile(ReadTextFileRequest(request.sessionId, readPath(i))).content
                if (content.length != READ_LEN) throw AcpErrors.rpc(-32603, "read $i: ${content.length} bytes")
            }
            "write" -> client.writeTextFile(WriteTextFileRequest(request.sessionId, WRITE_PATH, textOf(n)))
        }
        return PromptResponse(StopReason.END_TURN)
    }
}

private class BenchClient(val tracker: Tracker) : Client {
    override suspend fun sessionUpdate(notification: SessionNotification) {
        val u = notification.update
        if (u is SessionUpdate.AgentMessageChunk) tracker.chunk(notification.sessionId.value, (u.content as ContentBlock.Text).text)
    }

    override suspend fun readTextFile(request: ReadTextFileRequest, call: IncomingCall) =
        try {
            ReadTextFileResponse(tracker.read(request.path))
        } catch (e: IllegalStateException) {
            throw AcpErrors.invalidParams(e.message ?: "bad read")
        }

    override suspend fun writeTextFile(request: WriteTextFileRequest, call: IncomingCall): WriteTextFileResponse =
        try {
            tracker.write(request.path, request.content)
            WriteTextFileResponse()
        } catch (e: IllegalStateException) {
            throw AcpErrors.invalidParams(e.message ?: "bad write")
        }
}

private suspend fun client(argv: Array<String>) {
    val inv = invocation(argv)
    val tracker = Tracker()
    val conn = ClientConnection.spawn(AgentCommand(inv.agent[0], inv.agent.drop(1)), BenchClient(tracker))
    conn.initialize(InitializeRequest(1, ClientCapabilities(fs = FileSystemCapability(readTextFile = true, writeTextFile = true))))
    val peer = object : BenchPeer {
        override suspend fun newSession() = conn.newSession(NewSessionRequest(SESSION_CWD, emptyList())).sessionId.value

        override suspend fun prompt(session: String, text: String, resource: String?): String {
            val blocks = mutableListOf<ContentBlock>(ContentBlock.Text(text))
            if (resource != null) {
                blocks.add(ContentBlock.Resource(EmbeddedResourceResource.TextResourceContents(text = resource, uri = RESOURCE_URI)))
            }
            return stopName(conn.prompt(PromptRequest(SessionId(session), blocks)).stopReason)
        }
    }
    val result = drive(inv.workload, inv.args, tracker, peer)
    conn.shutdown()
    conn.close()
    emit(IMPL, inv.workload, result)
}

private suspend fun agent() {
    val agent = BenchAgent()
    val conn = AgentConnection.serveStdio(agent)
    agent.client = conn
    conn.terminated()
    conn.close()
}

fun main(argv: Array<String>) = runBlocking {
    when (argv.firstOrNull()) {
        "agent" -> agent()
        "client" -> try {
            client(argv.drop(1).toTypedArray())
        } catch (e: Throwable) {
            fail(IMPL, argv.getOrNull(1) ?: "?", e)
            exitProcess(1)
        }
        else -> {
            System.err.println("usage: bench.LibacpKt (agent | client WORKLOAD [ARGS] -- AGENT...)")
            exitProcess(2)
        }
    }
}
