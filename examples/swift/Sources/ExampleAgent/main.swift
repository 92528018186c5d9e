// An ACP agent in Swift: serves stdio, opens sessions, and answers a prompt
// by streaming a plan and the words of its reply, then `end_turn`. A
// `session/cancel` cancels the prompt's task: the turn ends `cancelled`.
// Logs go to stderr (stdout is the protocol).
import Foundation
import LibACP

final class ExampleAgent: Agent, @unchecked Sendable {
    /// Set right after the connection is made (the connection owns the
    /// agent through its handler, so the agent holds it weakly).
    weak var connection: AgentConnection?
    private let lock = NSLock()
    private var sessionCount = 0

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        InitializeResponse(
            protocolVersion: 1,
            agentCapabilities: AgentCapabilities(promptCapabilities: PromptCapabilities(embeddedContext: true)),
            agentInfo: Implementation(name: "libacp-swift-example-agent", version: "0.1.0")
        )
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        let n = lock.withLock { () -> Int in sessionCount += 1; return sessionCount }
        FileHandle.standardError.write(Data("example agent: session \(n) in \(request.cwd)\n".utf8))
        return NewSessionResponse(sessionId: "swift-session-\(n)")
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        guard let connection else { throw AcpError.Internal(detail: "no connection") }
        let said = request.prompt.compactMap { block -> String? in
            if case .text(let t) = block { return t.text }
            return nil
        }.joined(separator: " ")
        try await connection.sessionUpdate(sessionId: request.sessionId, .plan(Plan(entries: [
            PlanEntry(content: "Read the prompt", priority: .high, status: .completed),
            PlanEntry(content: "Answer it", priority: .medium, status: .inProgress),
        ])))
        let reply = "You said: \(said.isEmpty ? "(nothing in text)" : said). This is the Swift example agent."
        for word in reply.split(separator: " ") {
            // A cancelled turn stops here; libacp answers `cancelled`.
            try Task.checkCancellation()
            try await connection.sessionUpdate(
                sessionId: request.sessionId,
                .agentMessageChunk(ContentChunk(content: .text(TextContent(text: word + " ")))))
        }
        return PromptResponse(stopReason: .endTurn)
    }
}

let agent = ExampleAgent()
do {
    let connection = try AgentConnection.serveStdio(agent)
    agent.connection = connection
    await connection.terminated()
} catch {
    FileHandle.standardError.write(Data("example agent: \(error)\n".utf8))
    exit(1)
}
