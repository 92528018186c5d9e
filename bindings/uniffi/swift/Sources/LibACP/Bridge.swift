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
    /// A traced frame (with `ConnectOptions.trace`; see `AcpHandler.onFrame`).
    func frame(direction: WireDirection, frame: String)
    /// An engine event (with `ConnectOptions.events`).
    func engineEvent(_ event: EngineEvent)
}

/// Set while a notification handler runs: calls made under it skip the
/// ordering barrier, since their answers would otherwise wait for that very
/// handler (DESIGN.md, decision 1). Holds the bridge's identity, so only
/// calls on the same connection skip.
enum InNotification {
    @TaskLocal static var bridge: ObjectIdentifier?
}

/// The `HostHandler` libacp calls (from its threads). A request handler
/// runs in its own `Task`, started by `onRequest` and answered with one
/// call into libacp (`Connection.respond`); the task is cancelled when the
/// peer cancels the request (`$/cancel_request`, `session/cancel` for a
/// prompt, the end of the peer's input), and then answers `-32800` (a
/// prompt: `stopReason: "cancelled"`) unless it returns first.
final class HostBridge: HostHandler, @unchecked Sendable {
    private let host: RawHost
    private let lock = NSLock()
    /// Running request handlers by request key (guarded by `lock`).
    private var inflight: [UInt64: IncomingCall] = [:]
    /// The connection, once made (guarded by `lock`). Weak: the connection
    /// holds this bridge, and freeing it must close it.
    private weak var native: Connection?
    private var attached = false
    private var waiting: [CheckedContinuation<Connection?, Never>] = []

    init(host: RawHost) {
        self.host = host
    }

    /// Hands over the connection; requests that came before it was made
    /// were waiting for it.
    func attach(_ connection: Connection) {
        let waiters = lock.withLock {
            native = connection
            attached = true
            defer { waiting = [] }
            return waiting
        }
        for waiter in waiters { waiter.resume(returning: connection) }
    }

    private func connection() async -> Connection? {
        await withCheckedContinuation { waiter in
            let ready: (Bool, Connection?) = lock.withLock {
                if attached { return (true, native) }
                waiting.append(waiter)
                return (false, nil)
            }
            if ready.0 { waiter.resume(returning: ready.1) }
        }
    }

    func onRequest(request: IncomingRequest) throws {
        let call = IncomingCall(request)
        let host = self.host
        lock.withLock { inflight[request.key] = call }
        let work = Task {
            let native = await self.connection()
            let outcome: Result<String, Error>
            do {
                outcome = .success(try await host.request(call))
            } catch {
                outcome = .failure(error)
            }
            _ = self.lock.withLock { self.inflight.removeValue(forKey: call.key) }
            guard let native else { return }
            switch outcome {
            case .success(let text):
                _ = native.respond(key: call.key, result: text)
            case .failure(let error):
                let answer: AcpError
                if call.isCancelled && (error is CancellationError || Task.isCancelled) {
                    answer = AcpError.Cancelled(detail: "the peer cancelled \(call.method)")
                } else {
                    answer = AcpError.from(error)
                }
                _ = native.respondError(key: call.key, error: answer)
            }
        }
        // onCancel comes after this returns: it finds the task.
        call.started(work)
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
        let call = lock.withLock { inflight[key] }
        call?.cancel()
    }

    func onCallResult(token: UInt64, result: String) throws {
        // Calls are awaited as futures (Connection.callCancellable): no
        // call is started with a token.
    }

    func onCallError(token: UInt64, error: AcpError) throws {}

    func onStderr(line: String) throws {
        host.stderr(line)
    }

    func onFrame(direction: WireDirection, frame: String) throws {
        host.frame(direction: direction, frame: frame)
    }

    func onEngineEvent(event: EngineEvent) throws {
        host.engineEvent(event)
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
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var cancelled = false
    private var task: Task<Void, Never>?

    init(_ request: IncomingRequest) {
        method = request.method
        paramsJSON = request.params
        idJSON = request.id
        key = request.key
    }

    func started(_ task: Task<Void, Never>) {
        lock.withLock { self.task = task }
    }

    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    /// The params, parsed; `nil` when absent.
    public var params: JSONValue? {
        get throws { try paramsJSON.map(JSONValue.parse) }
    }

    /// Whether the peer cancelled the request (or the connection closed).
    /// The handler's task is cancelled too (`Task.isCancelled`,
    /// `Task.checkCancellation()`); a handler that must finish something
    /// first may still do it.
    public var isCancelled: Bool { lock.withLock { cancelled } }
}
