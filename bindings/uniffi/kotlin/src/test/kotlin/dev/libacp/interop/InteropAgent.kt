// An ACP agent on libacp's Kotlin binding (typed API), serving on stdio: the
// Kotlin counterpart of bindings/node/test/peers/interop-agent.mjs. It
// implements the whole prompt command vocabulary of tests/interop/README.md
// (`stream N`, `permission`, `read PATH`, `write PATH TEXT`,
// `terminal CMD...`, `wait`), advertises `loadSession` and records each
// session's history (the prompt texts as `user_message_chunk`s, the agent's
// text chunks) as the turns run; `session/load` replays it as
// `session/update`s before its answer. An unknown session is `-32002` with
// `data.sessionId`; an unknown command `-32602`.
//
//   java -cp <the binding's test classpath> dev.libacp.interop.InteropAgentKt
//
// Driven by the official SDKs' interop clients and by InteropClient.kt in
// InteropTest. It exits 0 once its stdin closes; logs go to stderr.
// (The opt-in: the session responses' constructors take the unstable `models`.)
@file:OptIn(com.agentclientprotocol.annotations.UnstableApi::class)

package dev.libacp.interop

import com.agentclientprotocol.model.AgentCapabilities
import com.agentclientprotocol.model.CancelNotification
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.CreateTerminalRequest
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.LoadSessionRequest
import com.agentclientprotocol.model.LoadSessionResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptCapabilities
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileRequest
import com.agentclientprotocol.model.ReleaseTerminalRequest
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionRequest
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.TerminalOutputRequest
import com.agentclientprotocol.model.ToolCallId
import com.agentclientprotocol.model.ToolCallStatus
import com.agentclientprotocol.model.ToolKind
import com.agentclientprotocol.model.WaitForTerminalExitRequest
import com.agentclientprotocol.model.WriteTextFileRequest
import dev.libacp.AcpErrors
import dev.libacp.Agent
import dev.libacp.AgentConnection
import dev.libacp.IncomingCall
import java.util.Collections
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

private fun log(message: String) = System.err.println("kotlin-libacp-agent: $message")

private fun textChunk(user: Boolean, text: String): SessionUpdate =
    if (user) SessionUpdate.UserMessageChunk(ContentBlock.Text(text))
    else SessionUpdate.AgentMessageChunk(ContentBlock.Text(text))

/** `text` split at its first space: the command and its argument text. */
private fun partition(text: String): Pair<String, String> {
    val space = text.indexOf(' ')
    return if (space < 0) text to "" else text.substring(0, space) to text.substring(space + 1)
}

private class Session(@Volatile var cwd: String) {
    val history: MutableList<SessionUpdate> = Collections.synchronizedList(mutableListOf())
}

class InteropAgent : Agent {
    /** The connection, once `serveStdio` returned (handlers wait for it). */
    val connection = CompletableDeferred<AgentConnection>()
    private val sessions = ConcurrentHashMap<String, Session>()
    private val toolCalls = AtomicInteger()

    private fun session(sessionId: SessionId): Session =
        sessions[sessionId.value]
            ?: throw AcpErrors.rpc(-32002, "Resource not found", buildJsonObject { put("sessionId", sessionId.value) })

    override suspend fun initialize(request: InitializeRequest, call: IncomingCall): InitializeResponse {
        if (request.protocolVersion != 1) {
            log("client asked for protocol version ${request.protocolVersion}; answering 1")
        }
        return InitializeResponse(
            protocolVersion = 1,
            agentCapabilities = AgentCapabilities(
                loadSession = true,
                promptCapabilities = PromptCapabilities(audio = false, image = true, embeddedContext = true),
            ),
            authMethods = emptyList(),
            agentInfo = Implementation("libacp-kotlin-interop-agent", "0.1.0"),
        )
    }

    override suspend fun newSession(request: NewSessionRequest, call: IncomingCall): NewSessionResponse {
        val sessionId = "kotlin-${UUID.randomUUID()}"
        sessions[sessionId] = Session(request.cwd)
        return NewSessionResponse(SessionId(sessionId))
    }

    override suspend fun loadSession(request: LoadSessionRequest, call: IncomingCall): LoadSessionResponse {
        val session = session(request.sessionId)
        session.cwd = request.cwd
        val client = connection.await()
        for (update in session.history.toList()) {
            client.sessionUpdate(SessionNotification(request.sessionId, update))
        }
        return LoadSessionResponse()
    }

    override suspend fun cancel(notification: CancelNotification) {
        // libacp has already cancelled the session's prompt turn.
        if (!sessions.containsKey(notification.sessionId.value)) {
            log("session/cancel for unknown session ${notification.sessionId}")
        }
    }

    override suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse {
        val session = session(request.sessionId)
        val text = request.prompt.filterIsInstance<ContentBlock.Text>().firstOrNull()?.text ?: ""
        session.history.add(textChunk(user = true, text))
        return PromptResponse(run(request.sessionId, session, text, call))
    }

    /** Runs one prompt command; returns its stop reason. */
    private suspend fun run(sessionId: SessionId, session: Session, command: String, call: IncomingCall): StopReason {
        val client = connection.await()
        suspend fun update(u: SessionUpdate) = client.sessionUpdate(SessionNotification(sessionId, u))
        suspend fun say(text: String) {
            val chunk = textChunk(user = false, text)
            session.history.add(chunk)
            update(chunk)
        }

        val (verb, rest) = partition(command)
        when (verb) {
            "stream" -> {
                val n = rest.toIntOrNull()
                if (n == null || n < 0) throw AcpErrors.rpc(-32602, "Invalid params", JsonPrimitive("stream needs a count, not $rest"))
                for (i in 0 until n) say("chunk $i")
            }
            "permission" -> {
                val toolCallId = ToolCallId("call-${toolCalls.incrementAndGet()}")
                update(SessionUpdate.ToolCall(toolCallId, "Edit file", ToolKind.EDIT, ToolCallStatus.PENDING))
                val outcome = client.requestPermission(
                    RequestPermissionRequest(
                        sessionId,
                        SessionUpdate.ToolCallUpdate(toolCallId),
                        listOf(
                            PermissionOption(PermissionOptionId("allow_once"), "Allow", PermissionOptionKind.ALLOW_ONCE),
                            PermissionOption(PermissionOptionId("reject_once"), "Reject", PermissionOptionKind.REJECT_ONCE),
                        ),
                    ),
                ).outcome
                val chosen = when (outcome) {
                    is RequestPermissionOutcome.Selected -> outcome.optionId.value
                    RequestPermissionOutcome.Cancelled -> "cancelled"
                }
                say("permission: $chosen")
                val allowed = outcome is RequestPermissionOutcome.Selected && chosen.startsWith("allow")
                update(
                    SessionUpdate.ToolCallUpdate(
                        toolCallId,
                        status = if (allowed) ToolCallStatus.COMPLETED else ToolCallStatus.FAILED,
                    ),
                )
                if (outcome == RequestPermissionOutcome.Cancelled) return StopReason.CANCELLED
            }
            "read" -> say(client.readTextFile(ReadTextFileRequest(sessionId, rest.trim())).content)
            "write" -> {
                val (path, content) = partition(rest)
                client.writeTextFile(WriteTextFileRequest(sessionId, path, content))
                say("wrote")
            }
            "terminal" -> {
                val terminalId = client.createTerminal(
                    CreateTerminalRequest(sessionId, "sh", listOf("-c", rest), session.cwd),
                ).terminalId
                try {
                    client.waitForTerminalExit(WaitForTerminalExitRequest(sessionId, terminalId))
                    say(client.terminalOutput(TerminalOutputRequest(sessionId, terminalId)).output)
                } finally {
                    withContext(NonCancellable) { client.releaseTerminal(ReleaseTerminalRequest(sessionId, terminalId)) }
                }
            }
            // Until session/cancel (or $/cancel_request): libacp cancels this
            // coroutine and answers `stopReason: cancelled`.
            "wait" -> awaitCancellation()
            else -> throw AcpErrors.rpc(-32602, "Invalid params", JsonPrimitive("unknown prompt \"$command\""))
        }
        // A session/cancel during the turn makes it `cancelled`.
        return if (call.isCancelled) StopReason.CANCELLED else StopReason.END_TURN
    }
}

fun main() {
    val agent = InteropAgent()
    runBlocking {
        val connection = AgentConnection.serveStdio(agent)
        agent.connection.complete(connection)
        // Until stdin closes and everything was written.
        connection.terminated()
    }
    System.err.flush()
    // Exit now: requests still in flight get no answer.
    Runtime.getRuntime().halt(0)
}
