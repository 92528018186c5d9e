import Foundation

/// A value guarded by a lock, for state that handlers (which run in their
/// own tasks, on libacp's threads) share.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    public var current: Value { withLock { $0 } }
}

/// A value set once, that tasks can wait for.
public final class Promise<Value: Sendable>: @unchecked Sendable {
    private let state = Locked<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    public init() {}

    /// Sets the value and wakes the waiters; the first call wins.
    public func fulfil(_ value: Value) {
        let woken: [CheckedContinuation<Value, Never>] = state.withLock { state in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in woken { waiter.resume(returning: value) }
    }

    /// The value if it was set, else `nil` (does not wait).
    public var valueIfSet: Value? { state.withLock { $0.value } }

    /// Waits until the value is set.
    public func wait() async -> Value {
        await withCheckedContinuation { continuation in
            let ready: Value? = state.withLock { state in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Writes `line` and a newline to stderr, unbuffered (stdout is reserved:
/// ACP messages for an agent, the one result line for a client).
public func writeStderr(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Sleeps until the task is cancelled, then throws `CancellationError`.
public func parkUntilCancelled() async throws {
    while true {
        try await Task.sleep(nanoseconds: 3_600_000_000_000)
    }
}
