import Dispatch
import Synchronization

/// Runs async PostgreSQL work from synchronous code (a context's `save()`), on a thread of its
/// own rather than Swift's cooperative pool, so a save called from a task that blocks a pool
/// thread cannot starve the work it waits for.
final class BlockingBridge: TaskExecutor, @unchecked Sendable {
    // @unchecked: the queue is thread-safe.
    private let queue: DispatchQueue

    /// Creates a bridge with its own serial queue named `label`.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs a job on the bridge's queue.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `body` to completion and returns its result, blocking the calling thread for at most
    /// `timeout` seconds.
    ///
    /// - Throws: what `body` throws; ``MirrorError/timedOut(_:)`` after `timeout`.
    func run<T: Sendable>(timeout: Double = 30, _ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task(executorPreference: self) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { throw MirrorError.timedOut(timeout) }
        return try result.withLock { $0! }.get()
    }
}
