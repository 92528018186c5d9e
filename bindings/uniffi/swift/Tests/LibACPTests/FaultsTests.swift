import Foundation
import XCTest
@testable import LibACP

/// Fault injection through the Swift binding: the shared fault agents of
/// `tests/faults/` (see its README; tests/rust/faults.rs is the core's
/// version). Spawn failures are `AcpError.Spawn` naming the OS error; an
/// agent killed in the middle of a permission request, of a frame or while
/// its terminal runs, one that closes its stdout, one that stops reading and
/// one flooding its stderr never leave a call pending, the host's request
/// alive or a process running; and after rounds of every fault the process
/// holds no more descriptors, libacp threads or children than before.
///
/// Every wait is a hang detector (`waitFor`, tens of seconds), never a speed
/// requirement.
final class FaultsTests: XCTestCase {
    // MARK: - helpers

    /// A hang: `what` did not happen within its limit.
    struct Hang: Error, CustomStringConvertible {
        let what: String
        let seconds: TimeInterval
        var description: String { "hang: \(what) did not happen within \(Int(seconds)) s" }
    }

    /// Runs `work`, throwing `Hang` naming `what` if it takes longer than
    /// `seconds` (a hang detector, not a speed requirement).
    private static func waitFor<T: Sendable>(
        _ what: String, _ seconds: TimeInterval = 60, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = await Scenarios.within(seconds) { () -> Result<T, Error> in
            do { return .success(try await work()) } catch { return .failure(error) }
        }
        guard let outcome else { throw Hang(what: what, seconds: seconds) }
        return try outcome.get()
    }

    /// Polls `condition` until it holds (bounded by `waitFor`).
    private static func until(
        _ what: String, _ seconds: TimeInterval = 60, _ condition: @escaping @Sendable () -> Bool
    ) async throws {
        try await waitFor(what, seconds) {
            while !condition() { try await Task.sleep(nanoseconds: 10_000_000) }
        }
    }

    private static let faults = repo.appendingPathComponent("tests/faults")

    /// A fault agent of tests/faults.
    private static func agent(_ name: String, args: [String] = []) -> AgentCommand {
        AgentCommand(program: faults.appendingPathComponent(name).path, args: args)
    }

    /// `options` with the short shutdown ladder the fault agents get.
    private static func ladder(_ options: ConnectOptions = ConnectOptions()) -> ConnectOptions {
        var options = options
        options.graceAfterStdinCloseMs = 200
        options.graceAfterSigtermMs = 200
        return options
    }

    /// Spawns `command` (with the short ladder), then `initialize` and
    /// `session/new` (session `s1`).
    private static func client(
        _ command: AgentCommand, handler: AcpHandler = DefaultHandler(), options: ConnectOptions = ConnectOptions()
    ) async throws -> AcpConnection {
        let conn = try AcpConnection.spawn(command, handler: handler, options: ladder(options))
        _ = try await waitFor("initialize") { try await conn.callJSON("initialize", paramsJSON: #"{"protocolVersion":1}"#) }
        _ = try await waitFor("session/new") {
            try await conn.callJSON("session/new", paramsJSON: #"{"cwd":"/tmp","mcpServers":[]}"#)
        }
        return conn
    }

    private static func prompt(_ text: String = "go") -> String {
        JSONValue.object([
            "sessionId": "s1",
            "prompt": .array([.object(["type": "text", "text": .string(text)])]),
        ]).jsonText
    }

    /// Starts `session/prompt` with `params` in a task; the latch gets its outcome.
    private static func startPrompt(_ conn: AcpConnection, _ params: String) -> Latch<Result<String, Error>> {
        let outcome = Latch<Result<String, Error>>()
        Task {
            do {
                outcome.fire(.success(try await conn.callJSON("session/prompt", paramsJSON: params)))
            } catch {
                outcome.fire(.failure(error))
            }
        }
        return outcome
    }

    private static func assertClosed(
        _ outcome: Result<String, Error>, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .failure(AcpError.Closed) = outcome else {
            return XCTFail("the prompt's outcome: \(outcome)", file: file, line: line)
        }
    }

    /// A thread-safe counter (the stderr lines).
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    /// Runs the fault agent `name`: the prompt fails with the close, and the
    /// agent is gone afterwards.
    private static func thePromptFailsWithTheClose(_ name: String) async throws {
        let conn = try await client(agent(name))
        defer { conn.close() }
        let outcome = startPrompt(conn, prompt())
        assertClosed(try await waitFor("the prompt fails") { await outcome.wait() })
        try await waitFor("terminated") { await conn.terminated() }
        XCTAssertNotNil(conn.exitStatus, "the agent is gone")
    }

    // MARK: - the faults

    private static func spawnFailuresAreClearErrorsAtOnce() {
        let cases: [(AgentCommand, ConnectOptions, String)] = [
            (AgentCommand(program: "/nonexistent/acp-agent"), ConnectOptions(), "No such file"),
            (agent("not_executable.sh"), ConnectOptions(), "ermission denied"),
            (agent("stops_reading.sh"), ConnectOptions(cwd: "/nonexistent/missing-dir"), "No such file"),
        ]
        for (command, options, says) in cases {
            do {
                let conn = try AcpConnection.spawn(command, options: ladder(options))
                conn.close()
                XCTFail("spawned \(command)")
            } catch AcpError.Spawn(let program, let detail) {
                XCTAssertEqual(program, command.program)
                XCTAssertTrue(detail.contains(says), "\(command.program): \(detail)")
            } catch {
                XCTFail("\(command.program): \(error)")
            }
        }
    }

    /// A host whose permission dialog stays open until the request is
    /// cancelled; the user then clicks (a late answer).
    struct Dialog: AcpHandler {
        let opened = Latch<String>()
        /// Whether the handler saw its task cancelled and the call marked cancelled.
        let cancelled = Latch<Bool>()
        let click = Latch<Bool>()
        let answered = Latch<Bool>()

        func onRequest(_ call: IncomingCall) async throws -> JSONValue {
            opened.fire(call.method)
            do {
                try await parkUntilCancelled()
            } catch {
                cancelled.fire(error is CancellationError && Task.isCancelled && call.isCancelled)
            }
            _ = await click.wait()
            defer { answered.fire(true) }
            return .object(["outcome": .object(["outcome": "selected", "optionId": "a"])])
        }
    }

    private static let round = Counter()

    /// The agent asks permission during a prompt, then is killed (SIGKILL)
    /// while the host's handler holds the request: the prompt fails with the
    /// close, the handler's task is cancelled (its dialog can close), and a
    /// late answer goes nowhere and harms nothing.
    private static func killedWhileTheHostHoldsAPermissionRequest() async throws {
        round.add()
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("libacp-faults-\(getpid())-\(round.value)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let dialog = Dialog()
        let conn = try await client(agent("killed_mid_permission.sh", args: [dir.path]), handler: dialog)
        defer { conn.close() }
        let outcome = startPrompt(conn, prompt())
        let method = try await waitFor("the permission request reaches the handler") { await dialog.opened.wait() }
        XCTAssertEqual(method, "session/request_permission")
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent("go").path, contents: nil))
        assertClosed(try await waitFor("the prompt fails") { await outcome.wait() })
        let sawCancel = try await waitFor("the handler's task is cancelled") { await dialog.cancelled.wait() }
        XCTAssertTrue(sawCancel, "CancellationError, Task.isCancelled and call.isCancelled")
        dialog.click.fire(true)
        _ = try await waitFor("the late answer") { await dialog.answered.wait() }
        try await waitFor("terminated") { await conn.terminated() }
        XCTAssertEqual(conn.exitStatus?.signal, 9, "killed: \(String(describing: conn.exitStatus))")
        XCTAssertNotNil(conn.closeReason)
    }

    /// The agent dies halfway through a frame: the half frame is never delivered, the prompt fails.
    private static func killedInTheMiddleOfWritingAFrame() async throws {
        try await thePromptFailsWithTheClose("killed_mid_frame.sh")
    }

    /// The agent closes its stdout but keeps reading: the prompt fails, the shutdown ladder ends it.
    private static func stdoutClosedWhileTheAgentRuns() async throws {
        try await thePromptFailsWithTheClose("stdout_closed.sh")
    }

    struct StderrLines: AcpHandler {
        let lines = Counter()
        func onStderr(_ line: String) { lines.add() }
    }

    /// 20 MB of stderr while it answers: the answer arrives, the host got every line.
    private static func aStderrFloodDoesNotStopTheConnection() async throws {
        let handler = StderrLines()
        let conn = try await client(agent("stderr_flood.sh"), handler: handler, options: ConnectOptions(stderr: true))
        defer { conn.close() }
        let answer = try await waitFor("the answer after the flood") {
            try await conn.callJSON("session/prompt", paramsJSON: prompt())
        }
        XCTAssertEqual(try JSONValue.parse(answer)["stopReason"]?.stringValue, "end_turn")
        try await until("every stderr line") { handler.lines.value >= 20_000 }
        XCTAssertEqual(handler.lines.value, 20_000)
        try await waitFor("shutdown") { await conn.shutdown() }
        try await waitFor("terminated") { await conn.terminated() }
    }

    /// The agent has the core's terminal service start `sleep 300`, then is
    /// killed: the prompt fails with the close, and the terminal's process is
    /// stopped and reaped while the host still holds the connection.
    private static func killedWhileItsTerminalRuns() async throws {
        let before = children()
        let conn = try await client(agent("killed_mid_terminal.sh"), options: ConnectOptions(terminals: true))
        defer { conn.close() }
        let outcome = startPrompt(conn, prompt())
        assertClosed(try await waitFor("the prompt fails") { await outcome.wait() })
        try await waitFor("terminated") { await conn.terminated() }
        let exit = conn.exitStatus
        XCTAssertEqual(
            exit?.signal, 9,
            "the agent is killed after its terminal started (\(String(describing: exit)); code 3: no terminalId)")
        // `conn` is still open here (not closed, not freed).
        try await until("the terminal's process is reaped (before: \(before) children)") { children() <= before }
    }

    /// The agent stops reading while a 16 MiB prompt is written: `shutdown`
    /// (the close that waits) returns without waiting for the write, the
    /// prompt fails with the close, the shutdown ladder ends the agent.
    private static func aPeerThatStopsReadingCannotHangTheClose() async throws {
        // The trace hook runs when the writer takes a frame, before writing
        // it: once the prompt is traced, its write has begun (and cannot
        // finish), so the close below meets a blocked write.
        let tracer = Recorder()
        let conn = try await client(agent("stops_reading.sh"), handler: tracer, options: ConnectOptions(trace: true))
        defer { conn.close() }
        let outcome = startPrompt(conn, prompt(String(repeating: "x", count: 16 << 20)))
        try await until("the prompt's write begins") { tracer.sawFrame { $0 == .outgoing && $1.utf8.count > 1 << 20 } }
        try await waitFor("shutdown (close)") { await conn.shutdown() }
        assertClosed(try await waitFor("the prompt fails") { await outcome.wait() })
        try await waitFor("terminated") { await conn.terminated() }
        XCTAssertNotNil(conn.exitStatus, "the agent is gone")
    }

    /// Records what the trace and the engine's events hand over.
    final class Recorder: AcpHandler, @unchecked Sendable {
        private let lock = NSLock()
        private var frames: [(WireDirection, String)] = []
        private var events: [EngineEvent] = []

        func onFrame(direction: WireDirection, frame: String) {
            lock.withLock { frames.append((direction, frame)) }
        }

        func onEngineEvent(_ event: EngineEvent) {
            lock.withLock { events.append(event) }
        }

        func sawFrame(_ matching: (WireDirection, String) -> Bool) -> Bool {
            lock.withLock { frames.contains { matching($0.0, $0.1) } }
        }

        var frameCount: Int { lock.withLock { frames.count } }
        var seenEvents: [EngineEvent] { lock.withLock { events } }
    }

    /// The agent writes a response to a request nobody made (id 99) before
    /// its prompt's answer: with `trace` and `events` on, the handler
    /// sees the frames both ways, the stray one among them, and an
    /// `unmatched_response` event naming id 99; with them off, neither hook
    /// is called.
    private static func aStrayResponseIsTracedAndReported() async throws {
        for on in [true, false] {
            let recorder = Recorder()
            let conn = try await client(
                agent("stray_response.sh"), handler: recorder, options: ConnectOptions(trace: on, events: on))
            defer { conn.close() }
            _ = try await waitFor("the prompt's answer") { try await conn.callJSON("session/prompt", paramsJSON: prompt()) }
            if !on {
                XCTAssertEqual(recorder.frameCount, 0, "no trace unless asked")
                XCTAssertEqual(recorder.seenEvents, [], "no engine events unless asked")
                continue
            }
            // The event is reported as the stray frame is read, before the
            // answer after it; polled all the same (a hang detector).
            try await until("the engine event") { !recorder.seenEvents.isEmpty }
            let event = recorder.seenEvents[0]
            XCTAssertEqual(event.kind, "unmatched_response", "\(event)")
            guard case .object(let details) = try JSONValue.parse(event.details) else {
                return XCTFail("details are not an object: \(event)")
            }
            XCTAssertEqual(details["id"], .int(99), "\(event)")
            XCTAssertTrue(recorder.sawFrame { $0 == .outgoing && $1.contains(#""initialize""#) }, "initialize traced")
            XCTAssertTrue(recorder.sawFrame { $0 == .incoming && $1.contains(#""id":99"#) }, "the stray frame traced")
            XCTAssertTrue(recorder.sawFrame { $0 == .incoming && $1.contains("end_turn") }, "the answer traced")
        }
    }

    private static func aRound() async throws {
        spawnFailuresAreClearErrorsAtOnce()
        try await killedWhileTheHostHoldsAPermissionRequest()
        try await killedInTheMiddleOfWritingAFrame()
        try await stdoutClosedWhileTheAgentRuns()
        try await aStderrFloodDoesNotStopTheConnection()
        try await killedWhileItsTerminalRuns()
        try await aPeerThatStopsReadingCannotHangTheClose()
        try await aStrayResponseIsTracedAndReported()
    }

    // MARK: - one test per fault

    func testSpawnFailuresAreSpawnErrorsNamingTheOSError() {
        Self.spawnFailuresAreClearErrorsAtOnce()
    }

    func testKilledWhileTheHostHoldsAPermissionRequest() async throws {
        try await bounded { try await Self.killedWhileTheHostHoldsAPermissionRequest() }
    }

    func testKilledInTheMiddleOfWritingAFrame() async throws {
        try await bounded { try await Self.killedInTheMiddleOfWritingAFrame() }
    }

    func testStdoutClosedWhileTheAgentRuns() async throws {
        try await bounded { try await Self.stdoutClosedWhileTheAgentRuns() }
    }

    func testAStderrFloodDoesNotStopTheConnection() async throws {
        try await bounded { try await Self.aStderrFloodDoesNotStopTheConnection() }
    }

    func testKilledWhileItsTerminalRunsTheTerminalIsReapedWhileTheConnectionIsHeld() async throws {
        try await bounded { try await Self.killedWhileItsTerminalRuns() }
    }

    func testAPeerThatStopsReadingCannotHangTheClose() async throws {
        try await bounded { try await Self.aPeerThatStopsReadingCannotHangTheClose() }
    }

    func testAStrayResponseIsTracedAndReportedOnlyWhenAsked() async throws {
        try await bounded { try await Self.aStrayResponseIsTracedAndReported() }
    }

    /// After a warm-up round (libacp's runtime, lazy statics), two rounds of
    /// every fault leave the process with no more open descriptors, libacp
    /// threads or child processes than before (polled for up to 60 s:
    /// descriptors and threads are released asynchronously as tasks end, and
    /// tokio keeps an idle blocking thread for 10 s).
    ///
    /// Threads: only libacp's are counted, as its runtime counts them
    /// (`runtimeThreads()`: workers and blocking pool), as ClosingTests
    /// does. Not the threads named `libacp` in /proc/self/task: a Dispatch
    /// worker started from a libacp thread inherits that name, and Swift's
    /// cooperative pool and Dispatch's workers grow and shrink on their own.
    /// All threads are printed for the record.
    func testFaultsFailPendingCallsPromptlyAndLeakNothing() async throws {
        let outcome = await Scenarios.within(600) { () -> Result<Void, Error> in
            do {
                try await Self.aRound()
                let baseline = Held.now()
                print("FaultsTests baseline: \(baseline)")
                for _ in 0..<2 { try await Self.aRound() }
                do {
                    try await Self.until("the process settles back") { Held.now().noMoreThan(baseline) }
                } catch is Hang {
                    XCTFail("leaked: before \(baseline), after \(Held.now())")
                }
                print("FaultsTests after: \(Held.now())")
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        guard let outcome else { throw Hang(what: "the leak check", seconds: 600) }
        try outcome.get()
    }

    // MARK: - what the process holds

    struct Held: CustomStringConvertible {
        let fds: Int
        let libacpThreads: Int
        let children: Int
        let allThreads: Int

        static func now() -> Held {
            Held(
                fds: FaultsTests.entries("/proc/self/fd").count,
                libacpThreads: FaultsTests.libacpThreads(),
                children: FaultsTests.children(),
                allThreads: FaultsTests.entries("/proc/self/task").count)
        }

        func noMoreThan(_ baseline: Held) -> Bool {
            fds <= baseline.fds && libacpThreads <= baseline.libacpThreads && children <= baseline.children
        }

        var description: String {
            "fds \(fds), libacp threads \(libacpThreads), children \(children) (all threads \(allThreads))"
        }
    }

    private static func entries(_ dir: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    }

    /// libacp's threads in this process (its runtime's count).
    private static func libacpThreads() -> Int {
        Int(runtimeThreads())
    }

    /// This process's children (zombies included): /proc/PID/stat whose ppid is this process.
    private static func children() -> Int {
        let me = String(getpid())
        return entries("/proc").filter { entry in
            guard entry.allSatisfy(\.isNumber),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.range(of: ")", options: .backwards)
            else { return false }
            // pid (comm) state ppid ...
            let fields = stat[close.upperBound...].split(separator: " ")
            return fields.count > 1 && fields[1] == me
        }.count
    }
}
