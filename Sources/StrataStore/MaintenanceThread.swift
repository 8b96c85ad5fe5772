import Dispatch
import Foundation
import StrataSynchronization
import Synchronization

/// The store's background thread: runs checkpoints and compaction when woken or every second.
final class MaintenanceThread: Sendable {
    private let running = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let ended = Atomic<Bool>(false)
    /// What made the last round fail (its ``StoreError`` code, or the error's type), `nil` while
    /// rounds succeed.
    private let failure = Lock<String?>(nil)

    /// Whether the thread was started and has ended.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// Creates a stopped thread.
    init() {}

    /// Starts the thread, calling `work` each time it wakes.
    func start(_ work: @escaping @Sendable () -> Void) {
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            while running.load(ordering: .sequentiallyConsistent) {
                _ = wakeUp.wait(timeout: .now() + .seconds(1))
                guard running.load(ordering: .sequentiallyConsistent) else { break }
                work()
            }
            ended.store(true, ordering: .releasing)
            finished.signal()
        }
        thread.name = "strata-maintenance"
        thread.start()
    }

    /// Wakes the thread early.
    func wake() { wakeUp.signal() }

    /// Stops the thread and waits for it to finish its current work.
    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        wakeUp.signal()
        finished.wait()
    }

    /// Records a round that failed with `error`. Returns whether the failure is news to log at
    /// error level: the first, or of another kind than the round before's. A store on a full
    /// disk fails every round until space returns, and one line says so, not one a second.
    func recordFailure(_ error: any Error) -> Bool {
        let kind = (error as? StoreError).map { "\($0.code)" } ?? "\(type(of: error))"
        return failure.withLock { last in
            defer { last = kind }
            return last != kind
        }
    }

    /// Records a round that succeeded. Returns whether the round before failed, so that the
    /// recovery is logged.
    func recordSuccess() -> Bool {
        failure.withLock { last in
            defer { last = nil }
            return last != nil
        }
    }

    /// Tells the thread to end after its current work, without waiting: what a store released
    /// without ``Store/close()`` does, since the thread itself may be releasing it.
    func requestStop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        wakeUp.signal()
    }
}

extension Store {
    /// Starts background checkpoints and compaction. When the active segment holds no record
    /// yet (a new store), the thread first allocates its space ahead of the log, so that the
    /// first commits do not write its zeros themselves; a store reopened with a log is not
    /// written to until it commits (it may only be read), so its first commit allocates it.
    func startMaintenance() {
        maintenance.start { [weak self] in self?.runMaintenance() }
        let wantsSpace = state.withLock { state in
            state.activeEnd == Int64(SegmentFile.headerSize) && requestSpaceAhead(state)
        }
        if wantsSpace { maintenance.wake() }
    }

    /// One round of background work: segment space ahead of the log and a merge of the pending
    /// fetch-index changes when a commit asked for them, a checkpoint when enough log was
    /// written, then compaction of sealed segments past the dead-fraction threshold. A failure
    /// is logged at error level when it starts (and when its kind changes), the same failure
    /// again at debug, and the first round that succeeds after it at info.
    func runMaintenance() {
        do {
            try checkOpen(writing: true)
            if spaceAheadRequested.exchange(false, ordering: .acquiringAndReleasing) { try allocateSpaceAhead() }
            if indexMergeRequested.exchange(false, ordering: .acquiringAndReleasing) { mergePendingIndexChanges() }
            if state.withLock({ $0.bytesSinceCheckpoint }) >= Int64(configuration.checkpointInterval) {
                try writeCheckpoint()
            }
            try compactSegments(onDemand: false)
            if maintenance.recordSuccess() { logger.info("background maintenance works again") }
        } catch let error as StoreError where error.code == .closed {
            // The store was closed while the round ran: routine, not a failure.
            logger.debug("background maintenance stopped by close", metadata: ["error": "\(error)"])
        } catch {
            if maintenance.recordFailure(error) {
                logger.error("background maintenance failed", metadata: ["error": "\(error)"])
            } else {
                logger.debug("background maintenance failed again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Merges the pending fetch-index changes into a copy of the indexes outside the state's
    /// lock, which commits and reads take meanwhile, and puts the copy in place (or, when some
    /// index takes them one at a time, merges them in place under the lock: see
    /// ``StoreState/beginIndexMerge()``).
    func mergePendingIndexChanges() {
        guard let merge = state.withLock({ $0.beginIndexMerge() }) else { return }
        var indexes = merge.indexes
        merge.changes.settled().apply(to: &indexes)
        state.withLock { $0.finishIndexMerge((indexes, merge.merges)) }
    }
}
