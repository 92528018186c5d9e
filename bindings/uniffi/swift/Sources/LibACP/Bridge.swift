import Foundation

/// What the typed and dynamic layers give the bridge: the peer's requests
/// and notifications as JSON text, so the typed layer decodes straight into
/// its models.
protocol RawHost: Sendable {
    /// Answers a request: its result as JSON text, or throws (`AcpError`).
    func request(_ call: IncomingCall) async throws -> String
    /// Handles a notification (the next message waits for it).
    func notification(method: String, params: String?) async
    /// A line of the spawned agent's stderr (on a libacp thread).
    func stderr(_ line: String)
}

/// Set while a notification handler runs: calls made under it skip the
/// ordering barrier, since their answers would otherwise wait for that very
/// handler (DESIGN.md, decision 1). Holds the bridge's identity, so only
/// calls on the same connection skip.
enum InNotification {
    @TaskLocal static var bridge: ObjectIdentifier?
}

/// The `HostHandler` libacp calls (from its threads). A request handler
/// runs in its own `Task`, cancelled when the peer cancels the request
/// (`$/cancel_request`, `session/cancel` for a prompt); it then answers
/// `-32800` (a prompt: `stopReason: "cancelled"`) unless it returns first.
final class HostBridge: HostHandler, @unchecked Sendable {
    private let host: RawHost
    private let lock = NSLock()
    /// Running request handlers by request key (guarded by `lock`).
    private var inflight: [UInt64: Task<String, Error>] = [:]

    init(host: RawHost) {
        self.host = host
    }

    func onRequest(request: IncomingRequest, signals: RequestSignals) async throws -> String {
        let call = IncomingCall(request, signals)
        let host = self.host
        let work = Task { try await host.request(call) }
        lock.withLock { inflight[request.key] = work }
        defer { _ = lock.withLock { inflight.removeValue(forKey: request.key) } }
        // A cancellation that came before the registration is seen here; a
        // later one finds the task in the map (onCancel).
        if signals.isCancelled() { work.cancel() }
        do {
            // UniFFI cancels this task when libacp drops the request (the
            // connection closed, or the answer was already given).
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch {
            if signals.isCancelled() && (error is CancellationError || work.isCancelled) {
                throw AcpError.Cancelled(detail: "the peer cancelled \(request.method)")
            }
            throw AcpError.from(error)
        }
    }

    func onNotifications(batch: [Notification]) async throws {
        try await InNotification.$bridge.withValue(ObjectIdentifier(self)) {
            for n in batch {
                try Task.checkCancellation()
                await host.notification(method: n.method, params: n.params)
            }
        }
    }

    func onCancel(key: UInt64) throws {
        let work = lock.withLock { inflight[key] }
        work?.cancel()
    }

    func onStderr(line: String) throws {
        host.stderr(line)
    }
}

/// A request from the peer, as handlers see it. `paramsJSON` and `idJSON`
/// are the JSON text as it arrived: every field, known or not, is there.
public final class IncomingCall: @unchecked Sendable {
    /// The method name, as sent.
    public let method: String
    /// The params as JSON text; `nil` when absent.
    public let paramsJSON: String?
    /// The id the peer chose, as JSON text.
    public let idJSON: String
    /// Unique per connection.
    public let key: UInt64
    private let signals: RequestSignals

    init(_ request: IncomingRequest, _ signals: RequestSignals) {
        method = request.method
        paramsJSON = request.params
        idJSON = request.id
        key = request.key
        self.signals = signals
    }

    /// The params, parsed; `nil` when absent.
    public var params: JSONValue? {
        get throws { try paramsJSON.map(JSONValue.parse) }
    }

    /// Whether the peer cancelled the request. The handler's task is
    /// cancelled too (`Task.isCancelled`, `Task.checkCancellation()`); a
    /// handler that must finish something first may still do it.
    public var isCancelled: Bool { signals.isCancelled() }
}
