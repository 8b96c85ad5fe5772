import Dispatch

/// Commits a history replay's batches one at a time on a queue of their own, so that the replay
/// re-encodes the next batch of source transactions while the last one is written: the two
/// halves of a replay (reading and re-encoding; validating, writing and indexing) run on two
/// cores instead of one after the other.
///
/// At most one batch is in flight: ``start(_:)`` waits for the one before, so batches commit in
/// order, and a batch that fails stops every later one (its error is thrown by each later call).
// @unchecked: `failure` is written by the queue's block and read only after `group.wait()`,
// which orders the two; the type is used by the one thread running the replay.
final class ReplayCommitPipeline: @unchecked Sendable {
    private let queue = DispatchQueue(label: "strata.replay-commit")
    private let group = DispatchGroup()
    private var failure: (any Error)?

    /// Waits for the batch in flight, if any, and throws its error (or an earlier batch's).
    func wait() throws {
        group.wait()
        if let failure { throw failure }
    }

    /// Starts committing a batch once the batch in flight has committed.
    ///
    /// - Throws: the error of a batch committed before, in which case `commit` is not started.
    func start(_ commit: @escaping @Sendable () throws -> Void) throws {
        try wait()
        queue.async(group: group) { [self] in
            do { try commit() } catch { failure = error }
        }
    }
}
