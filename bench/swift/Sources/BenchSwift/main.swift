// The bench client and agent on libacp's Swift binding (typed API):
//   bench-swift client WORKLOAD [ARGS] --fds R W
//   bench-swift agent
// The client talks to an agent that bench/swift/client.py spawned on the host
// (the Swift toolchain runs in a chroot where the other agents cannot), over
// the inherited descriptors R and W. `prompt()` returns after every
// session/update of the turn was handled (the core's ordering), so the driver
// has nothing to wait for.
import Foundation
import LibACP

let impl = "libacp-swift"

final class BenchAgent: Agent, @unchecked Sendable {
    weak var client: AgentConnection?
    private let sessions = Counter()
    private let lock = NSLock()
    private var made = 0

    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse {
        InitializeResponse(
            protocolVersion: 1,
            agentCapabilities: AgentCapabilities(promptCapabilities: PromptCapabilities(embeddedContext: true)))
    }

    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse {
        let n = lock.withLock { () -> Int in made += 1; return made }
        return NewSessionResponse(sessionId: "libacp-swift-\(n)")
    }

    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse {
        guard let client else { throw AcpError.Internal(detail: "no connection") }
        var text = ""
        for block in request.prompt {
            if case .text(let t) = block { text = t.text; break }
        }
        guard let (kind, n) = parseCommand(text) else {
            throw AcpError.InvalidParams(detail: "unknown bench command: \(text)")
        }
        switch kind {
        case "stream":
            for i in 0..<n {
                try await client.sessionUpdate(
                    sessionId: request.sessionId, .agentMessageChunk(ContentChunk(content: .text(TextContent(text: chunkText(i))))))
            }
        case "read":
            for i in 0..<n {
                let content = try await client.readTextFile(ReadTextFileRequest(sessionId: request.sessionId, path: readPath(i))).content
                guard content.utf8.count == readLen else {
                    throw AcpError.rpc(code: -32603, message: "read \(i): \(content.utf8.count) bytes")
                }
            }
        case "write":
            _ = try await client.writeTextFile(WriteTextFileRequest(sessionId: request.sessionId, path: writePath, content: textOf(n)))
        default:
            break
        }
        return PromptResponse(stopReason: .endTurn)
    }
}

final class BenchClient: Client, @unchecked Sendable {
    let tracker: Tracker
    init(_ tracker: Tracker) { self.tracker = tracker }

    func sessionUpdate(_ notification: SessionNotification) async {
        if case .agentMessageChunk(let chunk) = notification.update, case .text(let t) = chunk.content {
            tracker.chunk(notification.sessionId, t.text)
        }
    }

    func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse {
        do {
            return ReadTextFileResponse(content: try tracker.read(request.path))
        } catch {
            throw AcpError.InvalidParams(detail: "\(error)")
        }
    }

    func writeTextFile(_ request: WriteTextFileRequest, call: IncomingCall) async throws -> WriteTextFileResponse {
        do {
            try tracker.write(request.path, request.content)
            return WriteTextFileResponse()
        } catch {
            throw AcpError.InvalidParams(detail: "\(error)")
        }
    }
}

struct Peer: BenchPeer {
    let conn: ClientConnection

    func newSession() async throws -> String {
        try await conn.newSession(NewSessionRequest(cwd: sessionCwd, mcpServers: [])).sessionId
    }

    func prompt(_ session: String, _ text: String, _ resource: String?) async throws -> String {
        var blocks: [ContentBlock] = [.text(TextContent(text: text))]
        if let resource {
            blocks.append(.resource(EmbeddedResource(resource: ["text": .string(resource), "uri": .string(resourceURI)])))
        }
        return try await conn.prompt(PromptRequest(sessionId: session, prompt: blocks)).stopReason.rawValue
    }
}

func runClient(_ argv: [String]) async -> Int32 {
    let workload = argv.first ?? "?"
    do {
        let inv = try invocation(argv)
        let tracker = Tracker()
        let conn = try ClientConnection.fromFds(readFd: inv.readFd, writeFd: inv.writeFd, client: BenchClient(tracker))
        _ = try await conn.initialize(InitializeRequest(
            protocolVersion: 1,
            clientCapabilities: ClientCapabilities(fs: FileSystemCapabilities(readTextFile: true, writeTextFile: true))))
        let result = try await drive(inv.workload, inv.args, tracker, Peer(conn: conn))
        await conn.shutdown()
        emit(impl, inv.workload, result)
        return 0
    } catch {
        fail(impl, workload, error)
        return 1
    }
}

func runAgent() async -> Int32 {
    let agent = BenchAgent()
    do {
        let conn = try AgentConnection.serveStdio(agent)
        agent.client = conn
        await conn.terminated()
        return 0
    } catch {
        FileHandle.standardError.write(Data("bench-swift agent: \(error)\n".utf8))
        return 1
    }
}

let argv = Array(CommandLine.arguments.dropFirst())
switch argv.first {
case "agent":
    exit(await runAgent())
case "client":
    exit(await runClient(Array(argv.dropFirst())))
default:
    FileHandle.standardError.write(Data("usage: bench-swift (agent | client WORKLOAD [ARGS] --fds R W)\n".utf8))
    exit(2)
}
