import Dispatch
import StrataSynchronization
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
    /// `timeout` seconds. A result that arrives after the caller gave up goes to `abandoned`
    /// (to close a connection the caller will never see).
    ///
    /// - Throws: what `body` throws; ``MirrorError/timedOut(_:)`` after `timeout`.
    func run<T: Sendable>(
        timeout: Double = 30, abandoned: (@Sendable (T) async -> Void)? = nil,
        _ body: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Lock<Outcome<T>>(.waiting)
        let task = Task(executorPreference: self) {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            let late = outcome.withLock { state -> Bool in
                if case .abandoned = state { return true }
                state = .finished(result)
                return false
            }
            if late, case .success(let value) = result { await abandoned?(value) }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .success, case .finished(let result) = outcome.withLock({ $0 }) {
            return try result.get()
        }
        let result = outcome.withLock { state -> Result<T, any Error>? in
            if case .finished(let result) = state { return result }
            state = .abandoned
            return nil
        }
        guard let result else {
            task.cancel()
            throw MirrorError.timedOut(timeout)
        }
        return try result.get()
    }

    /// Where a ``run(timeout:abandoned:_:)`` stands.
    private enum Outcome<T: Sendable>: Sendable {
        case waiting
        case finished(Result<T, any Error>)
        case abandoned
    }
}
