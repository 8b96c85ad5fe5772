extension Store {
    /// Prepares a replay of the history of `source` into this store: checks that the schemas
    /// match and registers this store's replay cursor for `source` (``replayConsumerName(source:)``).
    ///
    /// - Parameter sequence: start after this source transaction instead of after the last one
    ///   applied (never before it).
    /// - Returns: the cursor's name, and the source sequence to apply the history after.
    /// - Throws: ``StoreError`` `schemaMismatch` for a source of another schema;
    ///   `historyUnavailable` when this store keeps no history or the cursor was evicted; `io`.
    public func replayStart(from source: Store, after sequence: UInt64? = nil) throws -> (cursor: String, after: UInt64)
    {
        guard source.schema == schema else {
            throw StoreError(.schemaMismatch, "the source store \(source.path) has another schema", path: path)
        }
        let name = Self.replayConsumerName(source: source.storeID)
        let cursor = try registerHistoryConsumer(name)
        if cursor.evictedAt != nil {
            throw StoreError(
                .historyUnavailable, "the replay cursor of \(source.path) was evicted; replay into a new store",
                path: path)
        }
        return (name, max(cursor.sequence, sequence ?? 0))
    }
}

extension Transaction {
    /// The transaction that applies the source history transaction `record` (same keys, rows,
    /// author, context, timestamp and process) and moves the replay cursor `cursor` to it in the
    /// same commit: what a replay commits when it goes through a store's replicator.
    public init(replaying record: HistoryTransaction, cursor: String) {
        self.init(author: record.author, contextName: record.contextName)
        timestamp = record.timestamp
        bundleID = record.bundleID
        processID = record.processID
        consumerCursors = [cursor: record.sequence]
        operations.reserveCapacity(record.changes.count)
        for change in record.changes {
            switch change.kind {
            case .insert: if let row = change.row { insert(change.entity, key: change.key, row: row) }
            case .update:
                if let row = change.row {
                    update(change.entity, key: change.key, row: row, changedColumns: change.changedColumns)
                }
            case .delete: delete(change.entity, key: change.key)
            }
        }
    }
}
