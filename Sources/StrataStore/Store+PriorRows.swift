extension Store {
    /// How many of a transaction's updates and deletes need their committed rows before those
    /// rows are read together, block by block, instead of one key at a time.
    static let groupedPriorReadThreshold = 16

    /// The committed rows that the updates and deletes of `transaction` replace, by operation
    /// position (`nil` where none is needed or the row is missing), read grouped by block as
    /// ``read(_:keys:)`` reads them, with the transaction's ``Transaction/knownRows`` taken as
    /// they are when no commit came since they were read; `nil` when there are none and fewer
    /// than ``groupedPriorReadThreshold`` operations need one (each is then read on its own).
    /// With history tracking the rows read stay encoded in their blocks (the history's prior
    /// rows copy their bytes); without it only the columns the fetch indexes and tombstones take
    /// are decoded (the others are `null`).
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` for a bad block.
    func committedPriorRows(of transaction: Transaction) throws -> [PriorRow?]? {
        // The caller's rows, when no commit came since it read them.
        let known =
            transaction.knownRowsSequence == lastSequence
                && transaction.knownRows?.count == transaction.operations.count
            ? transaction.knownRows : nil
        guard known != nil || transaction.operations.count >= Self.groupedPriorReadThreshold else { return nil }
        var positions: [Int: [Int]] = [:]
        var count = 0
        for (position, operation) in transaction.operations.enumerated()
        where schema.entities.indices.contains(operation.entity) && needsPriorRow(operation) && known?[position] == nil
        {
            positions[operation.entity, default: []].append(position)
            count += 1
        }
        var rows =
            known.map { $0.map { $0.map(PriorRow.decoded) } }
            ?? [PriorRow?](repeating: nil, count: transaction.operations.count)
        guard count >= Self.groupedPriorReadThreshold else {
            guard known != nil else { return nil }
            for (entity, entityPositions) in positions {
                for position in entityPositions {
                    rows[position] = try read(entity, key: transaction.operations[position].key).map(PriorRow.decoded)
                }
            }
            return rows
        }
        for (entity, entityPositions) in positions {
            let keys = entityPositions.map { transaction.operations[$0].key }
            guard let columns = priorRowColumns(entity) else {
                try forEachLiveSlot(entity, keys: keys) { block, slots, place, file in
                    for (position, slot) in slots {
                        guard slot < block.rowCount else {
                            throw StoreError(
                                .corrupt, "row slot \(slot) is past the block's \(block.rowCount) rows",
                                path: file.path, offset: Int64(place.offset))
                        }
                        rows[entityPositions[position]] = .encoded(block, slot: slot)
                    }
                }
                continue
            }
            try readGrouped(entity, keys: keys, projection: projection(entity, columns)) { position, row in
                rows[entityPositions[position]] = .decoded(row)
            }
        }
        return rows
    }

    /// The columns of `entity` a commit reads of the rows its updates and deletes replace (and
    /// so of its ``Transaction/knownRows``), or `nil` for every column: with history tracking the
    /// whole row (the history's prior row); without it only the columns the fetch indexes and
    /// tombstones take.
    package func priorRowColumns(_ entity: Int) -> [Int]? {
        guard !configuration.historyTracking, schema.entities.indices.contains(entity) else { return nil }
        return schema.entities[entity].indexedColumns + schema.entities[entity].tombstoneColumns
    }

    /// Whether encoding `operation` (of an entity of the schema) needs the committed row it
    /// replaces: for the history's prior row, a tombstone, or the fetch indexes it changes.
    func needsPriorRow(_ operation: Operation) -> Bool {
        let entity = schema.entities[operation.entity]
        switch operation {
        case .insert:
            return false
        case .update(_, _, _, let changed):
            return configuration.historyTracking
                || changed.contains { entity.columns.indices.contains($0) && entity.columns[$0].hasFetchIndex }
        case .delete:
            return configuration.historyTracking || !entity.tombstoneColumns.isEmpty || !entity.indexedColumns.isEmpty
        }
    }
}
