/// A checkpoint's block table section: how many block numbers the table has, and where its pages
/// are (``BlockTablePage``).
///
/// Layout: varint count of block numbers, `u64` offset of the first page, varint page count (one
/// per ``BlockTable/capacity`` numbers), then per page a varint count of kept blocks and, when
/// not 0, the page's `u32` masked CRC32C. A page with no kept block (every number dropped) is not
/// written; the others follow one another from the first page's offset, each 14 bytes a number
/// it covers (the last covers the table's remainder): `u32` segment, `u32` offset, `u32` length,
/// `u16` entity, all zero for a dropped number.
struct BlockTableDirectory: Sendable {
    /// The number of block numbers.
    var count = 0
    /// The offset of the first page.
    var pagesOffset: Int64 = 0
    /// Per page, its kept blocks and masked CRC32C (0 for a page not written).
    var pages: [(kept: Int, checksum: UInt32)] = []

    /// The numbers page `page` covers.
    func numbers(ofPage page: Int) -> Int {
        Swift.min(BlockTable.capacity, count - page * BlockTable.capacity)
    }

    /// The section's bytes.
    func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 24 + 6 * pages.count)
        writer.varint(count)
        writer.u64(UInt64(pagesOffset))
        writer.varint(pages.count)
        for page in pages {
            writer.varint(page.kept)
            if page.kept > 0 { writer.u32(page.checksum) }
        }
        return writer.bytes
    }

    /// Parses the section of a checkpoint file of `fileSize` bytes.
    ///
    /// - Throws: ``BinaryReader/Malformed`` when it does not parse, has not one page per
    ///   ``BlockTable/capacity`` numbers, keeps more blocks in a page than it covers, or places
    ///   pages outside the file.
    static func decode(_ section: UnsafeRawBufferPointer, fileSize: Int64) throws -> BlockTableDirectory {
        var reader = BinaryReader(section)
        var directory = BlockTableDirectory()
        directory.count = try reader.count(limit: Checkpoint.maximumBlockCount)
        directory.pagesOffset = try reader.offset()
        let start = reader.position
        let pageCount = try reader.count(limit: reader.remaining)
        guard pageCount == (directory.count + BlockTable.capacity - 1) / BlockTable.capacity else {
            throw BinaryReader.Malformed(offset: start)
        }
        var bytes: Int64 = 0
        for page in 0..<pageCount {
            let kept = try reader.count(limit: directory.numbers(ofPage: page))
            directory.pages.append((kept, kept > 0 ? try reader.u32() : 0))
            if kept > 0 { bytes += Int64(directory.numbers(ofPage: page) * BlockTablePage.entryBytes) }
        }
        guard reader.remaining == 0, directory.pagesOffset <= fileSize - bytes else {
            throw BinaryReader.Malformed(offset: start)
        }
        return directory
    }
}

extension Checkpoint {
    /// The most block numbers a block table hands out: a row location keeps a block number plus
    /// one in 32 bits.
    static let maximumBlockCount = Int(UInt32.max) - 1

    /// The directory of `blocks`' pages, each with its count of kept blocks (those of segments
    /// in `live`), before the pages are written (``writeBlockTable(_:live:directory:to:)``): its
    /// encoded length is final, its offset and checksums are not.
    static func blockTableDirectory(_ blocks: ChunkedArray<BlockLocation>, live: Set<UInt32>) -> BlockTableDirectory {
        var directory = BlockTableDirectory(count: blocks.count)
        let pageCount = (blocks.count + BlockTable.capacity - 1) / BlockTable.capacity
        directory.pages = Array(repeating: (0, 0), count: pageCount)
        for range in blocks.occupiedRanges {
            for number in range where kept(blocks[number], live: live) != .dropped {
                directory.pages[number / BlockTable.capacity].kept += 1
            }
        }
        return directory
    }

    /// Appends to `file` the pages of `blocks` that `directory` counts kept blocks in (blocks of
    /// segments not in `live` as dropped numbers), and fills in the directory's offset and
    /// checksums.
    ///
    /// - Throws: ``SystemCallError`` when a write fails.
    static func writeBlockTable(
        _ blocks: ChunkedArray<BlockLocation>, live: Set<UInt32>, directory: inout BlockTableDirectory,
        to file: inout BufferedFileWriter
    ) throws {
        directory.pagesOffset = file.offset
        var page = BinaryWriter(capacity: BlockTable.capacity * BlockTablePage.entryBytes)
        for number in directory.pages.indices where directory.pages[number].kept > 0 {
            page.bytes.removeAll(keepingCapacity: true)
            let first = number * BlockTable.capacity
            for block in blocks[first..<Swift.min(first + BlockTable.capacity, blocks.count)] {
                let place = kept(block, live: live)
                page.u32(place.segment)
                page.u32(place.offset)
                page.u32(place.length)
                page.u16(place.entity)
            }
            directory.pages[number].checksum = CRC32C.mask(CRC32C.checksum(page.bytes))
            try file.append(page.bytes)
        }
    }

    /// `block` as a checkpoint keeps it: dropped unless its segment is in `live`.
    private static func kept(_ block: BlockLocation, live: Set<UInt32>) -> BlockLocation {
        live.contains(block.segment) ? block : .dropped
    }

    /// The block table a parsed section names, its pages in `file`: none read but a last one
    /// covering fewer numbers than a page holds, which commits append to.
    ///
    /// - Throws: what reading and verifying that last page throws.
    static func blockTable(_ directory: BlockTableDirectory, file: CheckpointFile) throws -> BlockTable {
        var table = BlockTable()
        var offset = directory.pagesOffset
        for (number, page) in directory.pages.enumerated() {
            let numbers = directory.numbers(ofPage: number)
            guard page.kept > 0 else {
                table.appendDropped(numbers)
                continue
            }
            try table.appendPage(
                BlockTablePage(
                    BlockTablePageSource(
                        file: file, offset: offset, count: numbers, kept: page.kept, checksum: page.checksum)))
            offset += Int64(numbers * BlockTablePage.entryBytes)
        }
        return table
    }
}
