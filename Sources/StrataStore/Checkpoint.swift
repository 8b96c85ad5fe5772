import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot of the in-memory indexes at a log position, so that opening replays only the log
/// after it (Bitcask's hint files, generalised).
///
/// Layout: `"STRATCKP"`, `u32 formatVersion`, `u32 sectionCount`, then sections, each
/// `u32 length`, `u32 maskedCRC32C`, bytes: the header section (position, sequences, keys,
/// segments with their byte counts, history directory), the block table, one object-index
/// section per entity and one fetch-index section per entity. Integers are little-endian.
struct Checkpoint: Sendable {
    private static let magic = Array("STRATCKP".utf8)

    /// The active segment when the snapshot was taken.
    var segment: UInt32
    /// The end of the log in that segment: replay starts here.
    var offset: Int64
    /// The state captured.
    var state: StoreState
    /// Per entity, the next key to allocate.
    var nextKeys: [Int64]
    /// The fetch-index sections of a decoded checkpoint, per entity, checksums verified but
    /// not parsed: ``decodeFetchIndexes(_:schema:)`` parses them, off the open path.
    var fetchIndexSections: [ArraySlice<UInt8>] = []
    /// Where each section of a decoded checkpoint starts in its file (for errors).
    var sectionOffsets: [Int64] = []

    /// The file name of checkpoint `id`.
    static func fileName(_ id: UInt32) -> String { String(format: "%08u.ckpt", id) }

    /// The checkpoint id a file name names, if it is a checkpoint's.
    static func id(fromFileName name: String) -> UInt32? {
        guard name.hasSuffix(".ckpt") else { return nil }
        return UInt32(name.dropLast(5))
    }

    /// The checkpoint's bytes.
    func encode(schema: Schema) -> [UInt8] {
        // The captured state's indexes with its pending changes merged (none, when it was
        // captured by ``Store/captureCheckpoint(_:)``: then nothing is copied).
        var captured = state
        let fetchIndexes = captured.fetchIndexes
        var sections: [[UInt8]] = []
        var header = BinaryWriter()
        header.u32(segment)
        header.u64(UInt64(offset))
        header.u64(state.lastSequence)
        header.u64(state.historyFloor)
        header.varint(nextKeys.count)
        for key in nextKeys { header.zigzag(key) }
        header.varint(state.segmentOrder.count)
        for id in state.segmentOrder {
            let stats = state.stats[id] ?? SegmentStats()
            header.u32(id)
            // Counts that a damaged checkpoint's row sizes drove below zero are written as zero:
            // they only steer compaction.
            header.u64(UInt64(clamping: stats.liveBytes))
            header.u64(UInt64(clamping: stats.deadBytes))
            header.u64(UInt64(clamping: stats.fileBytes))
            header.u64(stats.maxSequence)
        }
        header.varint(state.history.count)
        for entry in state.history {
            header.u64(entry.sequence)
            header.u32(entry.segment)
            header.u64(UInt64(entry.offset))
            header.u32(UInt32(entry.length))
        }
        sections.append(header.bytes)
        var blocks = BinaryWriter(capacity: state.blocks.count * 14 + 8)
        blocks.varint(state.blocks.count)
        for block in state.blocks {
            blocks.u32(block.segment)
            blocks.u32(block.offset)
            blocks.u32(block.length)
            blocks.u16(block.entity)
        }
        sections.append(blocks.bytes)
        for (entityID, entity) in state.entities.enumerated() {
            var index = BinaryWriter(capacity: entity.locations.count * 12 + 16)
            index.varint(entity.locations.count)
            entity.locations.withUnsafeBytes { index.raw($0) }
            entity.sizes.withUnsafeBytes { index.raw($0) }
            sections.append(index.bytes)
            var fetch = BinaryWriter()
            let columns = fetchIndexes[entityID].sorted { $0.key < $1.key }
            fetch.varint(columns.count)
            for (column, ordered) in columns {
                let codec = Self.valueCodec(schema.entities[entityID].columns[column])
                fetch.varint(column)
                fetch.varint(ordered.count)
                ordered.forEach { value, key in
                    fetch.varint(UInt64(bitPattern: key))
                    codec.encode(Row([value]), into: &fetch)
                }
            }
            sections.append(fetch.bytes)
        }
        var bytes = BinaryWriter(capacity: sections.reduce(16) { $0 + $1.count + 8 })
        bytes.raw(Self.magic)
        bytes.u32(Store.formatVersion)
        bytes.u32(UInt32(sections.count))
        for section in sections {
            bytes.u32(UInt32(section.count))
            bytes.u32(CRC32C.mask(CRC32C.checksum(section)))
            bytes.raw(section)
        }
        return bytes.bytes
    }

    /// The codec for one indexed column's values.
    static func valueCodec(_ column: ColumnSchema) -> RowCodec {
        var single = column
        single.isNullable = true
        return RowCodec(EntitySchema(id: 0, name: column.name, columns: [single]))
    }

    /// Parses a checkpoint read from `path`.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the file and the offset of the section that
    ///   fails its checksum or does not parse.
    static func decode(_ bytes: [UInt8], path: String, schema: Schema) throws -> Checkpoint {
        try bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            var sectionStart = 0
            do {
                guard raw.count >= 16, Array(try reader.bytes(8)) == magic, try reader.u32() == Store.formatVersion
                else {
                    throw StoreError(.corrupt, "not a checkpoint of this format", path: path, offset: 0)
                }
                let count = Int(try reader.u32())
                guard count == 2 + 2 * schema.entities.count else {
                    throw StoreError(.corrupt, "checkpoint has \(count) sections", path: path, offset: 12)
                }
                var sections: [UnsafeRawBufferPointer] = []
                var sectionStarts: [Int] = []
                for _ in 0..<count {
                    sectionStart = reader.position
                    sectionStarts.append(sectionStart)
                    let length = Int(try reader.u32())
                    let crc = try reader.u32()
                    let section = try reader.bytes(length)
                    guard CRC32C.mask(CRC32C.checksum(section)) == crc else {
                        throw StoreError(
                            .corrupt, "checkpoint section fails its checksum", path: path, offset: Int64(sectionStart))
                    }
                    sections.append(section)
                }
                sectionStart = sectionStarts[0]
                var state = StoreState(schema: schema)
                var header = BinaryReader(sections[0])
                let segment = try header.u32()
                let offset = try header.offset()
                state.lastSequence = try header.sequence()
                state.historyFloor = try header.sequence()
                var nextKeys: [Int64] = []
                for _ in 0..<(try header.count(limit: 65_535)) { nextKeys.append(try header.nextKey()) }
                for _ in 0..<(try header.count(limit: 1 << 24)) {
                    let id = try header.u32()
                    let stats = SegmentStats(
                        liveBytes: try header.offset(), deadBytes: try header.offset(),
                        fileBytes: try header.offset(), maxSequence: try header.sequence())
                    state.segmentOrder.append(id)
                    state.stats[id] = stats
                }
                for _ in 0..<(try header.count()) {
                    state.history.append(
                        HistoryEntry(
                            sequence: try header.sequence(), segment: try header.u32(), offset: try header.offset(),
                            length: Int(try header.u32())))
                }
                sectionStart = sectionStarts[1]
                var blocks = BinaryReader(sections[1])
                // 14 bytes a block: a count the section cannot hold reserves nothing.
                let blockCount = try blocks.count(limit: blocks.remaining / 14)
                state.blocks.reserveCapacity(blockCount)
                for _ in 0..<blockCount {
                    state.blocks.append(
                        BlockLocation(
                            segment: try blocks.u32(), offset: try blocks.u32(), length: try blocks.u32(),
                            entity: try blocks.u16()))
                }
                for entityID in schema.entities.indices {
                    sectionStart = sectionStarts[2 + 2 * entityID]
                    var index = BinaryReader(sections[2 + 2 * entityID])
                    let slots = try index.count()
                    let locations = try index.bytes(slots * 8)
                    let sizes = try index.bytes(slots * 4)
                    var entity = EntityIndex()
                    entity.locations = Array(locations.bindMemory(to: UInt64.self))
                    entity.sizes = Array(sizes.bindMemory(to: UInt32.self))
                    var live = 0
                    for location in entity.locations where location != 0 {
                        // The place is (block number + 1) << 16 | slot: a present row names a block.
                        let block = RowLocation(raw: location).place >> 16
                        guard block >= 1, block <= UInt64(blockCount) else { throw BinaryReader.Malformed(offset: 0) }
                        live += 1
                    }
                    guard !entity.locations.isEmpty else { throw BinaryReader.Malformed(offset: 0) }
                    entity.liveCount = live
                    state.entities[entityID] = entity
                }
                // Slices of the file's bytes: kept without copying until parsed in the background.
                // A section's bytes follow its length and checksum.
                let fetchSections = (0..<schema.entities.count).map { entity -> ArraySlice<UInt8> in
                    let start = sectionStarts[3 + 2 * entity] + 8
                    return bytes[start..<(start + sections[3 + 2 * entity].count)]
                }
                var checkpoint = Checkpoint(segment: segment, offset: offset, state: state, nextKeys: nextKeys)
                checkpoint.fetchIndexSections = fetchSections
                checkpoint.sectionOffsets = sectionStarts.map(Int64.init)
                return checkpoint
            } catch is BinaryReader.Malformed {
                throw StoreError(.corrupt, "checkpoint section does not parse", path: path, offset: Int64(sectionStart))
            }
        }
    }
}

extension Checkpoint {
    /// Checks that the log position, and every block and history record the checkpoint names in a
    /// segment of its list, lie inside that segment, whose file is `sizes` bytes long (by segment
    /// id): a damaged place would otherwise be read as a length of up to 4 GiB. (The block table
    /// keeps the blocks of segments compaction deleted, which are never read.)
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming `path` and the section that holds the place.
    func checkPlaces(segmentSizes sizes: [UInt32: Int64], path: String) throws {
        func fits(_ segment: UInt32, _ offset: Int64, _ length: Int64) -> Bool {
            guard let size = sizes[segment] else { return true }
            return offset >= Int64(SegmentFile.headerSize) && length >= 0 && offset <= size - length
        }
        let header = sectionOffsets.first ?? 0
        guard sizes[segment] != nil, fits(segment, offset, 0) else {
            throw StoreError(
                .corrupt, "checkpoint position \(offset) is outside segment \(segment)", path: path, offset: header)
        }
        for entry in state.history where !fits(entry.segment, entry.offset, Int64(entry.length)) {
            throw StoreError(
                .corrupt, "checkpoint history record at \(entry.offset) is outside segment \(entry.segment)",
                path: path, offset: header)
        }
        let table = sectionOffsets.count > 1 ? sectionOffsets[1] : 0
        for block in state.blocks where !fits(block.segment, Int64(block.offset), Int64(block.length)) {
            throw StoreError(
                .corrupt, "checkpoint block at \(block.offset) is outside segment \(block.segment)", path: path,
                offset: table)
        }
    }

    /// Parses the fetch-index sections of a checkpoint.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when a section does not parse.
    static func decodeFetchIndexes(_ sections: [ArraySlice<UInt8>], schema: Schema) throws -> [[Int: OrderedIndex]] {
        var indexes = StoreState.emptyFetchIndexes(schema)
        for (entityID, section) in sections.enumerated() {
            try section.withUnsafeBytes { raw in
                var fetch = BinaryReader(raw)
                for _ in 0..<(try fetch.count(limit: 4096)) {
                    let column = try fetch.count(limit: 4095)
                    guard indexes[entityID][column] != nil else { throw BinaryReader.Malformed(offset: fetch.position) }
                    let codec = valueCodec(schema.entities[entityID].columns[column])
                    var pairs: [(Value, PrimaryKey)] = []
                    // At least 2 bytes a pair (a key, a null bitmap): a count the section cannot
                    // hold reserves nothing.
                    let pairCount = try fetch.count(limit: fetch.remaining / 2)
                    pairs.reserveCapacity(pairCount)
                    for _ in 0..<pairCount {
                        let key = Int64(bitPattern: try fetch.varint())
                        pairs.append((try codec.decodeSingleValue(from: &fetch), key))
                    }
                    indexes[entityID][column] = OrderedIndex(ordered: pairs)
                }
            }
        }
        return indexes
    }
}

extension Store {
    /// Writes a checkpoint of the current indexes, publishes it in the manifest and removes the
    /// previous one. Syncs the log first, so the checkpoint never covers bytes not on disk.
    ///
    /// Costs a copy of the indexes under the lock and one sequential file write.
    public func checkpoint() throws {
        try checkOpen(writing: true)
        try writeCheckpoint()
    }

    /// Writes a checkpoint (the body of ``checkpoint()``, also run by close and maintenance).
    func writeCheckpoint() throws {
        waitForFetchIndexes()
        try manifestLock.withLock { status in
            try syncActiveSegment()
            let snapshot = state.withLock { state in
                defer { state.bytesSinceCheckpoint = 0 }
                return Self.captureCheckpoint(&state)
            }
            try publishCheckpoint(snapshot, status: &status)
        }
    }

    /// A checkpoint of `state` at the end of the log, its pending fetch-index changes merged in
    /// `state` first (the caller holds its lock), so that the copy shares the merged indexes.
    static func captureCheckpoint(_ state: inout StoreState) -> Checkpoint {
        state.mergePendingIndexChanges()
        return Checkpoint(segment: state.activeSegment, offset: state.activeEnd, state: state, nextKeys: [])
    }

    /// Writes `snapshot` as a new checkpoint file and a manifest naming it. Call with the manifest lock held.
    func publishCheckpoint(_ snapshot: Checkpoint, status: inout ManifestStatus) throws {
        var snapshot = snapshot
        snapshot.nextKeys = nextKeys.withLock { $0 }
        let id = status.takeFileID()
        let file = checkpointsPath + "/" + Checkpoint.fileName(id)
        let started = ContinuousClock.now
        let bytes = snapshot.encode(schema: schema)
        try StoreError.io("write checkpoint", path: file) {
            try io.replaceAtomically(file, with: bytes, directory: checkpointsPath)
        }
        let previous = status.checkpoint
        status.checkpoint = id
        try publishManifest(status)
        if let previous { try? io.unlink(checkpointsPath + "/" + Checkpoint.fileName(previous)) }
        counters.checkpoints.add(1)
        logger.debug(
            "wrote checkpoint",
            metadata: [
                "checkpoint": "\(id)", "bytes": "\(bytes.count)", "duration": "\(ContinuousClock.now - started)",
            ])
    }
}
