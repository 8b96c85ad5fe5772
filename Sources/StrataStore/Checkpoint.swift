import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot of the in-memory indexes at a log position, so that opening replays only the log
/// after it (Bitcask's hint files, generalised).
///
/// Layout: a head of `"STRATCKP"`, `u32 formatVersion`, `u32 sectionCount`, `u64 headLength`, then
/// sections, each `u32 length`, `u32 maskedCRC32C`, bytes: the header section (position,
/// sequences, keys, segments with their byte counts, history directory), the block table's
/// directory (``BlockTableDirectory``), and one directory section per entity. After the head, the
/// block table in pages of 56 KiB (``BlockTablePage``), then per entity its object index in pages
/// of 4,096 keys, packed (``IndexPageCodec``), and its fetch indexes, each checksummed in its directory. Opening
/// reads the head and at most the block table's last page: another page is read when a block or
/// key in it is first used, and the fetch indexes at their first use. Integers are little-endian.
struct Checkpoint: Sendable {
    /// The first bytes of every checkpoint.
    static let magic = Array("STRATCKP".utf8)
    /// The checkpoint format's version, written in every checkpoint. Version 1 kept the object
    /// index in sections read whole at open, version 2 every block ever numbered in its block
    /// table, version 3 its block table in the head, read whole at open, version 4 its object
    /// index in fixed pages of 48 KiB, version 5 its integer and reference fetch indexes as varint
    /// differences; a checkpoint of another version is not used.
    static let formatVersion: UInt32 = 6
    /// The bytes before the head's sections: magic, version, section count and head length.
    static let prefixSize = 24

    /// The active segment when the snapshot was taken.
    var segment: UInt32
    /// The end of the log in that segment: replay starts here.
    var offset: Int64
    /// The state captured.
    var state: StoreState
    /// Per entity, the next key to allocate.
    var nextKeys: [Int64]
    /// The fetch-index sections of an opened checkpoint, per entity, not yet read:
    /// ``readFetchIndexes(_:schema:)`` reads and parses them, off the open path.
    var fetchIndexSections: [FetchIndexSection] = []
    /// Where each section of the head of an opened checkpoint starts in its file (for errors).
    var sectionOffsets: [Int64] = []

    /// The file name of checkpoint `id`.
    static func fileName(_ id: UInt32) -> String { numberedFileName(id, suffix: ".ckpt") }

    /// The checkpoint id a file name names, if it is a checkpoint's.
    static func id(fromFileName name: String) -> UInt32? {
        guard name.hasSuffix(".ckpt") else { return nil }
        return UInt32(name.dropLast(5))
    }

    /// The checkpoint's bytes, in parts to be written one after another (the file is their
    /// concatenation): the head's prefix, each section's length and checksum and its bytes,
    /// then the tail. Not copied into one buffer, which at millions of objects would hold a
    /// second copy of tens of megabytes while the checkpoint is written.
    ///
    /// - Throws: ``StoreError`` `corrupt` or `io` when a page of the object index or the block
    ///   table, still to be read from the checkpoint the state was opened from, cannot be read or
    ///   fails its verification.
    func encode(schema: Schema) throws -> [[UInt8]] {
        // The captured state's indexes with its pending changes merged (none, when it was
        // captured by ``Store/captureCheckpoint(_:)``: then nothing is copied).
        var captured = state
        let fetchIndexes = captured.fetchIndexes
        let header = encodeHeader()
        // The tail, after the head: the block table's pages, then per entity its pages and its
        // fetch indexes.
        let blocks = try state.blocks.loaded()
        var tail = BinaryWriter(capacity: blocks.count * BlockTablePage.entryBytes)
        let blockTable = Self.encodeBlockTable(blocks, live: Set(state.segmentOrder), into: &tail)
        var directories: [CheckpointDirectory] = []
        var stored: [UInt8] = []
        for (entityID, entity) in state.entities.enumerated() {
            var directory = CheckpointDirectory(liveCount: entity.liveCount)
            for page in entity.pages {
                stored.removeAll(keepingCapacity: true)
                try page.withBytes { IndexPageCodec.encode($0, appendingTo: &stored) }
                directory.pages.append(
                    CheckpointPlace(
                        offset: Int64(tail.count), length: stored.count,
                        checksum: CRC32C.mask(CRC32C.checksum(stored))))
                tail.raw(stored)
            }
            let fetch = FetchIndexCodec.encode(fetchIndexes[entityID], entity: schema.entities[entityID])
            directory.fetchIndexes = CheckpointPlace(
                offset: Int64(tail.count), length: fetch.count, checksum: CRC32C.mask(CRC32C.checksum(fetch)))
            tail.raw(fetch)
            directories.append(directory)
        }
        // The directories' offsets are into the tail until the head's length is known; their
        // length does not depend on the offsets' values.
        let headLength =
            Self.prefixSize + 8 + header.count + 8 + blockTable.encoded(shiftedBy: 0).count
            + directories.reduce(0) { $0 + 8 + $1.encoded(shiftedBy: 0).count }
        let sections =
            [header, blockTable.encoded(shiftedBy: Int64(headLength))]
            + directories.map { $0.encoded(shiftedBy: Int64(headLength)) }
        var prefix = BinaryWriter(capacity: Self.prefixSize)
        prefix.raw(Self.magic)
        prefix.u32(Self.formatVersion)
        prefix.u32(UInt32(sections.count))
        prefix.u64(UInt64(headLength))
        var parts = [prefix.bytes]
        for section in sections {
            var sectionHeader = BinaryWriter(capacity: 8)
            sectionHeader.u32(UInt32(section.count))
            sectionHeader.u32(CRC32C.mask(CRC32C.checksum(section)))
            parts += [sectionHeader.bytes, section]
        }
        parts.append(tail.bytes)
        return parts
    }

    /// The header section: position, sequences, keys, segments and history directory.
    private func encodeHeader() -> [UInt8] {
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
        return header.bytes
    }

    /// The codec for one indexed column's values.
    static func valueCodec(_ column: ColumnSchema) -> RowCodec {
        var single = column
        single.isNullable = true
        return RowCodec(EntitySchema(id: 0, name: column.name, columns: [single]))
    }
}

extension Checkpoint {
    /// Checks that the log position, and every history record the checkpoint names in a segment of
    /// its list, lie inside that segment, whose file is `sizes` bytes long (by segment id): a
    /// damaged place would otherwise be read as a length of up to 4 GiB. (The blocks of each page
    /// of the block table are checked when it is read: ``BlockTablePageSource/read()``.)
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming `path` and the section that holds the place.
    func checkPlaces(segmentSizes sizes: [UInt32: Int64], path: String) throws {
        func fits(_ segment: UInt32, _ offset: Int64, _ length: Int64) -> Bool {
            sizes[segment].map { Self.fits(offset, length, in: $0) } ?? true
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
    }

    /// Whether `length` bytes at `offset` lie within a segment of `size` bytes, past its header.
    static func fits(_ offset: Int64, _ length: Int64, in size: Int64) -> Bool {
        offset >= Int64(SegmentFile.headerSize) && length >= 0 && offset <= size - length
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
        loadPendingFetchIndexes()
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
        let parts: [[UInt8]]
        do {
            parts = try snapshot.encode(schema: schema)
        } catch let error as StoreError where error.code == .corrupt {
            if dropDamagedCheckpoint(&status) { try publishManifest(status) }
            throw error
        }
        try StoreError.io("write checkpoint", path: file) {
            try io.replaceAtomically(file, with: parts, directory: checkpointsPath)
        }
        let previous = status.checkpoint
        status.checkpoint = id
        try publishManifest(status)
        state.withLock { $0.checkpointFile = nil }
        if let previous { try? io.unlink(checkpointsPath + "/" + Checkpoint.fileName(previous)) }
        counters.checkpoints.add(1)
        logger.debug(
            "wrote checkpoint",
            metadata: [
                "checkpoint": "\(id)", "bytes": "\(parts.reduce(0) { $0 + $1.count })",
                "duration": "\(ContinuousClock.now - started)",
            ])
    }

    /// Stops naming the checkpoint the store opened from in `status` when a page of it failed its
    /// verification, so that the next open replays the whole log; returns whether it did. Call
    /// with the manifest lock held, then publish the manifest.
    func dropDamagedCheckpoint(_ status: inout ManifestStatus) -> Bool {
        guard let file = state.withLock({ $0.checkpointFile }), file.isDamaged, let current = status.checkpoint,
            file.path == checkpointsPath + "/" + Checkpoint.fileName(current)
        else { return false }
        logger.error("checkpoint damaged; the next open replays the whole log", metadata: ["path": "\(file.path)"])
        status.checkpoint = nil
        return true
    }
}
