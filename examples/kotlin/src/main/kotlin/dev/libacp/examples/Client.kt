// An ACP client in Kotlin, as an editor plugin on the JVM would be: it
// spawns an agent, opens a session, sends one prompt and prints the turn as
// it streams. By default the agent is the example agent (Agent.kt) in a
// second JVM with this classpath; `-- <command...>` runs another one.
//
//   java -cp <classpath> dev.libacp.examples.ClientKt [-- agent command...]
package dev.libacp.examples

import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.Implementation
import com.agentclientprotocol.model.InitializeRequest
import com.agentclientprotocol.model.NewSessionRequest
import com.agentclientprotocol.model.PromptRequest
import com.agentclientprotocol.model.SessionNotification
import com.agentclientprotocol.model.SessionUpdate
import dev.libacp.AgentCommand
import dev.libacp.Client
import dev.libacp.ClientConnection
import dev.libacp.ConnectOptions
import kotlinx.coroutines.runBlocking

/** Prints what the agent streams. */
class PrintingClient : Client {
    override suspend fun sessionUpdate(notification: SessionNotification) {
        when (val u = notification.update) {
            is SessionUpdate.AgentMessageChunk -> print((u.content as? ContentBlock.Text)?.text ?: "[${u.content}]")
            is SessionUpdate.PlanUpdate -> println("[plan] " + u.entries.joinToString { "${it.content} (${it.status})" })
            else -> println("[update] $u")
        }
    }

    override fun onStderr(line: String) = System.err.println("  agent stderr: $line")
}

fun main(args: Array<String>) = runBlocking {
    val agentArgs = args.dropWhile { it != "--" }.drop(1)
    val command = if (agentArgs.isNotEmpty()) {
        AgentCommand(agentArgs[0], agentArgs.drop(1))
    } else {
        val java = ProcessHandle.current().info().command().orElse("java")
        AgentCommand(java, listOf("-cp", System.getProperty("java.class.path"), "dev.libacp.examples.AgentKt"))
    }
    // `stderr = true`: the agent's stderr lines go to PrintingClient.onStderr.
    ClientConnection.spawn(command, PrintingClient(), ConnectOptions(stderr = true)).use { client ->
        val init = client.initialize(
            InitializeRequest(1, ClientCapabilities(), Implementation("libacp-kotlin-example-client", "0.1.0")),
        )
        println("agent: ${init.agentInfo?.name ?: "(unnamed)"}, protocol ${init.protocolVersion}")
        val session = client.newSession(NewSessionRequest(System.getProperty("user.dir"), emptyList()))
        println("session: ${session.sessionId.value}")
        val answer = client.prompt(PromptRequest(session.sessionId, listOf(ContentBlock.Text("Hello from Kotlin"))))
        println()
        println("turn ended: ${answer.stopReason}")
        client.shutdown()
    }
}
