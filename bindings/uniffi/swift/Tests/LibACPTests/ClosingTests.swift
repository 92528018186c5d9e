import Foundation
import XCTest
@testable import LibACP

/// Closing: pending calls fail at once, nothing is left behind.
final class ClosingTests: XCTestCase {
    private static func isClosed<T>(_ outcome: Result<T, Error>) -> Bool {
        if case .failure(AcpError.Closed) = outcome { return true }
        return false
    }

    func testClosingFailsPendingCallsAtOnceAndIsIdempotent() async throws {
        try await bounded {
            let agent = ParkingAgent()
            let pair = try Pair(agent: agent, client: RecordingClient())
            _ = try await pair.client.initialize(initRequest())
            let connection = pair.client.connection
            let pending = (1...5).map { _ in Task { try await connection.call("_test/park") } }
            _ = await agent.started.wait()
            XCTAssertNil(connection.closeReason)
            await pair.client.shutdown()
            for call in pending {
                let outcome = await call.result
                XCTAssertTrue(Self.isClosed(outcome), "\(outcome)")
            }
            XCTAssertNotNil(connection.closeReason)
            await pair.client.shutdown()
            pair.client.close()
            // New calls fail at once too.
            let again = await assertThrowsAcp { try await connection.call("_test/park") }
            guard case .Closed? = again else { return XCTFail("\(String(describing: again))") }
            // The agent side sees the end of the stream.
            let reason = await pair.agentSide.connection.closed()
            XCTAssertFalse(reason.isEmpty)
            pair.agentSide.close()
            pair.agentSide.close()
        }
    }

    func testThePeerClosingFailsTheCallsWaitingOnIt() async throws {
        try await bounded {
            let (pair, _, call) = try await parkedCall()
            await pair.agentSide.connection.shutdown()
            let outcome = await call.result
            XCTAssertTrue(Self.isClosed(outcome), "\(outcome)")
            await pair.close()
        }
    }

    /// libacp's threads in this process, as its runtime counts them
    /// (`runtimeThreads()`). Not the threads named `libacp` in
    /// /proc/self/task: a Dispatch worker started from a libacp thread (a
    /// handler runs on the thread that delivered its request) inherits the
    /// name, and Dispatch's pool grows and shrinks on its own.
    private func libacpThreads() -> Int {
        Int(runtimeThreads())
    }

    func testASpawnedAgentIsGoneAfterShutdownAndNoThreadIsLeftPerConnection() async throws {
        let path = testBinary("official-rust-agent")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return XCTFail("\(path) is missing: run cargo build -p libacp-tests --bins")
        }
        try await bounded {
            // Warm up: libacp's runtime (two threads for the whole process).
            let warm = try AcpConnection.spawn(AgentCommand(program: path))
            await warm.shutdown()
            let before = self.libacpThreads()
            // The runtime's workers are there: the count sees libacp's threads.
            XCTAssertGreaterThan(before, 0)
            for _ in 0..<5 {
                let conn = try ClientConnection.spawn(AgentCommand(program: path), client: RecordingClient())
                _ = try await conn.initialize(initRequest())
                _ = try await conn.newSession(NewSessionRequest(cwd: "/tmp", mcpServers: []))
                let pid = try XCTUnwrap(conn.connection.pid)
                await conn.shutdown()
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
                XCTAssertTrue(stat == nil || stat!.contains(") Z "), "agent \(pid) still runs")
                XCTAssertNotNil(conn.connection.exitStatus)
                conn.close()
            }
            // Threads that belong to the finished connections end shortly after
            // (tokio keeps an idle blocking thread for 10 s): a hang detector.
            var after = self.libacpThreads()
            var waited = 0
            while after > before && waited < 600 {
                try await Task.sleep(nanoseconds: 50_000_000)
                waited += 1
                after = self.libacpThreads()
            }
            XCTAssertLessThanOrEqual(after, before, "threads before \(before), after \(after)")
        }
    }

    func testAProgramThatCannotStartThrowsSpawn() throws {
        XCTAssertThrowsError(try AcpConnection.spawn(AgentCommand(program: "/nonexistent/agent"))) { error in
            guard case AcpError.Spawn(let program, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(program, "/nonexistent/agent")
        }
        XCTAssertThrowsError(try AcpConnection.spawn(AgentCommand(program: ""))) { error in
            guard case AcpError.InvalidArgument = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try AcpConnection.spawn(AgentCommand(program: "x"), options: ConnectOptions(requireAuth: true))) {
            error in
            guard case AcpError.InvalidArgument = error else { return XCTFail("\(error)") }
        }
    }

    func testTheAgentsStderrReachesTheHostLineByLine() async throws {
        struct Lines: AcpHandler {
            let lines = Recorder<String>()
            let done = Latch<Bool>()
            func onStderr(_ line: String) {
                lines.add(line)
                if line == "two" { done.fire(true) }
            }
        }
        try await bounded {
            let handler = Lines()
            let conn = try AcpConnection.spawn(
                AgentCommand(program: "/bin/sh", args: ["-c", "echo one >&2; echo two >&2; sleep 30"]),
                handler: handler, options: ConnectOptions(stderr: true))
            _ = await handler.done.wait()
            XCTAssertEqual(handler.lines.all, ["one", "two"])
            conn.killNow()
            await conn.shutdown()
        }
    }

    func testDescriptorsThatAreNotOpenAreRefused() {
        XCTAssertThrowsError(try AcpConnection.fromFds(role: .client, readFd: 100_000, writeFd: 100_000)) { error in
            guard case AcpError.InvalidArgument(let detail) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(detail.contains("100000"), detail)
        }
    }
}
