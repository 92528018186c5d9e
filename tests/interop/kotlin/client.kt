@file:OptIn(kotlinx.coroutines.ExperimentalCoroutinesApi::class)

// An ACP v1 client built only on the official Kotlin SDK
// (`com.agentclientprotocol:acp-jvm` 0.10.5).
//
//   java -cp target/classes:$(cat target/classpath.txt) interop.client.ClientKt -- AGENT_COMMAND [ARGS...]
//
// Spawns the agent (in its own process group, through `setsid`) and runs the
// scripted check sequence described in ../README.md against it: initialize,
// session/new, prompts `stream 50`, `permission`, `read`, `write`,
// `terminal`, `wait` + session/cancel, then session/load of the session.
// Finally closes the agent's stdin and expects it to exit 0.
//
// Prints exactly `OK` and exits 0, or `FAIL: <reason>` and exits 1. Gives up
// after 30 s. The agent's stderr is passed through to ours.
package interop.client

import com.agentclientprotocol.client.Client
import com.agentclientprotocol.client.ClientInfo
import com.agentclientprotocol.client.ClientOperationsFactory
import com.agentclientprotocol.client.ClientSession
import com.agentclientprotocol.common.ClientSessionOperations
import com.agentclientprotocol.common.Event
import com.agentclientprotocol.common.SessionCreationParameters
import com.agentclientprotocol.model.AcpCreatedSessionResponse
import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.CreateTerminalResponse
import com.agentclientprotocol.model.EnvVariable
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.KillTerminalCommandResponse
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.ReleaseTerminalResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.TerminalExitStatus
import com.agentclientprotocol.model.TerminalOutputResponse
import com.agentclientprotocol.model.WaitForTerminalExitResponse
import com.agentclientprotocol.model.WriteTextFileResponse
import com.agentclientprotocol.protocol.AcpExpectedError
import com.agentclientprotocol.protocol.JsonRpcException
import com.agentclientprotocol.protocol.Protocol
import com.agentclientprotocol.protocol.ProtocolOptions
import com.agentclientprotocol.rpc.ACPJson
import com.agentclientprotocol.rpc.JsonRpcErrorCode
import com.agentclientprotocol.rpc.JsonRpcMessage
import com.agentclientprotocol.rpc.JsonRpcNotification
import com.agentclientprotocol.rpc.JsonRpcRequest
import com.agentclientprotocol.rpc.JsonRpcResponse
import com.agentclientprotocol.rpc.RequestId
import com.agentclientprotocol.transport.StdioTransport
import com.agentclientprotocol.transport.Transport
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.FileDescriptor
import java.io.FileOutputStream
import java.io.IOException
import java.io.PrintStream
import java.nio.file.Files
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.future.await
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.put

private const val NAME = "interop-kotlin-client"
private const val DEADLINE_MS = 30_000L
private const val EXIT_GRACE_MS = 5_000L
private const val STREAM_COUNT = 50
private const val FILE_CONTENT = "hello from client"
private const val CANCEL_AFTER_MS = 100L

private class CheckFailure(message: String) : Exception(message)

private inline fun expect(condition: Boolean, message: () -> String) {
    if (!condition) throw CheckFailure(message())
}

/** A value as JSON text for a message. */
private fun show(value: Any?): String = when (value) {
    null -> "null"
    is JsonElement -> value.toString()
    is String -> JsonPrimitive(value).toString()
    is Number, is Boolean -> value.toString()
    is Collection<*> -> value.joinToString(",", "[", "]") { show(it) }
    else -> JsonPrimitive(value.toString()).toString()
}

private fun JsonElement?.str(): String? = (this as? JsonPrimitive)?.takeIf { it.isString }?.contentOrNull

/** The text of an update's text content, else null. */
private fun textOf(update: JsonObject): String? {
    val content = update["content"] as? JsonObject ?: return null
    return if (content["type"].str() == "text") content["text"].str() else null
}

private fun kindOf(update: JsonObject): String? = update["sessionUpdate"].str()

private fun describe(update: JsonObject): String {
    val text = textOf(update)
    return "${kindOf(update)}${if (text == null) "" else " ${show(text)}"}"
}

/** A decoded update as the JSON it stands for (the SDK's own encoding). */
private fun json(update: SessionUpdate): JsonObject =
    ACPJson.encodeToJsonElement(SessionUpdate.serializer(), update).jsonObject

/** What must survive the SDK's decoding: session, kind, text, tool call id and status. */
private fun summary(sessionId: String?, update: JsonObject): List<String?> =
    listOf(sessionId, describe(update), update["toolCallId"].str(), update["status"].str())

// ---------------------------------------------------------------------------
// What was seen, twice over:
// * `wire`: every message as it came off the agent's stdout, in wire order,
//   recorded by a listener registered on the SDK's StdioTransport before the
//   SDK's own (it runs first, on the reading thread). The ordering checks
//   ("all updates before the response") use it.
// * `delivered` / `requests`: what the SDK handed to this client (the
//   prompt flow's SessionUpdateEvents and ClientSessionOperations.notify).
//   Each update on the wire must also reach them, in order.

private sealed class Wire {
    class Update(val sessionId: String?, val update: JsonObject) : Wire()
    class Response(val id: RequestId) : Wire()
}

/** The SDK's transport with a tap: incoming messages in wire order, the ids of outgoing requests. */
private class TappedTransport(private val inner: Transport) : Transport by inner {
    val wire: MutableList<Wire> = Collections.synchronizedList(mutableListOf())
    val sentIds = ConcurrentHashMap<String, RequestId>()

    init {
        inner.onMessage { message -> record(message) }
    }

    private fun record(message: JsonRpcMessage) {
        when (message) {
            is JsonRpcNotification -> if (message.method.name == "session/update") {
                val params = message.params as? JsonObject ?: JsonObject(emptyMap())
                wire.add(Wire.Update(params["sessionId"].str(), params["update"] as? JsonObject ?: JsonObject(emptyMap())))
            }
            is JsonRpcResponse -> wire.add(Wire.Response(message.id))
            is JsonRpcRequest -> {}
        }
    }

    override fun send(message: JsonRpcMessage) {
        if (message is JsonRpcRequest) sentIds[message.method.name] = message.id
        inner.send(message)
    }
}

private class Request(val method: String, val sessionId: String, val params: JsonObject) {
    override fun toString() = "{\"method\":${show(method)},\"params\":$params}"
}

/** A command run for the agent: its merged output and how it ended. */
private class Terminal(private val process: Process?, private val limit: Long?, failure: String?) {
    private val buffer = ByteArrayOutputStream()
    var truncated = false
        private set
    val exit = CompletableDeferred<Int>()

    init {
        if (process == null) {
            buffer.write((failure ?: "").toByteArray())
            exit.complete(127)
        } else {
            thread(isDaemon = true, name = "terminal-output") {
                val chunk = ByteArray(8192)
                val input = process.inputStream
                while (true) {
                    val n = try {
                        input.read(chunk)
                    } catch (e: IOException) {
                        -1
                    }
                    if (n < 0) break
                    append(chunk, n)
                }
                // Exit status after the output is drained.
                exit.complete(process.waitFor())
            }
        }
    }

    @Synchronized
    private fun append(chunk: ByteArray, n: Int) {
        buffer.write(chunk, 0, n)
        if (limit != null && buffer.size() > limit) {
            val all = buffer.toByteArray()
            buffer.reset()
            buffer.write(all, all.size - limit.toInt(), limit.toInt())
            truncated = true
        }
    }

    @Synchronized
    fun output(): String = buffer.toString(Charsets.UTF_8)

    /** Java reports a signal death as exit code 128 + signal; it is passed on as the code. */
    fun exitCode(): Int? = if (exit.isCompleted) exit.getCompleted() else null

    fun kill() {
        if (!exit.isCompleted) process?.destroyForcibly()
    }
}

/** Everything the handlers record, shared by the sessions' operations. */
private class State(val workDir: String) {
    val delivered: MutableList<Pair<String, SessionUpdate>> = Collections.synchronizedList(mutableListOf())
    val requests: MutableList<Request> = Collections.synchronizedList(mutableListOf())
    val terminals = ConcurrentHashMap<String, Terminal>()
    private val nextTerminal = AtomicInteger()

    fun takeRequests(): List<Request> = synchronized(requests) { requests.toList().also { requests.clear() } }

    fun newTerminalId() = "term-${nextTerminal.getAndIncrement()}"

    fun killAll() = terminals.values.forEach { it.kill() }
}

/** The client's handlers for one session: record what they are asked, answer as a real client would. */
private class Operations(private val sessionId: String, private val state: State) : ClientSessionOperations {
    override suspend fun notify(notification: SessionUpdate, _meta: JsonElement?) {
        state.delivered.add(sessionId to notification)
    }

    override suspend fun requestPermissions(
        toolCall: SessionUpdate.ToolCallUpdate,
        permissions: List<PermissionOption>,
        _meta: JsonElement?,
    ): RequestPermissionResponse {
        state.requests.add(
            Request(
                "session/request_permission",
                sessionId,
                buildJsonObject {
                    put("sessionId", sessionId)
                    put("toolCall", ACPJson.encodeToJsonElement(SessionUpdate.ToolCallUpdate.serializer(), toolCall))
                    put("options", JsonArray(permissions.map { ACPJson.encodeToJsonElement(PermissionOption.serializer(), it) }))
                },
            ),
        )
        val option = permissions.firstOrNull { it.kind == PermissionOptionKind.ALLOW_ONCE }
            ?: return RequestPermissionResponse(RequestPermissionOutcome.Cancelled)
        return RequestPermissionResponse(RequestPermissionOutcome.Selected(option.optionId))
    }

    override suspend fun fsReadTextFile(path: String, line: UInt?, limit: UInt?, _meta: JsonElement?): ReadTextFileResponse {
        state.requests.add(Request("fs/read_text_file", sessionId, buildJsonObject { put("sessionId", sessionId); put("path", path) }))
        return ReadTextFileResponse(FILE_CONTENT)
    }

    override suspend fun fsWriteTextFile(path: String, content: String, _meta: JsonElement?): WriteTextFileResponse {
        state.requests.add(
            Request(
                "fs/write_text_file",
                sessionId,
                buildJsonObject { put("sessionId", sessionId); put("path", path); put("content", content) },
            ),
        )
        withContext(Dispatchers.IO) { File(path).writeText(content) }
        return WriteTextFileResponse()
    }

    override suspend fun terminalCreate(
        command: String,
        args: List<String>,
        cwd: String?,
        env: List<EnvVariable>,
        outputByteLimit: ULong?,
        _meta: JsonElement?,
    ): CreateTerminalResponse {
        state.requests.add(
            Request(
                "terminal/create",
                sessionId,
                buildJsonObject {
                    put("sessionId", sessionId)
                    put("command", command)
                    put("args", JsonArray(args.map { JsonPrimitive(it) }))
                    put("cwd", cwd?.let { JsonPrimitive(it) } ?: JsonNull)
                },
            ),
        )
        val builder = ProcessBuilder(listOf(command) + args)
            .directory(File(cwd ?: state.workDir))
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(File("/dev/null")))
        for (variable in env) builder.environment()[variable.name] = variable.value
        val terminal = try {
            Terminal(withContext(Dispatchers.IO) { builder.start() }, outputByteLimit?.toLong(), null)
        } catch (e: IOException) {
            Terminal(null, null, e.toString())
        }
        val id = state.newTerminalId()
        state.terminals[id] = terminal
        return CreateTerminalResponse(id)
    }

    override suspend fun terminalOutput(terminalId: String, _meta: JsonElement?): TerminalOutputResponse {
        val terminal = terminal("terminal/output", terminalId)
        val code = terminal.exitCode()
        return TerminalOutputResponse(
            terminal.output(),
            terminal.truncated,
            code?.let { TerminalExitStatus(exitCode = it.toUInt()) },
        )
    }

    override suspend fun terminalWaitForExit(terminalId: String, _meta: JsonElement?): WaitForTerminalExitResponse {
        val code = terminal("terminal/wait_for_exit", terminalId).exit.await()
        return WaitForTerminalExitResponse(exitCode = code.toUInt())
    }

    override suspend fun terminalKill(terminalId: String, _meta: JsonElement?): KillTerminalCommandResponse {
        terminal("terminal/kill", terminalId).kill()
        return KillTerminalCommandResponse()
    }

    override suspend fun terminalRelease(terminalId: String, _meta: JsonElement?): ReleaseTerminalResponse {
        terminal("terminal/release", terminalId).kill()
        state.terminals.remove(terminalId)
        return ReleaseTerminalResponse()
    }

    /** Records a terminal request and returns the terminal it names. */
    private fun terminal(method: String, terminalId: String): Terminal {
        state.requests.add(
            Request(method, sessionId, buildJsonObject { put("sessionId", sessionId); put("terminalId", terminalId) }),
        )
        return state.terminals[terminalId]
            ?: throw JsonRpcException(JsonRpcErrorCode.INVALID_PARAMS.code, "unknown terminal $terminalId")
    }
}

private class Turn(val response: PromptResponse, val seen: List<JsonObject>, val requests: List<Request>)

/** The check sequence's session: sends requests and checks what came with them. */
private class Checks(
    private val client: Client,
    private val tap: TappedTransport,
    private val state: State,
) {
    val factory = object : ClientOperationsFactory {
        override suspend fun createClientOperations(
            sessionId: SessionId,
            sessionResponse: AcpCreatedSessionResponse,
        ): ClientSessionOperations = Operations(sessionId.value, state)
    }

    /** What a session/load must replay, built from what was seen. */
    val history = mutableListOf<Pair<String, String?>>()

    /** The last call: its method, the wire index and the delivered count after its response. */
    private var last: Triple<String, Int, Int>? = null

    /** Fails if session/update notifications came (on the wire or to the handlers) after the last call's response. */
    fun checkNoLateUpdates() {
        val (method, wireEnd, consumed) = last ?: return
        val late = synchronized(tap.wire) { tap.wire.drop(wireEnd).filterIsInstance<Wire.Update>() }
        expect(late.isEmpty()) {
            "$method: ${late.size} session/update notifications arrived after the response: " +
                show(late.map { describe(it.update) })
        }
        val delivered = synchronized(state.delivered) { state.delivered.drop(consumed) }
        expect(delivered.isEmpty()) {
            "$method: ${delivered.size} session/update notifications reached the handlers after the response: " +
                show(delivered.map { describe(json(it.second)) })
        }
    }

    /**
     * Runs [block], which sends one [method] request; returns its result with
     * the session/update notifications that preceded its response on the
     * wire (checked to have reached this client's handlers too, in the same
     * order, and none after).
     */
    suspend fun <T> call(method: String, block: suspend () -> T): Pair<T, List<Wire.Update>> {
        checkNoLateUpdates()
        val start = tap.wire.size
        val handled = state.delivered.size
        val result = try {
            block()
        } catch (e: CancellationException) {
            if (!currentCoroutineContext().isActive) throw e
            // The SDK turns an error -32800 answer into a CancellationException.
            val cause = e.cause
            throw CheckFailure(
                "$method: answered with a cancellation" +
                    if (cause is JsonRpcException) " (error ${cause.code} ${show(cause.message)})" else " (${e.message})",
            )
        }
        val id = tap.sentIds[method]
        val wire = synchronized(tap.wire) { tap.wire.toList() }
        val end = (start until wire.size).firstOrNull { (wire[it] as? Wire.Response)?.id == id }
        expect(end != null) { "$method: response not found on the wire" }
        val before = wire.subList(start, end!!).filterIsInstance<Wire.Update>()
        val delivered = synchronized(state.delivered) { state.delivered.drop(handled) }
        val wireSummaries = before.map { summary(it.sessionId, it.update) }
        val deliveredSummaries = delivered.map { (sid, u) -> summary(sid, json(u)) }
        expect(deliveredSummaries.take(before.size) == wireSummaries) {
            "$method: the session/update handler got ${delivered.size} updates, the wire carried ${before.size} " +
                "before the response; handler: ${show(deliveredSummaries.take(5).map { it[1] })}, " +
                "wire: ${show(wireSummaries.take(5).map { it[1] })}"
        }
        expect(delivered.size == before.size) {
            "$method: ${delivered.size - before.size} session/update notifications arrived after the response: " +
                show(delivered.drop(before.size).map { describe(json(it.second)) })
        }
        last = Triple(method, end + 1, handled + delivered.size)
        return result to before
    }

    /** Sends a one-text-block prompt; returns the response and what arrived before it. */
    suspend fun prompt(session: ClientSession, text: String): Turn {
        val sessionId = session.sessionId.value
        history.add("user_message_chunk" to text)
        val (response, seen) = call("session/prompt") {
            var response: PromptResponse? = null
            session.prompt(listOf(ContentBlock.Text(text))).collect { event ->
                when (event) {
                    is Event.SessionUpdateEvent -> state.delivered.add(sessionId to event.update)
                    is Event.PromptResponseEvent -> response = event.response
                }
            }
            response ?: throw CheckFailure("prompt ${show(text)}: the SDK's flow ended without a response")
        }
        for (w in seen) {
            expect(w.sessionId == sessionId) {
                "prompt ${show(text)}: update for session ${show(w.sessionId)}, expected ${show(sessionId)}"
            }
            if (kindOf(w.update) == "agent_message_chunk" && textOf(w.update) != null) {
                history.add("agent_message_chunk" to textOf(w.update))
            }
        }
        return Turn(response, seen.map { it.update }, state.takeRequests())
    }
}

private fun chunkTexts(seen: List<JsonObject>) = seen.filter { kindOf(it) == "agent_message_chunk" }.map { textOf(it) }

/** The scripted check sequence. */
private suspend fun drive(client: Client, tap: TappedTransport, state: State) {
    val workDir = state.workDir
    val info = client.initialize(
        ClientInfo(
            protocolVersion = 1,
            capabilities = ClientCapabilities(
                fs = FileSystemCapability(readTextFile = true, writeTextFile = true),
                terminal = true,
            ),
            implementation = Implementation(NAME, "0.0.0"),
        ),
    )
    expect(info.protocolVersion == 1) { "initialize answered protocolVersion ${info.protocolVersion}" }
    expect(info.capabilities.loadSession) {
        "initialize answered agentCapabilities ${ACPJson.encodeToString(com.agentclientprotocol.model.AgentCapabilities.serializer(), info.capabilities)}; loadSession true is needed"
    }

    val checks = Checks(client, tap, state)
    val session = client.newSession(SessionCreationParameters(workDir, emptyList()), checks.factory)
    val sessionId = session.sessionId.value
    expect(sessionId.isNotEmpty()) { "session/new answered sessionId ${show(sessionId)}" }

    // 1. Streaming: every update is handled before the prompt's response.
    run {
        val turn = checks.prompt(session, "stream $STREAM_COUNT")
        expect(turn.response.stopReason == StopReason.END_TURN) { "stream: stopReason ${turn.response.stopReason}" }
        val expected = (0 until STREAM_COUNT).map { "chunk $it" }
        val got = turn.seen.map { if (kindOf(it) == "agent_message_chunk") textOf(it) else describe(it) }
        expect(got == expected) {
            "stream: before the response saw ${got.size} updates, expected $STREAM_COUNT chunks in order; " +
                "first: ${show(got.take(3))}, last: ${show(got.takeLast(3))}"
        }
    }

    // 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update.
    run {
        val turn = checks.prompt(session, "permission")
        expect(turn.response.stopReason == StopReason.END_TURN) { "permission: stopReason ${turn.response.stopReason}" }
        val reqs = turn.requests
        expect(reqs.size == 1 && reqs[0].method == "session/request_permission") {
            "permission: expected one session/request_permission, got ${show(reqs.map { it.method })}"
        }
        val req = reqs[0]
        expect(req.sessionId == sessionId) { "permission: request for session ${show(req.sessionId)}" }
        val options = (req.params["options"] as JsonArray).map { it.jsonObject }
        val allow = options.firstOrNull { it["kind"].str() == "allow_once" }
        expect(allow != null && options.any { it["kind"].str() == "reject_once" }) { "permission: options ${show(options)}" }
        val seen = turn.seen
        expect(seen.size == 3) {
            "permission: expected tool_call, chunk, tool_call_update; saw ${show(seen.map { describe(it) })}"
        }
        val (toolCall, chunk, toolCallUpdate) = seen
        expect(
            kindOf(toolCall) == "tool_call" &&
                (toolCall["status"].str() ?: "pending") == "pending" &&
                toolCall["kind"].str() == "edit" &&
                toolCall["title"].str() == "Edit file",
        ) { "permission: first update $toolCall" }
        val requestedId = (req.params["toolCall"] as JsonObject)["toolCallId"].str()
        expect(requestedId == toolCall["toolCallId"].str()) {
            "permission: request is about tool call ${show(requestedId)}, not ${show(toolCall["toolCallId"].str())}"
        }
        val optionId = allow!!["optionId"].str()
        expect(kindOf(chunk) == "agent_message_chunk" && textOf(chunk) == "permission: $optionId") {
            "permission: expected chunk \"permission: $optionId\", saw ${describe(chunk)}"
        }
        expect(
            kindOf(toolCallUpdate) == "tool_call_update" &&
                toolCallUpdate["toolCallId"].str() == toolCall["toolCallId"].str() &&
                toolCallUpdate["status"].str() == "completed",
        ) { "permission: last update $toolCallUpdate" }
    }

    // 3. fs/read_text_file served by our handler.
    run {
        val path = File(workDir, "a.txt").path
        val turn = checks.prompt(session, "read $path")
        expect(turn.response.stopReason == StopReason.END_TURN) { "read: stopReason ${turn.response.stopReason}" }
        val reqs = turn.requests
        expect(
            reqs.size == 1 && reqs[0].method == "fs/read_text_file" && reqs[0].params["path"].str() == path &&
                reqs[0].sessionId == sessionId,
        ) { "read: expected one fs/read_text_file of $path, got ${show(reqs.map { it.toString() })}" }
        expect(chunkTexts(turn.seen) == listOf(FILE_CONTENT) && turn.seen.size == 1) {
            "read: expected the one chunk ${show(FILE_CONTENT)}, saw ${show(turn.seen.map { describe(it) })}"
        }
    }

    // 4. fs/write_text_file, really written.
    run {
        val path = File(workDir, "b.txt").path
        val turn = checks.prompt(session, "write $path hi")
        expect(turn.response.stopReason == StopReason.END_TURN) { "write: stopReason ${turn.response.stopReason}" }
        val reqs = turn.requests
        expect(
            reqs.size == 1 && reqs[0].method == "fs/write_text_file" && reqs[0].params["path"].str() == path &&
                reqs[0].params["content"].str() == "hi" && reqs[0].sessionId == sessionId,
        ) { "write: expected one fs/write_text_file of $path with \"hi\", got ${show(reqs.map { it.toString() })}" }
        expect(File(path).let { it.exists() && it.readText() == "hi" }) { "write: the file does not hold what was written" }
        expect(chunkTexts(turn.seen) == listOf("wrote") && turn.seen.size == 1) {
            "write: expected the one chunk \"wrote\", saw ${show(turn.seen.map { describe(it) })}"
        }
    }

    // 5. terminal/* really run by us.
    run {
        val turn = checks.prompt(session, "terminal echo hi")
        expect(turn.response.stopReason == StopReason.END_TURN) { "terminal: stopReason ${turn.response.stopReason}" }
        val reqs = turn.requests
        val calls = reqs.map { it.method }
        expect(calls == listOf("terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release")) {
            "terminal: expected create, wait_for_exit, output, release; got ${show(calls)}"
        }
        val create = reqs[0].params
        expect(create["command"].str() == "sh" && create["args"] == JsonArray(listOf(JsonPrimitive("-c"), JsonPrimitive("echo hi")))) {
            "terminal: created ${show(create)}"
        }
        val ids = reqs.drop(1).map { it.params["terminalId"].str() }.toSet()
        expect(ids.size == 1) { "terminal: requests named terminals ${show(ids.toList())}" }
        expect(chunkTexts(turn.seen) == listOf("hi\n") && turn.seen.size == 1) {
            "terminal: expected the one chunk \"hi\\n\", saw ${show(turn.seen.map { describe(it) })}"
        }
    }

    // 6. session/cancel during a prompt turn.
    coroutineScope {
        val pending = async { checks.prompt(session, "wait") }
        delay(CANCEL_AFTER_MS)
        expect(!pending.isCompleted) { "wait: the prompt was answered before session/cancel was sent" }
        session.cancel()
        val turn = pending.await()
        expect(turn.response.stopReason == StopReason.CANCELLED) {
            "wait: after session/cancel, stopReason ${turn.response.stopReason}"
        }
    }

    // 7. session/load replays the history before answering. The SDK hands
    // the replayed updates to the operations of the session already open
    // under that id (its `notify`), then opens a new ClientSession.
    run {
        val (_, seen) = checks.call("session/load") {
            client.loadSession(session.sessionId, SessionCreationParameters(workDir, emptyList()), checks.factory)
        }
        expect(seen.all { it.sessionId == sessionId }) { "load: replayed updates for another session" }
        val got = seen.map { kindOf(it.update) to textOf(it.update) }
        val history = checks.history
        if (got != history) {
            val at = (0 until maxOf(got.size, history.size)).first { got.getOrNull(it) != history.getOrNull(it) }
            fun entry(e: Pair<String?, String?>?) = e?.let { "{\"sessionUpdate\":${show(it.first)},\"text\":${show(it.second)}}" } ?: "null"
            throw CheckFailure(
                "load: before the response saw ${got.size} replayed updates, expected ${history.size}; " +
                    "first difference at $at: got ${entry(got.getOrNull(at))}, expected ${entry(history.getOrNull(at))}",
            )
        }
        checks.checkNoLateUpdates()
    }
}

/** A failure as one readable reason. */
private fun explain(e: Throwable): String = when (e) {
    is CheckFailure -> e.message ?: "check failed"
    is JsonRpcException ->
        "agent answered error ${e.code} ${show(e.message)}${if (e.data == null) "" else " data ${e.data}"}"
    // The SDK turns an error -32602 answer into AcpExpectedError, keeping only its message.
    is AcpExpectedError -> "agent answered error -32602 ${show(e.message)}"
    // ... and an error -32700 answer (or a result it cannot decode) into a SerializationException.
    is SerializationException -> "SerializationException: ${e.message}"
    else -> "${e::class.simpleName}: ${e.message}"
}

private object Run {
    @Volatile
    var agent: Process? = null

    @Volatile
    var state: State? = null

    @Volatile
    var workDir: File? = null
    private var finished = false
    private val stdout = PrintStream(FileOutputStream(FileDescriptor.out), true)

    /** Prints the one result line, cleans up and exits (once). */
    @Synchronized
    fun finish(failure: String?): Nothing {
        if (!finished) {
            finished = true
            state?.killAll()
            val process = agent
            if (process != null && process.isAlive) killGroup(process.pid())
            workDir?.deleteRecursively()
            if (failure == null) stdout.println("OK") else stdout.println("FAIL: ${failure.replace(Regex("\\s+"), " ").trim()}")
            stdout.flush()
            System.err.flush()
            // Do not wait for lingering threads (a stuck agent, open pipes).
            Runtime.getRuntime().halt(if (failure == null) 0 else 1)
        }
        throw IllegalStateException("unreachable")
    }

    /** SIGKILL to the agent's process group (its pid: `setsid` made it the leader). */
    private fun killGroup(pid: Long) {
        try {
            ProcessBuilder("kill", "-KILL", "--", "-$pid").redirectErrorStream(true).start().waitFor(2, TimeUnit.SECONDS)
        } catch (e: IOException) {
            // no kill(1): the agent alone
        }
        ProcessHandle.of(pid).ifPresent { it.destroyForcibly() }
    }
}

/** `setsid PROGRAM ARGS...` when setsid(1) is there: the agent leads its own process group. */
private fun agentCommand(argv: List<String>): List<String> {
    val setsid = System.getenv("PATH").orEmpty().split(File.pathSeparator)
        .map { File(it, "setsid") }.firstOrNull { it.canExecute() }
    return if (setsid == null) argv else listOf(setsid.path) + argv
}

private suspend fun run(argv: List<String>, state: State) {
    val process = try {
        ProcessBuilder(agentCommand(argv)).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    } catch (e: IOException) {
        throw CheckFailure("cannot start agent ${show(argv[0])}: ${e.message}")
    }
    Run.agent = process
    // Its own scope: the SDK's coroutines are not children of runBlocking.
    val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    val transport = TappedTransport(
        StdioTransport(
            scope,
            Dispatchers.IO,
            process.inputStream.asSource().buffered(),
            process.outputStream.asSink().buffered(),
            NAME,
        ),
    )
    val protocol = Protocol(scope, transport, ProtocolOptions(protocolDebugName = NAME))
    val client = Client(protocol)
    protocol.start()
    coroutineScope {
        // The SDK does not fail pending requests when the agent dies: say so.
        val gone = launch {
            val exited = process.onExit().await()
            throw CheckFailure("agent exited early (code ${exited.exitValue()})")
        }
        try {
            drive(client, transport, state)
        } finally {
            gone.cancel()
        }
    }

    // The agent must exit 0 once its stdin is closed.
    withContext(Dispatchers.IO) { process.outputStream.close() }
    val exited = withContext(Dispatchers.IO) { process.waitFor(EXIT_GRACE_MS, TimeUnit.MILLISECONDS) }
    expect(exited) { "agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed" }
    expect(process.exitValue() == 0) { "agent exited with code ${process.exitValue()} after its stdin was closed" }
    protocol.close()
}

fun main(args: Array<String>) {
    // stdout carries the one result line only.
    System.setOut(PrintStream(FileOutputStream(FileDescriptor.err), true))
    val argv = args.toList().let { if (it.firstOrNull() == "--") it.drop(1) else it }
    if (argv.isEmpty()) Run.finish("usage: interop.client.ClientKt -- AGENT_COMMAND [ARGS...]")
    thread(isDaemon = true, name = "deadline") {
        Thread.sleep(DEADLINE_MS)
        Run.finish("no result within ${DEADLINE_MS / 1000} s")
    }
    val workDir = Files.createTempDirectory("acp-interop-kotlin-").toRealPath().toFile()
    Run.workDir = workDir
    val state = State(workDir.path)
    Run.state = state
    val failure = try {
        runBlocking { run(argv, state) }
        null
    } catch (e: Throwable) {
        explain(e)
    }
    Run.finish(failure)
}
