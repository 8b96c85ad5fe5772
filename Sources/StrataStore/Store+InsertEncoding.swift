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
    /// operations are those of one pass, but for where blocks are cut).
    ///
    /// - Throws: what ``encodeInsert(entity:key:row:at:into:rows:highestKeys:)`` throws for the
    ///   first operation that fails, as one pass would.
    func encodeInserts(
        _ operations: [Operation], into builder: inout RecordBuilder, rows: inout [IndexedRowChange], highestKeys: inout [Int64]
    ) throws {
        let entityCount = schema.entities.count
        let empty = builder
        let parts = ParallelParts.map(count: operations.count, minimumPerPart: Self.insertsPerPart) { range in
            Result { () throws -> (builder: RecordBuilder, rows: [IndexedRowChange], highestKeys: [Int64]) in
                var part = (builder: empty, rows: [IndexedRowChange](), highestKeys: [Int64](repeating: 0, count: entityCount))
                for index in range {
                    guard case .insert(let entity, let key, let row) = operations[index] else { continue }
                    try checkTarget(operations[index])
                    try encodeInsert(entity: entity, key: key, row: row, at: index, into: &part.builder, rows: &part.rows, highestKeys: &part.highestKeys)
                }
                return part
            }
        }
        for part in parts {
            let part = try part.get()
            builder.append(part.builder)
            rows += part.rows
            for entity in 0..<entityCount { highestKeys[entity] = max(highestKeys[entity], part.highestKeys[entity]) }
        }
    }
}
