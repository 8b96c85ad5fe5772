extension Store {
    /// The fewest inserts one core encodes when the inserts of a bulk commit are shared out.
    static let insertsPerPart = 4096

    /// Throws unless `op` names an entity of the schema and a positive key.
    func checkTarget(_ op: Operation) throws {
        guard schema.entities.indices.contains(op.entity) else {
            throw StoreError(.invalidValue, "no entity with id \(op.entity)")
        }
        guard op.key > 0 else { throw StoreError(.invalidValue, "primary keys are positive; got \(op.key)") }
    }

    /// Encodes the insert at `index` of a transaction: checks `row`, adds it to `builder`, its
    /// fetch-index change to `rows` and raises the entity's highest key in `highestKeys`.
    func encodeInsert(
        entity: Int, key: PrimaryKey, row: Row, at index: Int, into builder: inout RecordBuilder, rows: inout [IndexedRowChange],
        highestKeys: inout [Int64]
    ) throws {
        let codec = codecs[entity]
        try codec.validate(row)
        builder.add(.insert, entity: entity, key: key, row: row, codec: codec)
        if !schema.entities[entity].indexedColumns.isEmpty { rows.append(IndexedRowChange(op: index, old: nil, new: .row(row))) }
        highestKeys[entity] = max(highestKeys[entity], key)
    }

    /// Encodes `operations`, every one an insert, into the empty `builder`: a part of them a core
    /// at once, each part into blocks of its own, then the parts in order (so the blocks and
    /// operations are those of one pass, but for where blocks are cut). Each part records its
    /// fetch-index changes too, which the commit's leader would otherwise record from `rows`
    /// on one core.
    ///
    /// - Returns: the fetch-index changes of the inserts.
    /// - Throws: what ``encodeInsert(entity:key:row:at:into:rows:highestKeys:)`` throws for the
    ///   first operation that fails, as one pass would.
    func encodeInserts(
        _ operations: [Operation], into builder: inout RecordBuilder, rows: inout [IndexedRowChange], highestKeys: inout [Int64]
    ) throws -> FetchIndexChanges {
        let entityCount = schema.entities.count
        let indexedColumns = indexedColumns
        let empty = builder
        let parts = ParallelParts.map(count: operations.count, minimumPerPart: Self.insertsPerPart) { range in
            Result { () throws -> (builder: RecordBuilder, rows: [IndexedRowChange], highestKeys: [Int64], changes: FetchIndexChanges) in
                var part = (
                    builder: empty, rows: [IndexedRowChange](), highestKeys: [Int64](repeating: 0, count: entityCount), changes: FetchIndexChanges()
                )
                for index in range {
                    guard case .insert(let entity, let key, let row) = operations[index] else { continue }
                    try checkTarget(operations[index])
                    try encodeInsert(entity: entity, key: key, row: row, at: index, into: &part.builder, rows: &part.rows, highestKeys: &part.highestKeys)
                    if !indexedColumns[entity].isEmpty {
                        part.changes.record(entity, key, columns: indexedColumns[entity], old: nil, new: .row(row))
                    }
                }
                return part
            }
        }
        var changes = FetchIndexChanges()
        for part in parts {
            let part = try part.get()
            builder.append(part.builder)
            rows += part.rows
            changes.append(part.changes)
            for entity in 0..<entityCount { highestKeys[entity] = max(highestKeys[entity], part.highestKeys[entity]) }
        }
        return changes
    }
}
