package dev.libacp

import com.agentclientprotocol.model.AuthenticateRequest
import com.agentclientprotocol.model.AuthenticateResponse
import com.agentclientprotocol.model.CancelNotification
import com.agentclientprotocol.model.CreateTerminalRequest
import com.agentclientprotocol.model.CreateTerminalResponse
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.InitializeResponse
import com.agentclientprotocol.model.KillTerminalCommandRequest
import com.agentclientprotocol.model.KillTerminalCommandResponse
import com.agentclientprotocol.model.LoadSessionRequest
import com.agentclientprotocol.model.LoadSessionResponse
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.NewSessionResponse
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.ReadTextFileRequest
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.ReleaseTerminalRequest
import com.agentclientprotocol.model.ReleaseTerminalResponse
import com.agentclientprotocol.model.RequestPermissionRequest
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SetSessionModeRequest
import com.agentclientprotocol.model.SetSessionModeResponse
import com.agentclientprotocol.model.TerminalOutputRequest
import com.agentclientprotocol.model.TerminalOutputResponse
import com.agentclientprotocol.model.WaitForTerminalExitRequest
import com.agentclientprotocol.model.WaitForTerminalExitResponse
import com.agentclientprotocol.model.WriteTextFileRequest
import com.agentclientprotocol.model.WriteTextFileResponse
import com.agentclientprotocol.rpc.ACPJson
import dev.libacp.models.ArchiveSessionRequest
import dev.libacp.models.ArchiveSessionResponse
import dev.libacp.models.AuthStatusRequest
import dev.libacp.models.AuthStatusResponse
import dev.libacp.models.AuthStatusUpdateNotification
import dev.libacp.models.DisableProviderRequest
import dev.libacp.models.DisableProviderResponse
import dev.libacp.models.ForkSessionRequest
import dev.libacp.models.ForkSessionResponse
import dev.libacp.models.InitializeProxyRequest
import dev.libacp.models.InitializeProxyResponse
import dev.libacp.models.ListProvidersRequest
import dev.libacp.models.ListProvidersResponse
import dev.libacp.models.MessageMcpNotification
import dev.libacp.models.MessageMcpRequest
import dev.libacp.models.MessageMcpResponse
import dev.libacp.models.ProxySuccessorNotification
import dev.libacp.models.ProxySuccessorRequest
import dev.libacp.models.ProxySuccessorResponse
import dev.libacp.models.SessionStatusRequest
import dev.libacp.models.SessionStatusResponse
import dev.libacp.models.SetProviderRequest
import dev.libacp.models.SetProviderResponse
import dev.libacp.models.SetSessionTitleRequest
import dev.libacp.models.SetSessionTitleResponse
import dev.libacp.models.UnarchiveSessionRequest
import dev.libacp.models.UnarchiveSessionResponse
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.Dispatchers
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

// The typed layer: ACP v1 methods with the official Kotlin SDK's models
// (com.agentclientprotocol:acp-model-jvm), encoded and decoded with its
// `ACPJson`, and for the unstable methods, which the SDK does not model,
// the models generated from the schema (dev.libacp.models,
// scripts/kotlin/gen_models.py). Unknown fields are not in the models: a
// handler that needs them reads `IncomingCall.paramsJson`; a call that needs
// to send them uses `AcpConnection.call` (the dynamic API of the same
// connection).

/**
 * Decodes the peer's params (a failure is the `-32602` a handler answers,
 * [AcpErrors.invalidParams]) or a call's result ([AcpException.InvalidResult]).
 */
private fun <T> decode(serializer: KSerializer<T>, text: String?, params: Boolean): T =
    try {
        ACPJson.decodeFromString(serializer, text ?: "null")
    } catch (e: SerializationException) {
        throw if (params) AcpErrors.invalidParams(e.message ?: "params did not decode")
        else AcpException.InvalidResult(e.message ?: "result did not decode")
    } catch (e: IllegalArgumentException) {
        throw if (params) AcpErrors.invalidParams(e.message ?: "params did not decode")
        else AcpException.InvalidResult(e.message ?: "result did not decode")
    }

/** A notification's params decoded, or null when they do not decode. */
private fun <T> decodeOrNull(serializer: KSerializer<T>, text: String?): T? =
    try {
        ACPJson.decodeFromString(serializer, text ?: "null")
    } catch (e: SerializationException) {
        null
    } catch (e: IllegalArgumentException) {
        null
    }

private suspend fun <P, R> AcpConnection.typed(
    method: String,
    params: P,
    ps: KSerializer<P>,
    rs: KSerializer<R>,
): R = decode(rs, callJson(method, ACPJson.encodeToString(ps, params)), params = false)

/** How a request of one method is served: its answer as JSON text, or an [AcpException] thrown. */
internal typealias Route = suspend (IncomingCall) -> String

/** Serves a request by decoding its params with [ps] and encoding the result with [rs]. */
private fun <P, R> route(ps: KSerializer<P>, rs: KSerializer<R>, handle: suspend (P, IncomingCall) -> R): Route =
    { call -> ACPJson.encodeToString(rs, handle(decode(ps, call.paramsJson, params = true), call)) }

/** Serves a request whose params and result stay JSON (a method the SDK's models do not cover). */
private fun jsonRoute(handle: suspend (IncomingCall) -> JsonElement): Route = { call -> handle(call).toString() }

/** How a notification of one method is handled, given its params as JSON text. */
internal typealias NotificationRoute = suspend (String?) -> Unit

private fun parse(params: String?): JsonElement? = params?.let { Json.parseToJsonElement(it) }

/**
 * Hands a notification of [method] to [handle] when its params decode with
 * [ps], else to [ext] whole (a newer peer's shape is not dropped).
 */
private fun <P> notificationRoute(
    method: String,
    ps: KSerializer<P>,
    ext: suspend (String, JsonElement?) -> Unit,
    handle: suspend (P) -> Unit,
): NotificationRoute = { params ->
    val decoded = decodeOrNull(ps, params)
    if (decoded != null) handle(decoded) else ext(method, parse(params))
}

/** [base] with [extra]'s members added, objects merged member by member. */
private fun merge(base: JsonObject, extra: JsonObject): JsonObject = JsonObject(
    base + extra.mapValues { (key, value) ->
        val old = base[key]
        if (old is JsonObject && value is JsonObject) merge(old, value) else value
    },
)

/**
 * The client side's handlers: what an editor answers. Every method has a
 * default that answers `-32601` (or ignores a notification); implement those
 * whose capabilities the client advertises.
 */
interface Client {
    /** `session/request_permission`; cancelled (coroutine) when the turn is cancelled. */
    suspend fun requestPermission(request: RequestPermissionRequest, call: IncomingCall): RequestPermissionResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `fs/read_text_file`. */
    suspend fun readTextFile(request: ReadTextFileRequest, call: IncomingCall): ReadTextFileResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `fs/write_text_file`. */
    suspend fun writeTextFile(request: WriteTextFileRequest, call: IncomingCall): WriteTextFileResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `terminal/create`. */
    suspend fun createTerminal(request: CreateTerminalRequest, call: IncomingCall): CreateTerminalResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `terminal/output`. */
    suspend fun terminalOutput(request: TerminalOutputRequest, call: IncomingCall): TerminalOutputResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `terminal/release`. */
    suspend fun releaseTerminal(request: ReleaseTerminalRequest, call: IncomingCall): ReleaseTerminalResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `terminal/wait_for_exit`. */
    suspend fun waitForTerminalExit(
        request: WaitForTerminalExitRequest,
        call: IncomingCall,
    ): WaitForTerminalExitResponse = throw AcpErrors.methodNotFound(call.method)

    /** `terminal/kill`. */
    suspend fun killTerminal(request: KillTerminalCommandRequest, call: IncomingCall): KillTerminalCommandResponse =
        throw AcpErrors.methodNotFound(call.method)

    /**
     * `elicitation/create` (advertise `elicitation`). The SDK's models have
     * no type for it: the params are [IncomingCall.params], the result JSON.
     */
    suspend fun createElicitation(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `elicitation/complete`, params as JSON (the SDK's models have no type for it). */
    suspend fun elicitationComplete(params: JsonElement?) {}

    /**
     * `mcp/message` to an MCP server this client provides over ACP (unstable:
     * `ConnectOptions(unstable = listOf("mcp_over_acp"))`).
     */
    suspend fun mcpMessage(request: MessageMcpRequest, call: IncomingCall): MessageMcpResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `auth/status_update` (unstable: `ConnectOptions(unstable = listOf("auth_status"))`). */
    suspend fun authStatusUpdate(notification: AuthStatusUpdateNotification) {}

    /**
     * `proxy/successor` from a proxy this client conducts (unstable:
     * `ConnectOptions(unstable = listOf("proxy_chains"))`): a request the
     * proxy forwards to its successor; the answer is the successor's result,
     * unchanged (JSON).
     */
    suspend fun proxySuccessor(request: ProxySuccessorRequest, call: IncomingCall): ProxySuccessorResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `proxy/successor` notifications from a proxy: one it forwards to its successor (`proxy_chains`). */
    suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) {}

    /**
     * `session/update`, in order; a prompt returns only after the updates the
     * agent sent before its answer were handled here. An update the models
     * cannot decode reaches [extNotification] instead (nothing is dropped).
     */
    suspend fun sessionUpdate(notification: SessionNotification) {}

    /** A request of another method (an extension). */
    suspend fun extMethod(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** A notification of another method (an extension), or a `session/update` the models cannot decode. */
    suspend fun extNotification(method: String, params: JsonElement?) {}

    /** A line of the agent's stderr (libacp thread; with `ConnectOptions(stderr = true)`). */
    fun onStderr(line: String) {}
    /** A traced frame, with `ConnectOptions(trace = true)`: see [AcpHandler.onFrame]. */
    fun onFrame(direction: WireDirection, frame: String) {}

    /** An engine event, with `ConnectOptions(events = true)`: see [AcpHandler.onEngineEvent]. */
    fun onEngineEvent(event: EngineEvent) {}
}

/**
 * The agent side's handlers. [initialize], [newSession] and [prompt] are
 * required; the others answer `-32601` unless implemented.
 */
interface Agent {
    /** `initialize`. */
    suspend fun initialize(request: InitializeRequest, call: IncomingCall): InitializeResponse

    /** `authenticate`. */
    suspend fun authenticate(request: AuthenticateRequest, call: IncomingCall): AuthenticateResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `session/new`. */
    suspend fun newSession(request: NewSessionRequest, call: IncomingCall): NewSessionResponse

    /** `session/load` (advertise `loadSession`). */
    suspend fun loadSession(request: LoadSessionRequest, call: IncomingCall): LoadSessionResponse =
        throw AcpErrors.methodNotFound(call.method)

    /**
     * `session/prompt`. A `session/cancel` cancels this coroutine; the turn
     * then answers `stopReason: "cancelled"` whatever it returns.
     */
    suspend fun prompt(request: PromptRequest, call: IncomingCall): PromptResponse

    /** `session/set_mode`. */
    suspend fun setSessionMode(request: SetSessionModeRequest, call: IncomingCall): SetSessionModeResponse =
        throw AcpErrors.methodNotFound(call.method)

    // The methods below have no type in the SDK's models (acp-model-jvm
    // 0.10.5): their params are `call.params` (JSON) and they return the
    // result as JSON. libacp checks both against the schema all the same.

    /** `session/set_config_option`. */
    suspend fun setSessionConfigOption(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `session/list` (advertise `sessionCapabilities.list`). */
    suspend fun listSessions(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `session/resume` (advertise `sessionCapabilities.resume`). */
    suspend fun resumeSession(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `session/close` (advertise `sessionCapabilities.close`; libacp cancels the session's running turn). */
    suspend fun closeSession(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `session/delete` (advertise `sessionCapabilities.delete`). */
    suspend fun deleteSession(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `logout` (advertise `auth.logout`). */
    suspend fun logout(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** `session/cancel` (the prompt's coroutine is already being cancelled). */
    suspend fun cancel(notification: CancelNotification) {}

    /**
     * Members merged into `agentCapabilities` of the [initialize] answer, for
     * the capabilities the SDK's `AgentCapabilities` has no field for
     * (`sessionCapabilities.fork`, `auth.status`, `providers`,
     * `sessionCapabilities.list`, ...), as JSON:
     * `{"sessionCapabilities": {"fork": {}}}`. Objects are merged member by
     * member; `null` (the default) adds nothing.
     */
    val extraCapabilities: JsonObject?
        get() = null

    // The unstable extensions (models: dev.libacp.models). Each needs its
    // feature in `ConnectOptions.unstable` (`listOf("all")` or names such as
    // "session_fork"), or it reaches the handler unchecked, as an extension
    // method does; and its capability in the initialize answer
    // ([extraCapabilities]), or libacp answers `-32601` for it.

    /** `session/fork` (advertise `sessionCapabilities.fork`; `unstable_session_fork`). */
    suspend fun forkSession(request: ForkSessionRequest, call: IncomingCall): ForkSessionResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `session/archive` (advertise `sessionCapabilities.archive`; `unstable_session_archive`). */
    suspend fun archiveSession(request: ArchiveSessionRequest, call: IncomingCall): ArchiveSessionResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `session/unarchive` (advertise `sessionCapabilities.archive`; `unstable_session_archive`). */
    suspend fun unarchiveSession(request: UnarchiveSessionRequest, call: IncomingCall): UnarchiveSessionResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `session/status` (advertise `sessionCapabilities.status`; `unstable_session_status`). */
    suspend fun sessionStatus(request: SessionStatusRequest, call: IncomingCall): SessionStatusResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `session/set_title` (advertise `sessionCapabilities.title`; `unstable_session_set_title`). */
    suspend fun setSessionTitle(request: SetSessionTitleRequest, call: IncomingCall): SetSessionTitleResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `auth/status` (advertise `auth.status`; `unstable_auth_status`). */
    suspend fun authStatus(request: AuthStatusRequest, call: IncomingCall): AuthStatusResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `providers/list` (advertise `providers`; `unstable_llm_providers`). */
    suspend fun listProviders(request: ListProvidersRequest, call: IncomingCall): ListProvidersResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `providers/set` (advertise `providers`; `unstable_llm_providers`). */
    suspend fun setProvider(request: SetProviderRequest, call: IncomingCall): SetProviderResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `providers/disable` (advertise `providers`; `unstable_llm_providers`). */
    suspend fun disableProvider(request: DisableProviderRequest, call: IncomingCall): DisableProviderResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `mcp/message` notifications from the client (`unstable_mcp_over_acp`). */
    suspend fun mcpMessage(notification: MessageMcpNotification) {}

    // A proxy of a proxy chain (`unstable_proxy_chains`): the conductor (its
    // client) initializes it with `proxyInitialize` and delivers its
    // successor's messages with `proxy/successor`; it reaches its successor
    // with `AgentConnection.proxySuccessor`.

    /**
     * `proxy/initialize`: the conductor initializes this agent as a proxy,
     * with the rules of [initialize] (it is this connection's initialize;
     * [extraCapabilities] are merged into the answer as well). Before
     * answering, a proxy forwards an `initialize` to its successor
     * ([AgentConnection.proxySuccessor]). The default answers `-32601`: this
     * agent is not a proxy.
     */
    suspend fun proxyInitialize(request: InitializeProxyRequest, call: IncomingCall): InitializeProxyResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `proxy/successor` from the conductor: a request of this proxy's successor, delivered (`unstable_proxy_chains`). */
    suspend fun proxySuccessor(request: ProxySuccessorRequest, call: IncomingCall): ProxySuccessorResponse =
        throw AcpErrors.methodNotFound(call.method)

    /** `proxy/successor` notifications from the conductor: one of this proxy's successor (`unstable_proxy_chains`). */
    suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) {}

    /** A request of another method (an extension). */
    suspend fun extMethod(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /** A notification of another method (an extension). */
    suspend fun extNotification(method: String, params: JsonElement?) {}
    /** A traced frame, with `ConnectOptions(trace = true)`: see [AcpHandler.onFrame]. */
    fun onFrame(direction: WireDirection, frame: String) {}

    /** An engine event, with `ConnectOptions(events = true)`: see [AcpHandler.onEngineEvent]. */
    fun onEngineEvent(event: EngineEvent) {}
}

/**
 * The typed layer's routing tables: a handler for each method of the
 * protocol that this side handles ([methods] is checked against libacp's
 * own table, `protocolMethods`, by the tests), anything else to the
 * `ext` handlers.
 */
internal abstract class TypedHost : RawHost {
    protected abstract val requests: Map<String, Route>
    protected abstract val notifications: Map<String, NotificationRoute>

    /** The methods routed to a typed handler: requests, then notifications. */
    val methods: Set<MethodRow>
        get() = requests.keys.map { MethodRow(it, notification = false) }.toSet() +
            notifications.keys.map { MethodRow(it, notification = true) }

    protected abstract suspend fun extMethod(call: IncomingCall): JsonElement

    protected abstract suspend fun extNotification(method: String, params: JsonElement?)

    override suspend fun request(call: IncomingCall): String =
        requests[call.method]?.invoke(call) ?: extMethod(call).toString()

    override suspend fun notification(method: String, params: String?) {
        val route = notifications[method]
        if (route != null) route(params) else extNotification(method, parse(params))
    }
}

/** A method as the routing tables and libacp's table (`protocolMethods`) both name it. */
internal data class MethodRow(val name: String, val notification: Boolean)

internal class ClientHost(private val client: Client) : TypedHost() {
    override val requests: Map<String, Route> = mapOf(
        "session/request_permission" to route(RequestPermissionRequest.serializer(), RequestPermissionResponse.serializer(), client::requestPermission),
        "fs/read_text_file" to route(ReadTextFileRequest.serializer(), ReadTextFileResponse.serializer(), client::readTextFile),
        "fs/write_text_file" to route(WriteTextFileRequest.serializer(), WriteTextFileResponse.serializer(), client::writeTextFile),
        "terminal/create" to route(CreateTerminalRequest.serializer(), CreateTerminalResponse.serializer(), client::createTerminal),
        "terminal/output" to route(TerminalOutputRequest.serializer(), TerminalOutputResponse.serializer(), client::terminalOutput),
        "terminal/release" to route(ReleaseTerminalRequest.serializer(), ReleaseTerminalResponse.serializer(), client::releaseTerminal),
        "terminal/wait_for_exit" to route(WaitForTerminalExitRequest.serializer(), WaitForTerminalExitResponse.serializer(), client::waitForTerminalExit),
        "terminal/kill" to route(KillTerminalCommandRequest.serializer(), KillTerminalCommandResponse.serializer(), client::killTerminal),
        "elicitation/create" to jsonRoute(client::createElicitation),
        "mcp/message" to route(MessageMcpRequest.serializer(), MessageMcpResponse.serializer(), client::mcpMessage),
        "proxy/successor" to route(ProxySuccessorRequest.serializer(), JsonElement.serializer(), client::proxySuccessor),
    )

    override val notifications: Map<String, NotificationRoute> = mapOf(
        "session/update" to ::sessionUpdate,
        "elicitation/complete" to { params -> client.elicitationComplete(parse(params)) },
        "auth/status_update" to
            notificationRoute("auth/status_update", AuthStatusUpdateNotification.serializer(), client::extNotification, client::authStatusUpdate),
        "proxy/successor" to notificationRoute(
            "proxy/successor",
            ProxySuccessorNotification.serializer(),
            client::extNotification,
            client::proxySuccessorNotification,
        ),
    )

    private suspend fun sessionUpdate(params: String?) {
        // An update the models cannot decode (a variant from a newer
        // protocol, say) goes to extNotification whole, not dropped.
        val update = decodeOrNull(SessionNotification.serializer(), params)
        if (update != null) client.sessionUpdate(update) else client.extNotification("session/update", parse(params))
    }

    override suspend fun extMethod(call: IncomingCall) = client.extMethod(call)

    override suspend fun extNotification(method: String, params: JsonElement?) = client.extNotification(method, params)

    override fun stderr(line: String) = client.onStderr(line)

    override fun frame(direction: WireDirection, frame: String) = client.onFrame(direction, frame)

    override fun engineEvent(event: EngineEvent) = client.onEngineEvent(event)
}

internal class AgentHost(private val agent: Agent) : TypedHost() {
    override val requests: Map<String, Route> = mapOf(
        "initialize" to { call -> initialize(call, agent::initialize) },
        "authenticate" to route(AuthenticateRequest.serializer(), AuthenticateResponse.serializer(), agent::authenticate),
        "session/new" to route(NewSessionRequest.serializer(), NewSessionResponse.serializer(), agent::newSession),
        "session/load" to route(LoadSessionRequest.serializer(), LoadSessionResponse.serializer(), agent::loadSession),
        "session/prompt" to route(PromptRequest.serializer(), PromptResponse.serializer(), agent::prompt),
        "session/set_mode" to route(SetSessionModeRequest.serializer(), SetSessionModeResponse.serializer(), agent::setSessionMode),
        "session/set_config_option" to jsonRoute(agent::setSessionConfigOption),
        "session/list" to jsonRoute(agent::listSessions),
        "session/resume" to jsonRoute(agent::resumeSession),
        "session/close" to jsonRoute(agent::closeSession),
        "session/delete" to jsonRoute(agent::deleteSession),
        "logout" to jsonRoute(agent::logout),
        "session/fork" to route(ForkSessionRequest.serializer(), ForkSessionResponse.serializer(), agent::forkSession),
        "session/archive" to route(ArchiveSessionRequest.serializer(), ArchiveSessionResponse.serializer(), agent::archiveSession),
        "session/unarchive" to
            route(UnarchiveSessionRequest.serializer(), UnarchiveSessionResponse.serializer(), agent::unarchiveSession),
        "session/status" to route(SessionStatusRequest.serializer(), SessionStatusResponse.serializer(), agent::sessionStatus),
        "session/set_title" to
            route(SetSessionTitleRequest.serializer(), SetSessionTitleResponse.serializer(), agent::setSessionTitle),
        "auth/status" to route(AuthStatusRequest.serializer(), AuthStatusResponse.serializer(), agent::authStatus),
        "providers/list" to route(ListProvidersRequest.serializer(), ListProvidersResponse.serializer(), agent::listProviders),
        "providers/set" to route(SetProviderRequest.serializer(), SetProviderResponse.serializer(), agent::setProvider),
        "providers/disable" to
            route(DisableProviderRequest.serializer(), DisableProviderResponse.serializer(), agent::disableProvider),
        "proxy/initialize" to { call -> initialize(call, agent::proxyInitialize) },
        "proxy/successor" to route(ProxySuccessorRequest.serializer(), JsonElement.serializer(), agent::proxySuccessor),
    )

    override val notifications: Map<String, NotificationRoute> = mapOf(
        "session/cancel" to { params -> agent.cancel(decode(CancelNotification.serializer(), params, params = true)) },
        "mcp/message" to
            notificationRoute("mcp/message", MessageMcpNotification.serializer(), agent::extNotification, agent::mcpMessage),
        "proxy/successor" to notificationRoute(
            "proxy/successor",
            ProxySuccessorNotification.serializer(),
            agent::extNotification,
            agent::proxySuccessorNotification,
        ),
    )

    /**
     * `initialize` or `proxy/initialize` (the same params and answer): the
     * agent's typed answer from [handle], with [Agent.extraCapabilities] merged in.
     */
    private suspend fun initialize(
        call: IncomingCall,
        handle: suspend (InitializeRequest, IncomingCall) -> InitializeResponse,
    ): String {
        val answer = handle(decode(InitializeRequest.serializer(), call.paramsJson, params = true), call)
        val json = ACPJson.encodeToJsonElement(InitializeResponse.serializer(), answer)
        val extra = agent.extraCapabilities ?: return json.toString()
        val obj = json as JsonObject
        val caps = obj["agentCapabilities"] as? JsonObject ?: JsonObject(emptyMap())
        return JsonObject(obj + ("agentCapabilities" to merge(caps, extra))).toString()
    }

    override suspend fun extMethod(call: IncomingCall) = agent.extMethod(call)

    override suspend fun extNotification(method: String, params: JsonElement?) = agent.extNotification(method, params)

    override fun stderr(line: String) {}

    override fun frame(direction: WireDirection, frame: String) = agent.onFrame(direction, frame)

    override fun engineEvent(event: EngineEvent) = agent.onEngineEvent(event)
}

/**
 * The client side with typed ACP methods. [connection] is the same
 * connection's dynamic API (extensions, capabilities, closing).
 */
class ClientConnection private constructor(val connection: AcpConnection) : AutoCloseable {
    companion object {
        /** Spawns the agent [command]; [client] answers what it asks. */
        fun spawn(
            command: AgentCommand,
            client: Client,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ) = ClientConnection(AcpConnection.open(ClientHost(client), context) { Connection.spawn(command, it, options) })

        /** Over descriptors the caller gives up (see [AcpConnection.fromFds]). */
        fun fromFds(
            readFd: Int,
            writeFd: Int,
            client: Client,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ) = ClientConnection(
            AcpConnection.open(ClientHost(client), context) {
                Connection.fromFds(AcpRole.CLIENT, readFd, writeFd, it, options)
            },
        )

        /**
         * Connects to the remote agent at [url] (`ws://`, `wss://`: WebSocket;
         * `http://`, `https://`: Streamable HTTP); [client] answers what it
         * asks. See [AcpConnection.connect] for the options and errors.
         */
        suspend fun connect(
            url: String,
            client: Client,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ) = ClientConnection(AcpConnection.connect(url, ClientHost(client), options, context))
    }

    /** `initialize`. */
    suspend fun initialize(request: InitializeRequest): InitializeResponse =
        connection.typed("initialize", request, InitializeRequest.serializer(), InitializeResponse.serializer())

    /** `authenticate`. */
    suspend fun authenticate(request: AuthenticateRequest): AuthenticateResponse =
        connection.typed("authenticate", request, AuthenticateRequest.serializer(), AuthenticateResponse.serializer())

    /** `session/new`. */
    suspend fun newSession(request: NewSessionRequest): NewSessionResponse =
        connection.typed("session/new", request, NewSessionRequest.serializer(), NewSessionResponse.serializer())

    /** `session/load` (refused unless the agent advertised `loadSession`). */
    suspend fun loadSession(request: LoadSessionRequest): LoadSessionResponse =
        connection.typed("session/load", request, LoadSessionRequest.serializer(), LoadSessionResponse.serializer())

    /** `session/prompt`: returns after every update the agent sent before its answer was handled. */
    suspend fun prompt(request: PromptRequest): PromptResponse =
        connection.typed("session/prompt", request, PromptRequest.serializer(), PromptResponse.serializer())

    /** `session/set_mode`. */
    suspend fun setSessionMode(request: SetSessionModeRequest): SetSessionModeResponse =
        connection.typed("session/set_mode", request, SetSessionModeRequest.serializer(), SetSessionModeResponse.serializer())

    /** `session/cancel`: the turn ends `cancelled`; pending permission requests are answered `cancelled`. */
    suspend fun cancel(sessionId: String) = connection.cancelSession(sessionId)

    // The unstable extensions: each needs its feature in
    // `ConnectOptions.unstable` (`listOf("all")` or names such as
    // "session_fork"); without it the method is an extension to libacp, sent
    // unchecked. With it, a call the agent did not advertise is refused.

    /** `session/fork` (needs `sessionCapabilities.fork`): the answer's session is open on this connection. */
    suspend fun forkSession(request: ForkSessionRequest): ForkSessionResponse =
        connection.typed("session/fork", request, ForkSessionRequest.serializer(), ForkSessionResponse.serializer())

    /** `session/archive` (needs `sessionCapabilities.archive`): the session it names is closed here. */
    suspend fun archiveSession(request: ArchiveSessionRequest): ArchiveSessionResponse =
        connection.typed("session/archive", request, ArchiveSessionRequest.serializer(), ArchiveSessionResponse.serializer())

    /** `session/unarchive` (needs `sessionCapabilities.archive`). */
    suspend fun unarchiveSession(request: UnarchiveSessionRequest): UnarchiveSessionResponse =
        connection.typed(
            "session/unarchive",
            request,
            UnarchiveSessionRequest.serializer(),
            UnarchiveSessionResponse.serializer(),
        )

    /** `session/status` (needs `sessionCapabilities.status`). */
    suspend fun sessionStatus(request: SessionStatusRequest): SessionStatusResponse =
        connection.typed("session/status", request, SessionStatusRequest.serializer(), SessionStatusResponse.serializer())

    /** `session/set_title` (needs `sessionCapabilities.title`). */
    suspend fun setSessionTitle(request: SetSessionTitleRequest): SetSessionTitleResponse =
        connection.typed("session/set_title", request, SetSessionTitleRequest.serializer(), SetSessionTitleResponse.serializer())

    /** `auth/status` (needs `auth.status`). */
    suspend fun authStatus(request: AuthStatusRequest): AuthStatusResponse =
        connection.typed("auth/status", request, AuthStatusRequest.serializer(), AuthStatusResponse.serializer())

    /** `providers/list` (needs `providers`). */
    suspend fun listProviders(request: ListProvidersRequest): ListProvidersResponse =
        connection.typed("providers/list", request, ListProvidersRequest.serializer(), ListProvidersResponse.serializer())

    /** `providers/set` (needs `providers`). */
    suspend fun setProvider(request: SetProviderRequest): SetProviderResponse =
        connection.typed("providers/set", request, SetProviderRequest.serializer(), SetProviderResponse.serializer())

    /** `providers/disable` (needs `providers`). */
    suspend fun disableProvider(request: DisableProviderRequest): DisableProviderResponse =
        connection.typed("providers/disable", request, DisableProviderRequest.serializer(), DisableProviderResponse.serializer())

    /** `mcp/message` to an MCP server the agent provides over ACP (a notification): returns once queued. */
    suspend fun mcpMessage(notification: MessageMcpNotification) =
        connection.notifyJson("mcp/message", ACPJson.encodeToString(MessageMcpNotification.serializer(), notification))

    // A proxy chain's conductor (`proxy_chains`): this client initializes
    // the agent it reaches as a proxy and delivers its successor's messages.

    /**
     * `proxy/initialize`: initializes the agent as a proxy, with the rules of
     * [initialize] (it is this connection's initialize).
     */
    suspend fun proxyInitialize(request: InitializeProxyRequest): InitializeProxyResponse =
        connection.typed("proxy/initialize", request, InitializeRequest.serializer(), InitializeResponse.serializer())

    /** `proxy/successor`: delivers a request of the proxy's successor; the answer is the proxy's result for it (JSON). */
    suspend fun proxySuccessor(request: ProxySuccessorRequest): ProxySuccessorResponse =
        connection.typed("proxy/successor", request, ProxySuccessorRequest.serializer(), JsonElement.serializer())

    /** `proxy/successor`: delivers a notification of the proxy's successor; returns once queued. */
    suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) =
        connection.notifyJson("proxy/successor", ACPJson.encodeToString(ProxySuccessorNotification.serializer(), notification))

    /** Closes and waits for the agent to be gone. */
    suspend fun shutdown() = connection.shutdown()

    override fun close() = connection.close()
}

/**
 * The agent side with typed ACP methods toward the client. [connection] is
 * the same connection's dynamic API.
 */
class AgentConnection internal constructor(val connection: AcpConnection) : AutoCloseable {
    companion object {
        /** Serves [agent] on this process's stdin/stdout. */
        fun serveStdio(
            agent: Agent,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ) = AgentConnection(AcpConnection.open(AgentHost(agent), context) { Connection.serveStdio(it, options) })

        /** Over descriptors the caller gives up (see [AcpConnection.fromFds]). */
        fun fromFds(
            readFd: Int,
            writeFd: Int,
            agent: Agent,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ) = AgentConnection(
            AcpConnection.open(AgentHost(agent), context) {
                Connection.fromFds(AcpRole.AGENT, readFd, writeFd, it, options)
            },
        )
    }

    /** `session/update`: returns once queued for the client. */
    suspend fun sessionUpdate(notification: SessionNotification) =
        connection.notifyJson("session/update", ACPJson.encodeToString(SessionNotification.serializer(), notification))

    /** `session/request_permission`. */
    suspend fun requestPermission(request: RequestPermissionRequest): RequestPermissionResponse =
        connection.typed(
            "session/request_permission",
            request,
            RequestPermissionRequest.serializer(),
            RequestPermissionResponse.serializer(),
        )

    /** `fs/read_text_file` (refused unless the client advertised it). */
    suspend fun readTextFile(request: ReadTextFileRequest): ReadTextFileResponse =
        connection.typed("fs/read_text_file", request, ReadTextFileRequest.serializer(), ReadTextFileResponse.serializer())

    /** `fs/write_text_file` (refused unless the client advertised it). */
    suspend fun writeTextFile(request: WriteTextFileRequest): WriteTextFileResponse =
        connection.typed("fs/write_text_file", request, WriteTextFileRequest.serializer(), WriteTextFileResponse.serializer())

    /** `terminal/create` (refused unless the client advertised `terminal`). */
    suspend fun createTerminal(request: CreateTerminalRequest): CreateTerminalResponse =
        connection.typed("terminal/create", request, CreateTerminalRequest.serializer(), CreateTerminalResponse.serializer())

    /** `terminal/output`. */
    suspend fun terminalOutput(request: TerminalOutputRequest): TerminalOutputResponse =
        connection.typed("terminal/output", request, TerminalOutputRequest.serializer(), TerminalOutputResponse.serializer())

    /** `terminal/release`. */
    suspend fun releaseTerminal(request: ReleaseTerminalRequest): ReleaseTerminalResponse =
        connection.typed("terminal/release", request, ReleaseTerminalRequest.serializer(), ReleaseTerminalResponse.serializer())

    /** `terminal/wait_for_exit`. */
    suspend fun waitForTerminalExit(request: WaitForTerminalExitRequest): WaitForTerminalExitResponse =
        connection.typed(
            "terminal/wait_for_exit",
            request,
            WaitForTerminalExitRequest.serializer(),
            WaitForTerminalExitResponse.serializer(),
        )

    /** `terminal/kill`. */
    suspend fun killTerminal(request: KillTerminalCommandRequest): KillTerminalCommandResponse =
        connection.typed("terminal/kill", request, KillTerminalCommandRequest.serializer(), KillTerminalCommandResponse.serializer())

    /** `auth/status_update` (unstable: `unstable_auth_status`): returns once queued for the client. */
    suspend fun authStatusUpdate(notification: AuthStatusUpdateNotification) =
        connection.notifyJson(
            "auth/status_update",
            ACPJson.encodeToString(AuthStatusUpdateNotification.serializer(), notification),
        )

    /** `mcp/message` to an MCP server the client provides over ACP (unstable: `unstable_mcp_over_acp`). */
    suspend fun mcpMessage(request: MessageMcpRequest): MessageMcpResponse =
        connection.typed("mcp/message", request, MessageMcpRequest.serializer(), MessageMcpResponse.serializer())

    /**
     * `proxy/successor` (this agent a proxy; unstable: `unstable_proxy_chains`):
     * forwards a request to its successor through the conductor; the answer
     * is the successor's result, unchanged (JSON).
     */
    suspend fun proxySuccessor(request: ProxySuccessorRequest): ProxySuccessorResponse =
        connection.typed("proxy/successor", request, ProxySuccessorRequest.serializer(), JsonElement.serializer())

    /** `proxy/successor`: forwards a notification to this proxy's successor; returns once queued. */
    suspend fun proxySuccessorNotification(notification: ProxySuccessorNotification) =
        connection.notifyJson("proxy/successor", ACPJson.encodeToString(ProxySuccessorNotification.serializer(), notification))

    /** Waits until the client closes the connection and everything was written. */
    suspend fun terminated() = connection.terminated()

    override fun close() = connection.close()
}
