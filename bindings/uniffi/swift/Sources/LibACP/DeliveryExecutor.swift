import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where request handlers and the tasks awaiting a call's outcome run: on
/// the libacp thread that delivered the request or the outcome, right after
/// the delivery, instead of on the global executor's threads.
///
/// Why: a W2 round trip (one `fs/read_text_file` request and its answer)
/// handed each message from the libacp thread that received it to a pool
/// thread (a `Task` for the handler, a continuation resumed for the caller):
/// a futex wake-up per message per side, 4.5 context switches per round trip
/// against the TypeScript SDK's 2.3 (bench/README.md, "Gaps left"; issue 24).
///
/// How: a delivery runs under `Delivery.run`; jobs enqueued on this
/// executor meanwhile *on that thread* are queued and run in order once the
/// delivery's own code returned, before the thread goes back to libacp (no
/// job runs inside another, no lock is held while they run). A job enqueued
/// anywhere else (a continuation resumed by a timer, by the connection's
/// constructor, by a UniFFI future) runs on a Dispatch worker, still as this
/// executor (`runSynchronously(on:)`, TaskExecutor's contract).
/// So a handler runs on a libacp thread until it first suspends, and again
/// after each resumption libacp delivers: like a Node or Python handler on
/// its event loop, it must not block.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class DeliveryExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = DeliveryExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if let queue = Delivery.current, queue.inline {
            queue.jobs.append(unowned)
        } else {
            // Still run as this executor (TaskExecutor's contract): a job
            // handed to another executor runs where the runtime sees its
            // task away from its preferred executor.
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { unowned.runSynchronously(on: executor) }
        }
    }
}

/// The jobs queued during one delivery on one thread (thread-local).
final class Delivery {
    fileprivate var jobs: [UnownedJob] = []
    /// False for `outside`: jobs go to a Dispatch worker.
    fileprivate let inline: Bool

    private init(inline: Bool) {
        self.inline = inline
    }

    fileprivate static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The delivery running on this thread, if any.
    fileprivate static var current: Delivery? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Delivery>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Whether this thread is inside a libacp delivery (`run`), where jobs
    /// of `DeliveryExecutor` run: what the tests check a handler sees.
    static var active: Bool { current?.inline ?? false }

    /// Runs `body` (a libacp callback's work), then the jobs it queued on
    /// `DeliveryExecutor`, and those they queue, in order. Nested calls
    /// (a callback inside a job) queue into the outer delivery.
    static func run(_ body: () -> Void) {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            body()
            return
        }
        if current != nil {
            body()
            return
        }
        let delivery = Delivery(inline: true)
        delivery.installed {
            body()
            let executor = DeliveryExecutor.shared.asUnownedTaskExecutor()
            var next = 0
            while next < delivery.jobs.count {
                let job = delivery.jobs[next]
                next += 1
                job.runSynchronously(on: executor)
            }
        }
    }
}

extension Delivery {
    /// Runs `body` where no job may run inline: inside a task's
    /// cancellation handler (the runtime holds the task's status lock while
    /// it runs, and a job of that task run there could wait for it). Jobs
    /// enqueued meanwhile on this thread go to a Dispatch worker; inside a
    /// delivery they run after the current job, as always.
    static func outside(_ body: () -> Void) {
        if current != nil {
            body()
            return
        }
        Delivery(inline: false).installed(body)
    }

    /// Runs `body` with this as the thread's current delivery (`current`).
    fileprivate func installed(_ body: () -> Void) {
        // The key holds it unretained: keep it alive until the key is cleared.
        withExtendedLifetime(self) {
            pthread_setspecific(Delivery.key, Unmanaged.passUnretained(self).toOpaque())
            defer { pthread_setspecific(Delivery.key, nil) }
            body()
        }
    }
}

/// Starts `operation` in a task that prefers `DeliveryExecutor` (a plain
/// `Task` where task executors are not available).
func deliveryTask(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
        return Task(executorPreference: DeliveryExecutor.shared, operation: operation)
    }
    return Task(operation: operation)
}
