package dev.libacp

import kotlin.coroutines.CoroutineContext
import kotlin.time.Duration
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject

/**
 * What a host implements for the dynamic API: requests and notifications by
 * method name, with JSON params. The defaults answer `-32601` and ignore
 * notifications.
 */
interface AcpHandler {
    /** Answers a request with its result, or throws [AcpException]. */
    suspend fun onRequest(call: IncomingCall): JsonElement = throw AcpErrors.methodNotFound(call.method)

    /**
     * Handles a notification; the next message from the peer waits until it
     * returns (so notifications are seen in order, and before the answers
     * that follow them).
     */
    suspend fun onNotification(method: String, params: JsonElement?) {}

    /**
     * A line of the spawned agent's stderr (with
     * `ConnectOptions(stderr = true)`). Called on a libacp thread: do not block.
     */
    fun onStderr(line: String) {}

    /**
     * A frame as read ([WireDirection.INCOMING]) or written
     * ([WireDirection.OUTGOING]), with `ConnectOptions(trace = true)`. Called
     * on a libacp thread, one at a time, in wire order with the handlers:
     * after the notifications received before it were handled, before the
     * answer that follows it completes its call (`orderedHooks = false`: at
     * once, possibly after that answer). Keep it quick; do not wait on the
     * connection from it.
     */
    fun onFrame(direction: WireDirection, frame: String) {}

    /**
     * What the engine reports (a frame skipped, a response to no request, a
     * request the core served...), with `ConnectOptions(events = true)`.
     * Called like [onFrame], in the same order.
     */
    fun onEngineEvent(event: EngineEvent) {}
}

internal class DynamicHost(private val handler: AcpHandler) : RawHost {
    override suspend fun request(call: IncomingCall): String = handler.onRequest(call).toString()

    override suspend fun notification(method: String, params: String?) =
        handler.onNotification(method, params?.let { Json.parseToJsonElement(it) })

    override fun stderr(line: String) = handler.onStderr(line)

    override fun frame(direction: WireDirection, frame: String) = handler.onFrame(direction, frame)

    override fun engineEvent(event: EngineEvent) = handler.onEngineEvent(event)
}

/**
 * One ACP connection, in either role, with the dynamic (method name + JSON)
 * API. [ClientConnection] and [AgentConnection] put the typed ACP methods on
 * top of one.
 *
 * Every protocol rule is libacp's: calls the peer did not advertise, or
 * made before `initialize`, throw [AcpException.Refused] without sending;
 * notifications reach the handler in order, before the answers that follow
 * them; cancelling a coroutine awaiting [call] sends `$/cancel_request`.
 *
 * [close] closes without waiting (also what `use {}` does); [shutdown] closes
 * and waits until everything was written and a spawned agent is gone.
 */
class AcpConnection private constructor(context: CoroutineContext) : AutoCloseable {
    /** The native connection: set once, when made ([attach]). */
    @Volatile private var made: Connection? = null

    /**
     * The native connection, for what cannot wait. Only a connection an
     * [AcpServer]'s factory was given can be unmade here (in the factory,
     * or in a coroutine it started that runs before libacp started it).
     */
    private val native: Connection
        get() = made ?: throw IllegalStateException(
            "the connection is not started yet: use it from its handlers, or once its factory returned",
        )

    /** The native connection; what suspends waits until it is made. */
    private suspend fun connection(): Connection = made ?: bridge.made()

    private val notifications = Notifications { connection() }
    internal val bridge = HostBridge(context, notifications)

    companion object {
        /**
         * Client side: spawns [command] and talks ACP over its stdio.
         * Handlers run in [context]. The agent's working directory,
         * environment, stderr and shutdown ladder are [options] (`cwd`,
         * `env`, `clearEnv`, `stderr`, `graceAfterStdinCloseMs`,
         * `graceAfterSigtermMs`). Throws [AcpException.Spawn] if the program
         * cannot be started.
         */
        fun spawn(
            command: AgentCommand,
            handler: AcpHandler = object : AcpHandler {},
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ): AcpConnection = open(DynamicHost(handler), context) { Connection.spawn(command, it, options) }

        /** Agent side: serves on this process's stdin/stdout (log to stderr only). */
        fun serveStdio(
            handler: AcpHandler,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ): AcpConnection = open(DynamicHost(handler), context) { Connection.serveStdio(it, options) }

        /**
         * Either role over descriptors the caller gives up: two pipes, or one
         * stream socket for both ([readFd] == [writeFd]; see [socketPair]).
         */
        fun fromFds(
            role: AcpRole,
            readFd: Int,
            writeFd: Int,
            handler: AcpHandler = object : AcpHandler {},
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ): AcpConnection =
            open(DynamicHost(handler), context) { Connection.fromFds(role, readFd, writeFd, it, options) }

        /**
         * Client side: connects to the remote agent at [url] and returns once
         * the transport is up. The scheme picks the transport: `ws://`,
         * `wss://` WebSocket; `http://`, `https://` Streamable HTTP
         * (`preferWebsocket = true` tries a WebSocket upgrade first,
         * `http2PriorKnowledge = true` speaks h2c). The remote options are
         * `headers` (`mapOf("Authorization" to "Bearer ...")`), `caFile`,
         * `connectTimeoutMs`, `handshakeTimeoutMs`, `keepaliveIntervalMs`,
         * `maxMessageSize`, `queue`, beside the options of every connection.
         *
         * Throws [AcpException.InvalidArgument] (naming it) for an option
         * that does not apply to a client connecting by URL (a server's, a
         * spawned agent's) before anything is tried, and
         * [AcpException.Remote] when it cannot connect: `kind` is
         * `invalid_url`, `dns`, `refused`, `timeout`, `tls`, `unauthorized`
         * or `forbidden` (with the HTTP `status`), `not_found`,
         * `version_refused`, `http` or `io`. Over Streamable HTTP nothing is
         * sent before the first request (`initialize`): a server that
         * refuses it (401, 404, ...) closes the connection, and the call
         * throws [AcpException.Closed] naming the HTTP status (as does
         * [closed]).
         */
        suspend fun connect(
            url: String,
            handler: AcpHandler = object : AcpHandler {},
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
        ): AcpConnection = connect(url, DynamicHost(handler), options, context)

        internal suspend fun connect(
            url: String,
            host: RawHost,
            options: ConnectOptions,
            context: CoroutineContext,
        ): AcpConnection {
            val conn = prepare(host, context)
            conn.attach(remoteConnect(url, conn.bridge, options))
            return conn
        }

        internal fun open(
            host: RawHost,
            context: CoroutineContext,
            make: (HostHandler) -> Connection,
        ): AcpConnection {
            val conn = prepare(host, context)
            conn.attach(make(conn.bridge))
            return conn
        }

        /**
         * A connection not made yet: [attach] makes it with what libacp
         * returns for its [bridge] (AcpServer makes the host first, with the
         * connection it will serve, then sets [HostBridge.host]).
         */
        internal fun prepare(host: RawHost?, context: CoroutineContext): AcpConnection {
            val conn = AcpConnection(context)
            if (host != null) conn.bridge.host = host
            return conn
        }
    }

    /** Makes the connection [prepare]d: the native one libacp made for [bridge]. */
    internal fun attach(connection: Connection) {
        made = connection
        bridge.attach(connection)
    }

    /** A [prepare]d connection that will never be made: what waits for it throws [AcpException.Closed]. */
    internal fun abandon() = bridge.abandon()

    /** The role this end plays. */
    val role: AcpRole
        get() = native.role()

    /**
     * Sends request [method] and returns the peer's result. [timeout]
     * overrides the connection's default; [noTimeout] removes it.
     */
    suspend fun call(
        method: String,
        params: JsonElement? = null,
        timeout: Duration? = null,
        noTimeout: Boolean = false,
    ): JsonElement = Json.parseToJsonElement(callJson(method, params?.toString(), timeout, noTimeout))

    /** [call] with params and result as JSON text. */
    suspend fun callJson(
        method: String,
        params: String?,
        timeout: Duration? = null,
        noTimeout: Boolean = false,
    ): String {
        // Notifications sent before this call go out before it. A refusal
        // among them is kept for the next notify or flush: what this throws
        // is about this call only.
        notifications.flushQuietly()
        val inNotification = currentCoroutineContext()[InNotification]?.bridge === bridge
        // 0: the connection's default.
        val timeoutMs = timeout?.inWholeMilliseconds?.coerceAtLeast(1)?.toULong() ?: 0UL
        return bridge.call(connection(), method, params, timeoutMs, noTimeout, inNotification)
    }

    /**
     * Sends notification [method]. Notifications are gathered and handed to
     * libacp in batches (one native call for many: Notifications.kt), in
     * order, and always before the calls and answers that follow them; this
     * returns once the notification is in the batch (waiting only when many
     * are waiting for a slow peer). A notification libacp refuses (invalid
     * params, the connection closed) throws from the next [notify] or
     * [flush] (that notify's own notification is queued all the same); call
     * [flush] to know at once.
     */
    suspend fun notify(method: String, params: JsonElement? = null) = notifyJson(method, params?.toString())

    /** [notify] with params as JSON text. */
    suspend fun notifyJson(method: String, params: String?) = notifications.send(method, params)

    /**
     * Hands every notification sent so far to libacp (waiting while its
     * outgoing queue is full) and throws the first refusal among them.
     */
    suspend fun flush() = notifications.flush()

    /**
     * Client side: cancels the session's prompt turn (`session/cancel`); the
     * session's pending permission requests are answered `cancelled`.
     */
    suspend fun cancelSession(sessionId: String) {
        notifications.flushQuietly()
        connection().cancelSession(sessionId)
    }

    /** Closes and waits until written out and a spawned agent is gone. Idempotent. */
    suspend fun shutdown() {
        try {
            notifications.flush()
        } catch (e: AcpException) {
            // Closing anyway: a refused notification changes nothing now.
        }
        connection().shutdown()
    }

    /** Waits until the connection closes; returns why. */
    suspend fun closed(): String = connection().closed()

    /** Waits until closed, written out and a spawned agent is gone. */
    suspend fun terminated() = connection().terminated()

    /** Why the connection closed; `null` while open. */
    val closeReason: String?
        get() = native.closeReason()

    /** The negotiated protocol version, once initialized. */
    val protocolVersion: Int?
        get() = native.protocolVersion()?.toInt()

    /** The capabilities the peer advertised (`{}` before `initialize`). */
    val peerCapabilities: JsonObject
        get() = Json.parseToJsonElement(native.peerCapabilities()).jsonObject

    /** The open sessions' ids. */
    val sessions: List<String>
        get() = native.sessions()

    /** Whether the session has a prompt turn in progress. */
    fun turnInProgress(sessionId: String): Boolean = native.turnInProgress(sessionId)

    /** With `ConnectOptions.sessionModel`: the session's folded state, `null` if unknown. */
    fun sessionSnapshot(sessionId: String): JsonObject? =
        native.sessionSnapshot(sessionId)?.let { Json.parseToJsonElement(it).jsonObject }

    /** The spawned agent's process id. */
    val pid: Int?
        get() = native.pid()?.toInt()

    /** How the spawned agent ended, once it has. */
    val exitStatus: ExitStatus?
        get() = native.exitStatus()

    /** Waits until the spawned agent exits (`null` if none was spawned). */
    suspend fun waitExit(): ExitStatus? = connection().waitExit()

    /** Kills the spawned agent's process group now. */
    fun killNow() = native.killNow()

    /**
     * Closes without waiting and frees the native connection (what was sent
     * is handed to libacp first, without waiting for room). Idempotent.
     */
    override fun close() {
        val native = made ?: return abandon() // never made: nothing to free
        notifications.flushNow(native)
        bridge.closing()
        native.destroy()
    }
}
