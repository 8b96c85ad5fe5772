extension Store {
    /// Throws unless `entity` is one of the schema's `entityCount` entities and `key` a positive key.
    static func checkTarget(entity: Int, key: PrimaryKey, entityCount: Int) throws {
        guard (0..<entityCount).contains(entity) else {
            throw StoreError(.invalidValue, "no entity with id \(entity)")
        }
        guard key > 0 else { throw StoreError(.invalidValue, "primary keys are positive; got \(key)") }
    }

    /// Encodes an insert of `row` under `key` with `codec` (the entity's): checks `row`, adds it
    /// to `builder` and raises the entity's highest key in `highestKeys`.
    func encodeInsert(
        entity: Int, key: PrimaryKey, row: Row, codec: RowCodec, into builder: inout RecordBuilder,
        highestKeys: inout [Int64]
    ) throws {
        try codec.validate(row)
        builder.add(.insert, entity: entity, key: key, row: row, codec: codec)
        highestKeys[entity] = max(highestKeys[entity], key)
    }

    /// Encodes `count` inserts into the empty `builder`: a part of them a core at once, each
    /// part into blocks of its own, then the parts in order (so the blocks and operations are
    /// those of one pass, but for where blocks are cut). `inserts` calls its second argument
    /// with the entity, key and row of each insert of a range, in order. Each part records its
    /// fetch-index changes too, which the commit's leader would otherwise record on one core.
    ///
    /// - Returns: the fetch-index changes of the inserts.
    /// - Throws: what encoding the first insert that fails throws, as one pass would.
    func encodeInserts(
        count: Int, into builder: inout RecordBuilder, highestKeys: inout [Int64],
        _ inserts: @Sendable (Range<Int>, (Int, PrimaryKey, Row) throws -> Void) throws -> Void
    ) throws -> FetchIndexChanges {
        let entityCount = schema.entities.count
        let indexedColumns = indexedColumns
        let empty = builder
        let codecs = codecs
        let parts = ParallelParts.map(
            count: count, minimumPerPart: ParallelParts.rowsPerPart, cores: configuration.commitThreads
        ) { range in
            Result { () throws -> (builder: RecordBuilder, highestKeys: [Int64], changes: FetchIndexChanges) in
                var part = (
                    builder: empty, highestKeys: [Int64](repeating: 0, count: entityCount), changes: FetchIndexChanges()
                )
                // What a row's encoding retains is the part's own: see RowCodec.copy().
                let partCodecs = codecs.map { $0.copy() }
                let partIndexedColumns = indexedColumns.map { columns in columns.map { $0 } }
                try inserts(range) { entity, key, row in
                    try Self.checkTarget(entity: entity, key: key, entityCount: entityCount)
                    try encodeInsert(
                        entity: entity, key: key, row: row, codec: partCodecs[entity], into: &part.builder,
                        highestKeys: &part.highestKeys)
                    if !partIndexedColumns[entity].isEmpty {
                        part.changes.record(entity, key, columns: partIndexedColumns[entity], old: nil, new: .row(row))
                    }
                }
                return part
            }
        }
        var changes = FetchIndexChanges()
        for part in parts {
            let part = try part.get()
            builder.append(part.builder)
            changes.append(part.changes)
            for entity in 0..<entityCount { highestKeys[entity] = max(highestKeys[entity], part.highestKeys[entity]) }
        }
        return changes
    }

    /// Commits `transaction`, which has no operations (its author, timestamp, durability and
    /// condition are the commit's), with the inserts of `rows`: each row is made as it is
    /// encoded, on every core when they are many, and none is kept. Durable and isolated as
    /// ``commit(_:)-(Transaction)`` is; the history shows the inserts as it shows any.
    ///
    /// - Returns: the commit's sequence number.
    /// - Throws: what `rows.make` throws for the first row that fails, or what
    ///   ``commit(_:)-(Transaction)`` throws (`invalidValue` for operations in `transaction`).
    package func commit(_ transaction: Transaction, inserting rows: InsertedRows) throws -> UInt64 {
        guard transaction.operations.isEmpty else {
            throw StoreError(.invalidValue, "a commit of inserted rows takes a transaction without operations")
        }
        guard rows.count > 0 else { return try commit(transaction) }
        try checkOpen(writing: true)
        loadPendingFetchIndexes()
        let readSequence = lastSequence
        var builder = newRecordBuilder()
        var highestKeys = [Int64](repeating: 0, count: schema.entities.count)
        let changes = try encodeInserts(count: rows.count, into: &builder, highestKeys: &highestKeys) { range, encode in
            try rows.forEach(in: range, encode)
        }
        let commit = try pendingCommit(
            transaction, builder: builder, rows: [], indexChanges: changes, readSequence: readSequence,
            highestKeys: highestKeys)
        return try submit([commit])[0].get()
    }
}
