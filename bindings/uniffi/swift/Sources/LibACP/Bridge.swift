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

/// The `HostHandler` libacp calls (from its threads).
///
/// **Requests.** A request handler runs in its own `Task`, started by
/// `onRequest` on the libacp thread that delivered it (DeliveryExecutor.swift:
/// until it first suspends, and after each call outcome libacp delivers) and
/// answered with one call into libacp
/// (`Connection.respond`); the task is cancelled when the peer cancels the
/// request (`$/cancel_request`, `session/cancel` for a prompt, the end of
/// the peer's input), and then answers `-32800` (a prompt:
/// `stopReason: "cancelled"`) unless it returns first.
///
/// **Calls.** `call` starts the call with one call into libacp
/// (`Connection.startCall`) under a token and suspends on a
/// `CheckedContinuation` kept under that token; libacp hands the outcome to
/// `onCallResult` or `onCallError` on one of its threads, exactly once
/// (also when the connection closes), which resumes it. No UniFFI future is
/// awaited: that cost several calls across the FFI (poll, complete, free)
/// and a task hop more per call (bench/README.md, W2). Cancelling the
/// caller's task abandons the call (`Connection.abandonCall`: the peer is
/// sent `$/cancel_request`), which then ends with `AcpError.Cancelled`.
final class HostBridge: HostHandler, @unchecked Sendable {
    private let host: RawHost
    private let lock = NSLock()
    /// Running request handlers by request key (guarded by `lock`).
    private var inflight: [UInt64: IncomingCall] = [:]
    /// Calls waiting for their outcome, by token (guarded by `lock`).
    private var calls: [UInt64: PendingCall] = [:]
    /// The last token given to a call (guarded by `lock`).
    private var lastToken: UInt64 = 0
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
        // Made already (every request but those that raced the constructor):
        // no suspension, which would cost a trip through the executor.
        let made: (Bool, Connection?) = lock.withLock { (attached, native) }
        if made.0 { return made.1 }
        return await withCheckedContinuation { waiter in
            let ready: (Bool, Connection?) = lock.withLock {
                if attached { return (true, native) }
                waiting.append(waiter)
                return (false, nil)
            }
            if ready.0 { waiter.resume(returning: ready.1) }
        }
    }

    func onRequest(request: IncomingRequest) throws {
        Delivery.run { start(request) }
    }

    /// Starts the handler's task, on this libacp thread once `onRequest`
    /// returns to `Delivery.run` (DeliveryExecutor.swift).
    private func start(_ request: IncomingRequest) {
        let call = IncomingCall(request)
        let host = self.host
        lock.withLock { inflight[request.key] = call }
        let work = deliveryTask {
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
        // The handler resumes here once cancel() returned (not inside its
        // task's cancellation handlers).
        Delivery.run { call?.cancel() }
    }

    /// Sends request `method` on `native` and waits for its outcome (see
    /// the class docs).
    func call(
        _ native: Connection,
        method: String,
        params: String?,
        timeoutMs: UInt64,
        noTimeout: Bool,
        skipBarrier: Bool
    ) async throws -> String {
        let pending = PendingCall()
        let token = lock.withLock { () -> UInt64 in
            lastToken &+= 1
            calls[lastToken] = pending
            return lastToken
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, Error>) in
                let cancelled = lock.withLock { () -> Bool in
                    pending.continuation = continuation
                    return pending.cancelled
                }
                if cancelled {
                    // Cancelled before it was sent: nothing goes out.
                    finish(token, .failure(AcpError.Cancelled(detail: "\(method) was cancelled before it was sent")))
                    return
                }
                do {
                    try native.startCall(
                        method: method, params: params, token: token,
                        timeoutMs: timeoutMs, noTimeout: noTimeout, skipBarrier: skipBarrier)
                } catch {
                    // Refused: libacp calls nothing back for this token.
                    finish(token, .failure(error))
                    return
                }
                // A cancellation that came while it was being started may
                // have found nothing to abandon yet: abandon it now (a
                // second abandon does nothing).
                if lock.withLock({ pending.cancelled }) {
                    _ = native.abandonCall(token: token)
                }
            }
        } onCancel: {
            let started = lock.withLock { () -> Bool in
                pending.cancelled = true
                return pending.continuation != nil && calls[token] != nil
            }
            if started {
                // A cancellation handler: the call's outcome must not resume
                // the task in here (DeliveryExecutor.swift, `outside`).
                Delivery.outside { _ = native.abandonCall(token: token) }
            }
        }
    }

    /// Resumes the call under `token` with `outcome`, once: whoever takes it
    /// out of `calls` resumes it.
    private func finish(_ token: UInt64, _ outcome: Result<String, Error>) {
        let continuation = lock.withLock { () -> CheckedContinuation<String, Error>? in
            guard let pending = calls.removeValue(forKey: token) else { return nil }
            defer { pending.continuation = nil }
            return pending.continuation
        }
        continuation?.resume(with: outcome)
    }

    // The caller resumes on this libacp thread when its task prefers
    // DeliveryExecutor (a handler's task), on the global executor otherwise.
    func onCallResult(token: UInt64, result: String) throws {
        Delivery.run { finish(token, .success(result)) }
    }

    func onCallError(token: UInt64, error: AcpError) throws {
        Delivery.run { finish(token, .failure(error)) }
    }

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

/// A call of `HostBridge.call` waiting for its outcome. Its fields are
/// guarded by the bridge's lock.
private final class PendingCall: @unchecked Sendable {
    /// Set once the caller suspended; taken by whoever resumes it.
    var continuation: CheckedContinuation<String, Error>?
    /// The caller's task was cancelled.
    var cancelled = false
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
