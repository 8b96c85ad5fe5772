extension Store {
    /// Calls `body` with every live row of `entity`, block by block in log order.
    ///
    /// The scan sees the rows live when it starts; commits during the scan do not change what it
    /// returns. Costs one read and one decompression per block not in the cache; scanned blocks
    /// are cached only into room the cache has free, never evicting a block (and are the first
    /// evicted), so a scan of a store that fits in the cache is not read from disk twice.
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
        guard schema.entities.indices.contains(entity) else {
            throw StoreError(.invalidValue, "no entity with id \(entity)")
        }
        let projection = projection(entity, columns)
        try forEachLiveBlock(entity) { block, slots, location, file in
            let codec = try blockCodec(entity, of: block, file: file, offset: Int64(location.offset))
            for (key, slot) in slots {
                try body(
                    key,
                    try decodeRow(
                        block, slot: slot, codec: codec, projection: projection, file: file,
                        offset: Int64(location.offset)))
            }
        }
    }

    /// Calls `body` once per block of `entity` (a valid entity), in log order, with the key and
    /// slot of each row of the block live when the walk starts (see ``scan(_:_:)``).
    func forEachLiveBlock(
        _ entity: Int,
        _ body: (
            _ block: DecodedBlock, _ slots: [(key: PrimaryKey, slot: Int)], _ place: BlockLocation, _ file: SegmentFile
        ) throws -> Void
    ) throws {
        let (index, table, files) = state.withLock { ($0.entities[entity], $0.blocks, $0.files) }
        // A scan reads every block: the checkpoint's pages of the table not read yet are read
        // outside the lock (once: the pages are shared with the state's table).
        let blocks = try table.loaded()
        let entityTag = UInt16(entity)
        var slots: [(key: PrimaryKey, slot: Int)] = []
        for number in blocks.occupiedRanges.joined() where blocks[number].entity == entityTag {
            let location = blocks[number]
            guard let file = files[location.segment] else { continue }
            let block = try loadBlock(UInt32(number), location, file: file, caching: false)
            slots.removeAll(keepingCapacity: true)
            for slot in 0..<block.rowCount {
                let key = block.key(at: slot)
                guard try index.location(of: key) == RowLocation(block: UInt32(number), slot: slot) else { continue }
                slots.append((key, slot))
            }
            try body(block, slots, location, file)
        }
    }

    /// The rows of `entity` at `keys`, in the order of `keys` (`nil` where no live row is).
    ///
    /// Resolves every key under one lock, then reads and decompresses each block holding some
    /// of the rows once, however many of the rows it holds: fetching the rows an index lookup
    /// found costs one read per block rather than one per row. Blocks are cached when the batch
    /// is small (as single reads are), and for large batches only into free room (as scans are).
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
    public func forEachRow(
        _ entity: Int, keys: [PrimaryKey], columns: [Int]? = nil, _ body: (PrimaryKey, Row) throws -> Void
    ) throws {
        try readGrouped(entity, keys: keys, projection: projection(entity, columns)) { position, row in
            try body(keys[position], row)
        }
    }

    /// Decodes the live rows at `keys` grouped by block, blocks in log order, calling `body` with
    /// each row's position in `keys`.
    func readGrouped(
        _ entity: Int, keys: [PrimaryKey], projection: [Bool]? = nil, _ body: (Int, Row) throws -> Void
    ) throws {
        try forEachLiveSlot(entity, keys: keys) { block, slots, place, file in
            let codec = try blockCodec(Int(place.entity), of: block, file: file, offset: Int64(place.offset))
            for (position, slot) in slots {
                try body(
                    position,
                    try decodeRow(
                        block, slot: slot, codec: codec, projection: projection, file: file, offset: Int64(place.offset)
                    ))
            }
        }
    }

    /// Calls `body` once per block holding live rows of `entity` at `keys`, blocks in log order,
    /// with the decoded block and the position in `keys` and slot of each of those rows.
    ///
    /// Under one lock, reads each key's location and takes the block list and files as they
    /// stand (copies sharing storage, as ``scan(_:columns:_:)`` does), so that the rows read are
    /// those live when the read started; each block's place and file are then looked up once.
    func forEachLiveSlot(
        _ entity: Int, keys: [PrimaryKey],
        _ body: (
            _ block: DecodedBlock, _ slots: [(position: Int, slot: Int)], _ place: BlockLocation, _ file: SegmentFile
        ) throws -> Void
    ) throws {
        try checkOpen()
        var (located, blocks, files) = try state.withLock { state in
            // Positions in `keys` with their rows' places, which order blocks and slots.
            var located: [(location: UInt64, position: Int)] = []
            if entity >= 0, entity < state.entities.count {
                located.reserveCapacity(keys.count)
                for (position, key) in keys.enumerated() {
                    let location = try state.entities[entity].location(of: key)
                    if location.isPresent { located.append((location.place, position)) }
                }
            }
            return (located, state.blocks, state.files)
        }
        let ordered = located.sorted { $0.location < $1.location }
        let caching = keys.count <= Self.cachedBatchSize
        var slots: [(position: Int, slot: Int)] = []
        var start = 0
        while start < ordered.count {
            let number = RowLocation(raw: ordered[start].location).block
            var end = start + 1
            while end < ordered.count && RowLocation(raw: ordered[end].location).block == number { end += 1 }
            let place = try blocks.location(Int(number))
            if let file = files[place.segment] {
                try checkBlockEntity(place, of: entity, file: file)
                let block = try loadBlock(number, place, file: file, caching: caching)
                slots.removeAll(keepingCapacity: true)
                for entry in ordered[start..<end] {
                    slots.append((entry.position, RowLocation(raw: entry.location).slot))
                }
                try body(block, slots, place, file)
            }
            start = end
        }
    }

    /// The codec of a block's rows, or ``StoreError`` `corrupt` naming the block.
    private func blockCodec(_ entity: Int, of block: DecodedBlock, file: SegmentFile, offset: Int64) throws -> RowCodec
    {
        do {
            return try codec(entity, of: block)
        } catch {
            throw StoreError(
                .corrupt, "block names schema version \(block.schemaVersion), unknown to the store", path: file.path,
                offset: offset)
        }
    }

    /// Which columns of `entity` to decode, or `nil` for all.
    func projection(_ entity: Int, _ columns: [Int]?) -> [Bool]? {
        guard let columns, entity >= 0, entity < codecs.count else { return nil }
        var wanted = [Bool](repeating: false, count: codecs[entity].types.count)
        for column in columns where wanted.indices.contains(column) { wanted[column] = true }
        return wanted
    }

    /// Decodes the row in `slot` of a decoded block with `codec`, only the columns `projection`
    /// marks (every column when `nil`). Callers take the codec once for many rows: a copy of a
    /// codec counts four references.
    private func decodeRow(
        _ block: DecodedBlock, slot: Int, codec: RowCodec, projection: [Bool]?, file: SegmentFile, offset: Int64
    ) throws -> Row {
        guard slot < block.rowCount else {
            throw StoreError(
                .corrupt, "row slot \(slot) is past the block's \(block.rowCount) rows", path: file.path, offset: offset
            )
        }
        do {
            return try block.withRow(at: slot) { bytes in
                if let projection { return try codec.decode(bytes, projection: projection) }
                return try codec.decode(bytes)
            }
        } catch {
            throw StoreError(.corrupt, "row \(slot) of a block does not decode", path: file.path, offset: offset)
        }
    }

    /// The largest batch of ``read(_:keys:)`` and ``forEachRow(_:keys:_:)`` whose blocks are
    /// added to the cache as recently used (larger batches only fill free room).
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
        loadPendingFetchIndexes()
        return state.withLock {
            $0.fetchIndexes[entity][column]!.keys(matching: query, descending: descending, limit: limit)
        }
    }

    /// The number of rows of `entity` whose `column` value matches `query`. Costs no I/O.
    ///
    /// - Throws: ``StoreError/Code/invalidValue`` when the column has no fetch index.
    public func countKeys(_ entity: Int, column: Int, matching query: IndexQuery) throws -> Int {
        try checkFetchIndex(entity, column)
        loadPendingFetchIndexes()
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
