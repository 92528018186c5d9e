import Foundation
import XCTest
@testable import LibACP

/// A hang detector, not a speed requirement: far above what any test needs
/// on a slow, loaded machine (seconds).
let limit: UInt64 = 60

struct TimedOut: Error, CustomStringConvertible {
    var description: String { "the test did not finish within \(limit) s (a hang)" }
}

/// Runs a test's `body` under `limit` (`Scenarios.within`: the body runs in
/// a task of its own, so a body stuck where cancellation does not reach still
/// ends the test with `TimedOut` instead of hanging the suite).
func bounded(_ body: @escaping @Sendable () async throws -> Void) async throws {
    let outcome = await Scenarios.within(TimeInterval(limit)) { () -> Result<Void, Error> in
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }
    guard let outcome else { throw TimedOut() }
    try outcome.get()
}

/// The repository root (from this file's path).
let repo = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A binary of `cargo build -p libacp-tests --bins` (built by scripts/test-swift.sh).
func testBinary(_ name: String) -> String {
    repo.appendingPathComponent("target/debug/\(name)").path
}

/// A thread-safe box for what handlers record.
final class Recorder<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [T] = []

    func add(_ item: T) { lock.withLock { items.append(item) } }
    var all: [T] { lock.withLock { items } }
    func clear() { lock.withLock { items.removeAll() } }
}

func text(_ s: String) -> ContentBlock { .text(TextContent(text: s)) }

func initRequest(fs: Bool = false) -> InitializeRequest {
    InitializeRequest(
        protocolVersion: 1,
        clientCapabilities: ClientCapabilities(fs: FileSystemCapabilities(readTextFile: fs, writeTextFile: fs))
    )
}

func promptRequest(_ session: String, _ s: String) -> PromptRequest {
    PromptRequest(sessionId: session, prompt: [text(s)])
}

/// An agent for in-process pairs: one session `s1`; a prompt streams the
/// words of its text as `agent_message_chunk`s, then ends `end_turn`.
/// `connection` is set once the pair is made (a weak reference: the
/// connection owns the agent through its handler).
class EchoAgent: Agent, @unchecked Sendable {
    weak var connection: AgentConnection?

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        InitializeResponse(protocolVersion: 1)
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        NewSessionResponse(sessionId: "s1")
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        for block in request.prompt {
            guard case .text(let t) = block else { continue }
            for word in t.text.split(separator: " ") {
                try await connection?.sessionUpdate(
                    sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: text(String(word)))))
            }
        }
        return PromptResponse(stopReason: .endTurn)
    }

    func extMethod(_ call: IncomingCall) async throws -> JSONValue {
        throw AcpError.methodNotFound(call.method)
    }
}

/// An agent whose `_test/park` handler waits until it is cancelled.
final class ParkingAgent: EchoAgent, @unchecked Sendable {
    let started = Latch<Bool>()
    let sawCancel = Latch<Bool>()

    override func extMethod(_ call: IncomingCall) async throws -> JSONValue {
        started.fire(true)
        do {
            try await parkUntilCancelled()
        } catch {
            sawCancel.fire(call.isCancelled)
            throw error
        }
        return .null
    }
}

/// A pair whose agent parks `_test/park`, and the client's call of it,
/// sent and parked in the agent's handler.
func parkedCall() async throws -> (pair: Pair, agent: ParkingAgent, call: Task<JSONValue, Error>) {
    let agent = ParkingAgent()
    let pair = try Pair(agent: agent, client: RecordingClient())
    _ = try await pair.client.initialize(initRequest())
    let connection = pair.client.connection
    let call = Task { try await connection.call("_test/park") }
    _ = await agent.started.wait()
    return (pair, agent, call)
}

/// A client that records the text of every agent message chunk.
class RecordingClient: Client, @unchecked Sendable {
    let seen = Recorder<String>()

    func sessionUpdate(_ notification: SessionNotification) async {
        if case .agentMessageChunk(let chunk) = notification.update, case .text(let t) = chunk.content {
            seen.add(t.text)
        }
    }
}

/// A client and an agent over a socket pair, in this process.
final class Pair {
    let client: ClientConnection
    let agentSide: AgentConnection

    init(agent: EchoAgent, client: Client, options: ConnectOptions = ConnectOptions()) throws {
        let fds = try socketPair()
        agentSide = try AgentConnection.fromFds(readFd: fds[1], writeFd: fds[1], agent: agent)
        agent.connection = agentSide
        self.client = try ClientConnection.fromFds(readFd: fds[0], writeFd: fds[0], client: client, options: options)
    }

    func close() async {
        await client.shutdown()
        agentSide.close()
    }
}

/// A client and an agent over a socket pair, in this process, both sides
/// with `options`.
func connectedPair(
    _ agent: Agent, _ client: Client, options: ConnectOptions
) throws -> (client: ClientConnection, agent: AgentConnection) {
    let fds = try socketPair()
    let agentSide = try AgentConnection.fromFds(readFd: fds[1], writeFd: fds[1], agent: agent, options: options)
    let clientSide = try ClientConnection.fromFds(readFd: fds[0], writeFd: fds[0], client: client, options: options)
    return (clientSide, agentSide)
}

/// Asserts that `body` throws an `AcpError` and returns it.
func assertThrowsAcp<T>(
    _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
) async -> AcpError? {
    do {
        let value = try await body()
        XCTFail("expected an AcpError, got \(value)", file: file, line: line)
    } catch let e as AcpError {
        return e
    } catch {
        XCTFail("expected an AcpError, got \(error)", file: file, line: line)
    }
    return nil
}

/// A value set once that tasks can wait for (the tests' `CompletableDeferred`).
final class Latch<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?
    private var waiters: [CheckedContinuation<T, Never>] = []

    /// Sets the value (the first call wins) and wakes the waiters.
    func fire(_ v: T) {
        let woken: [CheckedContinuation<T, Never>] = lock.withLock {
            guard value == nil else { return [] }
            value = v
            defer { waiters.removeAll() }
            return waiters
        }
        for w in woken { w.resume(returning: v) }
    }

    /// Waits for the value (bounded by the test's `limit`).
    func wait() async -> T {
        await withCheckedContinuation { c in
            let ready: T? = lock.withLock {
                if let value { return value }
                waiters.append(c)
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    var isFired: Bool { lock.withLock { value != nil } }
}

/// Sleeps until the task is cancelled (then throws `CancellationError`).
func parkUntilCancelled() async throws {
    while true {
        try await Task.sleep(nanoseconds: 3_600_000_000_000)
    }
}

