// The waiting primitives of the scenario runner: a queue whose `get` gives
// up after a while without losing what comes later, a latch (gates,
// cancellation signals, the end of the run), and a bounded wait for any
// async work. Timers run on Dispatch, so no waiting blocks a thread of
// Swift's cooperative pool (which has one thread per core).
import Dispatch
import Foundation

extension Scenarios {
    /// A FIFO queue shared by threads and tasks. `get(timeout:)` returns the
    /// next item, or `nil` when none comes in time; an item that comes after
    /// a timeout stays in the queue.
    final class AsyncQueue<Item>: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Item] = []
        private var waiters: [(id: Int, continuation: CheckedContinuation<Item?, Never>)] = []
        private var nextWaiter = 0

        /// Appends `item`, or hands it to the oldest waiting `get`.
        func put(_ item: Item) {
            lock.lock()
            if waiters.isEmpty {
                items.append(item)
                lock.unlock()
            } else {
                let waiter = waiters.removeFirst()
                lock.unlock()
                waiter.continuation.resume(returning: item)
            }
        }

        /// The next item if there is one now (never waits).
        func takeNow() -> Item? {
            lock.withLock { items.isEmpty ? nil : items.removeFirst() }
        }

        /// Whether no item is queued now.
        var isEmpty: Bool { lock.withLock { items.isEmpty } }

        /// The next item, or `nil` if none comes within `timeout` seconds.
        func get(timeout: TimeInterval) async -> Item? {
            await withCheckedContinuation { (c: CheckedContinuation<Item?, Never>) in
                lock.lock()
                if !items.isEmpty {
                    let item = items.removeFirst()
                    lock.unlock()
                    c.resume(returning: item)
                    return
                }
                let id = nextWaiter
                nextWaiter += 1
                waiters.append((id, c))
                lock.unlock()
                // Whoever removes the waiter from the list resumes it: `put`
                // or this timer, never both.
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                    lock.lock()
                    guard let i = waiters.firstIndex(where: { $0.id == id }) else {
                        lock.unlock()
                        return
                    }
                    let waiter = waiters.remove(at: i)
                    lock.unlock()
                    waiter.continuation.resume(returning: nil)
                }
            }
        }
    }

    /// A one-way switch: closed until `open()`, then open for good. Tasks
    /// wait for it with `wait()` (or `firstOpen` of several).
    final class Latch: @unchecked Sendable {
        private let lock = NSLock()
        private var isOpenNow = false
        private var callbacks: [() -> Void] = []

        /// Whether it is open.
        var isOpen: Bool { lock.withLock { isOpenNow } }

        /// Opens it: every waiter goes on. Idempotent.
        func open() {
            let ready: [() -> Void] = lock.withLock {
                if isOpenNow { return [] }
                isOpenNow = true
                defer { callbacks = [] }
                return callbacks
            }
            ready.forEach { $0() }
        }

        /// Calls `callback` once it is open (at once, if it is).
        fileprivate func whenOpen(_ callback: @escaping () -> Void) {
            let now: Bool = lock.withLock {
                if isOpenNow { return true }
                callbacks.append(callback)
                return false
            }
            if now { callback() }
        }

        /// Waits until it is open.
        func wait() async {
            await Latch.firstOpen([self])
        }

        /// Waits until one of `latches` is open.
        static func firstOpen(_ latches: [Latch]) async {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let once = Once()
                for latch in latches {
                    latch.whenOpen { if once.claim() { c.resume() } }
                }
            }
        }
    }

    /// Claimed once: the first `claim()` returns true, the others false.
    final class Once: @unchecked Sendable {
        private let lock = NSLock()
        private var claimed = false

        func claim() -> Bool {
            lock.withLock {
                defer { claimed = true }
                return !claimed
            }
        }
    }

    /// Runs `work` in a task of its own and waits for it at most `seconds`:
    /// its value, or `nil` when it took longer. On a timeout the task is
    /// cancelled (`cancelOnTimeout`) or left running, and not waited for
    /// (so work that ignores cancellation cannot hang the caller).
    static func within<T: Sendable>(
        _ seconds: TimeInterval,
        cancelOnTimeout: Bool = true,
        _ work: @escaping @Sendable () async -> T
    ) async -> T? {
        // The first to fire wins: the work's value, or nil at the deadline
        // (Support.swift's set-once value, shared with the other tests).
        let shot = LibACPTests.Latch<T?>()
        let task = Task { shot.fire(await work()) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { shot.fire(nil) }
        let value = await shot.wait()
        if value == nil && cancelOnTimeout { task.cancel() }
        return value
    }

    /// Sleeps `seconds` without holding a thread.
    static func sleep(_ seconds: TimeInterval) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { c.resume() }
        }
    }
}
