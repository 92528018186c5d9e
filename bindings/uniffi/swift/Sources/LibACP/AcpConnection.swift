import Foundation

/// What a host implements for the dynamic API: requests and notifications
/// by method name, with JSON params. The defaults answer `-32601` and
/// ignore notifications.
public protocol AcpHandler: Sendable {
    /// Answers a request with its result, or throws (`AcpError` for a
    /// chosen JSON-RPC error). Runs in its own task, cancelled if the peer
    /// cancels the request.
    func onRequest(_ call: IncomingCall) async throws -> JSONValue

    /// Handles a notification; the next message from the peer waits until
    /// it returns (so notifications are seen in order, and before the
    /// answers that follow them).
    func onNotification(method: String, params: JSONValue?) async

    /// A line of the spawned agent's stderr (with
    /// `ConnectOptions(stderr: true)`). Called on a libacp thread: do not block.
    func onStderr(_ line: String)

    /// A frame as read (`.incoming`) or written (`.outgoing`), with
    /// `ConnectOptions(trace: true)`. Called on a libacp thread, one at a
    /// time, in wire order with the handlers: after the notifications
    /// received before it were handled, before the answer that follows it
    /// completes its call (`orderedHooks: false`: at once, possibly after
    /// that answer). Keep it quick; do not wait on the connection from it.
    func onFrame(direction: WireDirection, frame: String)

    /// What the engine reports (a frame skipped, a response to no request,
    /// a request the core served...), with `ConnectOptions(events: true)`.
    /// Called like `onFrame`, in the same order.
    func onEngineEvent(_ event: EngineEvent)
}

extension AcpHandler {
    public func onRequest(_ call: IncomingCall) async throws -> JSONValue {
        throw AcpError.methodNotFound(call.method)
    }

    public func onNotification(method: String, params: JSONValue?) async {}

    public func onStderr(_ line: String) {}

    public func onFrame(direction: WireDirection, frame: String) {}

    public func onEngineEvent(_ event: EngineEvent) {}
}

/// The handler that answers every request `-32601` and ignores notifications.
public struct DefaultHandler: AcpHandler {
    public init() {}
}

struct DynamicHost: RawHost {
    let handler: AcpHandler

    func request(_ call: IncomingCall) async throws -> String {
        try await handler.onRequest(call).jsonText
    }

    func notification(method: String, params: String?) async {
        // Params that are not JSON cannot come from libacp (it parsed them).
        await handler.onNotification(method: method, params: params.flatMap { try? JSONValue.parse($0) })
    }

    func stderr(_ line: String) {
        handler.onStderr(line)
    }

    func frame(direction: WireDirection, frame: String) {
        handler.onFrame(direction: direction, frame: frame)
    }

    func engineEvent(_ event: EngineEvent) {
        handler.onEngineEvent(event)
    }
}

/// One ACP connection, in either role, with the dynamic (method name +
/// JSON) API. `ClientConnection` and `AgentConnection` put the typed ACP
/// methods on top of one.
///
/// Every protocol rule is libacp's: calls the peer did not advertise, or
/// made before `initialize`, throw `AcpError.Refused` without sending;
/// notifications reach the handler in order, before the answers that follow
/// them; cancelling the `Task` awaiting `call` sends `$/cancel_request`.
///
/// **Lifetime.** `shutdown()` closes and waits until everything was written
/// and a spawned agent is gone; `close()` closes without waiting. A handler
/// that keeps a strong reference to its connection makes a cycle that
/// `close()`/`shutdown()` (or the peer closing) breaks: call one of them.
/// Every method may be called from any thread or task.
public final class AcpConnection: @unchecked Sendable {
    let native: Connection
    let bridge: HostBridge

    /// What the remote server said about this connection (`nil` unless it
    /// was served by `AcpServer`).
    public let remote: RemotePeer?

    /// Wraps `native`, made with `bridge`, and hands it to the bridge.
    init(bridge: HostBridge, native: Connection, remote: RemotePeer? = nil) {
        self.bridge = bridge
        self.native = native
        self.remote = remote
        bridge.attach(native)
    }

    /// The bridge first, then the connection made with it, then attached.
    convenience init(host: RawHost, make: (HostHandler) throws -> Connection) throws {
        let bridge = HostBridge(host: host)
        self.init(bridge: bridge, native: try make(bridge))
    }

    /// `init(host:make:)` for a connection made asynchronously (`remoteConnect`).
    static func connecting(host: RawHost, make: (HostHandler) async throws -> Connection) async throws -> AcpConnection {
        let bridge = HostBridge(host: host)
        return AcpConnection(bridge: bridge, native: try await make(bridge))
    }

    /// Client side: spawns `command` and talks ACP over its stdio. Throws
    /// `AcpError.Spawn` if the program cannot be started.
    public static func spawn(
        _ command: AgentCommand,
        handler: AcpHandler = DefaultHandler(),
        options: ConnectOptions = ConnectOptions()
    ) throws -> AcpConnection {
        try AcpConnection(host: DynamicHost(handler: handler)) {
            try Connection.spawn(command: command, handler: $0, options: options)
        }
    }

    /// Client side: connects to the remote agent at `url` (`ws://`,
    /// `wss://`: WebSocket; `http://`, `https://`: Streamable HTTP) and
    /// returns once the transport is up. The remote options are
    /// `ConnectOptions`' (`headers`, `caFile`, `connectTimeoutMs`,
    /// `preferWebsocket`, `http2PriorKnowledge`, ...); one that does not
    /// apply to a client throws `AcpError.InvalidArgument` naming it. A
    /// failed connect throws `AcpError.Remote` (`kind`: `refused`,
    /// `unauthorized`, ...). Over Streamable HTTP the first request is
    /// `initialize`, so a refused token shows there.
    public static func connect(
        url: String,
        handler: AcpHandler = DefaultHandler(),
        options: ConnectOptions = ConnectOptions()
    ) async throws -> AcpConnection {
        try await connecting(host: DynamicHost(handler: handler)) {
            try await remoteConnect(url: url, handler: $0, options: options)
        }
    }

    /// Agent side: serves on this process's stdin/stdout (log to stderr only).
    public static func serveStdio(handler: AcpHandler, options: ConnectOptions = ConnectOptions()) throws -> AcpConnection {
        try AcpConnection(host: DynamicHost(handler: handler)) {
            try Connection.serveStdio(handler: $0, options: options)
        }
    }

    /// Either role over descriptors the caller gives up (libacp closes
    /// them): two pipes, or one stream socket for both (`readFd == writeFd`;
    /// see `socketPair()`).
    public static func fromFds(
        role: AcpRole,
        readFd: Int32,
        writeFd: Int32,
        handler: AcpHandler = DefaultHandler(),
        options: ConnectOptions = ConnectOptions()
    ) throws -> AcpConnection {
        try AcpConnection(host: DynamicHost(handler: handler)) {
            try Connection.fromFds(role: role, readFd: readFd, writeFd: writeFd, handler: $0, options: options)
        }
    }

    /// The role this end plays.
    public var role: AcpRole { native.role() }

    /// Sends request `method` and returns the peer's result. `timeout`
    /// (seconds) overrides the connection's default; `noTimeout` removes it.
    public func call(
        _ method: String,
        params: JSONValue? = nil,
        timeout: TimeInterval? = nil,
        noTimeout: Bool = false
    ) async throws -> JSONValue {
        try JSONValue.parse(await callJSON(method, paramsJSON: params?.jsonText, timeout: timeout, noTimeout: noTimeout))
    }

    /// `call` with params and result as JSON text.
    public func callJSON(
        _ method: String,
        paramsJSON: String?,
        timeout: TimeInterval? = nil,
        noTimeout: Bool = false
    ) async throws -> String {
        // Started with one call into libacp, its outcome handed back to the
        // bridge (Bridge.swift); cancelling the task abandons it (the peer is
        // sent `$/cancel_request`). 0: the connection's default timeout.
        try await bridge.call(
            native,
            method: method,
            params: paramsJSON,
            timeoutMs: timeout.map { UInt64(max(1, ($0 * 1000).rounded())) } ?? 0,
            noTimeout: noTimeout,
            skipBarrier: InNotification.bridge == ObjectIdentifier(bridge)
        )
    }

    /// Sends notification `method`; returns once it is queued for the peer
    /// (at once when the outgoing queue has room, else when it has).
    public func notify(_ method: String, params: JSONValue? = nil) async throws {
        try await notifyJSON(method, paramsJSON: params?.jsonText)
    }

    /// `notify` with params as JSON text.
    public func notifyJSON(_ method: String, paramsJSON: String?) async throws {
        if try !native.tryNotify(method: method, params: paramsJSON) {
            try await native.notify(method: method, params: paramsJSON)
        }
    }

    /// Client side: cancels the session's prompt turn (`session/cancel`); the
    /// session's pending permission requests are answered `cancelled`.
    public func cancelSession(_ sessionId: String) async throws {
        try await native.cancelSession(sessionId: sessionId)
    }

    /// Closes and waits until written out and a spawned agent is gone. Idempotent.
    public func shutdown() async {
        await native.shutdown()
    }

    /// Closes without waiting. Idempotent.
    public func close() {
        native.closeNow()
    }

    /// Waits until the connection closes; returns why.
    public func closed() async -> String {
        await native.closed()
    }

    /// Waits until closed, written out and a spawned agent is gone.
    public func terminated() async {
        await native.terminated()
    }

    /// Why the connection closed; `nil` while open.
    public var closeReason: String? { native.closeReason() }

    /// The negotiated protocol version, once initialized.
    public var protocolVersion: Int? { native.protocolVersion().map(Int.init) }

    /// The capabilities the peer advertised (`{}` before `initialize`).
    public var peerCapabilities: JSONValue { (try? JSONValue.parse(native.peerCapabilities())) ?? [:] }

    /// The capabilities this side advertised (`{}` before `initialize`).
    public var localCapabilities: JSONValue { (try? JSONValue.parse(native.localCapabilities())) ?? [:] }

    /// The open sessions' ids.
    public var sessions: [String] { native.sessions() }

    /// Whether the session has a prompt turn in progress.
    public func turnInProgress(_ sessionId: String) -> Bool { native.turnInProgress(sessionId: sessionId) }

    /// With `ConnectOptions.sessionModel`: the session's folded state, `nil` if unknown.
    public func sessionSnapshot(_ sessionId: String) throws -> JSONValue? {
        try native.sessionSnapshot(sessionId: sessionId).map(JSONValue.parse)
    }

    /// The spawned agent's process id.
    public var pid: Int? { native.pid().map(Int.init) }

    /// How the spawned agent ended, once it has.
    public var exitStatus: ExitStatus? { native.exitStatus() }

    /// Waits until the spawned agent exits (`nil` if none was spawned).
    public func waitExit() async -> ExitStatus? { await native.waitExit() }

    /// Kills the spawned agent's process group now.
    public func killNow() { native.killNow() }

    deinit {
        native.closeNow()
    }
}
