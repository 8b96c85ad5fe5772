#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Checkpoint {
    /// Opens the checkpoint at `path`, reading only its head and the block table's last page when
    /// it is partial: the other pages of the block table and of the object index are read when
    /// first used (``BlockTablePage``, ``IndexPage``) and the fetch indexes by
    /// ``readFetchIndexes(_:schema:)``. `segmentSizes` gives the size of each segment of the
    /// checkpoint's list (by id), which the block table's pages are checked against.
    ///
    /// Costs two `pread`s of the head, whose size grows with the number of retained history
    /// records, by 6 bytes a page of 4,096 blocks with the block table and by 16 bytes a page of
    /// 4,096 keys with the object index, and at most one of a page.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the file and the offset of the section or page
    ///   that fails its checksum or does not parse, or `io`; what `segmentSizes` throws.
    static func open(
        path: String, schema: Schema, io: any FileIO, segmentSizes: ([UInt32]) throws -> [UInt32: Int64]
    ) throws -> Checkpoint {
        let fd = try StoreError.io("open checkpoint", path: path) { try io.open(path, flags: O_RDONLY, mode: 0) }
        var handedOver = false
        defer { if !handedOver { io.close(fd) } }
        let size = try StoreError.io("read checkpoint", path: path) { try io.size(fd) }
        func read(_ count: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let read = try bytes.withUnsafeMutableBytes { buffer in
                try StoreError.io("read checkpoint", path: path) { try io.readFully(fd, into: buffer, at: 0) }
            }
            guard read == count else { throw StoreError(.corrupt, "checkpoint is truncated", path: path, offset: Int64(read)) }
            return bytes
        }
        let prefix = try read(Int(min(size, Int64(prefixSize))))
        var headLength = 0
        try prefix.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            guard let magic = try? reader.bytes(8), Array(magic) == Self.magic,
                (try? reader.u32()) == formatVersion, (try? reader.u32()) != nil,
                let length = try? reader.offset(), length >= Int64(prefixSize), length <= size
            else {
                throw StoreError(.corrupt, "not a checkpoint of this format", path: path, offset: 0)
            }
            headLength = Int(length)
        }
        let head = try read(headLength)
        var sectionOffsets: [Int64] = []
        let (decoded, blockTable, directories) = try head.withUnsafeBytes { raw in
            try decodeHead(raw, fileSize: size, path: path, schema: schema, sectionOffsets: &sectionOffsets)
        }
        var checkpoint = decoded
        let file = CheckpointFile(
            path: path, fd: fd, blockCount: blockTable.count,
            segmentSizes: try segmentSizes(checkpoint.state.segmentOrder), io: io)
        handedOver = true
        checkpoint.state.blocks = try Self.blockTable(blockTable, file: file)
        for (entity, directory) in directories.enumerated() {
            let pages = directory.pages.map { IndexPage(CheckpointPage(file: file, place: $0)) }
            checkpoint.state.entities[entity] = EntityIndex(pages: pages, liveCount: directory.liveCount)
            checkpoint.fetchIndexSections.append(FetchIndexSection(file: file, place: directory.fetchIndexes))
        }
        checkpoint.sectionOffsets = sectionOffsets
        checkpoint.state.checkpointFile = file
        return checkpoint
    }

    /// Parses a checkpoint's head: its sections, checksums verified.
    private static func decodeHead(
        _ raw: UnsafeRawBufferPointer, fileSize: Int64, path: String, schema: Schema, sectionOffsets: inout [Int64]
    ) throws -> (checkpoint: Checkpoint, blockTable: BlockTableDirectory, directories: [CheckpointDirectory]) {
        var reader = BinaryReader(raw, position: 12)
        var sectionStart = 12
        do {
            let count = Int(try reader.u32())
            _ = try reader.u64()
            guard count == 2 + schema.entities.count else {
                throw StoreError(.corrupt, "checkpoint has \(count) sections", path: path, offset: 12)
            }
            var sections: [UnsafeRawBufferPointer] = []
            for _ in 0..<count {
                sectionStart = reader.position
                sectionOffsets.append(Int64(sectionStart))
                let length = Int(try reader.u32())
                let crc = try reader.u32()
                let section = try reader.bytes(length)
                guard CRC32C.mask(CRC32C.checksum(section)) == crc else {
                    throw StoreError(
                        .corrupt, "checkpoint section fails its checksum", path: path, offset: Int64(sectionStart))
                }
                sections.append(section)
            }
            guard reader.remaining == 0 else {
                throw StoreError(.corrupt, "checkpoint head's length disagrees with its sections", path: path, offset: 16)
            }
            sectionStart = Int(sectionOffsets[0])
            let (state, segment, offset, nextKeys) = try decodeHeader(sections[0], schema: schema)
            sectionStart = Int(sectionOffsets[1])
            let blockTable = try BlockTableDirectory.decode(sections[1], fileSize: fileSize)
            var directories: [CheckpointDirectory] = []
            for entity in schema.entities.indices {
                sectionStart = Int(sectionOffsets[2 + entity])
                directories.append(try CheckpointDirectory.decode(sections[2 + entity], fileSize: fileSize))
            }
            return (
                Checkpoint(segment: segment, offset: offset, state: state, nextKeys: nextKeys), blockTable, directories
            )
        } catch is BinaryReader.Malformed {
            throw StoreError(.corrupt, "checkpoint section does not parse", path: path, offset: Int64(sectionStart))
        }
    }

    /// Parses the header section: position, sequences, next keys, segments and history directory.
    private static func decodeHeader(
        _ section: UnsafeRawBufferPointer, schema: Schema
    ) throws -> (StoreState, UInt32, Int64, [Int64]) {
        var state = StoreState(schema: schema)
        var header = BinaryReader(section)
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
            let (sequence, segment, start) = (try header.sequence(), try header.u32(), header.position)
            // A record lies within the first 4 GiB of its segment, as every block does.
            let offset = try header.offset()
            guard offset <= Int64(UInt32.max) else { throw BinaryReader.Malformed(offset: start) }
            state.history.append(
                HistoryEntry(sequence: sequence, segment: segment, offset: offset, length: Int(try header.u32())))
        }
        return (state, segment, offset, nextKeys)
    }

    /// Reads and parses the fetch indexes of an opened checkpoint.
    ///
    /// - Throws: ``StoreError`` when a section cannot be read or fails its checksum;
    ///   ``BinaryReader/Malformed`` when one does not parse.
    static func readFetchIndexes(_ sections: [FetchIndexSection], schema: Schema) throws -> [[Int: OrderedIndex]] {
        var indexes = StoreState.emptyFetchIndexes(schema)
        for (entityID, section) in sections.enumerated() {
            try section.read().withUnsafeBytes { raw in
                try FetchIndexCodec.decode(raw, entity: schema.entities[entityID], into: &indexes[entityID])
            }
        }
        return indexes
    }
}
