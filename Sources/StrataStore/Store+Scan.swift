extension Store {
    /// Calls `body` with every live row of `entity`, block by block in log order.
    ///
    /// The scan sees the rows live when it starts; commits during the scan do not change what it
    /// returns. Costs one read and one decompression per block not in the cache; scanned blocks
    /// are not added to the cache.
    ///
    /// - Throws: what `body` throws, or ``StoreError`` `corrupt`/`io` for a bad block.
    public func scan(_ entity: Int, _ body: (PrimaryKey, Row) throws -> Void) throws {
        guard schema.entities.indices.contains(entity) else { throw StoreError(.invalidValue, "no entity with id \(entity)") }
        let (locations, blocks, files) = state.withLock { ($0.entities[entity].locations, $0.blocks, $0.files) }
        let entityTag = UInt16(entity)
        for number in blocks.indices where blocks[number].entity == entityTag {
            let location = blocks[number]
            guard let file = files[location.segment] else { continue }
            let block = try loadBlock(UInt32(number), location, file: file, caching: false)
            for slot in 0..<block.rowCount {
                let key = block.key(at: slot)
                guard key > 0, key < locations.count, locations[Int(key)] == RowLocation(block: UInt32(number), slot: slot).raw else { continue }
                try body(key, try decodeRow(block, slot: slot, entity: entity, file: file, offset: Int64(location.offset)))
            }
        }
    }

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
