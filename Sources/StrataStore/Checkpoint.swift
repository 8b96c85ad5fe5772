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

    /// Writes the checkpoint to `fd`, front to back through a buffer of `flushBytes`
    /// (``BufferedFileWriter``), and returns its length in bytes: a checkpoint at millions of
    /// objects, or with a long history, is tens of megabytes, which are not held in memory while
    /// it is written.
    ///
    /// The head's sections come first in the file but its directories are known only once the
    /// tail is written, so the header section is written first, the tail after the head's place
    /// (whose length depends only on counts known before), then the directories, then the prefix
    /// and the header's length and checksum.
    ///
    /// - Throws: ``SystemCallError`` when a write fails; ``StoreError`` `corrupt` or `io` when a
    ///   page of the object index or the block table, still to be read from the checkpoint the
    ///   state was opened from, cannot be read or fails its verification.
    func write(
        schema: Schema, to fd: Int32, io: any FileIO, flushBytes: Int = BufferedFileWriter.defaultFlushBytes
    ) throws -> Int64 {
        // The captured state's indexes with its pending changes merged (none, when it was
        // captured by ``Store/captureCheckpoint(_:)``: then nothing is copied).
        var captured = state
        let fetchIndexes = captured.fetchIndexes
        let headerOffset = Int64(Self.prefixSize + 8)
        var file = BufferedFileWriter(io: io, fd: fd, at: headerOffset, flushBytes: flushBytes)
        try file.beginChecksum()
        try writeHeader(to: &file)
        let header = try file.endChecksum()

        let blocks = try state.blocks.loaded()
        let live = Set(state.segmentOrder)
        var blockTable = Self.blockTableDirectory(blocks, live: live)
        var directories = state.entities.map { entity in
            CheckpointDirectory(
                liveCount: entity.liveCount,
                pages: Array(repeating: CheckpointPlace(offset: 0, length: 0, checksum: 0), count: entity.pages.count))
        }
        // The sections' lengths do not depend on the offsets and checksums still to be filled in.
        let sectionsLength = ([blockTable.encoded()] + directories.map { $0.encoded() }).reduce(0) { $0 + 8 + $1.count }
        let headLength = headerOffset + Int64(header.length + sectionsLength)

        // The tail, after the head: the block table's pages, then per entity its pages and its
        // fetch indexes.
        try file.move(to: headLength)
        try Self.writeBlockTable(blocks, live: live, directory: &blockTable, to: &file)
        var stored: [UInt8] = []
        for (entityID, entity) in state.entities.enumerated() {
            for (number, page) in entity.pages.enumerated() {
                stored.removeAll(keepingCapacity: true)
                try page.withBytes { IndexPageCodec.encode($0, appendingTo: &stored) }
                directories[entityID].pages[number] = CheckpointPlace(
                    offset: file.offset, length: stored.count, checksum: CRC32C.mask(CRC32C.checksum(stored)))
                try file.append(stored)
            }
            let fetch = FetchIndexCodec.encode(fetchIndexes[entityID], entity: schema.entities[entityID])
            directories[entityID].fetchIndexes = CheckpointPlace(
                offset: file.offset, length: fetch.count, checksum: CRC32C.mask(CRC32C.checksum(fetch)))
            try file.append(fetch)
        }
        try file.flush()
        let length = file.offset

        var sections = BinaryWriter(capacity: sectionsLength)
        for section in [blockTable.encoded()] + directories.map({ $0.encoded() }) {
            sections.u32(UInt32(section.count))
            sections.u32(CRC32C.mask(CRC32C.checksum(section)))
            sections.raw(section)
        }
        precondition(sections.count == sectionsLength, "a checkpoint's head keeps the length it was laid out with")
        try file.write(sections.bytes, at: headerOffset + Int64(header.length))
        var prefix = BinaryWriter(capacity: Int(headerOffset))
        prefix.raw(Self.magic)
        prefix.u32(Self.formatVersion)
        prefix.u32(UInt32(2 + directories.count))
        prefix.u64(UInt64(headLength))
        prefix.u32(UInt32(header.length))
        prefix.u32(CRC32C.mask(header.checksum))
        try file.write(prefix.bytes, at: 0)
        return length
    }

    /// Appends the header section to `file`: position, sequences, keys, segments and history
    /// directory.
    ///
    /// - Throws: ``SystemCallError`` when a write fails.
    private func writeHeader(to file: inout BufferedFileWriter) throws {
        file.pending.u32(segment)
        file.pending.u64(UInt64(offset))
        file.pending.u64(state.lastSequence)
        file.pending.u64(state.historyFloor)
        file.pending.varint(nextKeys.count)
        for key in nextKeys { file.pending.zigzag(key) }
        file.pending.varint(state.segmentOrder.count)
        for id in state.segmentOrder {
            let stats = state.stats[id] ?? SegmentStats()
            file.pending.u32(id)
            // Counts that a damaged checkpoint's row sizes drove below zero are written as zero:
            // they only steer compaction.
            file.pending.u64(UInt64(clamping: stats.liveBytes))
            file.pending.u64(UInt64(clamping: stats.deadBytes))
            file.pending.u64(UInt64(clamping: stats.fileBytes))
            file.pending.u64(stats.maxSequence)
        }
        file.pending.varint(state.history.count)
        for entry in state.history {
            file.pending.u64(entry.sequence)
            file.pending.u32(entry.segment)
            file.pending.u64(UInt64(entry.offset))
            file.pending.u32(UInt32(entry.length))
            try file.flushIfFull()
        }
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
        var bytes: Int64 = 0
        do {
            try StoreError.io("write checkpoint", path: file) {
                try io.replaceAtomically(file, directory: checkpointsPath) { fd in
                    bytes = try snapshot.write(schema: schema, to: fd, io: io)
                }
            }
        } catch let error as StoreError where error.code == .corrupt {
            if dropDamagedCheckpoint(&status) { try publishManifest(status) }
            throw error
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
                "checkpoint": "\(id)", "bytes": "\(bytes)",
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
