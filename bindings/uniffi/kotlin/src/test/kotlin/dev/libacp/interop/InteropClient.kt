// An ACP client on libacp's Kotlin binding (typed API) that runs the check
// sequence of tests/interop/README.md ("Client: the scripted check
// sequence", as tests/interop/ts/client.mjs and
// bindings/node/test/peers/interop-client.mjs do) against any agent:
//
//   java -cp <the binding's test classpath> dev.libacp.interop.InteropClientKt -- AGENT_COMMAND [ARGS...]
//
// initialize (fs and terminal advertised), session/new, prompts `stream 50`
// (the 50 chunks in order, all handled before the prompt returns),
// `permission` (answered by this client: allow_once), `read TMP/a.txt` and
// `write TMP/b.txt hi` (fs/* answered by this client's handlers, the write
// really done), `terminal echo hi` (terminal/* run by this client: create,
// wait_for_exit, output, release), `wait` + `cancel` (stopReason cancelled),
// session/load of the session (the whole history replayed before the load
// returns), then close (stdin closed: the agent must exit 0 within 5 s).
//
// Wire order: the Node client taps the wire with the binding's trace; the
// Kotlin binding has no trace hook, so this client checks SDK delivery
// order instead: every session/update must have reached the `sessionUpdate`
// handler, in order, before the call it came with (prompt, load) returns —
// libacp's ordering barrier promises that for every update the agent wrote
// before its answer — and none may arrive between that call's return and
// the next call. Without a tap, an update written right behind the answer
// can still be handled before the caller resumes, and then counts as
// before it.
//
// Prints exactly one line, `OK` (exit 0) or `FAIL: <reason>` (exit 1). Gives
// up after 30 s and kills the agent's process group (libacp spawns the agent
// in its own group). The agent's stderr is passed through to ours.
@file:OptIn(kotlinx.coroutines.ExperimentalCoroutinesApi::class)

package dev.libacp.interop

import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.CreateTerminalRequest
import com.agentclientprotocol.model.CreateTerminalResponse
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.KillTerminalCommandRequest
import com.agentclientprotocol.model.KillTerminalCommandResponse
import com.agentclientprotocol.model.LoadSessionRequest
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileRequest
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.ReleaseTerminalRequest
import com.agentclientprotocol.model.ReleaseTerminalResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionRequest
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.TerminalExitStatus
import com.agentclientprotocol.model.TerminalOutputRequest
import com.agentclientprotocol.model.TerminalOutputResponse
import com.agentclientprotocol.model.WaitForTerminalExitRequest
import com.agentclientprotocol.model.WaitForTerminalExitResponse
import com.agentclientprotocol.model.WriteTextFileRequest
import com.agentclientprotocol.model.WriteTextFileResponse
import com.agentclientprotocol.rpc.ACPJson
import dev.libacp.AcpErrors
import dev.libacp.AcpException
import dev.libacp.AgentCommand
import dev.libacp.Client
import dev.libacp.ClientConnection
import dev.libacp.ConnectOptions
import dev.libacp.IncomingCall
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.FileDescriptor
import java.io.FileOutputStream
import java.io.IOException
import java.io.PrintStream
import java.nio.file.Files
import java.util.Collections
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread
import kotlin.time.Duration.Companion.milliseconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject

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

/** A decoded update as the JSON it stands for. */
private fun json(update: SessionUpdate): JsonObject =
    ACPJson.encodeToJsonElement(SessionUpdate.serializer(), update).jsonObject

private fun kindOf(update: JsonObject): String? = update["sessionUpdate"].str()

/** The text of an update's text content, else null. */
private fun textOf(update: JsonObject): String? {
    val content = update["content"] as? JsonObject ?: return null
    return if (content["type"].str() == "text") content["text"].str() else null
}

private fun describe(update: JsonObject): String {
    val text = textOf(update)
    return "${kindOf(update)}${if (text == null) "" else " ${show(text)}"}"
}

private class Recorded(val method: String, val params: JsonObject) {
    override fun toString() = "[${show(method)},$params]"
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

/** The client's handlers: record what they are asked, answer as a real client would. */
private class InteropClient(private val workDir: String) : Client {
    private val updates: MutableList<Pair<String, SessionUpdate>> = Collections.synchronizedList(mutableListOf())
    private val requests: MutableList<Recorded> = Collections.synchronizedList(mutableListOf())
    private val terminals = ConcurrentHashMap<String, Terminal>()
    private val nextTerminal = AtomicInteger()

    fun takeUpdates(): List<Pair<String, SessionUpdate>> = synchronized(updates) { updates.toList().also { updates.clear() } }

    fun takeRequests(): List<Recorded> = synchronized(requests) { requests.toList().also { requests.clear() } }

    override suspend fun sessionUpdate(notification: SessionNotification) {
        updates.add(notification.sessionId.value to notification.update)
    }

    override suspend fun requestPermission(request: RequestPermissionRequest, call: IncomingCall): RequestPermissionResponse {
        requests.add(Recorded(call.method, ACPJson.encodeToJsonElement(RequestPermissionRequest.serializer(), request).jsonObject))
        val option = request.options.firstOrNull { it.kind == PermissionOptionKind.ALLOW_ONCE }
            ?: return RequestPermissionResponse(RequestPermissionOutcome.Cancelled)
        return RequestPermissionResponse(RequestPermissionOutcome.Selected(option.optionId))
    }

    override suspend fun readTextFile(request: ReadTextFileRequest, call: IncomingCall): ReadTextFileResponse {
        requests.add(Recorded(call.method, ACPJson.encodeToJsonElement(ReadTextFileRequest.serializer(), request).jsonObject))
        return ReadTextFileResponse(FILE_CONTENT)
    }

    override suspend fun writeTextFile(request: WriteTextFileRequest, call: IncomingCall): WriteTextFileResponse {
        requests.add(Recorded(call.method, ACPJson.encodeToJsonElement(WriteTextFileRequest.serializer(), request).jsonObject))
        withContext(Dispatchers.IO) { File(request.path).writeText(request.content) }
        return WriteTextFileResponse()
    }

    override suspend fun createTerminal(request: CreateTerminalRequest, call: IncomingCall): CreateTerminalResponse {
        requests.add(Recorded(call.method, ACPJson.encodeToJsonElement(CreateTerminalRequest.serializer(), request).jsonObject))
        val builder = ProcessBuilder(listOf(request.command) + request.args)
            .directory(File(request.cwd ?: workDir))
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(File("/dev/null")))
        for (variable in request.env) builder.environment()[variable.name] = variable.value
        val terminal = try {
            Terminal(withContext(Dispatchers.IO) { builder.start() }, request.outputByteLimit?.toLong(), null)
        } catch (e: IOException) {
            Terminal(null, null, e.toString())
        }
        val terminalId = "term-${nextTerminal.getAndIncrement()}"
        terminals[terminalId] = terminal
        return CreateTerminalResponse(terminalId)
    }

    override suspend fun terminalOutput(request: TerminalOutputRequest, call: IncomingCall): TerminalOutputResponse {
        val terminal = terminal(call, request.terminalId, ACPJson.encodeToJsonElement(TerminalOutputRequest.serializer(), request))
        return TerminalOutputResponse(
            terminal.output(),
            terminal.truncated,
            terminal.exitCode()?.let { TerminalExitStatus(exitCode = it.toUInt()) },
        )
    }

    override suspend fun waitForTerminalExit(request: WaitForTerminalExitRequest, call: IncomingCall): WaitForTerminalExitResponse {
        val terminal = terminal(call, request.terminalId, ACPJson.encodeToJsonElement(WaitForTerminalExitRequest.serializer(), request))
        return WaitForTerminalExitResponse(exitCode = terminal.exit.await().toUInt())
    }

    override suspend fun killTerminal(request: KillTerminalCommandRequest, call: IncomingCall): KillTerminalCommandResponse {
        terminal(call, request.terminalId, ACPJson.encodeToJsonElement(KillTerminalCommandRequest.serializer(), request)).kill()
        return KillTerminalCommandResponse()
    }

    override suspend fun releaseTerminal(request: ReleaseTerminalRequest, call: IncomingCall): ReleaseTerminalResponse {
        terminal(call, request.terminalId, ACPJson.encodeToJsonElement(ReleaseTerminalRequest.serializer(), request)).kill()
        terminals.remove(request.terminalId)
        return ReleaseTerminalResponse()
    }

    /** Records a terminal request and returns the terminal it names. */
    private fun terminal(call: IncomingCall, terminalId: String, params: JsonElement): Terminal {
        requests.add(Recorded(call.method, params.jsonObject))
        return terminals[terminalId]
            ?: throw AcpErrors.rpc(-32602, "Invalid params", JsonPrimitive("unknown terminal $terminalId"))
    }

    fun killAll() = terminals.values.forEach { it.kill() }
}

private class Turn(val result: PromptResponse, val seen: List<JsonObject>, val requests: List<Recorded>)

/** The session the checks run in: sends prompts and collects what came with them. */
private class Turns(val agent: ClientConnection, val client: InteropClient, val sessionId: String) {
    /** What session/load must replay. */
    val history = mutableListOf<Pair<String?, String?>>()

    /** The last call made through [prompt] or [load]. */
    private var last: String? = null

    /**
     * Fails if updates came in since the last call returned (after its
     * response); before the first call, drops them (an agent may send
     * updates after session/new).
     */
    fun checkNoLateUpdates() {
        val late = client.takeUpdates()
        val after = last ?: return
        expect(late.isEmpty()) {
            "${late.size} session/update notifications arrived after the response of $after: " +
                show(late.map { describe(json(it.second)) })
        }
    }

    /**
     * Sends one prompt; returns its result, the updates handled before it
     * returned (libacp's ordering barrier: all of them) and the client
     * requests the agent made meanwhile.
     */
    suspend fun prompt(text: String): Turn {
        checkNoLateUpdates()
        history.add("user_message_chunk" to text)
        val result = agent.prompt(PromptRequest(SessionId(sessionId), listOf(ContentBlock.Text(text))))
        last = "the prompt ${show(text)}"
        val seen = mutableListOf<JsonObject>()
        for ((sid, update) in client.takeUpdates()) {
            expect(sid == sessionId) {
                "prompt ${show(text)}: update for session ${show(sid)}, expected ${show(sessionId)}"
            }
            val u = json(update)
            if (kindOf(u) == "agent_message_chunk" && textOf(u) != null) history.add("agent_message_chunk" to textOf(u))
            seen.add(u)
        }
        return Turn(result, seen, client.takeRequests())
    }

    /** session/load of the session; returns the updates handled before it returned. */
    suspend fun load(workDir: String): List<Pair<String, SessionUpdate>> {
        checkNoLateUpdates()
        agent.loadSession(LoadSessionRequest(SessionId(sessionId), workDir, emptyList()))
        last = "session/load"
        return client.takeUpdates()
    }
}

private fun chunkTexts(seen: List<JsonObject>) = seen.filter { kindOf(it) == "agent_message_chunk" }.map { textOf(it) }

/** 1. Streaming: every update handled before the prompt returns. */
private suspend fun checkStream(turns: Turns) {
    val turn = turns.prompt("stream $STREAM_COUNT")
    expect(turn.result.stopReason == StopReason.END_TURN) { "stream: stopReason ${turn.result.stopReason}" }
    val got = turn.seen.map { if (kindOf(it) == "agent_message_chunk") textOf(it) else describe(it) }
    val expected = (0 until STREAM_COUNT).map { "chunk $it" }
    expect(got == expected) {
        "stream: before the response saw ${got.size} updates, expected $STREAM_COUNT chunks in order; " +
            "first: ${show(got.take(3))}, last: ${show(got.takeLast(3))}"
    }
}

/** 2. Permission round trip: tool_call, request_permission, chunk, tool_call_update. */
private suspend fun checkPermission(turns: Turns) {
    val turn = turns.prompt("permission")
    expect(turn.result.stopReason == StopReason.END_TURN) { "permission: stopReason ${turn.result.stopReason}" }
    val methods = turn.requests.map { it.method }
    expect(methods == listOf("session/request_permission")) {
        "permission: expected one session/request_permission, got ${show(methods)}"
    }
    val request = turn.requests[0].params
    expect(request["sessionId"].str() == turns.sessionId) { "permission: request for session ${request["sessionId"]}" }
    val options = (request["options"] as JsonArray).map { it.jsonObject }
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
    val requestedId = (request["toolCall"] as JsonObject)["toolCallId"].str()
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

/** 3. fs/read_text_file answered by this client. */
private suspend fun checkRead(turns: Turns, workDir: String) {
    val file = File(workDir, "a.txt").path
    val turn = turns.prompt("read $file")
    expect(turn.result.stopReason == StopReason.END_TURN) { "read: stopReason ${turn.result.stopReason}" }
    val r = turn.requests
    expect(
        r.size == 1 && r[0].method == "fs/read_text_file" && r[0].params["path"].str() == file &&
            r[0].params["sessionId"].str() == turns.sessionId,
    ) { "read: expected one fs/read_text_file of $file, got ${show(r.map { it.toString() })}" }
    expect(chunkTexts(turn.seen) == listOf(FILE_CONTENT) && turn.seen.size == 1) {
        "read: expected the one chunk ${show(FILE_CONTENT)}, saw ${show(turn.seen.map { describe(it) })}"
    }
}

/** 4. fs/write_text_file, really written by this client. */
private suspend fun checkWrite(turns: Turns, workDir: String) {
    val file = File(workDir, "b.txt").path
    val turn = turns.prompt("write $file hi")
    expect(turn.result.stopReason == StopReason.END_TURN) { "write: stopReason ${turn.result.stopReason}" }
    val r = turn.requests
    expect(
        r.size == 1 && r[0].method == "fs/write_text_file" && r[0].params["path"].str() == file &&
            r[0].params["content"].str() == "hi" && r[0].params["sessionId"].str() == turns.sessionId,
    ) { "write: expected one fs/write_text_file of $file with \"hi\", got ${show(r.map { it.toString() })}" }
    expect(File(file).let { it.exists() && it.readText() == "hi" }) { "write: the file does not hold what was written" }
    expect(chunkTexts(turn.seen) == listOf("wrote") && turn.seen.size == 1) {
        "write: expected the one chunk \"wrote\", saw ${show(turn.seen.map { describe(it) })}"
    }
}

/** 5. The terminal requests, run by this client. */
private suspend fun checkTerminal(turns: Turns) {
    val turn = turns.prompt("terminal echo hi")
    expect(turn.result.stopReason == StopReason.END_TURN) { "terminal: stopReason ${turn.result.stopReason}" }
    val calls = turn.requests.map { it.method }
    expect(calls == listOf("terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release")) {
        "terminal: expected create, wait_for_exit, output, release; got ${show(calls)}"
    }
    val create = turn.requests[0].params
    expect(create["command"].str() == "sh" && create["args"] == JsonArray(listOf(JsonPrimitive("-c"), JsonPrimitive("echo hi")))) {
        "terminal: created ${show(create)}"
    }
    val ids = turn.requests.drop(1).map { it.params["terminalId"].str() }.toSet()
    expect(ids.size == 1) { "terminal: requests named terminals ${show(ids.toList())}" }
    expect(chunkTexts(turn.seen) == listOf("hi\n") && turn.seen.size == 1) {
        "terminal: expected the one chunk \"hi\\n\", saw ${show(turn.seen.map { describe(it) })}"
    }
}

/** 6. session/cancel during a turn. */
private suspend fun checkCancel(turns: Turns) = coroutineScope {
    val pending = async { turns.prompt("wait") }
    delay(CANCEL_AFTER_MS)
    expect(!pending.isCompleted) { "wait: the prompt was answered before session/cancel was sent" }
    turns.agent.cancel(turns.sessionId)
    val turn = pending.await()
    expect(turn.result.stopReason == StopReason.CANCELLED) {
        "wait: after session/cancel, stopReason ${turn.result.stopReason}"
    }
}

/** 7. session/load replays the history before it returns. */
private suspend fun checkLoad(turns: Turns, workDir: String) {
    val replayed = turns.load(workDir)
    expect(replayed.all { it.first == turns.sessionId }) { "load: replayed updates for another session" }
    val got = replayed.map { (_, u) -> json(u).let { kindOf(it) to textOf(it) } }
    val history = turns.history
    if (got != history) {
        val at = (0 until maxOf(got.size, history.size)).first { got.getOrNull(it) != history.getOrNull(it) }
        fun entry(e: Pair<String?, String?>?) =
            e?.let { "{\"sessionUpdate\":${show(it.first)},\"text\":${show(it.second)}}" } ?: "null"
        throw CheckFailure(
            "load: before the response saw ${got.size} replayed updates, expected ${history.size}; " +
                "first difference at $at: got ${entry(got.getOrNull(at))}, expected ${entry(history.getOrNull(at))}",
        )
    }
}

/** The check sequence, from initialize to session/load. */
private suspend fun drive(agent: ClientConnection, client: InteropClient, workDir: String) {
    val init = agent.initialize(
        InitializeRequest(
            protocolVersion = 1,
            clientCapabilities = ClientCapabilities(
                fs = FileSystemCapability(readTextFile = true, writeTextFile = true),
                terminal = true,
            ),
            clientInfo = Implementation("libacp-kotlin-interop-client", "0.0.0"),
        ),
    )
    expect(init.protocolVersion == 1) { "initialize answered protocolVersion ${init.protocolVersion}" }
    expect(init.agentCapabilities.loadSession) {
        "initialize answered agentCapabilities ${init.agentCapabilities}; loadSession true is needed"
    }

    val created = agent.newSession(NewSessionRequest(workDir, emptyList()))
    val sessionId = created.sessionId.value
    expect(sessionId.isNotEmpty()) { "session/new answered $created" }

    val turns = Turns(agent, client, sessionId)
    checkStream(turns)
    checkPermission(turns)
    checkRead(turns, workDir)
    checkWrite(turns, workDir)
    checkTerminal(turns)
    checkCancel(turns)
    checkLoad(turns, workDir)
    turns.checkNoLateUpdates()
}

/** A failure as one readable reason. */
private fun explain(e: Throwable): String = when (e) {
    is CheckFailure -> e.message ?: "check failed"
    is AcpException.Rpc -> "agent answered error ${e.code} ${show(e.detail)}${if (e.data == null) "" else " data ${e.data}"}"
    is AcpException -> "${e::class.simpleName}: ${e.message}"
    is TimeoutCancellationException -> "no result within ${DEADLINE_MS / 1000} s"
    else -> "${e::class.simpleName}: ${e.message}"
}

/** What is left after a failure: the client's terminals, the agent's process group. */
private class Leftovers {
    @Volatile
    var client: InteropClient? = null

    @Volatile
    var agent: ClientConnection? = null

    fun cleanUp() {
        client?.killAll()
        val agent = agent ?: return
        // libacp spawned the agent in its own process group: SIGKILL to all of it.
        if (agent.connection.exitStatus == null) agent.connection.killNow()
        agent.close()
    }
}

/**
 * Starts the agent, runs the sequence, then closes the agent's stdin: it must
 * exit 0 within the grace period (shutdown() sends SIGTERM after it).
 */
private suspend fun run(argv: List<String>, workDir: String, left: Leftovers) {
    val client = InteropClient(workDir)
    left.client = client
    val agent = try {
        ClientConnection.spawn(
            AgentCommand(argv[0], argv.drop(1)),
            client,
            ConnectOptions(graceAfterStdinCloseMs = EXIT_GRACE_MS.toULong(), graceAfterSigtermMs = 1_000u),
        )
    } catch (e: AcpException.Spawn) {
        throw CheckFailure("cannot start agent ${show(argv[0])}: ${e.detail}")
    }
    left.agent = agent
    try {
        drive(agent, client, workDir)
    } catch (e: Exception) {
        // The connection closed under the sequence: say why.
        val reason = agent.connection.closeReason
        if (reason == null || e is CheckFailure || e is TimeoutCancellationException) throw e
        val status = withTimeoutOrNull(1_000) { agent.connection.waitExit() }
        val exit = status?.let { " (agent exited: code ${it.code}, signal ${it.signal})" } ?: ""
        throw CheckFailure("the connection closed ($reason)$exit: ${explain(e)}")
    }

    withTimeoutOrNull((EXIT_GRACE_MS * 2).milliseconds) { agent.shutdown() }
        ?: throw CheckFailure("agent still running ${EXIT_GRACE_MS / 1000} s after close")
    val status = agent.connection.exitStatus ?: agent.connection.waitExit()
    expect(status != null) { "no exit status for the agent" }
    expect(status!!.signal == null) {
        "agent still running ${EXIT_GRACE_MS / 1000} s after its stdin was closed (ended by signal ${status.signal})"
    }
    expect(status.code == 0) { "agent exited with code ${status.code} after its stdin was closed" }
    agent.close()
}

fun main(args: Array<String>) {
    // stdout carries the one result line only.
    val stdout = PrintStream(FileOutputStream(FileDescriptor.out), true)
    System.setOut(PrintStream(FileOutputStream(FileDescriptor.err), true))
    val argv = args.toList().let { if (it.firstOrNull() == "--") it.drop(1) else it }
    if (argv.isEmpty()) {
        stdout.println("FAIL: usage: InteropClientKt -- AGENT_COMMAND [ARGS...]")
        Runtime.getRuntime().halt(1)
    }
    val workDir = Files.createTempDirectory("acp-interop-libacp-kotlin-").toRealPath().toFile()
    val left = Leftovers()
    val done = Any()
    var printed = false

    /** Prints the one result line and exits, once; does not wait for lingering threads. */
    fun finish(failure: String?) {
        synchronized(done) {
            if (printed) return
            printed = true
            if (failure != null) runCatching { left.cleanUp() }
            left.client?.killAll()
            workDir.deleteRecursively()
            stdout.println(if (failure == null) "OK" else "FAIL: ${failure.replace(Regex("\\s+"), " ").trim()}")
            stdout.flush()
            System.err.flush()
            Runtime.getRuntime().halt(if (failure == null) 0 else 1)
        }
    }

    // A last resort if a blocking call ignores the coroutine deadline.
    thread(isDaemon = true, name = "deadline") {
        Thread.sleep(DEADLINE_MS + 5_000)
        finish("no result within ${DEADLINE_MS / 1000} s")
    }
    val failure = try {
        runBlocking { withTimeout(DEADLINE_MS) { run(argv, workDir.path, left) } }
        null
    } catch (e: Throwable) {
        explain(e)
    }
    finish(failure)
}
