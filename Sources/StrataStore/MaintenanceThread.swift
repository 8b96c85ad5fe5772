import Dispatch
import Foundation
import Synchronization

/// The store's background thread: runs checkpoints and compaction when woken or every second.
final class MaintenanceThread: Sendable {
    private let running = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let ended = Atomic<Bool>(false)

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
    /// written, then compaction of sealed segments past the dead-fraction threshold.
    func runMaintenance() {
        do {
            try checkOpen(writing: true)
            if spaceAheadRequested.exchange(false, ordering: .acquiringAndReleasing) { try allocateSpaceAhead() }
            if indexMergeRequested.exchange(false, ordering: .acquiringAndReleasing) { mergePendingIndexChanges() }
            if state.withLock({ $0.bytesSinceCheckpoint }) >= Int64(configuration.checkpointInterval) {
                try writeCheckpoint()
            }
            try compactSegments(onDemand: false)
        } catch let error as StoreError where error.code == .closed {
            // The store was closed while the round ran: routine, not a failure.
            logger.debug("background maintenance stopped by close", metadata: ["error": "\(error)"])
        } catch {
            logger.error("background maintenance failed", metadata: ["error": "\(error)"])
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
