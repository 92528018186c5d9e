import Foundation
import XCTest
@testable import LibACP

/// The unstable v1 extensions through the typed API: a Swift client and a
/// Swift agent, both with `ConnectOptions(unstable: ["all"])`.
final class UnstableTests: XCTestCase {
    /// An agent advertising every unstable capability; its handlers record
    /// what they get and answer from it. (It conforms to `Agent` itself: a
    /// subclass of a conforming class could not replace the protocol's
    /// default methods.)
    final class UnstableAgent: Agent, @unchecked Sendable {
        let seen = Recorder<String>()
        let mcpNotification = Latch<MessageMcpNotification>()
        let events = Recorder<EngineEvent>()

        func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
            InitializeResponse(
                protocolVersion: 1,
                agentCapabilities: AgentCapabilities(
                    sessionCapabilities: SessionCapabilities(
                        fork: SessionForkCapabilities(), archive: SessionArchiveCapabilities(),
                        status: SessionStatusCapabilities(), title: SessionTitleCapabilities()),
                    auth: AgentAuthCapabilities(status: AuthStatusCapabilities()),
                    providers: ProvidersCapabilities()))
        }

        func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
            NewSessionResponse(sessionId: "s1")
        }

        func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
            seen.add("prompt \(request.sessionId)")
            return PromptResponse(stopReason: .endTurn)
        }

        /// The fork also offers a boolean config option, which the client did
        /// not advertise: libacp withholds it (the `payload_rule` event).
        func forkSession(_ request: ForkSessionRequest, call: IncomingCall) async throws -> ForkSessionResponse {
            seen.add("fork \(request.sessionId) \(request.cwd)")
            let toggle = SessionConfigBoolean(currentValue: true, extra: ["id": "verbose", "name": "Verbose"])
            return ForkSessionResponse(sessionId: "s2", configOptions: [.boolean(toggle)])
        }

        func archiveSession(_ request: ArchiveSessionRequest, call: IncomingCall) async throws -> ArchiveSessionResponse {
            seen.add("archive \(request.sessionId)")
            return ArchiveSessionResponse()
        }

        func unarchiveSession(_ request: UnarchiveSessionRequest, call: IncomingCall) async throws -> UnarchiveSessionResponse {
            seen.add("unarchive \(request.sessionId)")
            return UnarchiveSessionResponse()
        }

        func sessionStatus(_ request: SessionStatusRequest, call: IncomingCall) async throws -> SessionStatusResponse {
            SessionStatusResponse(status: request.sessionId == "s2" ? .open : .saved)
        }

        func setSessionTitle(_ request: SetSessionTitleRequest, call: IncomingCall) async throws -> SetSessionTitleResponse {
            SetSessionTitleResponse(title: request.title.uppercased())
        }

        func authStatus(_ request: AuthStatusRequest, call: IncomingCall) async throws -> AuthStatusResponse {
            AuthStatusResponse(state: .authenticated, accounts: [AuthAccount(label: "Work", active: true)])
        }

        func listProviders(_ request: ListProvidersRequest, call: IncomingCall) async throws -> ListProvidersResponse {
            ListProvidersResponse(providers: [
                ProviderInfo(
                    providerId: "main", supported: [.anthropic, .unrecognized("local")], required: true,
                    current: ProviderCurrentConfig(apiType: .anthropic, baseUrl: "https://llm.example")),
            ])
        }

        func setProvider(_ request: SetProviderRequest, call: IncomingCall) async throws -> SetProviderResponse {
            seen.add("set \(request.providerId) \(request.apiType.rawValue) \(request.baseUrl) \(request.headers ?? [:])")
            return SetProviderResponse()
        }

        func disableProvider(_ request: DisableProviderRequest, call: IncomingCall) async throws -> DisableProviderResponse {
            seen.add("disable \(request.providerId)")
            return DisableProviderResponse()
        }

        func mcpMessage(_ notification: MessageMcpNotification) async {
            mcpNotification.fire(notification)
        }

        func onEngineEvent(_ event: EngineEvent) {
            events.add(event)
        }
    }

    /// A client serving one MCP server over ACP (`mcp/message`) and
    /// recording `auth/status_update`.
    final class McpClient: Client, @unchecked Sendable {
        let statusUpdate = Latch<AuthStatusUpdateNotification>()

        func mcpMessage(_ request: MessageMcpRequest, call: IncomingCall) async throws -> MessageMcpResponse {
            guard request.method == "tools/list" else {
                return MessageMcpResponse(error: McpError(code: -32601, message: "no \(request.method)"))
            }
            return MessageMcpResponse(result: ["tools": [], "server": .string(request.serverId)])
        }

        func authStatusUpdate(_ notification: AuthStatusUpdateNotification) async {
            statusUpdate.fire(notification)
        }
    }

    func testEveryUnstableMethodRoundTripsTyped() async throws {
        try await bounded {
            let agent = UnstableAgent()
            let client = McpClient()
            let (c, a) = try connectedPair(agent, client, options: ConnectOptions(events: true, unstable: ["all"]))
            defer { a.close() }
            _ = try await c.initialize(initRequest())
            _ = try await c.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))

            // session/fork opens the session its answer names; the boolean
            // option the client did not advertise was withheld.
            let fork = try await c.forkSession(ForkSessionRequest(sessionId: "s1", cwd: "/work"))
            XCTAssertEqual(fork.sessionId, "s2")
            XCTAssertEqual(fork.configOptions, [])
            XCTAssertTrue(c.connection.sessions.contains("s2"), "\(c.connection.sessions)")
            let turn = try await c.prompt(promptRequest("s2", "hi"))
            XCTAssertEqual(turn.stopReason, .endTurn)

            let status = try await c.sessionStatus(SessionStatusRequest(sessionId: "s2"))
            XCTAssertEqual(status.status, .open)
            let elsewhere = try await c.sessionStatus(SessionStatusRequest(sessionId: "listed"))
            XCTAssertEqual(elsewhere.status, .saved)
            let title = try await c.setSessionTitle(SetSessionTitleRequest(sessionId: "s2", title: "fix tests"))
            XCTAssertEqual(title.title, "FIX TESTS")

            let auth = try await c.authStatus(AuthStatusRequest())
            XCTAssertEqual(auth.state, .authenticated)
            XCTAssertEqual(auth.accounts?.map(\.label), ["Work"])
            XCTAssertEqual(auth.accounts?.first?.active, true)

            let providers = try await c.listProviders(ListProvidersRequest())
            XCTAssertEqual(providers.providers.map(\.providerId), ["main"])
            XCTAssertEqual(providers.providers.first?.supported, [.anthropic, .unrecognized("local")])
            XCTAssertEqual(providers.providers.first?.current?.baseUrl, "https://llm.example")
            _ = try await c.setProvider(SetProviderRequest(
                providerId: "main", apiType: .openai, baseUrl: "https://proxy.example", headers: ["X-Team": "7"]))
            _ = try await c.disableProvider(DisableProviderRequest(providerId: "main"))

            // session/archive closes the session it names on this connection.
            _ = try await c.archiveSession(ArchiveSessionRequest(sessionId: "s2"))
            XCTAssertFalse(c.connection.sessions.contains("s2"))
            _ = try await c.unarchiveSession(UnarchiveSessionRequest(sessionId: "s2"))

            XCTAssertEqual(agent.seen.all, [
                "fork s1 /work", "prompt s2", "set main openai https://proxy.example [\"X-Team\": \"7\"]",
                "disable main", "archive s2", "unarchive s2",
            ])

            // mcp/message both ways: a notification to the agent, a request to the client.
            try await c.mcpMessage(MessageMcpNotification(
                serverId: "agent-tools", requestId: "n1", method: "notifications/progress", params: ["progress": 1]))
            let toAgent = await agent.mcpNotification.wait()
            XCTAssertEqual(toAgent.serverId, "agent-tools")
            XCTAssertEqual(toAgent.params, ["progress": 1])
            let listed = try await a.mcpMessage(MessageMcpRequest(serverId: "editor", requestId: "r1", method: "tools/list"))
            XCTAssertEqual(listed.result, ["tools": [], "server": "editor"])
            XCTAssertNil(listed.error)
            let missing = try await a.mcpMessage(MessageMcpRequest(serverId: "editor", requestId: "r2", method: "nope"))
            XCTAssertNil(missing.result)
            XCTAssertEqual(missing.error?.code, -32601)

            // auth/status_update to the client.
            try await a.authStatusUpdate(AuthStatusUpdateNotification(state: .unrecognized("expired")))
            let update = await client.statusUpdate.wait()
            XCTAssertEqual(update.state, .unrecognized("expired"))

            // The fork's withheld option reached the agent's events callback.
            let rules = agent.events.all.filter { $0.kind == "payload_rule" }
            XCTAssertEqual(rules.count, 1, "\(agent.events.all)")
            let details = try JSONValue.parse(rules[0].details)
            XCTAssertEqual(details["method"], "session/fork")
            XCTAssertEqual(details["rule"], "boolean_config_option")
            XCTAssertEqual(details["withheld"], true)
            XCTAssertEqual(details["capability"], "clientCapabilities.session.configOptions.boolean")
            await c.shutdown()
        }
    }

    /// Without the features, the same calls are extension methods to libacp:
    /// sent unchecked (no capability needed), and an agent without them
    /// answers `-32601` through its typed default.
    func testWithoutTheFeatureAnUnstableCallIsNotGated() async throws {
        final class Plain: Agent, @unchecked Sendable {
            func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
                InitializeResponse(protocolVersion: 1)
            }
            func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
                NewSessionResponse(sessionId: "s1")
            }
            func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
                PromptResponse(stopReason: .endTurn)
            }
        }
        try await bounded {
            let fds = try socketPair()
            let a = try AgentConnection.fromFds(readFd: fds[1], writeFd: fds[1], agent: Plain())
            defer { a.close() }
            let on = try ClientConnection.fromFds(
                readFd: fds[0], writeFd: fds[0], client: McpClient(), options: ConnectOptions(unstable: ["session_status"]))
            _ = try await on.initialize(initRequest())
            // On: refused locally, the agent advertised no `status`.
            let refused = await assertThrowsAcp { try await on.sessionStatus(SessionStatusRequest(sessionId: "s1")) }
            guard case .Refused(let kind, _, let capability, _, _, _)? = refused else {
                return XCTFail("\(String(describing: refused))")
            }
            XCTAssertEqual(kind, "CapabilityNotAdvertised")
            XCTAssertEqual(capability, "agentCapabilities.sessionCapabilities.status")
            // Off (only session_status on): session/fork goes out unchecked
            // and the agent's typed default answers -32601.
            let sent = await assertThrowsAcp { try await on.forkSession(ForkSessionRequest(sessionId: "s1", cwd: "relative")) }
            XCTAssertEqual(sent?.code, -32601)
            await on.shutdown()
        }
    }

    /// An unknown feature name is refused when the connection is made:
    /// `AcpError.InvalidArgument` naming the option and the entry.
    func testAnUnknownFeatureIsATypedError() throws {
        let fds = try socketPair()
        defer {
            _ = close(fds[0])
            _ = close(fds[1])
        }
        XCTAssertThrowsError(try ClientConnection.fromFds(
            readFd: fds[0], writeFd: fds[0], client: McpClient(), options: ConnectOptions(unstable: ["session_forks"]))
        ) { error in
            guard case AcpError.InvalidArgument(let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("unstable") && detail.contains("session_forks"), detail)
        }
    }
}
