import Foundation
import InteropSupport
import LibACP

/// The text the client's `fs/read_text_file` handler answers, whatever the path.
let fileContent = "hello from client"

/// A request the agent made of the client: its method and params as they
/// arrived on the wire.
struct Recorded: CustomStringConvertible {
    let method: String
    let params: JSONValue

    var description: String { JSONValue.array([.string(method), params]).jsonText }
}

/// A `session/update` as the client's handlers got it.
enum Delivered {
    /// Decoded by the typed layer.
    case update(SessionNotification)
    /// Its params did not decode as a `SessionNotification`; the typed layer
    /// handed it to `extNotification`.
    case undecodable(JSONValue?)
}

/// The client's handlers: they record what the agent asks and answer as an
/// editor would (permission: the `allow_once` option; fs: a fixed text for
/// reads, real writes; terminals: real processes). Every method it
/// implements is declared here, in the type that conforms to `Client` (a
/// subclass could not replace the protocol's defaults).
final class RecordingClient: Client, Sendable {
    /// Where terminals run when the agent names no cwd.
    let workDir: String
    private let updates = Locked<[Delivered]>([])
    private let requests = Locked<[Recorded]>([])
    private let terminals = Locked<[String: Terminal]>([:])
    private let terminalCount = Locked(0)

    init(workDir: String) {
        self.workDir = workDir
    }

    /// The updates handled since the last call, in order; clears them.
    func takeUpdates() -> [Delivered] {
        updates.withLock { updates in
            defer { updates.removeAll() }
            return updates
        }
    }

    /// The requests received since the last call, in order; clears them.
    func takeRequests() -> [Recorded] {
        requests.withLock { requests in
            defer { requests.removeAll() }
            return requests
        }
    }

    private func record(_ call: IncomingCall) {
        // Absent params are recorded as JSON null.
        let params: JSONValue = (try? call.params) ?? .null
        requests.withLock { $0.append(Recorded(method: call.method, params: params)) }
    }

    // MARK: notifications

    func sessionUpdate(_ notification: SessionNotification) async {
        updates.withLock { $0.append(.update(notification)) }
    }

    func extNotification(method: String, params: JSONValue?) async {
        if method == "session/update" {
            updates.withLock { $0.append(.undecodable(params)) }
        } else {
            writeStderr("swift-libacp-client: ignored notification \(method)")
        }
    }

    // MARK: permission and files

    func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse {
        record(call)
        guard let option = request.options.first(where: { $0.kind == .allowOnce }) else {
            return RequestPermissionResponse(outcome: .cancelled)
        }
        return RequestPermissionResponse(outcome: .selected(SelectedPermissionOutcome(optionId: option.optionId)))
    }

    func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse {
        record(call)
        return ReadTextFileResponse(content: fileContent)
    }

    func writeTextFile(_ request: WriteTextFileRequest, call: IncomingCall) async throws -> WriteTextFileResponse {
        record(call)
        try request.content.write(toFile: request.path, atomically: false, encoding: .utf8)
        return WriteTextFileResponse()
    }

    // MARK: terminals

    func createTerminal(_ request: CreateTerminalRequest, call: IncomingCall) async throws -> CreateTerminalResponse {
        record(call)
        let terminal = Terminal(
            command: request.command, args: request.args ?? [], cwd: request.cwd ?? workDir,
            env: request.env ?? [], limit: request.outputByteLimit.map { Int(clamping: $0) })
        let terminalId = terminalCount.withLock { count in
            defer { count += 1 }
            return "term-\(count)"
        }
        terminals.withLock { $0[terminalId] = terminal }
        return CreateTerminalResponse(terminalId: terminalId)
    }

    func terminalOutput(_ request: TerminalOutputRequest, call: IncomingCall) async throws -> TerminalOutputResponse {
        let terminal = try recordTerminal(call, request.terminalId)
        let (output, truncated) = terminal.output
        return TerminalOutputResponse(output: output, truncated: truncated, exitStatus: terminal.exit.valueIfSet)
    }

    func waitForTerminalExit(_ request: WaitForTerminalExitRequest, call: IncomingCall) async throws -> WaitForTerminalExitResponse {
        let status = try await recordTerminal(call, request.terminalId).exit.wait()
        return WaitForTerminalExitResponse(exitCode: status.exitCode, signal: status.signal)
    }

    func killTerminal(_ request: KillTerminalRequest, call: IncomingCall) async throws -> KillTerminalResponse {
        try recordTerminal(call, request.terminalId).kill()
        return KillTerminalResponse()
    }

    func releaseTerminal(_ request: ReleaseTerminalRequest, call: IncomingCall) async throws -> ReleaseTerminalResponse {
        try recordTerminal(call, request.terminalId).kill()
        terminals.withLock { _ = $0.removeValue(forKey: request.terminalId) }
        return ReleaseTerminalResponse()
    }

    /// Records a terminal request; returns the terminal it names (else `-32602`).
    private func recordTerminal(_ call: IncomingCall, _ terminalId: String) throws -> Terminal {
        record(call)
        guard let terminal = terminals.withLock({ $0[terminalId] }) else {
            throw AcpError.rpc(code: -32602, message: "Invalid params", data: .string("unknown terminal \(terminalId)"))
        }
        return terminal
    }

    /// Kills every terminal still running (when the client gives up).
    func killAll() {
        for terminal in terminals.withLock({ Array($0.values) }) { terminal.kill() }
    }
}
