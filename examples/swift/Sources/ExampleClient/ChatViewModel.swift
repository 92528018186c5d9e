import Foundation
import LibACP

/// What a macOS app's view would show: the transcript so far and whether a
/// turn is running. In an app this is an `ObservableObject` on the main
/// actor (`@Published var transcript`); here the view is a closure, so the
/// example also runs on Linux.
final class ChatViewModel: Client, @unchecked Sendable {
    struct State: Sendable {
        var agentName = ""
        var transcript = ""
        var plan: [String] = []
        var busy = false
    }

    private let lock = NSLock()
    private var state = State()
    private let render: @Sendable (State) -> Void
    private var client: ClientConnection?
    private var sessionId: String?

    /// `render` is called after every change (from libacp's tasks).
    init(render: @escaping @Sendable (State) -> Void) {
        self.render = render
    }

    private func update(_ change: (inout State) -> Void) {
        let now = lock.withLock { () -> State in change(&state); return state }
        render(now)
    }

    /// Spawns the agent (its stderr comes to `onStderr`), initializes and
    /// opens a session in `cwd`.
    func connect(to command: AgentCommand, cwd: String) async throws {
        try await start(try ClientConnection.spawn(command, client: self, options: ConnectOptions(stderr: true)), cwd: cwd)
    }

    /// Connects to the remote agent at `url` (`ws://`, `http://`, ...),
    /// initializes and opens a session in `cwd`.
    func connect(to url: String, options: ConnectOptions = ConnectOptions(), cwd: String) async throws {
        try await start(try await ClientConnection.connect(url: url, client: self, options: options), cwd: cwd)
    }

    private func start(_ client: ClientConnection, cwd: String) async throws {
        self.client = client
        let initialized = try await client.initialize(InitializeRequest(
            protocolVersion: 1,
            clientCapabilities: ClientCapabilities(),
            clientInfo: Implementation(name: "libacp-swift-example-client", version: "0.1.0")
        ))
        update { $0.agentName = initialized.agentInfo?.name ?? "(unnamed agent)" }
        sessionId = try await client.newSession(NewSessionRequest(cwd: cwd, mcpServers: [])).sessionId
    }

    /// Sends one prompt; returns when the turn has ended (every update it
    /// streamed has been rendered by then).
    func send(_ text: String) async throws -> StopReason {
        guard let client, let sessionId else { throw AcpError.InvalidArgument(detail: "not connected") }
        update { $0.busy = true; $0.transcript += "> \(text)\n" }
        defer { update { $0.busy = false; $0.transcript += "\n" } }
        let answer = try await client.prompt(PromptRequest(sessionId: sessionId, prompt: [.text(TextContent(text: text))]))
        return answer.stopReason
    }

    /// The stop button: the turn ends `cancelled`.
    func stop() async throws {
        if let client, let sessionId { try await client.cancel(sessionId: sessionId) }
    }

    /// Closes the connection and waits for the agent to exit.
    func disconnect() async {
        await client?.shutdown()
        client = nil
    }

    // MARK: Client

    func sessionUpdate(_ notification: SessionNotification) async {
        switch notification.update {
        case .agentMessageChunk(let chunk):
            if case .text(let t) = chunk.content { update { $0.transcript += t.text } }
        case .plan(let plan):
            update { $0.plan = plan.entries.map { "\($0.content) (\($0.status.rawValue))" } }
        default:
            break
        }
    }

    func onStderr(_ line: String) {
        FileHandle.standardError.write(Data("  agent stderr: \(line)\n".utf8))
    }
}
