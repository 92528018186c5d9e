import Foundation
import XCTest
@testable import LibACP

/// Cancellation both ways, mapped onto Swift tasks.
final class CancellationTests: XCTestCase {
    func testCancellingTheCallersTaskSendsCancelRequestAndCancelsTheHandler() async throws {
        try await bounded {
            let (pair, agent, call) = try await parkedCall()
            call.cancel()
            let outcome = await call.result
            guard case .failure(AcpError.Cancelled) = outcome else { return XCTFail("\(outcome)") }
            // The agent's handler task was cancelled because the peer sent
            // $/cancel_request (its flag says so).
            let sawCancel = await agent.sawCancel.wait()
            XCTAssertTrue(sawCancel)
            // The connection goes on.
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            await pair.close()
        }
    }

    func testACallsTimeoutCancelsItOnBothSides() async throws {
        try await bounded {
            let agent = ParkingAgent()
            let pair = try Pair(agent: agent, client: RecordingClient())
            _ = try await pair.client.initialize(initRequest())
            let e = await assertThrowsAcp { try await pair.client.connection.call("_test/park", timeout: 0.05) }
            guard case .Timeout? = e else { return XCTFail("\(String(describing: e))") }
            let sawCancel = await agent.sawCancel.wait()
            XCTAssertTrue(sawCancel)
            await pair.close()
        }
    }

    func testSessionCancelCancelsThePromptsTaskAndTheTurnEndsCancelled() async throws {
        final class SlowAgent: EchoAgent, @unchecked Sendable {
            let started = Latch<Bool>()
            let finished = Latch<Bool>()
            override func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
                let chunk = { (s: String) in SessionUpdate.agentMessageChunk(ContentChunk(content: text(s))) }
                try await connection?.sessionUpdate(sessionId: request.sessionId, chunk("working"))
                started.fire(true)
                do {
                    try await parkUntilCancelled()
                } catch {
                    // Winding down: the last update goes out before the answer.
                    try await connection?.sessionUpdate(sessionId: request.sessionId, chunk("stopped"))
                    finished.fire(true)
                    throw error
                }
                return PromptResponse(stopReason: .endTurn)
            }
        }
        try await bounded {
            let agent = SlowAgent()
            let client = RecordingClient()
            let pair = try Pair(agent: agent, client: client)
            _ = try await pair.client.initialize(initRequest())
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            let typed = pair.client
            let turn = Task { try await typed.prompt(promptRequest("s1", "go")) }
            _ = await agent.started.wait()
            try await pair.client.cancel(sessionId: "s1")
            let answer = try await turn.value
            XCTAssertEqual(answer.stopReason, .cancelled)
            _ = await agent.finished.wait()
            XCTAssertEqual(client.seen.all, ["working", "stopped"])
            await pair.close()
        }
    }

    func testCancellingASessionCancelsTheClientsPendingPermissionHandler() async throws {
        final class AskingAgent: EchoAgent, @unchecked Sendable {
            let outcome = Latch<String>()
            override func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
                guard let connection else { throw AcpError.Internal(detail: "no connection") }
                do {
                    let answer = try await connection.requestPermission(RequestPermissionRequest(
                        sessionId: request.sessionId,
                        toolCall: ToolCallUpdate(toolCallId: "t1"),
                        options: [PermissionOption(optionId: "ok", name: "OK", kind: .allowOnce)]
                    ))
                    // The client's libacp answered `cancelled` on its own...
                    outcome.fire("\(answer.outcome)")
                } catch AcpError.Cancelled {
                    // ...or session/cancel reached this side first and
                    // cancelled this task, which abandoned the call.
                    outcome.fire("call cancelled")
                }
                return PromptResponse(stopReason: .cancelled)
            }
        }
        final class WaitingClient: Client, @unchecked Sendable {
            let asked = Latch<Bool>()
            let handlerCancelled = Latch<Bool>()
            func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse {
                asked.fire(true)
                do {
                    try await parkUntilCancelled()
                } catch {
                    handlerCancelled.fire(true)
                    throw error
                }
                return RequestPermissionResponse(outcome: .cancelled)
            }
        }
        try await bounded {
            let agent = AskingAgent()
            let client = WaitingClient()
            let pair = try Pair(agent: agent, client: client)
            _ = try await pair.client.initialize(initRequest())
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            let typed = pair.client
            let turn = Task { try await typed.prompt(promptRequest("s1", "go")) }
            _ = await client.asked.wait()
            try await pair.client.cancel(sessionId: "s1")
            _ = await client.handlerCancelled.wait()
            let answer = try await turn.value
            XCTAssertEqual(answer.stopReason, .cancelled)
            let outcome = await agent.outcome.wait()
            XCTAssertTrue(["\(RequestPermissionOutcome.cancelled)", "call cancelled"].contains(outcome), outcome)
            await pair.close()
        }
    }

    func testANotificationHandlersCallDoesNotWaitForTheHandlerItself() async throws {
        // The ordering barrier holds answers behind the notification being
        // handled; a call made inside the handler skips it (else: deadlock).
        final class Pong: EchoAgent, @unchecked Sendable {
            override func extMethod(_ call: IncomingCall) async throws -> JSONValue { "pong" }
        }
        final class CallingClient: Client, @unchecked Sendable {
            weak var connection: AcpConnection?
            let got = Latch<String>()
            func sessionUpdate(_ notification: SessionNotification) async {
                do {
                    let answer = try await connection?.call("_test/ping")
                    got.fire(answer?.jsonText ?? "no connection")
                } catch {
                    got.fire("\(error)")
                }
            }
        }
        try await bounded {
            let client = CallingClient()
            let pair = try Pair(agent: Pong(), client: client)
            client.connection = pair.client.connection
            _ = try await pair.client.initialize(initRequest())
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            _ = try await pair.client.prompt(promptRequest("s1", "x"))
            let got = await client.got.wait()
            XCTAssertEqual(got, "\"pong\"")
            await pair.close()
        }
    }
}
