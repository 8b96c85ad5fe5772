import Foundation

extension Store {
    /// The name of the history consumer in which a destination store keeps how far it applied
    /// the history of the store `sourceID`.
    public static func replayConsumerName(source sourceID: UUID) -> String {
        "replay:\(sourceID.uuidString)"
    }

    /// Applies the history of `source` (a store of the same schema) to this store, one commit
    /// per source transaction with the same keys, author, context, timestamp and process; each
    /// commit also records, in a history consumer of this store
    /// (``replayConsumerName(source:)``), the source transaction it applied. So the replay
    /// resumes where it stopped, even after a crash, and applies no transaction twice. Every
    /// commit but the last is relaxed: the replay syncs once, when it ends.
    ///
    /// - Parameters:
    ///   - source: the store whose history to apply; it may be open read-only.
    ///   - sequence: start after this source transaction instead of after the last one applied
    ///     (never before it).
    ///   - progress: called after each commit with the transactions applied and the number to
    ///     apply; what it throws stops the replay (what was committed stays, and is not applied again).
    /// - Returns: the number of transactions applied.
    /// - Throws: ``StoreError`` `schemaMismatch` for a source of another schema;
    ///   `historyUnavailable` when the source's history after the resume point was deleted or
    ///   either store does not keep history; `keyConflict` when this store holds rows the
    ///   history does not explain; what ``commit(_:)`` and `progress` throw.
    @discardableResult
    public func replayHistory(
        from source: Store, after sequence: UInt64? = nil, progress: ((_ applied: Int, _ total: Int) throws -> Void)? = nil
    ) throws -> Int {
        guard source.schema == schema else {
            throw StoreError(.schemaMismatch, "the source store \(source.path) has another schema", path: path)
        }
        let name = Self.replayConsumerName(source: source.storeID)
        let cursor = try registerHistoryConsumer(name)
        if cursor.evictedAt != nil {
            throw StoreError(.historyUnavailable, "the replay cursor of \(source.path) was evicted; replay into a new store", path: path)
        }
        let start = max(cursor.sequence, sequence ?? 0)
        let total = Int(source.lastSequence - min(start, source.lastSequence))
        var applied = 0
        // Each transaction is committed when the next one is read: relaxed, so the replay syncs
        // once at its end (its last commit has the store's durability) rather than per
        // transaction. A crash loses at most an unsynced tail, cursor included, which the next
        // replay applies again.
        var pending: Transaction?
        func commitPending(relaxed: Bool) throws {
            guard var transaction = pending else { return }
            pending = nil
            if relaxed { transaction.durability = .relaxed }
            try commit(transaction)
            applied += 1
            try progress?(applied, total)
        }
        try source.forEachHistoryTransaction(after: start) { record in
            try commitPending(relaxed: true)
            var transaction = Transaction(author: record.author, contextName: record.contextName)
            transaction.timestamp = record.timestamp
            transaction.bundleID = record.bundleID
            transaction.processID = record.processID
            transaction.consumerCursors = [name: record.sequence]
            for change in record.changes {
                switch change.kind {
                case .insert: transaction.insert(change.entity, key: change.key, row: change.row!)
                case .update: transaction.update(change.entity, key: change.key, row: change.row!, changedColumns: change.changedColumns)
                case .delete: transaction.delete(change.entity, key: change.key)
                }
            }
            pending = transaction
            return true
        }
        try commitPending(relaxed: false)
        if applied > 0 {
            logger.debug("replayed history", metadata: ["source": "\(source.path)", "transactions": "\(applied)", "path": "\(path)"])
        }
        return applied
    }
}
