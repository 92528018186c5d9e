package dev.libacp

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import java.io.File
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/**
 * A hang detector, not a speed requirement: far above what any test needs
 * on a slow, loaded machine.
 */
val LIMIT = 60.seconds

/** Runs a test's [block] under [LIMIT] (returns Unit: JUnit runs only void tests). */
fun bounded(block: suspend kotlinx.coroutines.CoroutineScope.() -> Unit) =
    runBlocking { withTimeout(LIMIT) { block() } }

/** The repository root (set by the pom; the tests' working directory otherwise). */
val repo: File = File(System.getProperty("libacp.repo") ?: "../../..").canonicalFile

/** A binary of `cargo build -p libacp-tests --bins` (built by scripts/test-kotlin.sh). */
fun testBinary(name: String): File = File(repo, "target/debug/$name")

fun text(s: String) = ContentBlock.Text(s)

fun initRequest(fs: Boolean = false) =
    InitializeRequest(1, ClientCapabilities(fs = FileSystemCapability(readTextFile = fs, writeTextFile = fs)))

fun promptRequest(session: String, s: String) = PromptRequest(SessionId(session), listOf(text(s)))

/**
 * An agent for in-process pairs: one session `s1`; a prompt streams the
 * words of its text as `agent_message_chunk`s, then ends `end_turn`.
 */
open class EchoAgent : Agent {
    lateinit var connection: AgentConnection

    override suspend fun initialize(request: InitializeRequest, call: IncomingCall) =
        InitializeResponse(1, AgentCapabilities())

    override suspend fun newSession(request: NewSessionRequest, call: IncomingCall) =
        NewSessionResponse(SessionId("s1"))

    override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
        val words = request.prompt.filterIsInstance<ContentBlock.Text>().flatMap { it.text.split(" ") }
        for (w in words) {
            connection.sessionUpdate(SessionNotification(request.sessionId, SessionUpdate.AgentMessageChunk(text(w))))
        }
        return PromptResponse(StopReason.END_TURN)
    }
}

/** A client agent pair over a socket pair, in this process. */
class Pair<A : Agent>(
    val agent: A,
    client: Client,
    options: ConnectOptions = ConnectOptions(),
    agentOptions: ConnectOptions = ConnectOptions(),
) : AutoCloseable {
    val client: ClientConnection
    val agentSide: AgentConnection

    init {
        val fds = socketPair()
        agentSide = AgentConnection.fromFds(fds[1], fds[1], agent, agentOptions)
        if (agent is EchoAgent) agent.connection = agentSide
        this.client = ClientConnection.fromFds(fds[0], fds[0], client, options)
    }

    override fun close() {
        client.close()
        agentSide.close()
    }
}

/** A client that records the text of every update it sees. */
open class RecordingClient : Client {
    val seen = java.util.Collections.synchronizedList(mutableListOf<String>())

    override suspend fun sessionUpdate(notification: SessionNotification) {
        val u = notification.update
        if (u is SessionUpdate.AgentMessageChunk) seen.add((u.content as ContentBlock.Text).text)
    }
}
