// The typed layer's routing tables (Typed.swift) against the core's method
// table (`protocolMethods(side:)`).
import XCTest
@testable import LibACP

final class RoutingTests: XCTestCase {
    /// The typed layer routes exactly the methods the core's table has
    /// each side handle (requests and notifications), so a method the
    /// core learns cannot go missing here unnoticed.
    func testTheTypedRoutingTablesCoverTheCoresMethods() {
        let client = ClientHost(RecordingClient())
        XCTAssertEqual(
            Set(client.routes.keys).union(client.notifications.keys), Set(protocolMethods(side: .client)))
        XCTAssertTrue(Set(client.routes.keys).isDisjoint(with: client.notifications.keys))
        let agent = AgentHost(EchoAgent())
        XCTAssertEqual(
            Set(agent.routes.keys).union(agent.notifications.keys), Set(protocolMethods(side: .agent)))
        XCTAssertTrue(Set(agent.routes.keys).isDisjoint(with: agent.notifications.keys))
    }
}
