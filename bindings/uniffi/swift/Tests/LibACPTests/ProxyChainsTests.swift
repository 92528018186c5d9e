import Foundation
import XCTest
@testable import LibACP

/// A proxy chain (unstable `proxy_chains`) through the typed API: a Swift
/// conductor (a client) and a Swift proxy (an agent) in this process, both
/// with the feature on. The conductor stands in for the proxy's successor.
final class ProxyChainsTests: XCTestCase {
    static let proxyChains = ConnectOptions(unstable: ["proxy_chains"])

    /// A proxy: `proxy/initialize` forwards `initialize` to its successor
    /// and answers with the successor's; it records what the conductor
    /// delivers from the successor. (It conforms to `Agent` itself: a
    /// subclass of a conforming class could not replace the protocol's
    /// default methods.)
    final class Proxy: Agent, @unchecked Sendable {
        weak var connection: AgentConnection?
        let initialized = Latch<InitializeProxyRequest>()
        let delivered = Latch<ProxySuccessorNotification>()

        func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
            throw AcpError.rpc(code: -32600, message: "this proxy expects proxy/initialize")
        }

        func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
            NewSessionResponse(sessionId: "s1")
        }

        func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
            PromptResponse(stopReason: .endTurn)
        }

        func proxyInitialize(_ request: InitializeProxyRequest, call: IncomingCall) async throws -> InitializeProxyResponse {
            initialized.fire(request)
            guard let connection else { throw AcpError.Closed(detail: "no connection") }
            let params = try JSONValue(encoding: request)
            let successor = try await connection.proxySuccessor(ProxySuccessorRequest(method: "initialize", params: params))
            return try successor.decode(as: InitializeResponse.self)
        }

        func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse {
            [
                "outcome": ["outcome": "selected", "optionId": "allow"],
                "asked": .string(request.method),
                "tool": request.params?["toolCall"] ?? .null,
            ]
        }

        func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async {
            delivered.fire(notification)
        }
    }

    /// A conductor: answers what the proxy forwards as its successor would
    /// (an `initialize` answer, a session).
    final class Conductor: Client, @unchecked Sendable {
        let forwarded = Recorder<ProxySuccessorRequest>()
        let notified = Latch<ProxySuccessorNotification>()

        func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse {
            forwarded.add(request)
            switch request.method {
            case "initialize":
                return [
                    "protocolVersion": request.params?["protocolVersion"] ?? .null,
                    "agentCapabilities": ["loadSession": true, "sessionCapabilities": ["fork": [:]]],
                ]
            case "session/new": return ["sessionId": "final-1"]
            default: throw AcpError.methodNotFound(request.method)
            }
        }

        func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async {
            notified.fire(notification)
        }
    }

    func testAConductorAndAProxyRoundTripEveryProxyChainMethodTyped() async throws {
        try await bounded {
            let proxy = Proxy()
            let conductor = Conductor()
            let (c, a) = try connectedPair(proxy, conductor, options: Self.proxyChains)
            proxy.connection = a
            defer { a.close() }

            // proxy/initialize: the proxy forwarded initialize through
            // proxy/successor and answered with its successor's capabilities
            // (those the models name and the rest, kept in `extra`).
            let initialize = try await c.proxyInitialize(initRequest())
            let asked = await proxy.initialized.wait()
            XCTAssertEqual(asked.protocolVersion, 1)
            XCTAssertEqual(initialize.protocolVersion, 1)
            XCTAssertEqual(initialize.agentCapabilities?.loadSession, true)
            XCTAssertNotNil(initialize.agentCapabilities?.sessionCapabilities?.fork)
            let forwardedInit = conductor.forwarded.all
            XCTAssertEqual(forwardedInit.map(\.method), ["initialize"])
            XCTAssertEqual(forwardedInit.first?.params?["protocolVersion"], 1)
            // proxy/initialize was this connection's initialize.
            let again = await assertThrowsAcp { try await c.initialize(initRequest()) }
            guard case .Refused(let kind, _, _, _, _, _)? = again else { return XCTFail("\(String(describing: again))") }
            XCTAssertEqual(kind, "AlreadyInitialized")

            // The proxy reaches its successor: a request (the answer
            // round-trips unchanged) and a notification.
            let params: JSONValue = ["cwd": "/work", "mcpServers": []]
            let session = try await a.proxySuccessor(ProxySuccessorRequest(method: "session/new", params: params))
            XCTAssertEqual(session, ["sessionId": "final-1"])
            XCTAssertEqual(conductor.forwarded.all.last?.params, params)
            let missing = await assertThrowsAcp { try await a.proxySuccessor(ProxySuccessorRequest(method: "ext/missing")) }
            XCTAssertEqual(missing?.code, -32601)
            let cancel = ProxySuccessorNotification(method: "session/cancel", params: ["sessionId": "final-1"], meta: ["hop": 1])
            try await a.proxySuccessorNotification(cancel)
            let notified = await conductor.notified.wait()
            XCTAssertEqual(notified, cancel)

            // The conductor delivers the successor's messages to the proxy.
            let ask: JSONValue = ["sessionId": "final-1", "toolCall": ["toolCallId": "t1"]]
            let answer = try await c.proxySuccessor(ProxySuccessorRequest(method: "session/request_permission", params: ask))
            XCTAssertEqual(answer["asked"], "session/request_permission")
            XCTAssertEqual(answer["tool"], ["toolCallId": "t1"])
            let update: JSONValue = ["sessionId": "final-1"]
            try await c.proxySuccessorNotification(ProxySuccessorNotification(method: "session/update", params: update))
            let delivered = await proxy.delivered.wait()
            XCTAssertEqual(delivered.method, "session/update")
            XCTAssertEqual(delivered.params, update)
            XCTAssertNil(delivered.meta)
            await c.shutdown()
        }
    }

    /// Without handlers, the proxy-chain requests answer `-32601` (a typed
    /// error) both ways and the notifications are ignored (not handed to
    /// `extNotification`); a failed `proxy/initialize` leaves the
    /// connection to `initialize`.
    func testTheDefaultProxyChainHandlersAnswerMethodNotFound() async throws {
        final class Plain: Agent, @unchecked Sendable {
            let ext = Recorder<String>()
            func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
                InitializeResponse(protocolVersion: 1)
            }
            func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
                NewSessionResponse(sessionId: "s1")
            }
            func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
                PromptResponse(stopReason: .endTurn)
            }
            func extNotification(method: String, params: JSONValue?) async {
                ext.add(method)
            }
        }
        final class Quiet: Client, @unchecked Sendable {
            let ext = Recorder<String>()
            func extNotification(method: String, params: JSONValue?) async {
                ext.add(method)
            }
        }
        try await bounded {
            let agent = Plain()
            let client = Quiet()
            let (c, a) = try connectedPair(agent, client, options: Self.proxyChains)
            defer { a.close() }
            let initialize = await assertThrowsAcp { try await c.proxyInitialize(initRequest()) }
            XCTAssertEqual(initialize?.code, -32601)
            _ = try await c.initialize(initRequest())

            // Each notification is handled before the request sent after it.
            try await a.proxySuccessorNotification(ProxySuccessorNotification(method: "session/update"))
            let toConductor = await assertThrowsAcp { try await a.proxySuccessor(ProxySuccessorRequest(method: "session/new")) }
            XCTAssertEqual(toConductor?.code, -32601)
            try await c.proxySuccessorNotification(ProxySuccessorNotification(method: "session/cancel"))
            let toProxy = await assertThrowsAcp {
                try await c.proxySuccessor(ProxySuccessorRequest(method: "session/request_permission"))
            }
            XCTAssertEqual(toProxy?.code, -32601)
            XCTAssertEqual(client.ext.all, [])
            XCTAssertEqual(agent.ext.all, [])
            await c.shutdown()
        }
    }
}
