// An ACP v1 agent built only on the official Kotlin SDK
// (`com.agentclientprotocol:acp-jvm` 0.10.5), serving on its stdin/stdout.
// libacp's clients (and the clients next to this file) drive it. The prompt
// commands it understands are listed in ../README.md.
//
//   java -cp target/classes:$(cat target/classpath.txt) interop.agent.AgentKt
//
// It exits 0 once its stdin closes. Diagnostics go to stderr only (System.out
// is pointed at stderr too): stdout carries nothing but ACP messages.
//
// Where the SDK decides (see ../README.md, "SDK quirks found"): a prompt for
// an unknown session is answered by the SDK itself (-32602, before any code
// here runs); the protocol version answered is min(asked, 1); request
// cancellation is `$/cancelRequest`, not `$/cancel_request`.
//
// session/cancel: right after `AgentSession.cancel()` returns, the SDK
// cancels the prompt's coroutine, and a prompt cancelled that way is
// answered with error -32800, not `stopReason: cancelled`. The SDK documents
// `cancel()` as returning "after the agent canceled all activities of the
// current turn", so `cancel()` here waits (at most CANCEL_WAIT_MS) until the
// turn's answer has been written, unless the turn is waiting for the client:
// notification handlers run on the SDK's read loop, which could not read the
// client's answer meanwhile.
package interop.agent

import com.agentclientprotocol.agent.Agent
import com.agentclientprotocol.agent.AgentInfo
import com.agentclientprotocol.agent.AgentSession
import com.agentclientprotocol.agent.AgentSupport
import com.agentclientprotocol.agent.client
import com.agentclientprotocol.client.ClientInfo
import com.agentclientprotocol.common.Event
import com.agentclientprotocol.common.SessionCreationParameters
import com.agentclientprotocol.model.AcpMethod
import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptCapabilities
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.ToolCallId
import com.agentclientprotocol.model.ToolCallStatus
import com.agentclientprotocol.model.ToolKind
import com.agentclientprotocol.protocol.JsonRpcException
import com.agentclientprotocol.protocol.Protocol
import com.agentclientprotocol.protocol.ProtocolOptions
import com.agentclientprotocol.protocol.invoke
import com.agentclientprotocol.protocol.jsonRpcRequest
import com.agentclientprotocol.rpc.JsonRpcErrorCode
import com.agentclientprotocol.rpc.JsonRpcMessage
import com.agentclientprotocol.rpc.JsonRpcResponse
import com.agentclientprotocol.rpc.RequestId
import com.agentclientprotocol.transport.StdioTransport
import com.agentclientprotocol.transport.Transport
import java.io.FileDescriptor
import java.io.FileOutputStream
import java.io.PrintStream
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.FlowCollector
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

private const val NAME = "interop-kotlin-agent"
private const val CANCEL_WAIT_MS = 2_000L

private fun log(message: String) = System.err.println("kotlin-agent: $message")

private fun textChunk(user: Boolean, text: String): SessionUpdate =
    if (user) SessionUpdate.UserMessageChunk(ContentBlock.Text(text))
    else SessionUpdate.AgentMessageChunk(ContentBlock.Text(text))

/** `text` split at its first space: the command and its argument text. */
private fun partition(text: String): Pair<String, String> {
    val space = text.indexOf(' ')
    return if (space < 0) text to "" else text.substring(0, space) to text.substring(space + 1)
}

private fun sessionNotFound(sessionId: SessionId): Nothing =
    throw JsonRpcException(
        JsonRpcErrorCode.RESOURCE_NOT_FOUND.code,
        "Resource not found",
        buildJsonObject { put("sessionId", sessionId.value) },
    )

private val toolCalls = AtomicInteger()

/** The SDK's transport, telling when the answer to a request has been handed to it. */
private class AnswerWatch(private val inner: Transport) : Transport by inner {
    private val answers = ConcurrentHashMap<RequestId, CompletableDeferred<Unit>>()

    fun answered(id: RequestId): CompletableDeferred<Unit> = answers.getOrPut(id) { CompletableDeferred() }

    override fun send(message: JsonRpcMessage) {
        inner.send(message)
        if (message is JsonRpcResponse) answers.remove(message.id)?.complete(Unit)
    }
}

/** The current turn: its answer, and how many client requests it awaits. */
private class TurnState(val answered: CompletableDeferred<Unit>) {
    val awaitingClient = AtomicInteger()
}

/** One session: its cwd, its history and the cancel signal of its current turn. */
private class InteropSession(
    override val sessionId: SessionId,
    @Volatile var cwd: String,
    private val watch: AnswerWatch,
) : AgentSession {
    /** What session/load replays: prompt texts and agent text chunks, in order. */
    val history: MutableList<SessionUpdate> = java.util.Collections.synchronizedList(mutableListOf())

    @Volatile
    var cancelled = false

    @Volatile
    private var cancelSignal = CompletableDeferred<Unit>()

    @Volatile
    private var turn: TurnState? = null

    override suspend fun prompt(content: List<ContentBlock>, _meta: kotlinx.serialization.json.JsonElement?): Flow<Event> {
        cancelled = false
        cancelSignal = CompletableDeferred()
        val text = content.filterIsInstance<ContentBlock.Text>().firstOrNull()?.text ?: ""
        history.add(textChunk(user = true, text))
        val signal = cancelSignal
        // Called in the coroutine of the session/prompt request.
        val state = TurnState(watch.answered(currentCoroutineContext().jsonRpcRequest.id))
        turn = state
        // The flow runs in the SDK's prompt coroutine: its SessionUpdateEvents
        // become session/update notifications, in order, and its
        // PromptResponseEvent the answer.
        return flow { run(text, signal, state) }
    }

    /**
     * SDK: called on session/cancel (in its read loop), before it cancels the
     * prompt's coroutine (see the top of this file).
     */
    override suspend fun cancel() {
        cancelled = true
        cancelSignal.complete(Unit)
        val current = turn ?: return
        if (current.awaitingClient.get() == 0) {
            withTimeoutOrNull(CANCEL_WAIT_MS) { current.answered.await() }
        }
    }

    private suspend fun FlowCollector<Event>.run(command: String, signal: CompletableDeferred<Unit>, turn: TurnState) {
        val remote = currentCoroutineContext().client

        /** A request to the client, counted while it is awaited. */
        suspend fun <T> ask(request: suspend com.agentclientprotocol.common.ClientSessionOperations.() -> T): T {
            turn.awaitingClient.incrementAndGet()
            try {
                return remote.request()
            } finally {
                turn.awaitingClient.decrementAndGet()
            }
        }
        suspend fun update(u: SessionUpdate) = emit(Event.SessionUpdateEvent(u))
        suspend fun say(text: String) {
            val chunk = textChunk(user = false, text)
            history.add(chunk)
            update(chunk)
        }
        suspend fun done(reason: StopReason = if (cancelled) StopReason.CANCELLED else StopReason.END_TURN) =
            emit(Event.PromptResponseEvent(PromptResponse(reason)))

        val (verb, rest) = partition(command.trim())
        when (verb) {
            "stream" -> {
                val n = rest.trim().toIntOrNull()
                if (n == null || n < 0) invalidParams("stream needs a count, not ${JsonPrimitive(rest)}")
                for (i in 0 until n) say("chunk $i")
                done()
            }
            "permission" -> {
                val toolCallId = ToolCallId("call-${toolCalls.incrementAndGet()}")
                update(SessionUpdate.ToolCall(toolCallId, "Edit file", ToolKind.EDIT, ToolCallStatus.PENDING))
                val response = ask {
                    requestPermissions(
                        SessionUpdate.ToolCallUpdate(toolCallId, "Edit file", ToolKind.EDIT, ToolCallStatus.PENDING),
                        listOf(
                            PermissionOption(PermissionOptionId("allow_once"), "Allow once", PermissionOptionKind.ALLOW_ONCE),
                            PermissionOption(PermissionOptionId("reject_once"), "Reject once", PermissionOptionKind.REJECT_ONCE),
                        ),
                    )
                }
                val outcome = response.outcome
                val label = when (outcome) {
                    is RequestPermissionOutcome.Selected -> outcome.optionId.value
                    RequestPermissionOutcome.Cancelled -> "cancelled"
                }
                say("permission: $label")
                val allowed = outcome is RequestPermissionOutcome.Selected && label.startsWith("allow")
                update(
                    SessionUpdate.ToolCallUpdate(
                        toolCallId,
                        status = if (allowed) ToolCallStatus.COMPLETED else ToolCallStatus.FAILED,
                    ),
                )
                if (outcome == RequestPermissionOutcome.Cancelled) done(StopReason.CANCELLED) else done()
            }
            "read" -> {
                say(ask { fsReadTextFile(rest.trim()) }.content)
                done()
            }
            "write" -> {
                val (path, text) = partition(rest)
                ask { fsWriteTextFile(path, text) }
                say("wrote")
                done()
            }
            "terminal" -> {
                val terminalId = ask { terminalCreate("sh", listOf("-c", rest), cwd) }.terminalId
                try {
                    ask { terminalWaitForExit(terminalId) }
                    say(ask { terminalOutput(terminalId) }.output)
                } finally {
                    withContext(NonCancellable) { ask { terminalRelease(terminalId) } }
                }
                done()
            }
            "wait" -> {
                // Until session/cancel (the SDK also cancels this coroutine).
                signal.await()
                done(StopReason.CANCELLED)
            }
            else -> invalidParams("unknown prompt command ${JsonPrimitive(verb)}")
        }
    }

    private fun invalidParams(detail: String): Nothing =
        throw JsonRpcException(JsonRpcErrorCode.INVALID_PARAMS.code, "Invalid params", JsonPrimitive(detail))
}

private class InteropAgentSupport(private val protocol: Protocol, private val watch: AnswerWatch) : AgentSupport {
    private val sessions = ConcurrentHashMap<String, InteropSession>()

    override suspend fun initialize(clientInfo: ClientInfo): AgentInfo {
        if (clientInfo.protocolVersion != 1) {
            log("client asked for protocol version ${clientInfo.protocolVersion}; the SDK answers min(asked, 1)")
        }
        return AgentInfo(
            protocolVersion = 1,
            capabilities = AgentCapabilities(
                loadSession = true,
                promptCapabilities = PromptCapabilities(audio = false, image = true, embeddedContext = true),
            ),
            authMethods = emptyList(),
            implementation = Implementation(NAME, "0.0.0"),
        )
    }

    override suspend fun createSession(sessionParameters: SessionCreationParameters): AgentSession {
        val session = InteropSession(SessionId("kt-${UUID.randomUUID()}"), sessionParameters.cwd, watch)
        sessions[session.sessionId.value] = session
        return session
    }

    override suspend fun loadSession(sessionId: SessionId, sessionParameters: SessionCreationParameters): AgentSession {
        val session = sessions[sessionId.value] ?: sessionNotFound(sessionId)
        session.cwd = sessionParameters.cwd
        // The SDK registers the loaded session (and with it the
        // `coroutineContext.client` of its requests) only after this returns,
        // so the history goes out through the protocol's typed
        // session/update, before the answer.
        for (update in session.history.toList()) {
            AcpMethod.ClientMethods.SessionUpdate(protocol, SessionNotification(sessionId, update))
        }
        return session
    }
}

fun main() {
    // stdout is the ACP stream: keep everything else (System.out included) off it.
    val acpOut = FileOutputStream(FileDescriptor.out)
    System.setOut(PrintStream(FileOutputStream(FileDescriptor.err), true))
    runBlocking {
        val transport = AnswerWatch(
            StdioTransport(
                this,
                Dispatchers.IO,
                System.`in`.asSource().buffered(),
                acpOut.asSink().buffered(),
                NAME,
            ),
        )
        val protocol = Protocol(this, transport, ProtocolOptions(protocolDebugName = NAME))
        Agent(protocol, InteropAgentSupport(protocol, transport))
        protocol.start()
        // The transport closes when stdin ends.
        transport.state.first { it == Transport.State.CLOSED }
        System.err.flush()
        // Exit 0 now: requests still in flight get no answer, and the SDK's
        // coroutines (children of this runBlocking) are not waited for.
        Runtime.getRuntime().halt(0)
    }
}
