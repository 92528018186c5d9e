// A remote ACP server in Swift: serves an agent per remote connection over
// WebSocket and Streamable HTTP on one endpoint (`/acp`). With `ACP_TOKEN`
// set, clients must send it as a bearer token. `--once` exits after the
// first client has gone (what examples/swift/run-remote.sh uses).
//
//   acp-example-remote-server [HOST:PORT] [--once]     (default 127.0.0.1:8765)
import Foundation
import LibACP

/// One per remote connection: answers a prompt by echoing its text.
final class EchoAgent: Agent, @unchecked Sendable {
    weak var connection: AgentConnection?

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        InitializeResponse(protocolVersion: 1, agentInfo: Implementation(name: "libacp-swift-remote-agent", version: "0.1.0"))
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        NewSessionResponse(sessionId: UUID().uuidString)
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        for case .text(let t) in request.prompt {
            try await connection?.sessionUpdate(
                sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: .text(TextContent(text: "echo: \(t.text)")))))
        }
        return PromptResponse(stopReason: .endTurn)
    }
}

let args = CommandLine.arguments.dropFirst()
let listen = args.first { !$0.hasPrefix("--") } ?? "127.0.0.1:8765"
let once = args.contains("--once")
let token = ProcessInfo.processInfo.environment["ACP_TOKEN"]
let (gone, clientLeft) = AsyncStream<Void>.makeStream()
do {
    let server = try await AcpServer.serve(listen: listen, options: ConnectOptions(bearerTokens: token.map { [$0] })) { connection in
        let agent = EchoAgent()
        agent.connection = connection
        Task { await connection.terminated(); clientLeft.yield() }
        return agent
    }
    print("serving \(try server.url(kind: "websocket")) and \(try server.url(kind: "http"))")
    fflush(stdout)
    for await _ in gone where once { break }
    await server.shutdown() // running turns finish first
} catch {
    FileHandle.standardError.write(Data("remote server: \(error)\n".utf8))
    exit(1)
}
