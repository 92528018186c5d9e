// A remote ACP client in Swift: connects to an agent by URL (`ws://`,
// `wss://`: WebSocket; `http://`, `https://`: Streamable HTTP), runs one
// prompt turn and prints it. With `ACP_TOKEN` set, sends it as a bearer token.
//
//   acp-example-remote-client URL        (e.g. ws://127.0.0.1:8765/acp)
import Foundation
import LibACP

/// Prints the agent's message chunks as they stream.
struct Printer: Client {
    func sessionUpdate(_ notification: SessionNotification) async {
        if case .agentMessageChunk(let chunk) = notification.update, case .text(let t) = chunk.content {
            print(t.text)
        }
    }
}

let url = CommandLine.arguments.dropFirst().first ?? "ws://127.0.0.1:8765/acp"
let token = ProcessInfo.processInfo.environment["ACP_TOKEN"]
do {
    let agent = try await ClientConnection.connect(
        url: url, client: Printer(), options: ConnectOptions(headers: token.map { ["Authorization": "Bearer \($0)"] }))
    _ = try await agent.initialize(InitializeRequest(protocolVersion: 1, clientCapabilities: ClientCapabilities()))
    let session = try await agent.newSession(NewSessionRequest(cwd: FileManager.default.currentDirectoryPath, mcpServers: []))
    let done = try await agent.prompt(PromptRequest(sessionId: session.sessionId, prompt: [.text(TextContent(text: "hello"))]))
    print("=> \(done.stopReason.rawValue)") // every update was printed before this
    await agent.shutdown()
} catch AcpError.Remote(let kind, _, let detail) { // "refused", "unauthorized", ...
    FileHandle.standardError.write(Data("cannot reach \(url): \(kind) (\(detail))\n".utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("remote client: \(error)\n".utf8))
    exit(1)
}
