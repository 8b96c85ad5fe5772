internal import StrataStore

extension PersistentStoreCoordinator {
    /// Replays the history of `source` into `store` (whose engine store is `engine`) through
    /// the store's replicator: each source transaction is one save, under the store's save lock
    /// and between the replicator's begin and end calls, committed by
    /// ``PersistentStoreReplicator/store(_:commit:locally:)`` with the replay cursor in the same
    /// transaction; the remote change notification follows each one.
    ///
    /// - Returns: the number of transactions applied.
    /// - Throws: what ``replayHistory(from:into:after:progress:)`` throws, and what the
    ///   replicator throws (the transactions before are kept, and the next replay resumes there).
    func replayThroughReplicator(
        from source: Store, into store: PersistentStore, engine: Store, after sequence: UInt64?,
        progress: ((_ applied: Int, _ total: Int) throws -> Void)?
    ) throws -> Int {
        let (cursor, start) = try engine.replayStart(from: source, after: sequence)
        let total = Int(source.lastSequence - min(start, source.lastSequence))
        var applied = 0
        try source.forEachHistoryTransaction(after: start) { record in
            let transaction = Transaction(replaying: record, cursor: cursor)
            try StoreSaveLock.withLocks([store.saveLock]) {
                try PersistentStore.replicating([store]) {
                    if transaction.operations.isEmpty {
                        try engine.advanceHistoryConsumer(cursor, to: record.sequence)
                    } else {
                        _ = try store.commit(transaction)
                    }
                }
            }
            RemoteChangeCenter.postChanges([store.identifier: engine.lastSequence])
            applied += 1
            try progress?(applied, total)
            return true
        }
        return applied
    }
}
