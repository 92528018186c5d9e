package dev.libacp

import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.launch

/**
 * A remote connection an [AcpServer] accepted, as its factory sees it:
 * [connection] is the agent side of that connection (an [AgentConnection]
 * for [AcpServer.serve], an [AcpConnection] for [AcpServer.serveDynamic]),
 * for the agent the factory makes to keep. libacp starts it once the
 * factory returned: its suspending calls made earlier (from a coroutine
 * the factory started) wait until then; the others (`role`, `sessions`,
 * ...) throw `IllegalStateException` until then. If the factory refuses
 * the connection, the calls waiting throw [AcpException.Closed].
 */
class RemoteIncoming<C> internal constructor(
    /** The connection the factory's agent serves. */
    val connection: C,
    /** Its `Acp-Connection-Id`. */
    val connectionId: String,
    /** `"websocket"` or `"http"` (Streamable HTTP). */
    val kind: String,
    /** The client's address, `host:port`. */
    val remoteAddress: String,
) {
    override fun toString() = "RemoteIncoming($kind $connectionId from $remoteAddress)"
}

/**
 * A remote ACP server: WebSocket and Streamable HTTP on one endpoint
 * (`/acp` unless the option `path` says otherwise), one agent per remote
 * connection. Everything about the transports (the handshakes, the
 * `Origin` and bearer-token checks, limits, the idle timeout, the graceful
 * shutdown) is libacp's; this class hands each remote connection to the
 * factory given to [serve] or [serveDynamic].
 *
 * **The factory** is called on one of libacp's threads, possibly for
 * several connections at once: it must return quickly and never block
 * (make the agent; do slow work in its handlers, which run in `context`).
 * It returns the connection's agent, or `null` to refuse the connection
 * (it is closed); one that throws refuses it too (and is logged through
 * `System.getLogger("dev.libacp")`).
 *
 * **Lifetimes.** The server holds each connection for as long as its remote
 * client stays. Once the remote connection has ended, the connection (its
 * calls now fail with [AcpException.Closed]) is freed with the agent that
 * holds it: nothing needs closing. [shutdown] stops accepting, lets the
 * requests already received be answered (up to the option
 * `shutdownGraceMs`, 10 s by default) and returns once every remote
 * connection has ended; [close] (and `use {}`) closes the listener and
 * every connection now.
 */
class AcpServer private constructor(private val native: Server) : AutoCloseable {
    companion object {
        /**
         * Serves remote ACP on [listen] (`"127.0.0.1:0"`: a free port on
         * loopback; see [port] and [url]) with the typed API: [factory]
         * makes one [Agent] per remote connection, given that connection's
         * [AgentConnection] (see the class docs).
         *
         * [options]: the server's (`bearerTokens`, `allowedOrigins`,
         * `tlsCert` and `tlsKey`, `maxConnections`, `idleTimeoutMs`,
         * `shutdownGraceMs`, `path`, `websocket`, `streamableHttp`, ...) and
         * those of every agent connection (`trace` and `events` hand frames
         * and engine events to each agent's `onFrame`/`onEngineEvent`).
         * Throws [AcpException.InvalidArgument] for an option that does not
         * apply to a server (naming it) or a [listen] that does not parse,
         * [AcpException.Remote] (kind `io`) when [listen] cannot be bound.
         */
        suspend fun serve(
            listen: String,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
            factory: (RemoteIncoming<AgentConnection>) -> Agent?,
        ): AcpServer = serve(listen, options, Factory(context, ::AgentConnection) { incoming -> factory(incoming)?.let(::AgentHost) })

        /**
         * [serve] with the dynamic API: [factory] makes one [AcpHandler] per
         * remote connection, given that connection's [AcpConnection].
         */
        suspend fun serveDynamic(
            listen: String,
            options: ConnectOptions = ConnectOptions(),
            context: CoroutineContext = Dispatchers.Default,
            factory: (RemoteIncoming<AcpConnection>) -> AcpHandler?,
        ): AcpServer = serve(listen, options, Factory(context, { it }) { incoming -> factory(incoming)?.let(::DynamicHost) })

        private suspend fun serve(listen: String, options: ConnectOptions, factory: Factory<*>): AcpServer {
            return AcpServer(remoteServe(listen, factory, options))
        }
    }

    /**
     * The endpoint's URL for [kind]: `"websocket"` (`ws://`, `wss://` with
     * TLS) or `"http"` (Streamable HTTP: `http://`, `https://`), with the
     * address listened on as host; what a client passes to
     * [AcpConnection.connect]. [AcpException.InvalidArgument] for another
     * kind.
     */
    fun url(kind: String = "websocket"): String = native.url(kind)

    /** The port listened on (the one the system chose for port 0). */
    val port: Int
        get() = native.port().toInt()

    /** The address listened on, `host:port`. */
    val localAddress: String
        get() = native.localAddress()

    /** How many remote connections are open now. */
    val connections: Long
        get() = native.connections().toLong()

    /**
     * Stops gracefully: no new connection is accepted, the requests each
     * connection was sent get up to `shutdownGraceMs` to be answered, then
     * the connections close. Returns once every remote connection has
     * ended. Idempotent.
     */
    suspend fun shutdown() = native.shutdown()

    /** Closes the listener and every remote connection now, and frees the server. Idempotent. */
    override fun close() {
        native.closeNow()
        native.destroy()
    }
}

/**
 * What libacp calls for each remote connection (on one of its threads):
 * prepares the agent connection, lets the host's factory make the agent
 * for it, then starts it on the remote connection, or refuses it. Nothing
 * here blocks or waits.
 */
private class Factory<C>(
    private val context: CoroutineContext,
    private val wrap: (AcpConnection) -> C,
    private val make: (RemoteIncoming<C>) -> RawHost?,
) : RemoteAgentFactory {
    /** Where each connection waits for its end, to be freed then. */
    private val scope = CoroutineScope(SupervisorJob() + context)

    override fun onConnection(incoming: IncomingConnection) {
        // Freed here: what the server keeps of the connection is its own.
        incoming.use {
            val conn = AcpConnection.prepare(null, context)
            val offered = RemoteIncoming(wrap(conn), it.connectionId(), it.kind(), it.remoteAddress())
            val host = try {
                make(offered)
            } catch (e: Exception) {
                System.getLogger("dev.libacp").log(
                    System.Logger.Level.WARNING,
                    "libacp: the server's factory failed for $offered; the connection is refused",
                    e,
                )
                null
            }
            if (host == null) {
                it.reject()
                conn.abandon()
                return
            }
            conn.bridge.host = host
            conn.attach(it.start(conn.bridge))
            // Once the remote connection has ended, only the agent holds the
            // connection (HostBridge.release): both are freed when it goes.
            scope.launch {
                conn.terminated()
                conn.bridge.release()
            }
        }
    }
}
