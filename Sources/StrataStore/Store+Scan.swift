extension Store {
    /// Calls `body` with every live row of `entity`, block by block in log order.
    ///
    /// The scan sees the rows live when it starts; commits during the scan do not change what it
    /// returns. Costs one read and one decompression per block not in the cache; scanned blocks
    /// are not added to the cache.
    ///
    /// - Throws: what `body` throws, or ``StoreError`` `corrupt`/`io` for a bad block.
    public func scan(_ entity: Int, _ body: (PrimaryKey, Row) throws -> Void) throws {
        try scan(entity, columns: nil, body)
    }

    /// Calls `body` with every live row of `entity`, as ``scan(_:_:)``, decoding only `columns`
    /// (every column when `nil`): the other columns of the rows are `null`, and their values
    /// (strings, data) are skipped without being copied.
    ///
    /// - Throws: what `body` throws, or ``StoreError`` `corrupt`/`io` for a bad block.
    public func scan(_ entity: Int, columns: [Int]?, _ body: (PrimaryKey, Row) throws -> Void) throws {
        guard schema.entities.indices.contains(entity) else { throw StoreError(.invalidValue, "no entity with id \(entity)") }
        let projection = projection(entity, columns)
        let (locations, blocks, files) = state.withLock { ($0.entities[entity].locations, $0.blocks, $0.files) }
        let entityTag = UInt16(entity)
        for number in blocks.indices where blocks[number].entity == entityTag {
            let location = blocks[number]
            guard let file = files[location.segment] else { continue }
            let block = try loadBlock(UInt32(number), location, file: file, caching: false)
            for slot in 0..<block.rowCount {
                let key = block.key(at: slot)
                guard key > 0, key < locations.count, locations[Int(key)] == RowLocation(block: UInt32(number), slot: slot).raw else { continue }
                try body(key, try decodeRow(block, slot: slot, entity: entity, projection: projection, file: file, offset: Int64(location.offset)))
            }
        }
    }

    /// The rows of `entity` at `keys`, in the order of `keys` (`nil` where no live row is).
    ///
    /// Resolves every key under one lock, then reads and decompresses each block holding some
    /// of the rows once, however many of the rows it holds: fetching the rows an index lookup
    /// found costs one read per block rather than one per row. Blocks are cached when the batch
    /// is small (as single reads are), and not for large batches (as scans are not).
    ///
    /// - Throws: ``StoreError`` `corrupt` when a block fails its checksum, `io` when a read fails.
    public func read(_ entity: Int, keys: [PrimaryKey]) throws -> [Row?] {
        var rows = [Row?](repeating: nil, count: keys.count)
        try readGrouped(entity, keys: keys) { position, row in rows[position] = row }
        return rows
    }

    /// Calls `body` with the live rows of `entity` at `keys` (keys without a live row are
    /// skipped), block by block in log order rather than in the order of `keys`.
    ///
    /// Costs one read and one decompression per block holding some of the rows, as
    /// ``read(_:keys:)``, without keeping the rows: counting or filtering the rows an index
    /// lookup found costs at most what a scan of those blocks costs.
    ///
    /// - Throws: what `body` throws; ``StoreError`` `corrupt` or `io` for a bad block.
    ///
    /// - Parameter columns: the columns to decode (every column when `nil`); the others are `null`.
    public func forEachRow(_ entity: Int, keys: [PrimaryKey], columns: [Int]? = nil, _ body: (PrimaryKey, Row) throws -> Void) throws {
        try readGrouped(entity, keys: keys, projection: projection(entity, columns)) { position, row in try body(keys[position], row) }
    }

    /// Decodes the live rows at `keys` grouped by block, blocks in log order, calling `body` with
    /// each row's position in `keys`.
    private func readGrouped(_ entity: Int, keys: [PrimaryKey], projection: [Bool]? = nil, _ body: (Int, Row) throws -> Void) throws {
        try checkOpen()
        let resolved = state.withLock { state in keys.map { state.resolve(entity, $0) } }
        // Positions in `keys`, ordered by block and slot (the packed location orders both).
        var ordered: [(location: UInt64, position: Int)] = []
        ordered.reserveCapacity(keys.count)
        for (position, row) in resolved.enumerated() {
            if let row { ordered.append((row.location.raw, position)) }
        }
        ordered.sort { $0.location < $1.location }
        let positions = ordered.map(\.position)
        let caching = keys.count <= Self.cachedBatchSize
        var start = 0
        while start < positions.count {
            let first = resolved[positions[start]]!
            var end = start + 1
            while end < positions.count && resolved[positions[end]]!.location.block == first.location.block { end += 1 }
            let block = try loadBlock(first.location.block, first.block, file: first.file, caching: caching)
            for position in positions[start..<end] {
                let row = resolved[position]!
                try body(position, try decodeRow(block, slot: row.location.slot, entity: Int(row.block.entity), projection: projection, file: row.file, offset: Int64(row.block.offset)))
            }
            start = end
        }
    }

    /// Which columns of `entity` to decode, or `nil` for all.
    private func projection(_ entity: Int, _ columns: [Int]?) -> [Bool]? {
        guard let columns, entity >= 0, entity < codecs.count else { return nil }
        var wanted = [Bool](repeating: false, count: codecs[entity].types.count)
        for column in columns where wanted.indices.contains(column) { wanted[column] = true }
        return wanted
    }

    /// Decodes the row in `slot` of a decoded block, only the columns `projection` marks (every
    /// column when `nil`).
    private func decodeRow(_ block: DecodedBlock, slot: Int, entity: Int, projection: [Bool]?, file: SegmentFile, offset: Int64) throws -> Row {
        guard let projection else { return try decodeRow(block, slot: slot, entity: entity, file: file, offset: offset) }
        guard slot < block.rowCount else {
            throw StoreError(.corrupt, "row slot \(slot) is past the block's \(block.rowCount) rows", path: file.path, offset: offset)
        }
        do {
            return try block.withRow(at: slot) { try codecs[entity].decode($0, projection: projection) }
        } catch {
            throw StoreError(.corrupt, "row \(slot) of a block does not decode", path: file.path, offset: offset)
        }
    }

    /// The largest batch of ``read(_:keys:)`` and ``forEachRow(_:keys:_:)`` whose blocks are
    /// added to the cache.
    static let cachedBatchSize = 1024

    /// The keys of `entity` whose `column` value matches `query`, from the column's fetch index,
    /// in index order (by value, then key).
    ///
    /// Costs no I/O.
    ///
    /// - Parameters:
    ///   - descending: walk the index from the largest value.
    ///   - limit: stop after this many keys.
    /// - Throws: ``StoreError/Code/invalidValue`` when the column has no fetch index.
    public func keys(
        _ entity: Int, column: Int, matching query: IndexQuery, descending: Bool = false, limit: Int? = nil
    ) throws -> [PrimaryKey] {
        try checkFetchIndex(entity, column)
        waitForFetchIndexes()
        return state.withLock { $0.fetchIndexes[entity][column]!.keys(matching: query, descending: descending, limit: limit) }
    }

    /// The number of rows of `entity` whose `column` value matches `query`. Costs no I/O.
    ///
    /// - Throws: ``StoreError/Code/invalidValue`` when the column has no fetch index.
    public func countKeys(_ entity: Int, column: Int, matching query: IndexQuery) throws -> Int {
        try checkFetchIndex(entity, column)
        waitForFetchIndexes()
        return state.withLock { $0.fetchIndexes[entity][column]!.count(matching: query) }
    }

    private func checkFetchIndex(_ entity: Int, _ column: Int) throws {
        guard schema.entities.indices.contains(entity), schema.entities[entity].columns.indices.contains(column),
            schema.entities[entity].columns[column].hasFetchIndex
        else {
            throw StoreError(.invalidValue, "entity \(entity) column \(column) has no fetch index")
        }
    }
}

extension RowCodec {
    /// Decodes the columns of a row that `projection` marks; the others are `null`, their bytes
    /// skipped without being copied.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when the bytes do not hold a row of this entity.
    func decode(_ bytes: UnsafeRawBufferPointer, projection: [Bool]) throws -> Row {
        var reader = BinaryReader(bytes)
        let bitmap = try reader.bytes((types.count + 7) / 8)
        var values: [Value] = []
        values.reserveCapacity(types.count)
        for (column, type) in types.enumerated() {
            if bitmap[column / 8] & (1 << UInt8(column % 8)) != 0 {
                values.append(.null)
            } else if projection[column] {
                values.append(try decodeValue(type, from: &reader))
            } else {
                try skipValue(type, in: &reader)
                values.append(.null)
            }
        }
        return Row(values)
    }

    /// Moves the reader past one non-nil value of `type`.
    private func skipValue(_ type: ColumnType, in reader: inout BinaryReader) throws {
        switch type {
        case .int16, .int32, .int64, .reference: _ = try reader.zigzag()
        case .float: _ = try reader.u32()
        case .double, .date: _ = try reader.u64()
        case .bool: _ = try reader.u8()
        case .uuid: _ = try reader.bytes(16)
        case .string, .binary, .transformable, .uri, .decimal: _ = try reader.lengthPrefixed()
        }
    }
}
