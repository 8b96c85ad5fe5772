import Foundation

extension Store {
    /// The start of the names of replay cursors: history consumers that count another store's
    /// sequences, which hold none of this store's history.
    public static let replayConsumerPrefix = "replay:"

    /// The name of the history consumer in which a destination store keeps how far it applied
    /// the history of the store `sourceID` (a source sequence: it does not hold this store's
    /// history floor, and is never evicted).
    public static func replayConsumerName(source sourceID: UUID) -> String {
        replayConsumerPrefix + sourceID.uuidString
    }

    /// The most transactions, and the most changes, one replay batch commits.
    static let replayBatchLimits = (transactions: 1_024, changes: 16_384)

    /// Applies the history of `source` (a store of the same schema) to this store: each source
    /// transaction becomes a commit of this store with the same keys, author, context,
    /// timestamp and process, and also records, in a history consumer of this store
    /// (``replayConsumerName(source:)``), the source transaction it applied. So the replay
    /// resumes where it stopped, even after a crash, and applies no transaction twice.
    ///
    /// The commits are written in batches (the batch `commit(_:)`: one append per batch, each
    /// transaction its own record), relaxed but the last: the replay syncs once, when it ends.
    ///
    /// - Parameters:
    ///   - source: the store whose history to apply; it may be open read-only.
    ///   - sequence: start after this source transaction instead of after the last one applied
    ///     (never before it).
    ///   - progress: called after each transaction is added to the batch being committed, with
    ///     the transactions applied and the number to apply; what it throws stops the replay
    ///     once the transactions counted so far are committed (they are not applied again).
    ///   - aroundEachBatch: called with each batch of transactions and the call that commits it,
    ///     which it must make once (a coordinator records what pinned readers need before it,
    ///     and tells its contexts after it); `nil` commits each batch directly.
    /// - Returns: the number of transactions applied.
    /// - Throws: ``StoreError`` `schemaMismatch` for a source of another schema;
    ///   `historyUnavailable` when the source's history after the resume point was deleted or
    ///   either store does not keep history; `keyConflict` when this store holds rows the
    ///   history does not explain; what ``commit(_:)`` and `progress` throw.
    @discardableResult
    public func replayHistory(
        from source: Store, after sequence: UInt64? = nil, progress: ((_ applied: Int, _ total: Int) throws -> Void)? = nil,
        aroundEachBatch: ((_ batch: [Transaction], _ commit: () throws -> Void) throws -> Void)? = nil
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
        // A crash loses at most the unsynced tail of the replay, cursor included, which the
        // next replay applies again.
        var batch: [Transaction] = []
        var batchChanges = 0
        func commitBatch(final: Bool) throws {
            guard !batch.isEmpty else { return }
            for index in batch.indices { batch[index].durability = .relaxed }
            if final { batch[batch.count - 1].durability = nil }
            let transactions = batch
            if let aroundEachBatch {
                try aroundEachBatch(transactions) { try commit(transactions) }
            } else {
                try commit(transactions)
            }
            batch.removeAll(keepingCapacity: true)
            batchChanges = 0
        }
        try source.forEachHistoryTransaction(after: start) { record in
            var transaction = Transaction(author: record.author, contextName: record.contextName)
            transaction.timestamp = record.timestamp
            transaction.bundleID = record.bundleID
            transaction.processID = record.processID
            transaction.consumerCursors = [name: record.sequence]
            transaction.operations.reserveCapacity(record.changes.count)
            for change in record.changes {
                switch change.kind {
                case .insert: transaction.insert(change.entity, key: change.key, row: change.row!)
                case .update: transaction.update(change.entity, key: change.key, row: change.row!, changedColumns: change.changedColumns)
                case .delete: transaction.delete(change.entity, key: change.key)
                }
            }
            if !batch.isEmpty && batchChanges + record.changes.count > Self.replayBatchLimits.changes {
                try commitBatch(final: false)
            }
            batch.append(transaction)
            batchChanges += record.changes.count
            applied += 1
            do {
                try progress?(applied, total)
            } catch {
                // What progress counted as applied is committed before the replay stops.
                try commitBatch(final: true)
                throw error
            }
            if batch.count == Self.replayBatchLimits.transactions { try commitBatch(final: false) }
            return true
        }
        try commitBatch(final: true)
        if applied > 0 {
            logger.debug("replayed history", metadata: ["source": "\(source.path)", "transactions": "\(applied)", "path": "\(path)"])
        }
        return applied
    }
}
