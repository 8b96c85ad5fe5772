extension Store {
    /// Reads the row of `entity` at `key` as its encoded bytes, as ``read(_:key:)`` reads it
    /// decoded: at most one `pread` and one block decompression, then one copy of the row's bytes.
    ///
    /// - Returns: the row, or `nil` when there is no live row at `key`.
    /// - Throws: ``StoreError`` `corrupt` when the block fails its checksum or the row does not
    ///   decode, `io` when the read fails.
    public func readEncoded(_ entity: Int, key: PrimaryKey) throws -> EncodedRow? {
        guard let located = try locate(entity, key: key).row else { return nil }
        return try readEncoded(located)
    }

    /// The store's newest sequence and where the live row of `entity` at `key` is as of that
    /// sequence (`nil` when there is none), read under one lock and with no I/O: what a reader
    /// checks its own cache against before reading the row with ``readEncoded(_:)``.
    ///
    /// - Throws: ``StoreError`` `closed`; `corrupt` when the index points into a block of another
    ///   entity or a page of the index read from the checkpoint fails its checksum (a damaged
    ///   checkpoint); `io` when reading that page fails.
    public func locate(_ entity: Int, key: PrimaryKey) throws -> (sequence: UInt64, row: LocatedRow?) {
        try checkOpen()
        let (sequence, resolved) = try state.withLock { state in (state.lastSequence, try state.resolve(entity, key)) }
        if let resolved { try checkBlockEntity(resolved.block, of: entity, file: resolved.file) }
        return (sequence, resolved.map(LocatedRow.init))
    }

    /// The row ``locate(_:key:)`` found, as its encoded bytes: at most one `pread` and one block
    /// decompression, then one copy of the row's bytes, as ``readEncoded(_:key:)`` reads it once
    /// located.
    ///
    /// - Throws: ``StoreError`` `corrupt` when the block fails its checksum or the row does not
    ///   decode, `io` when the read fails.
    public func readEncoded(_ located: LocatedRow) throws -> EncodedRow {
        let resolved = located.resolved
        // A cached block starts loading the row's bytes before the block itself is touched.
        let block = try loadBlock(
            resolved.location.block, resolved.block, file: resolved.file, prefetchingRowAt: resolved.location.rowStart)
        let offset = Int64(resolved.block.offset)
        let format = try blockFormat(Int(resolved.block.entity), of: block, file: resolved.file, offset: offset)
        // Where the location says the row starts, it is read from there, without the block's
        // offset table (a cache miss); bytes there that do not check are read again through
        // the table, which names what is wrong.
        if let start = resolved.location.rowStart, resolved.location.slot < block.rowCount,
            let row = block.withRowData(from: start, { EncodedRow.checkedPrefix(of: $0, format: format) })
        {
            return row
        }
        // A row read on its own (a fault) is seldom read again while its block lives: its
        // check is not recorded.
        return try encodedRow(
            block, slot: resolved.location.slot, format: format, file: resolved.file, offset: offset,
            recordsCheck: false)
    }

    /// Calls `body` with every live row of `entity` that `accept` takes, as its encoded bytes, as
    /// ``scan(_:_:)`` calls it with decoded rows: the rows live when the scan starts, block by
    /// block in log order. `accept` sees each row of a block in place first; the rows it takes
    /// are then passed to `body`, kept in place in their block or copied as
    /// ``takeRows(of:count:slot:key:accept:format:file:offset:taken:arena:_:)`` decides.
    ///
    /// - Throws: what `accept` or `body` throws, or ``StoreError`` `corrupt`/`io` for a bad block
    ///   or row.
    public func scanEncoded(
        _ entity: Int, where accept: (PrimaryKey, EncodedRowView) throws -> Bool,
        _ body: (PrimaryKey, consuming EncodedRow) throws -> Void
    ) throws {
        guard schema.entities.indices.contains(entity) else {
            throw StoreError(.invalidValue, "no entity with id \(entity)")
        }
        var arena = EncodedRowArena()
        var taken: [Int] = []
        try forEachLiveBlock(entity) { block, slots, place, file in
            let format = try blockFormat(entity, of: block, file: file, offset: Int64(place.offset))
            try takeRows(
                of: block, count: slots.count, slot: { slots[$0].slot }, key: { slots[$0].key }, accept: accept,
                format: format, file: file, offset: Int64(place.offset), taken: &taken, arena: &arena
            ) { try body(slots[$0].key, $1) }
        }
    }

    /// Calls `body` with the live rows of `entity` at `keys` that `accept` takes, as their encoded
    /// bytes (keys without a live row are skipped), block by block in log order, as
    /// ``forEachRow(_:keys:columns:_:)`` calls it with decoded rows: one read per block holding
    /// some of the rows. `accept` sees each row in place first; the rows it takes are kept in
    /// place or copied as ``scanEncoded(_:where:_:)`` keeps them.
    ///
    /// - Throws: what `accept` or `body` throws; ``StoreError`` `corrupt` or `io` for a bad block
    ///   or row.
    public func forEachEncodedRow(
        _ entity: Int, keys: [PrimaryKey], where accept: (PrimaryKey, EncodedRowView) throws -> Bool,
        _ body: (PrimaryKey, consuming EncodedRow) throws -> Void
    ) throws {
        try forEachAcceptedRow(entity, keys: keys, where: accept) { position, row in try body(keys[position], row) }
    }

    /// The rows of `entity` at `keys` as their encoded bytes, in the order of `keys` (`nil` where
    /// no live row is), as ``read(_:keys:)`` reads them decoded.
    ///
    /// The rows are read as a fault reads its row (``readEncoded(_:)``): each is checked, but the
    /// check is not recorded in its block, and each is copied into a heap block of its own. The
    /// caller keeps the copies (a coordinator's row cache, which lets each go on its own), so the
    /// block seldom serves those rows again, and a batch of rows spread over the store (W5's
    /// first query) would otherwise allocate and zero a block's table of offsets for each row it
    /// reads.
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` for a bad block or row.
    public func readEncoded(_ entity: Int, keys: [PrimaryKey]) throws -> [EncodedRow?] {
        var rows = [EncodedRow?](repeating: nil, count: keys.count)
        try forEachLiveSlot(entity, keys: keys) { block, slots, place, file in
            let format = try blockFormat(Int(place.entity), of: block, file: file, offset: Int64(place.offset))
            for (position, slot) in slots {
                rows[position] = try encodedRow(
                    block, slot: slot, format: format, file: file, offset: Int64(place.offset), recordsCheck: false)
            }
        }
        return rows
    }

    /// The rows of `entity` at `keys` that `accept` takes, as their encoded bytes, in the order
    /// of `keys` (`nil` where no live row is or `accept` did not take it). `accept` sees each live
    /// row in place, block by block in log order; the rows it takes are kept in place or copied
    /// as ``scanEncoded(_:where:_:)`` keeps them.
    ///
    /// - Throws: what `accept` throws; ``StoreError`` `corrupt` or `io` for a bad block or row.
    public func readEncoded(
        _ entity: Int, keys: [PrimaryKey], where accept: (PrimaryKey, EncodedRowView) throws -> Bool
    ) throws -> [EncodedRow?] {
        var rows = [EncodedRow?](repeating: nil, count: keys.count)
        try forEachAcceptedRow(entity, keys: keys, where: accept) { position, row in rows[position] = row }
        return rows
    }

    /// Calls `body` with the position in `keys` and each live row of `entity` at `keys` that
    /// `accept` takes, block by block in log order, as ``forEachEncodedRow(_:keys:where:_:)``.
    private func forEachAcceptedRow(
        _ entity: Int, keys: [PrimaryKey], where accept: (PrimaryKey, EncodedRowView) throws -> Bool,
        _ body: (Int, consuming EncodedRow) throws -> Void
    ) throws {
        var arena = EncodedRowArena()
        var taken: [Int] = []
        try forEachLiveSlot(entity, keys: keys) { block, slots, place, file in
            let format = try blockFormat(Int(place.entity), of: block, file: file, offset: Int64(place.offset))
            try takeRows(
                of: block, count: slots.count, slot: { slots[$0].slot }, key: { keys[slots[$0].position] },
                accept: accept, format: format, file: file, offset: Int64(place.offset), taken: &taken, arena: &arena
            ) { try body(slots[$0].position, $1) }
        }
    }

    /// Calls `body` with each of `count` live rows of a decoded block (the `n`th in `slot(n)`, at
    /// `key(n)`) that `accept` takes, passing `n` and the row; `accept` sees every one of them in
    /// place, checked (the check recorded in the block), before `body` gets the first.
    ///
    /// When the rows taken are at least half of the block's, they are kept in place: they share
    /// a heap block holding their column offsets (``EncodedRow/storage(inPlace:format:)``), which
    /// holds the decoded block, usually the one the block cache holds, so a fetch of most rows
    /// copies no row's bytes. Fewer rows are copied into `arena`, so that a few rows kept do not
    /// keep a whole block alive. A row of more than 64 KiB, which keeps no column offsets, is
    /// copied too. `taken` is a buffer the caller lends for every block.
    private func takeRows(
        of block: DecodedBlock, count: Int, slot: (Int) -> Int, key: (Int) -> PrimaryKey,
        accept: (PrimaryKey, EncodedRowView) throws -> Bool, format: EncodedRowFormat, file: SegmentFile,
        offset: Int64, taken: inout [Int], arena: inout EncodedRowArena,
        _ body: (Int, consuming EncodedRow) throws -> Void
    ) throws {
        taken.removeAll(keepingCapacity: true)
        // Borrowed for the views: `format` holds the codec for the whole call.
        let codec = Unmanaged.passUnretained(format.codec)
        for n in 0..<count {
            let takes = try withCheckedRow(block, slot: slot(n), format: format, file: file, offset: offset) {
                bytes, offsets in
                try accept(key(n), EncodedRowView(bytes: bytes, offsets: offsets, codec: codec))
            }
            if takes { taken.append(n) }
        }
        let shared = 2 * taken.count >= block.rowCount ? EncodedRow.storage(inPlace: block, format: format) : nil
        for n in taken {
            let row = try withCheckedRow(block, slot: slot(n), format: format, file: file, offset: offset) {
                bytes, offsets in
                if let shared, let offsets { return EncodedRow(inPlace: shared, slot: slot(n), offsets: offsets) }
                return arena.copy(bytes, offsets: offsets, format: format)
            }
            try body(n, row)
        }
    }

    /// The format of a block's rows, or ``StoreError`` `corrupt` naming the block.
    private func blockFormat(
        _ entity: Int, of block: DecodedBlock, file: SegmentFile, offset: Int64
    ) throws -> EncodedRowFormat {
        let version = Int(block.schemaVersion)
        guard version < versionFormats.count, entity < versionFormats[version].count else {
            throw StoreError(
                .corrupt, "block names schema version \(block.schemaVersion), unknown to the store", path: file.path,
                offset: offset)
        }
        return versionFormats[version][entity]
    }

    /// A copy of the encoded row in `slot` of a decoded block, checked against `format` (once
    /// while the block lives, with `recordsCheck`: see ``EncodedRow/withCheckedOffsets(_:format:block:slot:recordsCheck:_:)``).
    private func encodedRow(
        _ block: DecodedBlock, slot: Int, format: EncodedRowFormat, file: SegmentFile, offset: Int64,
        recordsCheck: Bool = true
    ) throws -> EncodedRow {
        try withCheckedRow(block, slot: slot, format: format, file: file, offset: offset, recordsCheck: recordsCheck) {
            bytes, offsets in
            EncodedRow(copying: bytes, offsets: offsets, format: format)
        }
    }

    /// Calls `body` with the bytes of the row in `slot` of a decoded block and its column
    /// offsets, checked against `format` (once while the block lives, with `recordsCheck`).
    ///
    /// - Throws: ``StoreError`` `corrupt` when the slot is past the block's rows or the row does
    ///   not decode; what `body` throws.
    private func withCheckedRow<R>(
        _ block: DecodedBlock, slot: Int, format: EncodedRowFormat, file: SegmentFile, offset: Int64,
        recordsCheck: Bool = true,
        _ body: (UnsafeRawBufferPointer, UnsafeRawPointer?) throws -> R
    ) throws -> R {
        guard slot < block.rowCount else {
            throw StoreError(
                .corrupt, "row slot \(slot) is past the block's \(block.rowCount) rows", path: file.path, offset: offset
            )
        }
        do {
            return try block.withRow(at: slot) { bytes in
                try EncodedRow.withCheckedOffsets(
                    bytes, format: format, block: block, slot: slot, recordsCheck: recordsCheck
                ) { try body(bytes, $0) }
            }
        } catch is BinaryReader.Malformed {
            throw StoreError(.corrupt, "row \(slot) of a block does not decode", path: file.path, offset: offset)
        }
    }
}

/// Where a live row was when ``Store/locate(_:key:)`` looked it up: its block and slot, with the
/// segment file holding them kept open. `Sendable`.
public struct LocatedRow: Sendable {
    /// The row's location, block place and file.
    let resolved: ResolvedRow
}
