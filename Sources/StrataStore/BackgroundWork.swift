import Dispatch
import StrataSynchronization
import Synchronization

/// Work started on another core, whose result the starting thread takes when it needs it: a
/// commit group's fetch-index changes are put in order while the group is written and synced.
final class BackgroundWork<Result: Sendable>: Sendable {
    private let result = Lock<Result?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a global queue.
    init(_ work: @escaping @Sendable () -> Result) {
        DispatchQueue.global().async { [self] in
            let value = work()
            result.withLock { $0 = value }
            done.signal()
        }
    }

    /// Waits for the work to finish and returns its result.
    func wait() -> Result {
        done.wait()
        return result.withLock { $0! }
    }
}
