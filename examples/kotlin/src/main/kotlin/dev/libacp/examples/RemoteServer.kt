// A remote ACP server in Kotlin: serves the example agent (Agent.kt) over
// WebSocket and Streamable HTTP on one endpoint, one agent per remote
// connection. Prints its URLs on stdout; serves until interrupted, or, with
// `--once`, until its first client has gone.
//
//   java -cp <classpath> dev.libacp.examples.RemoteServerKt [HOST:PORT] [--once]
package dev.libacp.examples

import dev.libacp.AcpServer
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

fun main(args: Array<String>) = runBlocking {
    val listen = args.firstOrNull { !it.startsWith("--") } ?: "127.0.0.1:8080"
    val once = "--once" in args
    val firstGone = CompletableDeferred<Unit>()
    val watch = CoroutineScope(Dispatchers.Default)
    // The factory runs on a libacp thread for each remote connection: it
    // only makes the agent (never blocks), which gets its connection.
    val server = AcpServer.serve(listen) { incoming ->
        System.err.println("server: ${incoming.kind} connection from ${incoming.remoteAddress}")
        if (once) {
            watch.launch {
                incoming.connection.connection.terminated()
                firstGone.complete(Unit)
            }
        }
        EchoAgent().apply { connection = incoming.connection }
    }
    println("serving on ${server.url("websocket")} and ${server.url("http")}")
    System.out.flush()
    if (!once) awaitCancellation() // serves until the process is interrupted (Ctrl-C)
    firstGone.await()
    server.shutdown()   // graceful: lets the requests in flight be answered
    server.close()
    System.err.println("server: done")
}
