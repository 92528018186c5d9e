import Foundation

// Remote ACP, server side: `AcpServer` serves agents over WebSocket and
// Streamable HTTP (one endpoint) with libacp's server (the core's
// `remote::Server`: its checks, limits, idle timeout and graceful shutdown).
// This file only makes each remote connection's `AcpConnection`, as the
// other constructors do: the bridge first, then the connection started
// with it, then attached.

/// What the server knew of a remote connection when it arrived.
public struct RemotePeer: Sendable, Hashable {
    /// `"websocket"` or `"http"` (Streamable HTTP).
    public let kind: String
    /// The client's address, `host:port`.
    public let address: String
    /// The connection's `Acp-Connection-Id`.
    public let connectionId: String
}

/// A running remote ACP server: WebSocket and Streamable HTTP on one
/// endpoint (`/acp` unless the option `path` says otherwise). Each remote
/// connection gets an agent of its own, made by the closure given to
/// `serve`; the server keeps that connection until its client goes away,
/// it stays idle past `idleTimeoutMs`, or the server closes.
///
/// Keep a reference: a server that is freed closes at once, like `close()`.
public final class AcpServer: @unchecked Sendable {
    let native: Server

    private init(_ native: Server) {
        self.native = native
    }

    /// Serves typed agents on `listen` (`"127.0.0.1:0"`: a free port on
    /// loopback). For each remote connection, `agent` is called in a task
    /// of its own with that connection's `AgentConnection` and returns the
    /// `Agent` that handles it (hold the connection `weak`, or strongly:
    /// the connection's end breaks the cycle); the connection's messages
    /// wait until it has returned. If it throws, that connection is closed.
    ///
    /// Options: the server's (`bearerTokens`, `allowedOrigins`, `path`,
    /// `tlsCert`/`tlsKey`, `maxConnections`, `idleTimeoutMs`,
    /// `shutdownGraceMs`, `websocket`, `streamableHttp`, ...) and those of
    /// every agent connection (`requireAuth`, `trace`, `events`, ...); one
    /// that does not apply throws `AcpError.InvalidArgument` naming it, as
    /// does an address that does not parse; one that cannot be bound throws
    /// `AcpError.Remote` (kind `io`).
    public static func serve(
        listen: String,
        options: ConnectOptions = ConnectOptions(),
        agent: @escaping @Sendable (AgentConnection) async throws -> Agent
    ) async throws -> AcpServer {
        try await serving(listen: listen, options: options) { incoming in
            try start(incoming, wrap: { AgentConnection($0) }) { AgentHost(try await agent($0)) }
        }
    }

    /// `serve(listen:options:agent:)` with the dynamic API: `handler` gets
    /// each remote connection's `AcpConnection` and returns its `AcpHandler`.
    public static func serve(
        listen: String,
        options: ConnectOptions = ConnectOptions(),
        handler: @escaping @Sendable (AcpConnection) async throws -> AcpHandler
    ) async throws -> AcpServer {
        try await serving(listen: listen, options: options) { incoming in
            try start(incoming, wrap: { $0 }) { DynamicHost(handler: try await handler($0)) }
        }
    }

    private static func serving(
        listen: String,
        options: ConnectOptions,
        accept: @escaping @Sendable (IncomingConnection) throws -> Void
    ) async throws -> AcpServer {
        AcpServer(try await remoteServe(listen: listen, factory: Acceptor(accept), options: options))
    }

    /// Runs on a libacp thread for each remote connection: starts it with a
    /// bridge whose host comes later (`make`, in a task of its own, since
    /// host code must not run here), and keeps its connection until it has
    /// terminated (the `AcpConnection` closes when freed).
    private static func start<Handle: Sendable>(
        _ incoming: IncomingConnection,
        wrap: @escaping @Sendable (AcpConnection) -> Handle,
        make: @escaping @Sendable (Handle) async throws -> RawHost
    ) throws {
        let peer = RemotePeer(kind: incoming.kind(), address: incoming.remoteAddress(), connectionId: incoming.connectionId())
        let slot = HostSlot()
        let bridge = HostBridge(host: slot)
        let connection = AcpConnection(bridge: bridge, native: try incoming.start(handler: bridge), remote: peer)
        let handle = wrap(connection)
        Task {
            do {
                slot.set(try await make(handle))
            } catch {
                FileHandle.standardError.write(Data(
                    "libacp: the server's agent factory failed for a \(peer.kind) connection from \(peer.address): \(error)\n".utf8))
                // Closed first: what was waiting for the host is not answered.
                connection.close()
                slot.set(DynamicHost(handler: DefaultHandler()))
            }
            await connection.terminated()
            withExtendedLifetime(handle) {}
        }
    }

    /// The endpoint's URL for `kind`: `"websocket"` (`ws://`, `wss://` with
    /// TLS) or `"http"` (Streamable HTTP: `http://`, `https://`); another
    /// kind throws `AcpError.InvalidArgument`.
    public func url(kind: String = "websocket") throws -> String {
        try native.url(kind: kind)
    }

    /// The port listened on (the one the system chose for port 0).
    public var port: Int { Int(native.port()) }

    /// The address listened on, `host:port`.
    public var localAddress: String { native.localAddress() }

    /// How many remote connections are open now.
    public var connections: Int { Int(clamping: native.connections()) }

    /// Stops gracefully: accepts no new connection, lets each open one
    /// answer the requests it was sent (up to `shutdownGraceMs`, default
    /// 10 s), closes them and returns once they are gone. Idempotent.
    public func shutdown() async {
        await native.shutdown()
    }

    /// Closes the listener and every connection now. Idempotent.
    public func close() {
        native.close()
    }

    deinit {
        native.close()
    }
}

/// The `RemoteAgentFactory` libacp calls (on its threads).
private final class Acceptor: RemoteAgentFactory, @unchecked Sendable {
    private let accept: @Sendable (IncomingConnection) throws -> Void

    init(_ accept: @escaping @Sendable (IncomingConnection) throws -> Void) {
        self.accept = accept
    }

    func onConnection(incoming: IncomingConnection) throws {
        try accept(incoming)
    }
}

/// A host set once, after its connection was started: requests and
/// notifications wait for it; the synchronous hooks (stderr, frames,
/// engine events) that come before it are kept and handed over first.
final class HostSlot: RawHost, @unchecked Sendable {
    private enum Early {
        case stderr(String)
        case frame(WireDirection, String)
        case event(EngineEvent)
    }

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var host: RawHost?
    private var early: [Early] = []
    private var waiting: [CheckedContinuation<RawHost, Never>] = []

    /// Sets the host (once): the early hook calls go to it, in order, then
    /// the waiting requests and notifications.
    func set(_ host: RawHost) {
        while true {
            let (batch, waiters): ([Early], [CheckedContinuation<RawHost, Never>]) = lock.withLock {
                if early.isEmpty {
                    self.host = host
                    defer { waiting = [] }
                    return ([], waiting)
                }
                defer { early = [] }
                return (early, [])
            }
            if batch.isEmpty {
                for waiter in waiters { waiter.resume(returning: host) }
                return
            }
            for call in batch { Self.deliver(call, to: host) }
        }
    }

    private func ready() async -> RawHost {
        if let host = lock.withLock({ host }) { return host }
        return await withCheckedContinuation { waiter in
            let now: RawHost? = lock.withLock {
                if let host { return host }
                waiting.append(waiter)
                return nil
            }
            if let now { waiter.resume(returning: now) }
        }
    }

    private func hook(_ call: Early) {
        let now: RawHost? = lock.withLock {
            if let host { return host }
            early.append(call)
            return nil
        }
        if let now { Self.deliver(call, to: now) }
    }

    private static func deliver(_ call: Early, to host: RawHost) {
        switch call {
        case .stderr(let line): host.stderr(line)
        case .frame(let direction, let frame): host.frame(direction: direction, frame: frame)
        case .event(let event): host.engineEvent(event)
        }
    }

    func request(_ call: IncomingCall) async throws -> String {
        try await ready().request(call)
    }

    func notification(method: String, params: String?) async {
        await ready().notification(method: method, params: params)
    }

    func stderr(_ line: String) { hook(.stderr(line)) }

    func frame(direction: WireDirection, frame: String) { hook(.frame(direction, frame)) }

    func engineEvent(_ event: EngineEvent) { hook(.event(event)) }
}
