import Foundation
import InteropSupport
import LibACP

// An ACP agent on libacp's Swift binding (typed API): the Swift counterpart
// of bindings/uniffi/kotlin/src/test/kotlin/dev/libacp/interop/InteropAgent.kt.
// It implements the whole prompt command vocabulary of tests/interop/README.md
// (`stream N`, `permission`, `read PATH`, `write PATH TEXT`,
// `terminal CMD...`, `wait`), advertises `loadSession` and records each
// session's history (the prompt texts as `user_message_chunk`s, the agent's
// text chunks) as the turns run; `session/load` replays it as
// `session/update`s before its answer. An unknown session is `-32002` with
// `data.sessionId`; an unknown command `-32602`.

/// Writes one line to stderr (stdout carries only ACP messages).
func log(_ message: String) {
    writeStderr("swift-libacp-agent: \(message)")
}

/// One session: its cwd (from session/new, replaced by session/load) and
/// the history session/load replays.
final class Session: Sendable {
    private let state: Locked<(cwd: String, history: [SessionUpdate])>

    init(cwd: String) { state = Locked((cwd, [])) }

    var cwd: String {
        get { state.withLock { $0.cwd } }
        set { state.withLock { $0.cwd = newValue } }
    }

    var history: [SessionUpdate] { state.withLock { $0.history } }

    func record(_ update: SessionUpdate) { state.withLock { $0.history.append(update) } }
}

/// A text chunk from the user (the history's prompt texts) or the agent.
func textChunk(user: Bool, _ text: String) -> SessionUpdate {
    let chunk = ContentChunk(content: .text(TextContent(text: text)))
    return user ? .userMessageChunk(chunk) : .agentMessageChunk(chunk)
}

/// `text` split at its first space: the command and its argument text.
func partition(_ text: String) -> (head: String, rest: String) {
    guard let space = text.firstIndex(of: " ") else { return (text, "") }
    return (String(text[..<space]), String(text[text.index(after: space)...]))
}

/// `-32602` with a sentence as `data`, for a prompt the agent cannot run.
func invalidParams(_ why: String) -> AcpError {
    AcpError.rpc(code: -32602, message: "Invalid params", data: .string(why))
}

/// The interop agent's handlers. It declares every method it implements
/// itself (the `Agent` protocol's defaults are picked statically).
final class InteropAgent: Agent, Sendable {
    /// The connection, once `serveStdio` returned (handlers wait for it).
    let connection = Promise<AgentConnection>()
    private let sessions = Locked<[String: Session]>([:])
    private let toolCalls = Locked(0)

    /// The session `sessionId`, or `-32002` with `data.sessionId`.
    private func session(_ sessionId: String) throws -> Session {
        guard let session = sessions.withLock({ $0[sessionId] }) else {
            throw AcpError.rpc(code: -32002, message: "Resource not found", data: ["sessionId": .string(sessionId)])
        }
        return session
    }

    private func nextToolCallId() -> String {
        toolCalls.withLock { count in
            count += 1
            return "call-\(count)"
        }
    }

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        if request.protocolVersion != 1 {
            log("client asked for protocol version \(request.protocolVersion); answering 1")
        }
        return InitializeResponse(
            protocolVersion: 1,
            agentCapabilities: AgentCapabilities(
                loadSession: true,
                promptCapabilities: PromptCapabilities(image: true, audio: false, embeddedContext: true)
            ),
            authMethods: [],
            agentInfo: Implementation(name: "libacp-swift-interop-agent", version: "0.1.0")
        )
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        let sessionId = "swift-\(UUID().uuidString.lowercased())"
        sessions.withLock { $0[sessionId] = Session(cwd: request.cwd) }
        return NewSessionResponse(sessionId: sessionId)
    }

    /// Replays the session's history as `session/update`s, then answers `{}`.
    func loadSession(_ request: LoadSessionRequest, call: IncomingCall) async throws -> LoadSessionResponse {
        let session = try session(request.sessionId)
        session.cwd = request.cwd
        let client = await connection.wait()
        for update in session.history {
            try await client.sessionUpdate(sessionId: request.sessionId, update)
        }
        return LoadSessionResponse()
    }

    func cancel(_ notification: CancelNotification) async {
        // libacp has already cancelled the session's prompt task.
        if sessions.withLock({ $0[notification.sessionId] }) == nil {
            log("session/cancel for unknown session \(notification.sessionId)")
        }
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        let session = try session(request.sessionId)
        let text = request.prompt.lazy.compactMap { block -> String? in
            if case .text(let content) = block { return content.text }
            return nil
        }.first ?? ""
        session.record(textChunk(user: true, text))
        let turn = Turn(
            client: await connection.wait(), sessionId: request.sessionId, session: session,
            nextToolCallId: nextToolCallId
        )
        return PromptResponse(stopReason: try await turn.run(text, call: call))
    }
}

/// One prompt turn: runs one command of the vocabulary.
struct Turn {
    let client: AgentConnection
    let sessionId: String
    let session: Session
    let nextToolCallId: () -> String

    private func update(_ update: SessionUpdate) async throws {
        try await client.sessionUpdate(sessionId: sessionId, update)
    }

    /// Sends an agent text chunk and records it in the history.
    private func say(_ text: String) async throws {
        let chunk = textChunk(user: false, text)
        session.record(chunk)
        try await update(chunk)
    }

    /// Runs `command`; returns the turn's stop reason.
    func run(_ command: String, call: IncomingCall) async throws -> StopReason {
        let (verb, rest) = partition(command)
        switch verb {
        case "stream":
            guard let n = Int(rest), n >= 0 else { throw invalidParams("stream needs a count, not \(rest)") }
            for i in 0..<n { try await say("chunk \(i)") }
        case "permission":
            if try await permission() == .cancelled { return .cancelled }
        case "read":
            let path = rest.trimmingCharacters(in: .whitespaces)
            try await say(client.readTextFile(ReadTextFileRequest(sessionId: sessionId, path: path)).content)
        case "write":
            let (path, content) = partition(rest)
            _ = try await client.writeTextFile(WriteTextFileRequest(sessionId: sessionId, path: path, content: content))
            try await say("wrote")
        case "terminal":
            try await terminal(rest)
        case "wait":
            // Until session/cancel (or $/cancel_request): libacp cancels this
            // task and answers `stopReason: cancelled`.
            try await parkUntilCancelled()
        default:
            throw invalidParams("unknown prompt \"\(command)\"")
        }
        // A session/cancel during the turn makes it `cancelled`.
        return call.isCancelled ? .cancelled : .endTurn
    }

    /// tool_call, session/request_permission, the chunk naming the outcome,
    /// tool_call_update; returns the outcome.
    private func permission() async throws -> RequestPermissionOutcome {
        let toolCallId = nextToolCallId()
        try await update(.toolCall(ToolCall(toolCallId: toolCallId, title: "Edit file", kind: .edit, status: .pending)))
        let outcome = try await client.requestPermission(RequestPermissionRequest(
            sessionId: sessionId,
            toolCall: ToolCallUpdate(toolCallId: toolCallId),
            options: [
                PermissionOption(optionId: "allow_once", name: "Allow", kind: .allowOnce),
                PermissionOption(optionId: "reject_once", name: "Reject", kind: .rejectOnce),
            ]
        )).outcome
        var allowed = false
        switch outcome {
        case .selected(let selected):
            try await say("permission: \(selected.optionId)")
            allowed = selected.optionId.hasPrefix("allow")
        case .cancelled:
            try await say("permission: cancelled")
        case .unrecognized(let raw):
            throw invalidParams("unknown permission outcome \(raw)")
        }
        try await update(.toolCallUpdate(ToolCallUpdate(toolCallId: toolCallId, status: allowed ? .completed : .failed)))
        return outcome
    }

    /// terminal/create of `sh -c CMD` in the session's cwd, wait_for_exit,
    /// output (sent as one chunk), release (also when the turn fails).
    private func terminal(_ commandLine: String) async throws {
        let terminalId = try await client.createTerminal(CreateTerminalRequest(
            sessionId: sessionId, command: "sh", args: ["-c", commandLine], cwd: session.cwd
        )).terminalId
        do {
            _ = try await client.waitForTerminalExit(WaitForTerminalExitRequest(sessionId: sessionId, terminalId: terminalId))
            try await say(client.terminalOutput(TerminalOutputRequest(sessionId: sessionId, terminalId: terminalId)).output)
        } catch {
            await release(terminalId)
            throw error
        }
        await release(terminalId)
    }

    /// terminal/release, even from a cancelled turn: an unstructured task
    /// does not inherit the cancellation (which would abandon the call).
    private func release(_ terminalId: String) async {
        let request = ReleaseTerminalRequest(sessionId: sessionId, terminalId: terminalId)
        let client = self.client
        let done = Task {
            do {
                _ = try await client.releaseTerminal(request)
            } catch {
                log("terminal/release of \(terminalId): \(error)")
            }
        }
        await done.value
    }
}
