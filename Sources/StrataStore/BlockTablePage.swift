import StrataSynchronization

/// Where one page of a checkpoint's block table lies: the places of up to
/// ``BlockTable/capacity`` consecutive block numbers, 14 bytes each (`u32` segment, `u32`
/// offset, `u32` length, `u16` entity; all zero for a dropped block).
struct BlockTablePageSource: Sendable {
    /// The checkpoint.
    let file: CheckpointFile
    /// The page's offset in the file.
    let offset: Int64
    /// How many block numbers the page holds (``BlockTable/capacity``, or fewer for the table's
    /// last page).
    let count: Int
    /// How many of them are blocks, not dropped numbers.
    let kept: Int
    /// The page's masked CRC32C.
    let checksum: UInt32

    /// The page's length in the file.
    var byteCount: Int { count * BlockTablePage.entryBytes }

    /// Reads the page and verifies it: its checksum, its count of kept blocks, and that every
    /// block lies inside a segment of the checkpoint, as long as the segment's file was at open.
    ///
    /// - Throws: ``StoreError`` `corrupt` naming the checkpoint and the page's offset (and marks
    ///   the checkpoint damaged), or `io`.
    func read() throws -> [BlockLocation] {
        var blocks: [BlockLocation] = []
        var bytes = [UInt8](repeating: 0, count: byteCount)
        try bytes.withUnsafeMutableBytes { buffer in
            try file.readPage(of: "block table", into: buffer, at: offset, checksum: checksum) { page in
                blocks = try verified(page)
            }
        }
        return blocks
    }

    /// The page's blocks, each checked to lie inside its segment, and their count against ``kept``.
    private func verified(_ page: UnsafeRawBufferPointer) throws -> [BlockLocation] {
        func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: page.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        let blocks = (0..<count).map { index in
            let at = index * BlockTablePage.entryBytes
            return BlockLocation(
                segment: u32(at), offset: u32(at + 4), length: u32(at + 8),
                entity: UInt16(littleEndian: page.loadUnaligned(fromByteOffset: at + 12, as: UInt16.self)))
        }
        var found = 0
        // Blocks come in runs of one segment: its size is looked up once a run.
        var (runSegment, runSize) = (UInt32.max, Int64?.none)
        for (index, block) in blocks.enumerated() {
            if block == .dropped { continue }
            found += 1
            if block.segment != runSegment { (runSegment, runSize) = (block.segment, file.segmentSizes[block.segment]) }
            guard let size = runSize, Checkpoint.fits(Int64(block.offset), Int64(block.length), in: size) else {
                throw StoreError(
                    .corrupt, "checkpoint block at \(block.offset) is outside segment \(block.segment)",
                    path: file.path, offset: offset + Int64(index * BlockTablePage.entryBytes))
            }
        }
        guard found == kept else {
            throw StoreError(
                .corrupt, "a page of the block table holds \(found) blocks, its directory says \(kept)",
                path: file.path, offset: offset)
        }
        return blocks
    }
}

/// One page of a checkpoint's block table, read when a block number in it is first used, so that
/// opening a store reads none of its block table but the last page (which commits append to).
///
/// Shared by the copies of a ``BlockTable`` (the state's, a checkpoint's snapshot, a scan's): the
/// first of them to need the page reads it, once, and the others find it read.
final class BlockTablePage: Sendable {
    /// Bytes per block number in a page.
    static let entryBytes = 14

    /// Where the page is read from.
    let source: BlockTablePageSource
    /// The page's blocks once read.
    private let blocks = Lock<[BlockLocation]?>(nil)

    /// A page of a checkpoint, read on first use.
    init(_ source: BlockTablePageSource) {
        self.source = source
    }

    /// The page's blocks, one for each of its numbers, reading and verifying them first if no
    /// copy did yet.
    ///
    /// - Throws: as ``BlockTablePageSource/read()``.
    func load() throws -> [BlockLocation] {
        try blocks.withLock { blocks in
            if let blocks { return blocks }
            let read = try source.read()
            blocks = read
            return read
        }
    }
}
