// The bench client and agent on the official Kotlin SDK
// (com.agentclientprotocol:acp-jvm 0.10.5):
//   java -cp ... bench.SdkKt client WORKLOAD [ARGS] -- AGENT_COMMAND...
//   java -cp ... bench.SdkKt agent
// The SDK's client side returns a prompt's updates and its response as one
// Flow, in wire order, so the chunks are counted as they are collected.
package bench

import com.agentclientprotocol.agent.AgentInfo
import com.agentclientprotocol.agent.AgentSession
import com.agentclientprotocol.agent.AgentSupport
import com.agentclientprotocol.agent.client
import com.agentclientprotocol.client.ClientInfo
import com.agentclientprotocol.client.ClientOperationsFactory
import com.agentclientprotocol.common.ClientSessionOperations
import com.agentclientprotocol.common.Event
import com.agentclientprotocol.common.SessionCreationParameters
import com.agentclientprotocol.model.AcpCreatedSessionResponse
import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.EmbeddedResourceResource
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PromptCapabilities
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.WriteTextFileResponse
import com.agentclientprotocol.protocol.Protocol
import com.agentclientprotocol.transport.StdioTransport
import java.util.concurrent.atomic.AtomicInteger
import kotlin.system.exitProcess
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runBlocking
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.JsonElement

private const val SDK_IMPL = "kotlin-sdk"

private class SdkSession(override val sessionId: SessionId) : AgentSession {
    override suspend fun prompt(content: List<ContentBlock>, _meta: JsonElement?): Flow<Event> = flow {
        val text = content.filterIsInstance<ContentBlock.Text>().firstOrNull()?.text ?: ""
        val (kind, n) = parseCommand(text) ?: throw IllegalArgumentException("unknown bench command: $text")
        val client = currentCoroutineContext().client
        when (kind) {
            "stream" -> for (i in 0 until n) {
                emit(Event.SessionUpdateEvent(SessionUpdate.AgentMessageChunk(ContentBlock.Text(chunkText(i)))))
            }
            "read" -> for (i in 0 until n) {
                val got = client.fsReadTextFile(readPath(i)).content
                check(got.length == READ_LEN) { "read $i: ${got.length} bytes" }
            }
            "write" -> client.fsWriteTextFile(WRITE_PATH, textOf(n))
        }
        emit(Event.PromptResponseEvent(PromptResponse(StopReason.END_TURN)))
    }
}

private suspend fun sdkAgent() = coroutineScope {
    val transport = StdioTransport(this, Dispatchers.IO, System.`in`.asSource().buffered(), System.out.asSink().buffered(), "bench-agent")
    val protocol = Protocol(this, transport)
    val sessions = AtomicInteger()
    com.agentclientprotocol.agent.Agent(
        protocol,
        object : AgentSupport {
            override suspend fun initialize(clientInfo: ClientInfo) =
                AgentInfo(1, AgentCapabilities(promptCapabilities = PromptCapabilities(embeddedContext = true)))

            override suspend fun createSession(sessionParameters: SessionCreationParameters): AgentSession =
                SdkSession(SessionId("kotlin-sdk-${sessions.incrementAndGet()}"))

            override suspend fun loadSession(sessionId: SessionId, sessionParameters: SessionCreationParameters): AgentSession =
                throw UnsupportedOperationException("session/load")
        },
    )
    val closed = CompletableDeferred<Unit>()
    transport.onClose { closed.complete(Unit) }
    protocol.start()
    closed.await()
    this.cancel()
}

private class SdkOperations(val tracker: Tracker) : ClientSessionOperations {
    override suspend fun requestPermissions(
        toolCall: SessionUpdate.ToolCallUpdate,
        permissions: List<PermissionOption>,
        _meta: JsonElement?,
    ) = RequestPermissionResponse(RequestPermissionOutcome.Cancelled)

    override suspend fun notify(notification: SessionUpdate, _meta: JsonElement?) {}

    override suspend fun fsReadTextFile(path: String, line: UInt?, limit: UInt?, _meta: JsonElement?) =
        ReadTextFileResponse(tracker.read(path))

    override suspend fun fsWriteTextFile(path: String, content: String, _meta: JsonElement?): WriteTextFileResponse {
        tracker.write(path, content)
        return WriteTextFileResponse()
    }
}

private suspend fun sdkClient(argv: Array<String>) = coroutineScope {
    val inv = invocation(argv)
    val tracker = Tracker()
    val process = ProcessBuilder(inv.agent).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    val transport = StdioTransport(
        this, Dispatchers.IO, process.inputStream.asSource().buffered(), process.outputStream.asSink().buffered(), "bench-client",
    )
    val protocol = Protocol(this, transport)
    val client = com.agentclientprotocol.client.Client(protocol)
    protocol.start()
    client.initialize(ClientInfo(1, ClientCapabilities(fs = FileSystemCapability(readTextFile = true, writeTextFile = true))))
    val factory = object : ClientOperationsFactory {
        override suspend fun createClientOperations(sessionId: SessionId, sessionResponse: AcpCreatedSessionResponse) =
            SdkOperations(tracker)
    }
    val sessions = HashMap<String, com.agentclientprotocol.client.ClientSession>()
    val peer = object : BenchPeer {
        override suspend fun newSession(): String {
            val s = client.newSession(SessionCreationParameters(SESSION_CWD, emptyList()), factory)
            synchronized(sessions) { sessions[s.sessionId.value] = s }
            return s.sessionId.value
        }

        override suspend fun prompt(session: String, text: String, resource: String?): String {
            val s = synchronized(sessions) { sessions.getValue(session) }
            val blocks = mutableListOf<ContentBlock>(ContentBlock.Text(text))
            if (resource != null) {
                blocks.add(ContentBlock.Resource(EmbeddedResourceResource.TextResourceContents(text = resource, uri = RESOURCE_URI)))
            }
            var stop: StopReason? = null
            s.prompt(blocks).collect { event ->
                when (event) {
                    is Event.SessionUpdateEvent -> {
                        val u = event.update
                        if (u is SessionUpdate.AgentMessageChunk) tracker.chunk(session, (u.content as ContentBlock.Text).text)
                    }
                    is Event.PromptResponseEvent -> stop = event.response.stopReason
                }
            }
            return stop?.let { stopName(it) } ?: "none"
        }
    }
    val result = drive(inv.workload, inv.args, tracker, peer)
    protocol.close()
    process.outputStream.close()
    process.waitFor()
    emit(SDK_IMPL, inv.workload, result)
    this.cancel()
}

fun main(argv: Array<String>) {
    try {
        runBlocking {
            when (argv.firstOrNull()) {
                "agent" -> sdkAgent()
                "client" -> try {
                    sdkClient(argv.drop(1).toTypedArray())
                } catch (e: kotlinx.coroutines.CancellationException) {
                    throw e
                } catch (e: Throwable) {
                    fail(SDK_IMPL, argv.getOrNull(1) ?: "?", e)
                    exitProcess(1)
                }
                else -> {
                    System.err.println("usage: bench.SdkKt (agent | client WORKLOAD [ARGS] -- AGENT...)")
                    exitProcess(2)
                }
            }
        }
    } catch (e: kotlinx.coroutines.CancellationException) {
        // The scope was cancelled on purpose once the work was done.
    }
    exitProcess(0)
}
