// The typed layer's routing tables (Typed.swift) against the core's method
// table (`protocolMethods(side:)`).
import XCTest
@testable import LibACP

final class RoutingTests: XCTestCase {
    /// A method as the routing tables and the core's table both say it:
    /// its name and whether it is a notification.
    struct Row: Hashable {
        let name: String
        let notification: Bool
    }

    static func rows(_ routes: [String: Route], _ notifications: [String: NotificationRoute]) -> Set<Row> {
        Set(routes.keys.map { Row(name: $0, notification: false) })
            .union(notifications.keys.map { Row(name: $0, notification: true) })
    }

    static func core(_ side: AcpRole) -> Set<Row> {
        Set(protocolMethods(side: side).map { Row(name: $0.name, notification: $0.notification) })
    }

    /// The typed layer routes exactly the methods the core's table has
    /// each side handle, stable and unstable, requests as requests and
    /// notifications as notifications (`mcp/message` is a request to the
    /// client and a notification to the agent), so a method the core learns
    /// cannot go missing here unnoticed.
    func testTheTypedRoutingTablesCoverTheCoresMethods() {
        let client = ClientHost(RecordingClient())
        XCTAssertEqual(Self.rows(client.routes, client.notifications), Self.core(.client))
        let agent = AgentHost(EchoAgent())
        XCTAssertEqual(Self.rows(agent.routes, agent.notifications), Self.core(.agent))
        XCTAssertTrue(Self.core(.client).contains(Row(name: "mcp/message", notification: false)))
        XCTAssertTrue(Self.core(.agent).contains(Row(name: "mcp/message", notification: true)))
        // The proxy chain: a proxy (agent) handles proxy/initialize and
        // proxy/successor of both kinds, a conductor (client) proxy/successor.
        XCTAssertTrue(Self.core(.agent).contains(Row(name: "proxy/initialize", notification: false)))
        for side in [AcpRole.agent, .client] {
            XCTAssertTrue(Self.core(side).contains(Row(name: "proxy/successor", notification: false)), "\(side)")
            XCTAssertTrue(Self.core(side).contains(Row(name: "proxy/successor", notification: true)), "\(side)")
        }
    }

    /// The core's table names the feature of each unstable method, as the
    /// option `unstable` takes it; the stable methods have none.
    func testUnstableMethodsNameTheirFeature() {
        let agent = Dictionary(
            protocolMethods(side: .agent).map { ($0.name, $0.feature) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(agent["session/fork"], .some("unstable_session_fork"))
        XCTAssertEqual(agent["providers/set"], .some("unstable_llm_providers"))
        XCTAssertEqual(agent["session/prompt"], .some(nil))
        let unstable = Set(protocolMethods(side: .agent).compactMap(\.feature) + protocolMethods(side: .client).compactMap(\.feature))
        XCTAssertEqual(unstable, [
            "unstable_auth_status", "unstable_llm_providers", "unstable_mcp_over_acp", "unstable_proxy_chains",
            "unstable_session_archive", "unstable_session_fork", "unstable_session_set_title", "unstable_session_status",
        ])
    }
}
