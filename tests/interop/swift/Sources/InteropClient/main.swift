import Foundation
import InteropSupport
import LibACP

// libacp-swift-interop-client: an ACP client on libacp's Swift binding
// (typed API) that runs the check sequence of tests/interop/README.md
// against one agent, reached one of two ways:
//
//   libacp-swift-interop-client -- AGENT_COMMAND [ARGS...]
//       spawns the agent (libacp puts it in its own process group); step 10
//       closes its stdin and requires exit code 0 within 5 s.
//   libacp-swift-interop-client --fds R W
//       talks over the inherited descriptors R (the agent's stdout) and W
//       (its stdin), for an agent this process cannot run (the official
//       TypeScript and Python agents, which live outside the Swift chroot):
//       whoever spawned the agent (run.py) waits for its exit; step 10 here
//       only closes W.
//
// Prints exactly one line on stdout, `OK` (exit 0) or `FAIL: <reason>`
// (exit 1). Gives up after 30 s, killing a spawned agent's process group
// and the client's terminals. The agent's stderr is passed through to ours.

let deadlineSeconds = 30
let exitGraceMilliseconds: UInt64 = 5_000

/// How the client reaches its agent.
enum AgentTarget {
    /// Spawn this command line.
    case spawn([String])
    /// Talk over these inherited descriptors.
    case fds(read: Int32, write: Int32)

    /// Parses the arguments; `nil` when they are neither form.
    init?(_ arguments: [String]) {
        if arguments.first == "--fds" {
            guard arguments.count == 3, let read = Int32(arguments[1]), let write = Int32(arguments[2]),
                  read >= 0, write >= 0 else { return nil }
            self = .fds(read: read, write: write)
        } else {
            let command = arguments.first == "--" ? Array(arguments.dropFirst()) : arguments
            guard !command.isEmpty else { return nil }
            self = .spawn(command)
        }
    }
}

/// What is left to clean up after a failure: the client's terminals, the agent.
final class Leftovers: Sendable {
    private let state = Locked<(client: RecordingClient?, agent: ClientConnection?)>((nil, nil))

    var client: RecordingClient? {
        get { state.current.client }
        set { state.withLock { $0.client = newValue } }
    }

    var agent: ClientConnection? {
        get { state.current.agent }
        set { state.withLock { $0.agent = newValue } }
    }

    /// Kills the terminals and a spawned agent's process group; closes the connection.
    func cleanUp() {
        client?.killAll()
        guard let agent else { return }
        if agent.connection.pid != nil && agent.connection.exitStatus == nil { agent.connection.killNow() }
        agent.close()
    }
}

/// The outcome of `withDeadline`.
enum Bounded<T> {
    case finished(T)
    case timedOut
}

/// Runs `operation` for at most `seconds`. On time-out, cancels it and
/// returns without waiting for it.
func withDeadline<T: Sendable>(seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> Bounded<T> {
    let outcome = Promise<Bounded<T>>()
    let work = Task { outcome.fulfil(.finished(await operation())) }
    let timer = Task {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        outcome.fulfil(.timedOut)
    }
    let result = await outcome.wait()
    work.cancel()
    timer.cancel()
    return result
}

/// Connects to the agent, runs the sequence, then closes (step 10).
func run(_ target: AgentTarget, workDir: String, leftovers: Leftovers) async throws {
    let client = RecordingClient(workDir: workDir)
    leftovers.client = client
    let agent = try connect(target, client: client)
    leftovers.agent = agent
    do {
        try await runChecks(agent: agent, client: client, workDir: workDir)
    } catch {
        // The connection closed under the sequence: say why. (A call can
        // fail `Closed` a moment before `closeReason` is set: wait for it.)
        guard !(error is CheckFailure) else { throw error }
        var reason = agent.connection.closeReason
        if reason == nil, case AcpError.Closed = error,
           case .finished(let closed) = await withDeadline(seconds: 1, { await agent.connection.closed() }) {
            reason = closed
        }
        guard let reason else { throw error }
        var exitNote = ""
        if case .spawn = target,
           case .finished(let status?) = await withDeadline(seconds: 1, { await agent.connection.waitExit() }) {
            exitNote = " (agent exited: code \(status.code.map(String.init) ?? "none"), signal \(status.signal.map(String.init) ?? "none"))"
        }
        throw CheckFailure("the connection closed (\(reason))\(exitNote): \(explain(error))")
    }
    try await closeAgent(agent, target)
}

/// Spawns the agent, or wraps the inherited descriptors.
func connect(_ target: AgentTarget, client: RecordingClient) throws -> ClientConnection {
    switch target {
    case .spawn(let argv):
        let command = AgentCommand(program: argv[0], args: Array(argv.dropFirst()))
        let ladder = ConnectOptions(graceAfterStdinCloseMs: exitGraceMilliseconds, graceAfterSigtermMs: 1_000)
        do {
            return try ClientConnection.spawn(command, client: client, options: ladder)
        } catch AcpError.Spawn(let program, let detail) {
            throw CheckFailure("cannot start agent \(show(program)): \(detail)")
        }
    case .fds(let read, let write):
        return try ClientConnection.fromFds(readFd: read, writeFd: write, client: client)
    }
}

/// Step 10: closes the agent's stdin. A spawned agent must then exit 0
/// within the grace period (`shutdown()` sends SIGTERM after it).
func closeAgent(_ agent: ClientConnection, _ target: AgentTarget) async throws {
    let graceSeconds = Double(exitGraceMilliseconds) / 1000
    guard case .finished = await withDeadline(seconds: 2 * graceSeconds, { await agent.shutdown() }) else {
        throw CheckFailure("the connection did not shut down within \(Int(2 * graceSeconds)) s")
    }
    guard case .spawn = target else { return }  // run.py checks a host agent's exit
    let finalStatus: ExitStatus?
    if let status = agent.connection.exitStatus {
        finalStatus = status
    } else {
        finalStatus = await agent.connection.waitExit()
    }
    guard let status = finalStatus else { throw CheckFailure("no exit status for the agent") }
    try expect(status.signal == nil, "agent still running \(Int(graceSeconds)) s after its stdin was closed "
        + "(ended by signal \(status.signal ?? 0))")
    try expect(status.code == 0, "agent exited with code \(status.code.map(String.init) ?? "none") after its stdin was closed")
}

/// A fresh directory under the temporary directory, symlinks resolved.
func makeWorkDir() throws -> String {
    var template = Array((NSTemporaryDirectory() as NSString)
        .appendingPathComponent("acp-interop-libacp-swift-XXXXXX").utf8CString)
    let made: String? = template.withUnsafeMutableBufferPointer { buffer in
        mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
    }
    guard let made else { throw CheckFailure("cannot create a temporary directory: errno \(errno)") }
    return URL(fileURLWithPath: made).resolvingSymlinksInPath().path
}

/// Prints the one result line and exits, once. A second caller (the
/// deadline racing the sequence) blocks until the first has exited.
final class Finisher: @unchecked Sendable {
    private let lock = NSLock()
    private let leftovers: Leftovers
    private let workDir: String?

    init(leftovers: Leftovers, workDir: String?) {
        self.leftovers = leftovers
        self.workDir = workDir
    }

    func finish(failure: String?) -> Never {
        lock.lock()  // never unlocked: this process ends here
        if failure != nil { leftovers.cleanUp() }
        leftovers.client?.killAll()
        if let workDir { try? FileManager.default.removeItem(atPath: workDir) }
        if let failure {
            let reason = failure.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            print("FAIL: \(reason)")
        } else {
            print("OK")
        }
        fflush(stdout)
        exit(failure == nil ? 0 : 1)
    }
}

// MARK: - main

guard let target = AgentTarget(Array(CommandLine.arguments.dropFirst())) else {
    print("FAIL: usage: libacp-swift-interop-client -- AGENT_COMMAND [ARGS...] | --fds READ_FD WRITE_FD")
    exit(1)
}
let leftovers = Leftovers()
let workDir: String
do {
    workDir = try makeWorkDir()
} catch {
    Finisher(leftovers: leftovers, workDir: nil).finish(failure: explain(error))
}
let finisher = Finisher(leftovers: leftovers, workDir: workDir)
DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(deadlineSeconds)) {
    finisher.finish(failure: "no result within \(deadlineSeconds) s")
}
do {
    try await run(target, workDir: workDir, leftovers: leftovers)
    finisher.finish(failure: nil)
} catch {
    finisher.finish(failure: explain(error))
}
