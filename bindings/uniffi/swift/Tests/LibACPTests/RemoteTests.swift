// Remote ACP through the Swift layer: a Swift client and a Swift server
// (`AcpServer`, `ClientConnection.connect`) on 127.0.0.1 over WebSocket and
// Streamable HTTP (a whole prompt turn with updates and a permission
// request), the dynamic variant, and the typed errors (refused,
// unauthorized, options that do not apply). The shared scenarios over remote
// links are in ScenariosTests.swift.
import Foundation
import XCTest
@testable import LibACP

/// An agent whose prompt streams an update, asks permission, streams the
/// chosen option and ends `end_turn`; it records the remote kind its
/// connection was served over.
final class AskingAgent: Agent, @unchecked Sendable {
    weak var connection: AgentConnection?
    let kinds = Recorder<String>()

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        kinds.add(connection?.connection.remote?.kind ?? "(none)")
        return InitializeResponse(protocolVersion: 1)
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        NewSessionResponse(sessionId: "remote-1")
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        guard let connection else { throw AcpError.Internal(detail: "no connection") }
        try await connection.sessionUpdate(sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: text("thinking"))))
        let answer = try await connection.requestPermission(RequestPermissionRequest(
            sessionId: request.sessionId,
            toolCall: ToolCallUpdate(toolCallId: "t1", title: "write the file"),
            options: [
                PermissionOption(optionId: "yes", name: "Allow", kind: .allowOnce),
                PermissionOption(optionId: "no", name: "Reject", kind: .rejectOnce),
            ]
        ))
        guard case .selected(let chosen) = answer.outcome else { return PromptResponse(stopReason: .cancelled) }
        try await connection.sessionUpdate(
            sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: text("chose \(chosen.optionId)"))))
        return PromptResponse(stopReason: .endTurn)
    }
}

/// A client that records the message chunks and the permission requests,
/// and allows each one with its first option. (Not a `RecordingClient`
/// subclass: a subclass cannot replace a default its superclass took.)
final class AllowingClient: Client, @unchecked Sendable {
    let seen = Recorder<String>()
    let asked = Recorder<String>()

    func sessionUpdate(_ notification: SessionNotification) async {
        if case .agentMessageChunk(let chunk) = notification.update, case .text(let t) = chunk.content {
            seen.add(t.text)
        }
    }

    func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse {
        asked.add(request.toolCall.title ?? "")
        guard let first = request.options.first else { throw AcpError.InvalidArgument(detail: "no options") }
        return RequestPermissionResponse(outcome: .selected(SelectedPermissionOutcome(optionId: first.optionId)))
    }
}

final class RemoteTests: XCTestCase {
    /// Serves `AskingAgent`s on a free port of loopback; `agents` gets each one.
    private static func serveAgents(
        options: ConnectOptions = ConnectOptions(), _ agents: Recorder<AskingAgent> = Recorder()
    ) async throws -> AcpServer {
        try await AcpServer.serve(listen: "127.0.0.1:0", options: options) { connection in
            let agent = AskingAgent()
            agent.connection = connection
            agents.add(agent)
            return agent
        }
    }

    func testAClientAndAServerOverWebSocketAndStreamableHTTP() async throws {
        try await bounded {
            let agents = Recorder<AskingAgent>()
            let server = try await Self.serveAgents(agents)
            XCTAssertGreaterThan(server.port, 0)
            XCTAssertEqual(server.localAddress, "127.0.0.1:\(server.port)")
            for kind in ["websocket", "http"] {
                let url = try server.url(kind: kind)
                XCTAssertTrue(url.hasPrefix(kind == "websocket" ? "ws://127.0.0.1:" : "http://127.0.0.1:"), url)
                let client = AllowingClient()
                let conn = try await ClientConnection.connect(url: url, client: client)
                let initialized = try await conn.initialize(initRequest())
                XCTAssertEqual(initialized.protocolVersion, 1)
                let session = try await conn.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
                let answer = try await conn.prompt(promptRequest(session.sessionId, "go"))
                XCTAssertEqual(answer.stopReason, .endTurn, kind)
                // Every update was handled before the prompt returned.
                XCTAssertEqual(client.seen.all, ["thinking", "chose yes"], kind)
                XCTAssertEqual(client.asked.all, ["write the file"], kind)
                XCTAssertEqual(server.connections, 1, kind)
                await conn.shutdown()
            }
            XCTAssertEqual(agents.all.flatMap { $0.kinds.all }, ["websocket", "http"], "one agent per remote connection")
            XCTAssertThrowsError(try server.url(kind: "carrier-pigeon")) {
                guard case AcpError.InvalidArgument = $0 else { return XCTFail("\($0)") }
            }
            await server.shutdown()
            XCTAssertEqual(server.connections, 0)
            server.close()
        }
    }

    func testTheDynamicServerAndClient() async throws {
        struct Answering: AcpHandler {
            let kind: String?
            func onRequest(_ call: IncomingCall) async throws -> JSONValue {
                guard call.method == "initialize" else { throw AcpError.methodNotFound(call.method) }
                return ["protocolVersion": 1, "_meta": ["kind": .string(kind ?? "(none)")]]
            }
        }
        try await bounded {
            let server = try await AcpServer.serve(listen: "127.0.0.1:0", handler: { connection in
                Answering(kind: connection.remote?.kind)
            })
            for kind in ["websocket", "http"] {
                let conn = try await AcpConnection.connect(url: try server.url(kind: kind))
                let result = try await conn.call("initialize", params: ["protocolVersion": 1])
                XCTAssertEqual(result["_meta"]?["kind"], .string(kind))
                XCTAssertEqual(conn.role, .client)
                await conn.shutdown()
            }
            await server.shutdown()
        }
    }

    /// An agent factory that throws: that connection is closed, the server goes on.
    func testAFactoryThatThrowsClosesItsConnection() async throws {
        try await bounded {
            let server = try await AcpServer.serve(listen: "127.0.0.1:0", agent: { _ in
                throw AcpError.InvalidArgument(detail: "no agent for you")
            })
            let conn = try await ClientConnection.connect(url: try server.url(kind: "websocket"), client: RecordingClient())
            let error = await assertThrowsAcp { try await conn.initialize(initRequest()) }
            switch error {
            case .Closed?, .Remote?: break
            default: XCTFail("expected the connection to close, got \(String(describing: error))")
            }
            await conn.shutdown()
            server.close()
        }
    }

    func testARefusedConnectionIsRemoteRefused() async throws {
        try await bounded {
            // Nobody listens on port 1 of loopback.
            let error = await assertThrowsAcp {
                try await ClientConnection.connect(url: "ws://127.0.0.1:1/acp", client: RecordingClient())
            }
            guard case .Remote(let kind, _, _)? = error else { return XCTFail("\(String(describing: error))") }
            XCTAssertEqual(kind, "refused")
        }
    }

    /// With `bearerTokens`, a client without the token is refused 401
    /// (over Streamable HTTP on its first request, `initialize`, which then
    /// fails with the same typed error), and one sending it gets through.
    func testABearerTokenIsRequiredWhenTheServerSetsOne() async throws {
        try await bounded {
            let server = try await Self.serveAgents(options: ConnectOptions(bearerTokens: ["secret"]))
            for kind in ["websocket", "http"] {
                let url = try server.url(kind: kind)
                let error = await assertThrowsAcp { () -> InitializeResponse in
                    let conn = try await ClientConnection.connect(url: url, client: RecordingClient())
                    defer { conn.close() }
                    return try await conn.initialize(initRequest())
                }
                switch error {
                case .Remote(let errorKind, let status, _)?:
                    XCTAssertEqual(errorKind, "unauthorized", kind)
                    XCTAssertEqual(status, 401, kind)
                default:
                    XCTFail("\(kind): \(String(describing: error))")
                }

                let options = ConnectOptions(headers: ["Authorization": "Bearer secret"])
                let conn = try await ClientConnection.connect(url: url, client: RecordingClient(), options: options)
                let initialized = try await conn.initialize(initRequest())
                XCTAssertEqual(initialized.protocolVersion, 1, kind)
                await conn.shutdown()
            }
            await server.shutdown()
        }
    }

    /// Options that do not apply are refused by name (the core's), before
    /// anything is connected or bound.
    func testOptionsThatDoNotApplyAreRefusedByName() async throws {
        try await bounded {
            let onClient = await assertThrowsAcp {
                try await ClientConnection.connect(
                    url: "ws://127.0.0.1:1/acp", client: RecordingClient(), options: ConnectOptions(bearerTokens: ["t"]))
            }
            guard case .InvalidArgument(let detail)? = onClient else { return XCTFail("\(String(describing: onClient))") }
            XCTAssertTrue(detail.contains("bearer_tokens"), detail)

            let onServer = await assertThrowsAcp {
                try await AcpServer.serve(listen: "127.0.0.1:0", options: ConnectOptions(headers: ["X": "y"])) { _ in
                    AskingAgent()
                }
            }
            guard case .InvalidArgument(let detail)? = onServer else { return XCTFail("\(String(describing: onServer))") }
            XCTAssertTrue(detail.contains("headers"), detail)
        }
    }
}
