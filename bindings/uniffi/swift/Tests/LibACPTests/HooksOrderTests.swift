import Foundation
import XCTest

@testable import LibACP

/// The trace and the engine's events reach the host in wire order with the
/// handlers, before the answer that follows them (issue 24, DESIGN.md
/// "Ordering"); `orderedHooks: false` delivers them at once.
final class HooksOrderTests: XCTestCase {
    /// A prompt streams an update, then reads a file through the client, three times.
    final class ReadingAgent: EchoAgent, @unchecked Sendable {
        let path: String
        init(path: String) { self.path = path }

        override func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
            for i in 0..<3 {
                try await connection?.sessionUpdate(
                    sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: text("\(i)"))))
                _ = try await connection?.readTextFile(ReadTextFileRequest(sessionId: request.sessionId, path: path))
            }
            return PromptResponse(stopReason: .endTurn)
        }
    }

    /// Records its handler, trace and events in the order they run.
    final class LoggingClient: Client, @unchecked Sendable {
        let log = Recorder<String>()
        func sessionUpdate(_ notification: SessionNotification) async { log.add("handled") }
        func onFrame(direction: WireDirection, frame: String) {
            log.add("\(direction == .incoming ? "in" : "out") \(frame)")
        }
        func onEngineEvent(_ event: EngineEvent) { log.add("event \(event.kind)") }
    }

    static func shape(_ entry: String) -> String {
        if entry.hasPrefix("in ") && entry.contains("session/update") { return "update" }
        if entry == "handled" { return "handled" }
        if entry.hasPrefix("in ") && entry.contains("fs/read_text_file") { return "read" }
        if entry == "event served" { return "served" }
        if entry.hasPrefix("out ") && entry.contains("\"content\":\"x\"") { return "answered" }
        if entry.hasPrefix("in ") && entry.contains("stopReason") { return "done" }
        if entry.hasPrefix("out ") && entry.contains("session/prompt") { return "prompt" }
        return "other: \(entry)"
    }

    func withPair(ordered: Bool?, _ body: @escaping @Sendable (Pair, LoggingClient) async throws -> Void) async throws {
        try await bounded {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("libacp-swift-hooks-\(UUID())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let file = dir.appendingPathComponent("f.txt")
            try "x".write(to: file, atomically: true, encoding: .utf8)
            let client = LoggingClient()
            let options = ConnectOptions(trace: true, events: true, orderedHooks: ordered, fs: true)
            let pair = try Pair(agent: ReadingAgent(path: file.path), client: client, options: options)
            _ = try await pair.client.initialize(initRequest())
            _ = try await pair.client.newSession(NewSessionRequest(cwd: dir.path, mcpServers: []))
            try await body(pair, client)
            await pair.close()
        }
    }

    func testTraceAndEngineEventsReachTheHostInWireOrderBeforeTheAnswer() async throws {
        try await withPair(ordered: nil) { pair, client in
            let step = ["update", "handled", "read", "served", "answered"]
            for turn in 0..<20 {
                client.log.clear()
                _ = try await pair.client.prompt(promptRequest("s1", "go"))
                let seen = client.log.all
                XCTAssertEqual(
                    seen.map(Self.shape), ["prompt"] + step + step + step + ["done"], "turn \(turn): \(seen)")
            }
        }
    }

    func testOrderedHooksOffStillDeliversEveryFrameAndEvent() async throws {
        try await withPair(ordered: false) { pair, client in
            _ = try await pair.client.prompt(promptRequest("s1", "go"))
            // Bounded: a hang detector.
            while true {
                let s = client.log.all.map(Self.shape)
                if s.filter({ $0 == "served" }).count == 3 && s.contains("done") { break }
                try await Task.sleep(nanoseconds: 5_000_000)
            }
        }
    }
}
