import Foundation
import InteropSupport
import LibACP

// The check sequence of tests/interop/README.md ("Client: the scripted check
// sequence"), steps 1 to 9; step 10 (closing) is in main.swift.
//
// Wire order: the Swift binding has no hook that taps the wire, so (as the
// Kotlin binding's InteropClient.kt) this client checks SDK delivery order:
// every session/update must have reached the `sessionUpdate` handler, in
// order, before the call it came with (prompt, load) returns (libacp's
// ordering barrier promises that for every update the agent wrote before
// its answer), and none may arrive between that call's return and the next
// call. Without a tap, an update written right behind the answer can still
// be handled before the caller resumes, and then counts as before it.

let streamCount = 50
/// How long the `wait` prompt must stay pending before session/cancel.
let cancelAfterNanoseconds: UInt64 = 100_000_000

/// A prompt's outcome: its result, the updates handled before it returned,
/// and the requests the agent made of the client meanwhile.
struct Turn {
    let result: PromptResponse
    let seen: [SessionUpdate]
    let requests: [Recorded]

    /// The texts of the turn's agent message chunks.
    var chunkTexts: [String?] { seen.filter { $0.kind == "agent_message_chunk" }.map(\.text) }
}

/// One entry of what session/load must replay.
struct HistoryEntry: Equatable {
    let kind: String
    let text: String?

    var description: String { "{\"sessionUpdate\":\(show(kind)),\"text\":\(show(text))}" }
}

/// The session the checks run in: sends the prompts and the load, and
/// collects what came with them. Used by one task at a time (the `wait`
/// prompt's task while the sequence awaits it).
final class Turns: @unchecked Sendable {
    let agent: ClientConnection
    let client: RecordingClient
    let sessionId: String
    /// What session/load must replay: each prompt text, then its agent text chunks.
    private(set) var history: [HistoryEntry] = []
    /// The last call made through `prompt` or `load`, for messages.
    private var last: String?

    init(agent: ClientConnection, client: RecordingClient, sessionId: String) {
        self.agent = agent
        self.client = client
        self.sessionId = sessionId
    }

    /// Fails if updates came in since the last call returned (after its
    /// response). Before the first call, drops them: an agent may send
    /// updates after session/new.
    func checkNoLateUpdates() throws {
        let late = client.takeUpdates()
        guard let after = last else { return }
        try expect(late.isEmpty, "\(late.count) session/update notifications arrived after the response of \(after): "
            + show(late.map(describe)))
    }

    /// The updates handled since the last call, which must all be decoded
    /// ones for this session.
    private func takeUpdates(_ what: String) throws -> [SessionUpdate] {
        try client.takeUpdates().map { delivered in
            switch delivered {
            case .update(let notification):
                try expect(notification.sessionId == sessionId,
                           "\(what): update for session \(show(notification.sessionId)), expected \(show(sessionId))")
                return notification.update
            case .undecodable(let params):
                throw CheckFailure("\(what): a session/update that does not decode: \(params?.jsonText ?? "no params")")
            }
        }
    }

    /// Sends one prompt; returns its result, the updates handled before it
    /// returned (libacp's ordering barrier: all of them) and the client
    /// requests the agent made meanwhile.
    func prompt(_ text: String) async throws -> Turn {
        try checkNoLateUpdates()
        history.append(HistoryEntry(kind: "user_message_chunk", text: text))
        let result = try await agent.prompt(PromptRequest(sessionId: sessionId, prompt: [.text(TextContent(text: text))]))
        last = "the prompt \(show(text))"
        let seen = try takeUpdates("prompt \(show(text))")
        for update in seen where update.kind == "agent_message_chunk" && update.text != nil {
            history.append(HistoryEntry(kind: update.kind, text: update.text))
        }
        return Turn(result: result, seen: seen, requests: client.takeRequests())
    }

    /// session/load of the session; returns the updates handled before it returned.
    func load(cwd: String) async throws -> [SessionUpdate] {
        try checkNoLateUpdates()
        _ = try await agent.loadSession(LoadSessionRequest(mcpServers: [], cwd: cwd, sessionId: sessionId))
        last = "session/load"
        return try takeUpdates("load")
    }
}

private func describe(_ delivered: Delivered) -> String {
    switch delivered {
    case .update(let notification): return notification.update.summary
    case .undecodable(let params): return "undecodable \(params?.jsonText ?? "")"
    }
}

/// The sequence from initialize to session/load (steps 1 to 9).
func runChecks(agent: ClientConnection, client: RecordingClient, workDir: String) async throws {
    let initialized = try await agent.initialize(InitializeRequest(
        protocolVersion: 1,
        clientCapabilities: ClientCapabilities(
            fs: FileSystemCapabilities(readTextFile: true, writeTextFile: true),
            terminal: true
        ),
        clientInfo: Implementation(name: "libacp-swift-interop-client", version: "0.1.0")
    ))
    try expect(initialized.protocolVersion == 1, "initialize answered protocolVersion \(initialized.protocolVersion)")
    try expect(initialized.agentCapabilities?.loadSession == true,
               "initialize answered agentCapabilities \(show(initialized.agentCapabilities)); loadSession true is needed")

    let created = try await agent.newSession(NewSessionRequest(cwd: workDir, mcpServers: []))
    try expect(!created.sessionId.isEmpty, "session/new answered \(show(created))")

    let turns = Turns(agent: agent, client: client, sessionId: created.sessionId)
    try await checkStream(turns)
    try await checkPermission(turns)
    try await checkRead(turns, workDir: workDir)
    try await checkWrite(turns, workDir: workDir)
    try await checkTerminal(turns)
    try await checkCancel(turns)
    try await checkLoad(turns, workDir: workDir)
    try turns.checkNoLateUpdates()
}

/// `stream 50`: the 50 chunks in order, all handled before the prompt returns.
func checkStream(_ turns: Turns) async throws {
    let turn = try await turns.prompt("stream \(streamCount)")
    try expect(turn.result.stopReason == .endTurn, "stream: stopReason \(turn.result.stopReason.rawValue)")
    let got = turn.seen.map { $0.kind == "agent_message_chunk" ? $0.text : $0.summary }
    let expected = (0..<streamCount).map { "chunk \($0)" }
    try expect(got == expected, "stream: before the response saw \(got.count) updates, expected \(streamCount) chunks "
        + "in order; first: \(show(Array(got.prefix(3)))), last: \(show(Array(got.suffix(3))))")
}

/// `permission`: tool_call, one session/request_permission (answered
/// allow_once), the chunk naming the option, tool_call_update `completed`.
func checkPermission(_ turns: Turns) async throws {
    let turn = try await turns.prompt("permission")
    try expect(turn.result.stopReason == .endTurn, "permission: stopReason \(turn.result.stopReason.rawValue)")
    try expect(turn.requests.map(\.method) == ["session/request_permission"],
               "permission: expected one session/request_permission, got \(show(turn.requests.map(\.method)))")
    let request = turn.requests[0].params
    try expect(request["sessionId"]?.stringValue == turns.sessionId,
               "permission: request for session \(request["sessionId"]?.jsonText ?? "none")")
    let options = request["options"]?.arrayValue ?? []
    let allow = options.first { $0["kind"]?.stringValue == "allow_once" }
    try expect(allow != nil && options.contains { $0["kind"]?.stringValue == "reject_once" },
               "permission: options \(JSONValue.array(options).jsonText)")

    let seen = turn.seen
    try expect(seen.count == 3,
               "permission: expected tool_call, chunk, tool_call_update; saw \(show(seen.map(\.summary)))")
    guard case .toolCall(let toolCall) = seen[0],
          (toolCall.status ?? .pending) == .pending, toolCall.kind == .edit, toolCall.title == "Edit file"
    else { throw CheckFailure("permission: first update \(show(seen[0]))") }
    let requestedId = request["toolCall"]?["toolCallId"]?.stringValue
    try expect(requestedId == toolCall.toolCallId,
               "permission: request is about tool call \(show(requestedId)), not \(show(toolCall.toolCallId))")
    let optionId = allow?["optionId"]?.stringValue ?? ""
    try expect(seen[1].kind == "agent_message_chunk" && seen[1].text == "permission: \(optionId)",
               "permission: expected chunk \(show("permission: \(optionId)")), saw \(seen[1].summary)")
    guard case .toolCallUpdate(let update) = seen[2], update.toolCallId == toolCall.toolCallId, update.status == .completed
    else { throw CheckFailure("permission: last update \(show(seen[2]))") }
}

/// `read TMP/a.txt`: one fs/read_text_file of that path, its answer as the one chunk.
func checkRead(_ turns: Turns, workDir: String) async throws {
    let file = (workDir as NSString).appendingPathComponent("a.txt")
    let turn = try await turns.prompt("read \(file)")
    try expect(turn.result.stopReason == .endTurn, "read: stopReason \(turn.result.stopReason.rawValue)")
    let r = turn.requests
    try expect(r.count == 1 && r[0].method == "fs/read_text_file" && r[0].params["path"]?.stringValue == file
                   && r[0].params["sessionId"]?.stringValue == turns.sessionId,
               "read: expected one fs/read_text_file of \(file), got \(show(r.map(\.description)))")
    try expect(turn.seen.count == 1 && turn.chunkTexts == [fileContent],
               "read: expected the one chunk \(show(fileContent)), saw \(show(turn.seen.map(\.summary)))")
}

/// `write TMP/b.txt hi`: one fs/write_text_file of `hi`, really written; the one chunk `wrote`.
func checkWrite(_ turns: Turns, workDir: String) async throws {
    let file = (workDir as NSString).appendingPathComponent("b.txt")
    let turn = try await turns.prompt("write \(file) hi")
    try expect(turn.result.stopReason == .endTurn, "write: stopReason \(turn.result.stopReason.rawValue)")
    let r = turn.requests
    try expect(r.count == 1 && r[0].method == "fs/write_text_file" && r[0].params["path"]?.stringValue == file
                   && r[0].params["content"]?.stringValue == "hi" && r[0].params["sessionId"]?.stringValue == turns.sessionId,
               "write: expected one fs/write_text_file of \(file) with \"hi\", got \(show(r.map(\.description)))")
    try expect((try? String(contentsOfFile: file, encoding: .utf8)) == "hi", "write: the file does not hold what was written")
    try expect(turn.seen.count == 1 && turn.chunkTexts == ["wrote"],
               "write: expected the one chunk \"wrote\", saw \(show(turn.seen.map(\.summary)))")
}

/// `terminal echo hi`: create, wait_for_exit, output, release of one terminal
/// running `sh -c "echo hi"`; its output `hi\n` as the one chunk.
func checkTerminal(_ turns: Turns) async throws {
    let turn = try await turns.prompt("terminal echo hi")
    try expect(turn.result.stopReason == .endTurn, "terminal: stopReason \(turn.result.stopReason.rawValue)")
    let methods = turn.requests.map(\.method)
    try expect(methods == ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"],
               "terminal: expected create, wait_for_exit, output, release; got \(show(methods))")
    let create = turn.requests[0].params
    try expect(create["command"]?.stringValue == "sh" && create["args"] == ["-c", "echo hi"],
               "terminal: created \(create.jsonText)")
    let ids = Set(turn.requests.dropFirst().map { $0.params["terminalId"]?.stringValue })
    try expect(ids.count == 1, "terminal: requests named terminals \(show(Array(ids)))")
    try expect(turn.seen.count == 1 && turn.chunkTexts == ["hi\n"],
               "terminal: expected the one chunk \"hi\\n\", saw \(show(turn.seen.map(\.summary)))")
}

/// `wait`: still pending after 100 ms; after session/cancel, stopReason `cancelled`.
func checkCancel(_ turns: Turns) async throws {
    let answered = Locked(false)
    let pending = Task { () async throws -> Turn in
        defer { answered.withLock { $0 = true } }
        return try await turns.prompt("wait")
    }
    try await Task.sleep(nanoseconds: cancelAfterNanoseconds)
    if answered.current {
        // Its error, if it failed; else the early answer.
        let turn = try await pending.value
        throw CheckFailure("wait: the prompt was answered (stopReason \(turn.result.stopReason.rawValue)) "
            + "before session/cancel was sent")
    }
    try await turns.agent.cancel(sessionId: turns.sessionId)
    let turn = try await pending.value
    try expect(turn.result.stopReason == .cancelled,
               "wait: after session/cancel, stopReason \(turn.result.stopReason.rawValue)")
}

/// session/load replays the whole history, in order, before it returns.
func checkLoad(_ turns: Turns, workDir: String) async throws {
    let got = try await turns.load(cwd: workDir).map { HistoryEntry(kind: $0.kind, text: $0.text) }
    let expected = turns.history
    guard got != expected else { return }
    func entry(_ entries: [HistoryEntry], _ i: Int) -> HistoryEntry? { i < entries.count ? entries[i] : nil }
    let at = (0..<max(got.count, expected.count)).first { entry(got, $0) != entry(expected, $0) } ?? 0
    let shown = { (entries: [HistoryEntry]) -> String in entry(entries, at)?.description ?? "null" }
    throw CheckFailure("load: before the response saw \(got.count) replayed updates, expected \(expected.count); "
        + "first difference at \(at): got \(shown(got)), expected \(shown(expected))")
}
