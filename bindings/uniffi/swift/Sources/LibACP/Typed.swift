import Foundation

// The typed layer: the ACP v1 methods with the Codable models of
// Models.swift (generated from the schema). Members a model does not name
// are kept in its `extra`, so nothing a peer sends is lost; the dynamic API
// of the same connection (`.connection`) serves extensions.

extension AcpConnection {
    /// Calls `method` with `params` encoded and the result decoded as `R`
    /// (a result that does not decode throws `AcpError.InvalidResult`).
    public func call<P: Encodable, R: Decodable>(_ method: String, _ params: P, as: R.Type = R.self) async throws -> R {
        try JSON.decode(R.self, await callJSON(method, paramsJSON: JSON.encode(params)), params: false)
    }

    /// Sends notification `method` with `params` encoded.
    public func notify<P: Encodable>(_ method: String, _ params: P) async throws {
        try await notifyJSON(method, paramsJSON: JSON.encode(params))
    }
}

/// Serves a request by decoding its params as `P` (a failure answers
/// `-32602`) and encoding the handler's `R`.
struct Route: Sendable {
    let serve: @Sendable (IncomingCall) async throws -> String

    static func of<P: Decodable, R: Encodable>(
        _: P.Type, _ handle: @escaping @Sendable (P, IncomingCall) async throws -> R
    ) -> Route {
        Route { call in
            try JSON.encode(try await handle(JSON.decode(P.self, call.paramsJSON, params: true), call))
        }
    }
}

/// Hands a notification to its typed handler when its params decode as
/// `P`; `handle` returns `false` when they do not (the notification then
/// goes to `extNotification`, so nothing is lost).
struct NotificationRoute: Sendable {
    let handle: @Sendable (String?) async -> Bool

    static func of<P: Decodable>(_: P.Type, _ handle: @escaping @Sendable (P) async -> Void) -> NotificationRoute {
        NotificationRoute { params in
            guard let p = try? JSON.decode(P.self, params, params: true) else { return false }
            await handle(p)
            return true
        }
    }
}

// MARK: - Client

/// The client side's handlers: what an editor answers. Every method has a
/// default that answers `-32601` (or ignores a notification); implement
/// those whose capabilities the client advertises. Handlers run in their
/// own tasks; a request's task is cancelled when the peer cancels it.
public protocol Client: Sendable {
    /// `session/request_permission`; its task is cancelled when the turn is
    /// cancelled (libacp then answers `cancelled`).
    func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse
    /// `fs/read_text_file`.
    func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse
    /// `fs/write_text_file`.
    func writeTextFile(_ request: WriteTextFileRequest, call: IncomingCall) async throws -> WriteTextFileResponse
    /// `terminal/create`.
    func createTerminal(_ request: CreateTerminalRequest, call: IncomingCall) async throws -> CreateTerminalResponse
    /// `terminal/output`.
    func terminalOutput(_ request: TerminalOutputRequest, call: IncomingCall) async throws -> TerminalOutputResponse
    /// `terminal/release`.
    func releaseTerminal(_ request: ReleaseTerminalRequest, call: IncomingCall) async throws -> ReleaseTerminalResponse
    /// `terminal/wait_for_exit`.
    func waitForTerminalExit(_ request: WaitForTerminalExitRequest, call: IncomingCall) async throws -> WaitForTerminalExitResponse
    /// `terminal/kill`.
    func killTerminal(_ request: KillTerminalRequest, call: IncomingCall) async throws -> KillTerminalResponse
    /// `elicitation/create`.
    func createElicitation(_ request: CreateElicitationRequest, call: IncomingCall) async throws -> CreateElicitationResponse
    /// `session/update`, in order; a prompt returns only after the updates
    /// the agent sent before its answer were handled here. An update that
    /// does not decode reaches `extNotification` instead (nothing is lost).
    func sessionUpdate(_ notification: SessionNotification) async
    /// `elicitation/complete`.
    func completeElicitation(_ notification: CompleteElicitationNotification) async
    /// `mcp/message` to an MCP server this client provides over ACP
    /// (unstable: `ConnectOptions(unstable: ["mcp_over_acp"])`).
    func mcpMessage(_ request: MessageMcpRequest, call: IncomingCall) async throws -> MessageMcpResponse
    /// `auth/status_update` (unstable: `ConnectOptions(unstable: ["auth_status"])`).
    func authStatusUpdate(_ notification: AuthStatusUpdateNotification) async
    /// `proxy/successor` from a proxy this client conducts (unstable:
    /// `ConnectOptions(unstable: ["proxy_chains"])`): a request the proxy
    /// forwards to its successor; the answer is the successor's result,
    /// unchanged (JSON).
    func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse
    /// `proxy/successor` notifications from a proxy: one it forwards to its
    /// successor (`proxy_chains`).
    func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async
    /// A request of another method (an extension).
    func extMethod(_ call: IncomingCall) async throws -> JSONValue
    /// A notification of another method (an extension), or one whose
    /// params did not decode.
    func extNotification(method: String, params: JSONValue?) async
    /// A line of the agent's stderr (libacp thread; with `ConnectOptions(stderr: true)`).
    func onStderr(_ line: String)
    /// A traced frame, with `ConnectOptions(trace: true)`: see `AcpHandler.onFrame`.
    func onFrame(direction: WireDirection, frame: String)
    /// An engine event, with `ConnectOptions(events: true)`: see `AcpHandler.onEngineEvent`.
    func onEngineEvent(_ event: EngineEvent)
}

extension Client {
    public func requestPermission(_ request: RequestPermissionRequest, call: IncomingCall) async throws -> RequestPermissionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func readTextFile(_ request: ReadTextFileRequest, call: IncomingCall) async throws -> ReadTextFileResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func writeTextFile(_ request: WriteTextFileRequest, call: IncomingCall) async throws -> WriteTextFileResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func createTerminal(_ request: CreateTerminalRequest, call: IncomingCall) async throws -> CreateTerminalResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func terminalOutput(_ request: TerminalOutputRequest, call: IncomingCall) async throws -> TerminalOutputResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func releaseTerminal(_ request: ReleaseTerminalRequest, call: IncomingCall) async throws -> ReleaseTerminalResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func waitForTerminalExit(_ request: WaitForTerminalExitRequest, call: IncomingCall) async throws -> WaitForTerminalExitResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func killTerminal(_ request: KillTerminalRequest, call: IncomingCall) async throws -> KillTerminalResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func createElicitation(_ request: CreateElicitationRequest, call: IncomingCall) async throws -> CreateElicitationResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func sessionUpdate(_ notification: SessionNotification) async {}
    public func completeElicitation(_ notification: CompleteElicitationNotification) async {}
    public func mcpMessage(_ request: MessageMcpRequest, call: IncomingCall) async throws -> MessageMcpResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func authStatusUpdate(_ notification: AuthStatusUpdateNotification) async {}
    public func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async {}
    public func extMethod(_ call: IncomingCall) async throws -> JSONValue {
        throw AcpError.methodNotFound(call.method)
    }
    public func extNotification(method: String, params: JSONValue?) async {}
    public func onStderr(_ line: String) {}
    public func onFrame(direction: WireDirection, frame: String) {}
    public func onEngineEvent(_ event: EngineEvent) {}
}

/// The client's routing tables: every method the core's table has the
/// client handle (`protocolMethods(side: .client)`, checked by a test).
struct ClientHost: RawHost {
    let client: Client
    let routes: [String: Route]
    let notifications: [String: NotificationRoute]

    init(_ client: Client) {
        self.client = client
        routes = [
            "session/request_permission": .of(RequestPermissionRequest.self) { try await client.requestPermission($0, call: $1) },
            "fs/read_text_file": .of(ReadTextFileRequest.self) { try await client.readTextFile($0, call: $1) },
            "fs/write_text_file": .of(WriteTextFileRequest.self) { try await client.writeTextFile($0, call: $1) },
            "terminal/create": .of(CreateTerminalRequest.self) { try await client.createTerminal($0, call: $1) },
            "terminal/output": .of(TerminalOutputRequest.self) { try await client.terminalOutput($0, call: $1) },
            "terminal/release": .of(ReleaseTerminalRequest.self) { try await client.releaseTerminal($0, call: $1) },
            "terminal/wait_for_exit": .of(WaitForTerminalExitRequest.self) { try await client.waitForTerminalExit($0, call: $1) },
            "terminal/kill": .of(KillTerminalRequest.self) { try await client.killTerminal($0, call: $1) },
            "elicitation/create": .of(CreateElicitationRequest.self) { try await client.createElicitation($0, call: $1) },
            "mcp/message": .of(MessageMcpRequest.self) { try await client.mcpMessage($0, call: $1) },
            "proxy/successor": .of(ProxySuccessorRequest.self) { try await client.proxySuccessor($0, call: $1) },
        ]
        notifications = [
            "session/update": .of(SessionNotification.self) { await client.sessionUpdate($0) },
            "elicitation/complete": .of(CompleteElicitationNotification.self) { await client.completeElicitation($0) },
            "auth/status_update": .of(AuthStatusUpdateNotification.self) { await client.authStatusUpdate($0) },
            "proxy/successor": .of(ProxySuccessorNotification.self) { await client.proxySuccessorNotification($0) },
        ]
    }

    func request(_ call: IncomingCall) async throws -> String {
        if let route = routes[call.method] { return try await route.serve(call) }
        return try await client.extMethod(call).jsonText
    }

    func notification(method: String, params: String?) async {
        if let route = notifications[method], await route.handle(params) { return }
        await client.extNotification(method: method, params: params.flatMap { try? JSONValue.parse($0) })
    }

    func stderr(_ line: String) {
        client.onStderr(line)
    }

    func frame(direction: WireDirection, frame: String) {
        client.onFrame(direction: direction, frame: frame)
    }

    func engineEvent(_ event: EngineEvent) {
        client.onEngineEvent(event)
    }
}

/// The client side with typed ACP methods. `connection` is the same
/// connection's dynamic API (extensions, capabilities, closing).
public final class ClientConnection: Sendable {
    public let connection: AcpConnection

    private init(_ connection: AcpConnection) {
        self.connection = connection
    }

    /// Connects to the remote agent at `url` (`ws://`, `wss://`, `http://`,
    /// `https://`); `client` answers what it asks. Throws as
    /// `AcpConnection.connect(url:handler:options:)` (`AcpError.Remote`
    /// for a failed connect, `.InvalidArgument` for an option that does
    /// not apply).
    public static func connect(url: String, client: Client, options: ConnectOptions = ConnectOptions()) async throws -> ClientConnection {
        ClientConnection(try await AcpConnection.connecting(host: ClientHost(client)) {
            try await remoteConnect(url: url, handler: $0, options: options)
        })
    }

    /// Spawns the agent `command` (its `cwd`, `env`, `stderr`... are
    /// options); `client` answers what it asks.
    public static func spawn(_ command: AgentCommand, client: Client, options: ConnectOptions = ConnectOptions()) throws -> ClientConnection {
        ClientConnection(try AcpConnection(host: ClientHost(client)) {
            try Connection.spawn(command: command, handler: $0, options: options)
        })
    }

    /// Over descriptors the caller gives up (see `AcpConnection.fromFds`).
    public static func fromFds(readFd: Int32, writeFd: Int32, client: Client, options: ConnectOptions = ConnectOptions()) throws -> ClientConnection {
        ClientConnection(try AcpConnection(host: ClientHost(client)) {
            try Connection.fromFds(role: .client, readFd: readFd, writeFd: writeFd, handler: $0, options: options)
        })
    }

    /// `initialize`.
    public func initialize(_ request: InitializeRequest) async throws -> InitializeResponse {
        try await connection.call("initialize", request)
    }
    /// `authenticate`.
    public func authenticate(_ request: AuthenticateRequest) async throws -> AuthenticateResponse {
        try await connection.call("authenticate", request)
    }
    /// `logout` (refused unless the agent advertised it).
    public func logout(_ request: LogoutRequest) async throws -> LogoutResponse {
        try await connection.call("logout", request)
    }
    /// `session/new`.
    public func newSession(_ request: NewSessionRequest) async throws -> NewSessionResponse {
        try await connection.call("session/new", request)
    }
    /// `session/load` (refused unless the agent advertised `loadSession`).
    public func loadSession(_ request: LoadSessionRequest) async throws -> LoadSessionResponse {
        try await connection.call("session/load", request)
    }
    /// `session/list` (refused unless advertised).
    public func listSessions(_ request: ListSessionsRequest) async throws -> ListSessionsResponse {
        try await connection.call("session/list", request)
    }
    /// `session/resume` (refused unless advertised).
    public func resumeSession(_ request: ResumeSessionRequest) async throws -> ResumeSessionResponse {
        try await connection.call("session/resume", request)
    }
    /// `session/close` (refused unless advertised).
    public func closeSession(_ request: CloseSessionRequest) async throws -> CloseSessionResponse {
        try await connection.call("session/close", request)
    }
    /// `session/delete` (refused unless advertised).
    public func deleteSession(_ request: DeleteSessionRequest) async throws -> DeleteSessionResponse {
        try await connection.call("session/delete", request)
    }
    /// `session/set_mode`.
    public func setSessionMode(_ request: SetSessionModeRequest) async throws -> SetSessionModeResponse {
        try await connection.call("session/set_mode", request)
    }
    /// `session/set_config_option`.
    public func setSessionConfigOption(_ request: SetSessionConfigOptionRequest) async throws -> SetSessionConfigOptionResponse {
        try await connection.call("session/set_config_option", request)
    }
    /// `session/prompt`: returns after every update the agent sent before
    /// its answer was handled. Cancelling the task awaiting it sends
    /// `$/cancel_request`; `cancel(sessionId:)` is the protocol's way to stop a turn.
    public func prompt(_ request: PromptRequest) async throws -> PromptResponse {
        try await connection.call("session/prompt", request)
    }
    /// `session/cancel`: the turn ends `cancelled`; pending permission
    /// requests are answered `cancelled`.
    public func cancel(sessionId: String) async throws {
        try await connection.cancelSession(sessionId)
    }

    // The unstable extensions: each needs its feature in
    // `ConnectOptions.unstable` (`["all"]` or names such as
    // `"session_fork"`); without it the method is an extension to libacp,
    // sent unchecked. With it, a call the agent did not advertise is refused.

    /// `session/fork` (needs `sessionCapabilities.fork`; `unstable_session_fork`):
    /// the answer's session is open on this connection.
    public func forkSession(_ request: ForkSessionRequest) async throws -> ForkSessionResponse {
        try await connection.call("session/fork", request)
    }
    /// `session/archive` (needs `sessionCapabilities.archive`; `unstable_session_archive`):
    /// the session it names is closed on this connection.
    public func archiveSession(_ request: ArchiveSessionRequest) async throws -> ArchiveSessionResponse {
        try await connection.call("session/archive", request)
    }
    /// `session/unarchive` (needs `sessionCapabilities.archive`; `unstable_session_archive`).
    public func unarchiveSession(_ request: UnarchiveSessionRequest) async throws -> UnarchiveSessionResponse {
        try await connection.call("session/unarchive", request)
    }
    /// `session/status` (needs `sessionCapabilities.status`; `unstable_session_status`).
    public func sessionStatus(_ request: SessionStatusRequest) async throws -> SessionStatusResponse {
        try await connection.call("session/status", request)
    }
    /// `session/set_title` (needs `sessionCapabilities.title`; `unstable_session_set_title`).
    public func setSessionTitle(_ request: SetSessionTitleRequest) async throws -> SetSessionTitleResponse {
        try await connection.call("session/set_title", request)
    }
    /// `auth/status` (needs `auth.status`; `unstable_auth_status`).
    public func authStatus(_ request: AuthStatusRequest) async throws -> AuthStatusResponse {
        try await connection.call("auth/status", request)
    }
    /// `providers/list` (needs `providers`; `unstable_llm_providers`).
    public func listProviders(_ request: ListProvidersRequest) async throws -> ListProvidersResponse {
        try await connection.call("providers/list", request)
    }
    /// `providers/set` (needs `providers`; `unstable_llm_providers`).
    public func setProvider(_ request: SetProviderRequest) async throws -> SetProviderResponse {
        try await connection.call("providers/set", request)
    }
    /// `providers/disable` (needs `providers`; `unstable_llm_providers`).
    public func disableProvider(_ request: DisableProviderRequest) async throws -> DisableProviderResponse {
        try await connection.call("providers/disable", request)
    }
    /// `mcp/message` to an MCP server the agent provides over ACP (a
    /// notification; `unstable_mcp_over_acp`): returns once queued.
    public func mcpMessage(_ notification: MessageMcpNotification) async throws {
        try await connection.notify("mcp/message", notification)
    }

    // A proxy chain's conductor (`proxy_chains`): this client initializes
    // the agent it reaches as a proxy and delivers its successor's messages.

    /// `proxy/initialize`: initializes the agent as a proxy, with the rules
    /// of `initialize` (it is this connection's initialize).
    public func proxyInitialize(_ request: InitializeProxyRequest) async throws -> InitializeProxyResponse {
        try await connection.call("proxy/initialize", request)
    }
    /// `proxy/successor`: delivers a request of the proxy's successor; the
    /// answer is the proxy's result for it (JSON).
    public func proxySuccessor(_ request: ProxySuccessorRequest) async throws -> ProxySuccessorResponse {
        try await connection.call("proxy/successor", request)
    }
    /// `proxy/successor`: delivers a notification of the proxy's successor;
    /// returns once queued.
    public func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async throws {
        try await connection.notify("proxy/successor", notification)
    }
    /// Closes and waits for the agent to be gone.
    public func shutdown() async {
        await connection.shutdown()
    }
    /// Closes without waiting.
    public func close() {
        connection.close()
    }
}

// MARK: - Agent

/// The agent side's handlers. `initialize`, `newSession` and `prompt` are
/// required; the others answer `-32601` unless implemented.
public protocol Agent: Sendable {
    /// `initialize`.
    func initialize(_ request: InitializeRequest, call: IncomingCall) async throws -> InitializeResponse
    /// `authenticate`.
    func authenticate(_ request: AuthenticateRequest, call: IncomingCall) async throws -> AuthenticateResponse
    /// `logout`.
    func logout(_ request: LogoutRequest, call: IncomingCall) async throws -> LogoutResponse
    /// `session/new`.
    func newSession(_ request: NewSessionRequest, call: IncomingCall) async throws -> NewSessionResponse
    /// `session/load` (advertise `loadSession`).
    func loadSession(_ request: LoadSessionRequest, call: IncomingCall) async throws -> LoadSessionResponse
    /// `session/list`.
    func listSessions(_ request: ListSessionsRequest, call: IncomingCall) async throws -> ListSessionsResponse
    /// `session/resume`.
    func resumeSession(_ request: ResumeSessionRequest, call: IncomingCall) async throws -> ResumeSessionResponse
    /// `session/close`.
    func closeSession(_ request: CloseSessionRequest, call: IncomingCall) async throws -> CloseSessionResponse
    /// `session/delete`.
    func deleteSession(_ request: DeleteSessionRequest, call: IncomingCall) async throws -> DeleteSessionResponse
    /// `session/set_mode`.
    func setSessionMode(_ request: SetSessionModeRequest, call: IncomingCall) async throws -> SetSessionModeResponse
    /// `session/set_config_option`.
    func setSessionConfigOption(_ request: SetSessionConfigOptionRequest, call: IncomingCall) async throws -> SetSessionConfigOptionResponse
    /// `session/prompt`. A `session/cancel` cancels this task; the turn
    /// then answers `stopReason: "cancelled"` whatever it returns.
    func prompt(_ request: PromptRequest, call: IncomingCall) async throws -> PromptResponse
    /// `session/cancel` (the prompt's task is already being cancelled).
    func cancel(_ notification: CancelNotification) async
    // The unstable extensions (each with its feature in
    // `ConnectOptions.unstable`, or it reaches `extMethod` unchecked).
    /// `session/fork` (advertise `sessionCapabilities.fork`; `unstable_session_fork`).
    func forkSession(_ request: ForkSessionRequest, call: IncomingCall) async throws -> ForkSessionResponse
    /// `session/archive` (advertise `sessionCapabilities.archive`; `unstable_session_archive`).
    func archiveSession(_ request: ArchiveSessionRequest, call: IncomingCall) async throws -> ArchiveSessionResponse
    /// `session/unarchive` (advertise `sessionCapabilities.archive`; `unstable_session_archive`).
    func unarchiveSession(_ request: UnarchiveSessionRequest, call: IncomingCall) async throws -> UnarchiveSessionResponse
    /// `session/status` (advertise `sessionCapabilities.status`; `unstable_session_status`).
    func sessionStatus(_ request: SessionStatusRequest, call: IncomingCall) async throws -> SessionStatusResponse
    /// `session/set_title` (advertise `sessionCapabilities.title`; `unstable_session_set_title`).
    func setSessionTitle(_ request: SetSessionTitleRequest, call: IncomingCall) async throws -> SetSessionTitleResponse
    /// `auth/status` (advertise `auth.status`; `unstable_auth_status`).
    func authStatus(_ request: AuthStatusRequest, call: IncomingCall) async throws -> AuthStatusResponse
    /// `providers/list` (advertise `providers`; `unstable_llm_providers`).
    func listProviders(_ request: ListProvidersRequest, call: IncomingCall) async throws -> ListProvidersResponse
    /// `providers/set` (advertise `providers`; `unstable_llm_providers`).
    func setProvider(_ request: SetProviderRequest, call: IncomingCall) async throws -> SetProviderResponse
    /// `providers/disable` (advertise `providers`; `unstable_llm_providers`).
    func disableProvider(_ request: DisableProviderRequest, call: IncomingCall) async throws -> DisableProviderResponse
    /// `mcp/message` notifications from the client (`unstable_mcp_over_acp`).
    func mcpMessage(_ notification: MessageMcpNotification) async
    // A proxy of a proxy chain (`unstable_proxy_chains`): the conductor
    // (its client) initializes it with `proxy/initialize` and delivers its
    // successor's messages with `proxy/successor`; it reaches its successor
    // with `AgentConnection.proxySuccessor`.
    /// `proxy/initialize`: the conductor initializes this agent as a proxy,
    /// with the rules of `initialize` (it is this connection's initialize).
    /// Before answering, a proxy forwards an `initialize` to its successor
    /// (`AgentConnection.proxySuccessor`). The default answers `-32601`:
    /// this agent is not a proxy.
    func proxyInitialize(_ request: InitializeProxyRequest, call: IncomingCall) async throws -> InitializeProxyResponse
    /// `proxy/successor` from the conductor: a request of this proxy's
    /// successor, delivered (`unstable_proxy_chains`).
    func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse
    /// `proxy/successor` notifications from the conductor: one of this
    /// proxy's successor (`unstable_proxy_chains`).
    func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async
    /// A request of another method (an extension).
    func extMethod(_ call: IncomingCall) async throws -> JSONValue
    /// A notification of another method (an extension), or one whose params did not decode.
    func extNotification(method: String, params: JSONValue?) async
    /// A traced frame, with `ConnectOptions(trace: true)`: see `AcpHandler.onFrame`.
    func onFrame(direction: WireDirection, frame: String)
    /// An engine event, with `ConnectOptions(events: true)`: see `AcpHandler.onEngineEvent`.
    func onEngineEvent(_ event: EngineEvent)
}

extension Agent {
    public func authenticate(_ request: AuthenticateRequest, call: IncomingCall) async throws -> AuthenticateResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func logout(_ request: LogoutRequest, call: IncomingCall) async throws -> LogoutResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func loadSession(_ request: LoadSessionRequest, call: IncomingCall) async throws -> LoadSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func listSessions(_ request: ListSessionsRequest, call: IncomingCall) async throws -> ListSessionsResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func resumeSession(_ request: ResumeSessionRequest, call: IncomingCall) async throws -> ResumeSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func closeSession(_ request: CloseSessionRequest, call: IncomingCall) async throws -> CloseSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func deleteSession(_ request: DeleteSessionRequest, call: IncomingCall) async throws -> DeleteSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func setSessionMode(_ request: SetSessionModeRequest, call: IncomingCall) async throws -> SetSessionModeResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func setSessionConfigOption(_ request: SetSessionConfigOptionRequest, call: IncomingCall) async throws -> SetSessionConfigOptionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func cancel(_ notification: CancelNotification) async {}
    public func forkSession(_ request: ForkSessionRequest, call: IncomingCall) async throws -> ForkSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func archiveSession(_ request: ArchiveSessionRequest, call: IncomingCall) async throws -> ArchiveSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func unarchiveSession(_ request: UnarchiveSessionRequest, call: IncomingCall) async throws -> UnarchiveSessionResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func sessionStatus(_ request: SessionStatusRequest, call: IncomingCall) async throws -> SessionStatusResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func setSessionTitle(_ request: SetSessionTitleRequest, call: IncomingCall) async throws -> SetSessionTitleResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func authStatus(_ request: AuthStatusRequest, call: IncomingCall) async throws -> AuthStatusResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func listProviders(_ request: ListProvidersRequest, call: IncomingCall) async throws -> ListProvidersResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func setProvider(_ request: SetProviderRequest, call: IncomingCall) async throws -> SetProviderResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func disableProvider(_ request: DisableProviderRequest, call: IncomingCall) async throws -> DisableProviderResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func mcpMessage(_ notification: MessageMcpNotification) async {}
    public func proxyInitialize(_ request: InitializeProxyRequest, call: IncomingCall) async throws -> InitializeProxyResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func proxySuccessor(_ request: ProxySuccessorRequest, call: IncomingCall) async throws -> ProxySuccessorResponse {
        throw AcpError.methodNotFound(call.method)
    }
    public func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async {}
    public func extMethod(_ call: IncomingCall) async throws -> JSONValue {
        throw AcpError.methodNotFound(call.method)
    }
    public func extNotification(method: String, params: JSONValue?) async {}
    public func onFrame(direction: WireDirection, frame: String) {}
    public func onEngineEvent(_ event: EngineEvent) {}
}

/// The agent's routing tables: every method the core's table has the
/// agent handle (`protocolMethods(side: .agent)`, checked by a test).
struct AgentHost: RawHost {
    let agent: Agent
    let routes: [String: Route]
    let notifications: [String: NotificationRoute]

    init(_ agent: Agent) {
        self.agent = agent
        routes = [
            "initialize": .of(InitializeRequest.self) { try await agent.initialize($0, call: $1) },
            "authenticate": .of(AuthenticateRequest.self) { try await agent.authenticate($0, call: $1) },
            "logout": .of(LogoutRequest.self) { try await agent.logout($0, call: $1) },
            "session/new": .of(NewSessionRequest.self) { try await agent.newSession($0, call: $1) },
            "session/load": .of(LoadSessionRequest.self) { try await agent.loadSession($0, call: $1) },
            "session/list": .of(ListSessionsRequest.self) { try await agent.listSessions($0, call: $1) },
            "session/resume": .of(ResumeSessionRequest.self) { try await agent.resumeSession($0, call: $1) },
            "session/close": .of(CloseSessionRequest.self) { try await agent.closeSession($0, call: $1) },
            "session/delete": .of(DeleteSessionRequest.self) { try await agent.deleteSession($0, call: $1) },
            "session/set_mode": .of(SetSessionModeRequest.self) { try await agent.setSessionMode($0, call: $1) },
            "session/set_config_option": .of(SetSessionConfigOptionRequest.self) { try await agent.setSessionConfigOption($0, call: $1) },
            "session/prompt": .of(PromptRequest.self) { try await agent.prompt($0, call: $1) },
            "session/fork": .of(ForkSessionRequest.self) { try await agent.forkSession($0, call: $1) },
            "session/archive": .of(ArchiveSessionRequest.self) { try await agent.archiveSession($0, call: $1) },
            "session/unarchive": .of(UnarchiveSessionRequest.self) { try await agent.unarchiveSession($0, call: $1) },
            "session/status": .of(SessionStatusRequest.self) { try await agent.sessionStatus($0, call: $1) },
            "session/set_title": .of(SetSessionTitleRequest.self) { try await agent.setSessionTitle($0, call: $1) },
            "auth/status": .of(AuthStatusRequest.self) { try await agent.authStatus($0, call: $1) },
            "providers/list": .of(ListProvidersRequest.self) { try await agent.listProviders($0, call: $1) },
            "providers/set": .of(SetProviderRequest.self) { try await agent.setProvider($0, call: $1) },
            "providers/disable": .of(DisableProviderRequest.self) { try await agent.disableProvider($0, call: $1) },
            "proxy/initialize": .of(InitializeProxyRequest.self) { try await agent.proxyInitialize($0, call: $1) },
            "proxy/successor": .of(ProxySuccessorRequest.self) { try await agent.proxySuccessor($0, call: $1) },
        ]
        notifications = [
            "session/cancel": .of(CancelNotification.self) { await agent.cancel($0) },
            "mcp/message": .of(MessageMcpNotification.self) { await agent.mcpMessage($0) },
            "proxy/successor": .of(ProxySuccessorNotification.self) { await agent.proxySuccessorNotification($0) },
        ]
    }

    func request(_ call: IncomingCall) async throws -> String {
        if let route = routes[call.method] { return try await route.serve(call) }
        return try await agent.extMethod(call).jsonText
    }

    func notification(method: String, params: String?) async {
        if let route = notifications[method], await route.handle(params) { return }
        await agent.extNotification(method: method, params: params.flatMap { try? JSONValue.parse($0) })
    }

    func stderr(_ line: String) {}

    func frame(direction: WireDirection, frame: String) {
        agent.onFrame(direction: direction, frame: frame)
    }

    func engineEvent(_ event: EngineEvent) {
        agent.onEngineEvent(event)
    }
}

/// The agent side with typed ACP methods toward the client. `connection`
/// is the same connection's dynamic API.
public final class AgentConnection: Sendable {
    public let connection: AcpConnection

    init(_ connection: AcpConnection) {
        self.connection = connection
    }

    /// Serves `agent` on this process's stdin/stdout (log to stderr only).
    public static func serveStdio(_ agent: Agent, options: ConnectOptions = ConnectOptions()) throws -> AgentConnection {
        AgentConnection(try AcpConnection(host: AgentHost(agent)) {
            try Connection.serveStdio(handler: $0, options: options)
        })
    }

    /// Over descriptors the caller gives up (see `AcpConnection.fromFds`).
    public static func fromFds(readFd: Int32, writeFd: Int32, agent: Agent, options: ConnectOptions = ConnectOptions()) throws -> AgentConnection {
        AgentConnection(try AcpConnection(host: AgentHost(agent)) {
            try Connection.fromFds(role: .agent, readFd: readFd, writeFd: writeFd, handler: $0, options: options)
        })
    }

    /// `session/update`: returns once queued for the client.
    public func sessionUpdate(_ notification: SessionNotification) async throws {
        try await connection.notify("session/update", notification)
    }
    /// `session/update` for `sessionId`.
    public func sessionUpdate(sessionId: String, _ update: SessionUpdate) async throws {
        try await sessionUpdate(SessionNotification(sessionId: sessionId, update: update))
    }
    /// `session/request_permission`.
    public func requestPermission(_ request: RequestPermissionRequest) async throws -> RequestPermissionResponse {
        try await connection.call("session/request_permission", request)
    }
    /// `fs/read_text_file` (refused unless the client advertised it).
    public func readTextFile(_ request: ReadTextFileRequest) async throws -> ReadTextFileResponse {
        try await connection.call("fs/read_text_file", request)
    }
    /// `fs/write_text_file` (refused unless the client advertised it).
    public func writeTextFile(_ request: WriteTextFileRequest) async throws -> WriteTextFileResponse {
        try await connection.call("fs/write_text_file", request)
    }
    /// `terminal/create` (refused unless the client advertised `terminal`).
    public func createTerminal(_ request: CreateTerminalRequest) async throws -> CreateTerminalResponse {
        try await connection.call("terminal/create", request)
    }
    /// `terminal/output`.
    public func terminalOutput(_ request: TerminalOutputRequest) async throws -> TerminalOutputResponse {
        try await connection.call("terminal/output", request)
    }
    /// `terminal/release`.
    public func releaseTerminal(_ request: ReleaseTerminalRequest) async throws -> ReleaseTerminalResponse {
        try await connection.call("terminal/release", request)
    }
    /// `terminal/wait_for_exit`.
    public func waitForTerminalExit(_ request: WaitForTerminalExitRequest) async throws -> WaitForTerminalExitResponse {
        try await connection.call("terminal/wait_for_exit", request)
    }
    /// `terminal/kill`.
    public func killTerminal(_ request: KillTerminalRequest) async throws -> KillTerminalResponse {
        try await connection.call("terminal/kill", request)
    }
    /// `elicitation/create` (refused unless the client advertised elicitation).
    public func createElicitation(_ request: CreateElicitationRequest) async throws -> CreateElicitationResponse {
        try await connection.call("elicitation/create", request)
    }
    /// `auth/status_update` (unstable: `unstable_auth_status` in
    /// `ConnectOptions.unstable`): returns once queued for the client.
    public func authStatusUpdate(_ notification: AuthStatusUpdateNotification) async throws {
        try await connection.notify("auth/status_update", notification)
    }
    /// `mcp/message` to an MCP server the client provides over ACP
    /// (unstable: `unstable_mcp_over_acp`).
    public func mcpMessage(_ request: MessageMcpRequest) async throws -> MessageMcpResponse {
        try await connection.call("mcp/message", request)
    }
    /// `proxy/successor` (this agent a proxy; unstable:
    /// `unstable_proxy_chains`): forwards a request to its successor through
    /// the conductor; the answer is the successor's result, unchanged (JSON).
    public func proxySuccessor(_ request: ProxySuccessorRequest) async throws -> ProxySuccessorResponse {
        try await connection.call("proxy/successor", request)
    }
    /// `proxy/successor`: forwards a notification to this proxy's
    /// successor; returns once queued.
    public func proxySuccessorNotification(_ notification: ProxySuccessorNotification) async throws {
        try await connection.notify("proxy/successor", notification)
    }
    /// Waits until the client closes the connection and everything was written.
    public func terminated() async {
        await connection.terminated()
    }
    /// Closes without waiting.
    public func close() {
        connection.close()
    }
}
