import XCTest

@testable import LibACP

/// Request handlers run on the libacp thread that delivered the request,
/// and a handler awaiting a call resumes on the libacp thread that
/// delivered the outcome (DeliveryExecutor.swift; issue 24, Swift W2).
final class DeliveryExecutorTests: XCTestCase {
    /// Where the caller runs: inside a libacp delivery (on the libacp thread
    /// that delivered the message, before it goes back to libacp), or not.
    static func place() -> String { Delivery.active ? "delivery" : "elsewhere" }

    /// A prompt reads a file through the client three times, noting where
    /// it runs before and after each read.
    final class ReadingAgent: EchoAgent, @unchecked Sendable {
        let threads = Recorder<String>()

        override func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
            threads.add("prompt \(DeliveryExecutorTests.place())")
            for _ in 0..<3 {
                _ = try await connection?.readTextFile(ReadTextFileRequest(sessionId: request.sessionId, path: "/f"))
                threads.add("resumed \(DeliveryExecutorTests.place())")
            }
            return PromptResponse(stopReason: .endTurn)
        }
    }

    /// Serves `fs/read_text_file` itself, noting where it runs.
    final class ReadingClient: Client, @unchecked Sendable {
        let threads = Recorder<String>()
        func sessionUpdate(_ notification: SessionNotification) async {}
        func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse {
            threads.add("read \(DeliveryExecutorTests.place())")
            return ReadTextFileResponse(content: "x")
        }
    }

    func testHandlersRunOnTheLibacpThreadThatDeliveredTheirMessage() async throws {
        try await bounded {
            let agent = ReadingAgent()
            let client = ReadingClient()
            let pair = try Pair(agent: agent, client: client)
            _ = try await pair.client.initialize(initRequest(fs: true))
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/", mcpServers: []))
            let response = try await pair.client.prompt(promptRequest("s1", "go"))
            XCTAssertEqual(response.stopReason, .endTurn)
            XCTAssertEqual(agent.threads.all, ["prompt delivery"] + Array(repeating: "resumed delivery", count: 3))
            XCTAssertEqual(client.threads.all, Array(repeating: "read delivery", count: 3))
            await pair.close()
        }
    }
}
