extension Store {
    /// How many of a transaction's updates and deletes need their committed rows before those
    /// rows are read together, block by block, instead of one key at a time.
    static let groupedPriorReadThreshold = 16

    /// The committed rows that the updates and deletes of `transaction` replace, by operation
    /// position (`nil` where none is needed or the row is missing), read grouped by block as
    /// ``read(_:keys:)`` reads them; `nil` when fewer than ``groupedPriorReadThreshold``
    /// operations need one (each is then read on its own).
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` for a bad block.
    func committedPriorRows(of transaction: Transaction) throws -> [Row?]? {
        guard transaction.operations.count >= Self.groupedPriorReadThreshold else { return nil }
        // Encoding an update or delete needs the row it replaces for the history (prior rows),
        // a tombstone, or the fetch indexes it changes.
        let history = configuration.historyTracking
        let indexed = schema.entities.map { $0.columns.contains { $0.hasFetchIndex } }
        let tombstones = schema.entities.map { $0.columns.contains { $0.keepsTombstone } }
        var positions: [Int: [Int]] = [:]
        var count = 0
        for (position, operation) in transaction.operations.enumerated() {
            let entity = operation.entity
            guard schema.entities.indices.contains(entity) else { continue }
            switch operation {
            case .insert: continue
            case .update(_, _, _, let changed):
                let columns = schema.entities[entity].columns
                guard history || (indexed[entity] && changed.contains { columns.indices.contains($0) && columns[$0].hasFetchIndex }) else { continue }
            case .delete:
                guard history || tombstones[entity] || indexed[entity] else { continue }
            }
            positions[entity, default: []].append(position)
            count += 1
        }
        guard count >= Self.groupedPriorReadThreshold else { return nil }
        var rows = [Row?](repeating: nil, count: transaction.operations.count)
        for (entity, entityPositions) in positions {
            let found = try read(entity, keys: entityPositions.map { transaction.operations[$0].key })
            for (position, row) in zip(entityPositions, found) { rows[position] = row }
        }
        return rows
    }
}
