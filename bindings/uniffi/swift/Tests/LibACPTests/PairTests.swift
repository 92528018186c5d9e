import Foundation
import XCTest
@testable import LibACP

/// Both roles in one process, through the typed API.
final class PairTests: XCTestCase {
    func testAPromptReturnsAfterEveryUpdateItStreamedWasHandled() async throws {
        try await bounded {
            let client = RecordingClient()
            let pair = try Pair(agent: EchoAgent(), client: client)
            let initialized = try await pair.client.initialize(initRequest())
            XCTAssertEqual(initialized.protocolVersion, 1)
            XCTAssertEqual(pair.client.connection.protocolVersion, 1)
            let session = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            XCTAssertEqual(session.sessionId, "s1")
            for turn in 0..<20 {
                client.seen.clear()
                let answer = try await pair.client.prompt(promptRequest("s1", "one two three four \(turn)"))
                XCTAssertEqual(answer.stopReason, .endTurn)
                // Every update, in order, before the answer.
                XCTAssertEqual(client.seen.all, ["one", "two", "three", "four", "\(turn)"])
            }
            await pair.close()
        }
    }

    func testAHandlerMakesNestedRequestsToThePeer() async throws {
        final class NestingAgent: EchoAgent, @unchecked Sendable {
            override func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
                guard let connection else { throw AcpError.Internal(detail: "no connection") }
                let file = try await connection.readTextFile(ReadTextFileRequest(sessionId: request.sessionId, path: "/tmp/x.txt"))
                let permission = try await connection.requestPermission(RequestPermissionRequest(
                    sessionId: request.sessionId,
                    toolCall: ToolCallUpdate(toolCallId: "t1"),
                    options: [PermissionOption(optionId: "ok", name: "OK", kind: .allowOnce)]
                ))
                guard case .selected(let selected) = permission.outcome else {
                    throw AcpError.Internal(detail: "not selected: \(permission.outcome)")
                }
                try await connection.sessionUpdate(
                    sessionId: request.sessionId,
                    .agentMessageChunk(ContentChunk(content: text("\(file.content)/\(selected.optionId)"))))
                return PromptResponse(stopReason: .endTurn)
            }
        }
        // Conforms itself: a subclass of a conforming class could not replace
        // the protocol's default methods (Swift picks them statically).
        final class AnsweringClient: Client, @unchecked Sendable {
            let seen = Recorder<String>()
            func sessionUpdate(_ notification: SessionNotification) async {
                if case .agentMessageChunk(let chunk) = notification.update, case .text(let t) = chunk.content {
                    seen.add(t.text)
                }
            }
            func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse {
                ReadTextFileResponse(content: "contents of \(request.path)")
            }
            func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse {
                RequestPermissionResponse(outcome: .selected(SelectedPermissionOutcome(optionId: request.options[0].optionId)))
            }
        }
        try await bounded {
            let client = AnsweringClient()
            let pair = try Pair(agent: NestingAgent(), client: client)
            _ = try await pair.client.initialize(initRequest(fs: true))
            _ = try await pair.client.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
            let answer = try await pair.client.prompt(promptRequest("s1", "go"))
            XCTAssertEqual(answer.stopReason, .endTurn)
            XCTAssertEqual(client.seen.all, ["contents of /tmp/x.txt/ok"])
            await pair.close()
        }
    }

    func testRequestsRunConcurrentlyAndEachIsAnswered() async throws {
        final class Echo: EchoAgent, @unchecked Sendable {
            override func extMethod(_ call: IncomingCall) async throws -> JSONValue {
                ["echo": try call.params?["n"] ?? .null]
            }
        }
        try await bounded {
            let pair = try Pair(agent: Echo(), client: RecordingClient())
            _ = try await pair.client.initialize(initRequest())
            let connection = pair.client.connection
            let answers = try await withThrowingTaskGroup(of: (Int64, JSONValue).self) { group in
                for n in Int64(1)...200 {
                    group.addTask { (n, try await connection.call("_test/echo", params: ["n": .int(n)])) }
                }
                var answers: [Int64: JSONValue] = [:]
                for try await (n, answer) in group { answers[n] = answer }
                return answers
            }
            XCTAssertEqual(answers.count, 200)
            for (n, answer) in answers { XCTAssertEqual(answer["echo"]?.intValue, n) }
            await pair.close()
        }
    }

    func testErrorsCarryTheJsonRpcCodeAndData() async throws {
        final class Failing: EchoAgent, @unchecked Sendable {
            override func extMethod(_ call: IncomingCall) async throws -> JSONValue {
                if call.method == "_test/x" { throw AcpError.rpc(code: -32042, message: "no such thing", data: ["what": "x"]) }
                throw AcpError.methodNotFound(call.method)
            }
        }
        try await bounded {
            let pair = try Pair(agent: Failing(), client: RecordingClient())
            let connection = pair.client.connection
            // Refused locally before initialize: nothing sent.
            let refused = await assertThrowsAcp { try await connection.call("session/new") }
            guard case .Refused(let kind, let method, _, _, _, _)? = refused else { return XCTFail("\(String(describing: refused))") }
            XCTAssertEqual(kind, "NotInitialized")
            XCTAssertEqual(method, "session/new")
            _ = try await pair.client.initialize(initRequest())
            let e = await assertThrowsAcp { try await connection.call("_test/x") }
            XCTAssertEqual(e?.code, -32042)
            XCTAssertEqual(e?.data, ["what": "x"])
            guard case .Rpc(_, let detail, _)? = e else { return XCTFail("\(String(describing: e))") }
            XCTAssertEqual(detail, "no such thing")
            let missing = await assertThrowsAcp { try await connection.call("_test/none") }
            XCTAssertEqual(missing?.code, -32601)
            // Not JSON: refused locally.
            let notJSON = await assertThrowsAcp { try await connection.callJSON("_test/x", paramsJSON: "{not json") }
            guard case .InvalidParams? = notJSON else { return XCTFail("\(String(describing: notJSON))") }
            XCTAssertEqual(notJSON?.code, -32603, "a local failure answers -32603 when it escapes a handler")
            // Params that break the schema: refused locally, nothing sent.
            let bad = await assertThrowsAcp { try await connection.call("session/new", params: ["cwd": 3]) }
            guard case .InvalidParams(let why)? = bad else { return XCTFail("\(String(describing: bad))") }
            XCTAssertTrue(why.contains("cwd"), why)
            // Capability refusals carry the capability.
            let load = await assertThrowsAcp {
                try await pair.client.loadSession(LoadSessionRequest(mcpServers: [], cwd: "/tmp", sessionId: "s1"))
            }
            guard case .Refused(let loadKind, _, let capability, _, _, _)? = load else { return XCTFail("\(String(describing: load))") }
            XCTAssertEqual(loadKind, "CapabilityNotAdvertised")
            XCTAssertEqual(capability, "agentCapabilities.loadSession")
            await pair.close()
        }
    }

    func testTheTypedLayerKeepsWhatItDoesNotModel() async throws {
        final class Checking: EchoAgent, @unchecked Sendable {
            let extras = Recorder<JSONValue>()
            override func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
                // Members the model does not name are kept, typed or raw.
                extras.add(request.extra["_unknownField"] ?? .null)
                extras.add(try call.params?["_unknownField"] ?? .null)
                return InitializeResponse(
                    protocolVersion: 1, agentCapabilities: AgentCapabilities(loadSession: true), extra: ["_vendor": ["x": 1]])
            }
        }
        try await bounded {
            let agent = Checking()
            let pair = try Pair(agent: agent, client: RecordingClient())
            let result = try await pair.client.connection.call(
                "initialize", params: ["protocolVersion": 1, "clientCapabilities": [:], "_unknownField": "kept"])
            XCTAssertEqual(agent.extras.all, ["kept", "kept"])
            XCTAssertEqual(result["agentCapabilities"]?["loadSession"], true)
            XCTAssertEqual(result["_vendor"], ["x": 1])
            await pair.close()
        }
    }
}
