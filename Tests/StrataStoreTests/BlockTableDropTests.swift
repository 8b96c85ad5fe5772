import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The block table keeps memory for the blocks of live segments only: a store that rewrote its
/// log many times (small saves, compaction) must not hold an entry for every block it ever wrote,
/// in memory or in its checkpoints, and must read, scan, reopen and verify as before.
@Suite struct BlockTableDropTests {
    /// Small segments: each small save is a block, and compaction rewrites them.
    private static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 16 << 10
        return configuration
    }

    /// Deletes all history, so that compaction keeps only the live rows, and compacts.
    private static func compact(_ store: Store) throws {
        try store.deleteHistory(before: store.lastSequence + 1)
        try store.compact()
    }

    /// Seeds 50 employees, then updates one employee a commit `saves` times: about a block a save.
    private static func churn(_ store: Store, saves: Int, seed: UInt64) throws {
        if store.count(TestSchema.employee) == 0 {
            var first = Transaction()
            for key in store.allocateKeys(for: TestSchema.employee, count: 50) {
                first.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
            }
            try store.commit(first)
        }
        var generator = SplitMix64(seed: seed)
        for _ in 0..<saves {
            let key = PrimaryKey(1 + generator.next() % 50)
            var transaction = Transaction()
            let row = TestSchema.employee(Int(generator.next() % 100_000))
            transaction.update(TestSchema.employee, key: key, row: row, changedColumns: [0, 1, 2, 3])
            try store.commit(transaction)
        }
    }

    /// The block table's allocated bytes and the numbers it handed out.
    private static func table(_ store: Store) -> (bytes: Int, numbers: Int) {
        store.state.withLock { ($0.blocks.allocatedBytes, $0.blocks.count) }
    }

    /// The bytes of the block table's pages in the store's newest checkpoint.
    private static func checkpointTableBytes(_ url: URL) throws -> Int {
        let directory = url.path + "/checkpoints"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".ckpt") }
        let newest = try #require(names.max())
        let layout = Checkpoint.Layout(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + newest))))
        return layout.blockPages.reduce(0) { $0 + ($1?.count ?? 0) }
    }

    /// After compaction deleted the segments of 14,000 small saves, the table frees what it
    /// held for them and its checkpoint does not list them; the rows read, scan and index as
    /// before, through a reopen from that checkpoint, more saves and a second compaction, and a
    /// reopen that replays the whole log.
    @Test func compactionDropsTheBlocksOfTheSegmentsItDeletes() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try Self.churn(store, saves: 14_000, seed: 1)
        let full = Self.table(store)
        #expect(full.numbers > 3 * ChunkedArray<BlockLocation>.chunkCount)
        #expect(full.bytes >= full.numbers * MemoryLayout<BlockLocation>.stride)
        try Self.compact(store)
        let compacted = Self.table(store)
        #expect(compacted.numbers > full.numbers, "numbers are never reused")
        // What is left: the chunk of the newest numbers, which holds the compacted blocks.
        let oneChunk = ChunkedArray<BlockLocation>.chunkCount * MemoryLayout<BlockLocation>.stride
        #expect(compacted.bytes <= oneChunk + 1024)
        #expect(store.statistics.blocks < 20)
        let contents = try StoreContents(store)
        #expect(contents.rows[TestSchema.employee].count == 50)
        try store.close()
        // One page, the newest numbers': pages of dropped numbers only are not written.
        #expect(try Self.checkpointTableBytes(url) <= BlockTable.capacity * BlockTablePage.entryBytes)

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(Self.table(store).numbers == compacted.numbers, "the checkpoint keeps the numbers")
        #expect(Self.table(store).bytes <= compacted.bytes)
        #expect(try StoreContents(store) == contents)
        try Self.churn(store, saves: 6_000, seed: 2)
        try Self.compact(store)
        #expect(Self.table(store).bytes <= oneChunk + 1024)
        let after = try StoreContents(store)
        try store.close()
        #expect(try Store.verify(at: url).problems == [])

        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try StoreContents(store) == after)
        #expect(Self.table(store).numbers < 20, "a replay of the whole log numbers only live blocks")
        try store.close()
    }

    /// A checkpoint's block table round trips page by page with its dropped numbers: a page of
    /// dropped numbers only is not written, and a page is read when a number in it is first used
    /// (but the last, partial one, which commits append to, at once). A page whose checksum fails
    /// or that places a block past its segment's end is refused when read, and marks the
    /// checkpoint damaged; a directory that does not add up does not parse.
    @Test func checkpointBlockTableRoundTripsPageByPage() throws {
        let chunk = BlockTable.capacity
        let count = 3 * chunk + 40
        var blocks = ChunkedArray<BlockLocation>()
        for number in 0..<count {
            // Segment 1 (deleted) fills the first two chunks and every fifth block after; offsets
            // fall with the number, so that the last page's blocks lie nearest a segment's start.
            let segment: UInt32 = number < 2 * chunk || number % 5 == 0 ? 1 : (number % 2 == 0 ? 3 : 7)
            blocks.append(
                BlockLocation(
                    segment: segment, offset: UInt32(64 + count - number), length: 10, entity: UInt16(number % 2)))
        }
        // The first two chunks are vacated, as compaction leaves a table: the count of kept blocks
        // skips them.
        blocks.vacateChunks(filler: .dropped) { $0.segment == 1 }
        #expect(blocks.occupiedRanges.first == 2 * chunk..<3 * chunk)
        func expected(_ number: Int) -> BlockLocation { blocks[number].segment == 1 ? .dropped : blocks[number] }
        let folder = TemporaryDirectory()
        let path = folder.path + "/table"
        let io = SystemFileIO()
        var directory = Checkpoint.blockTableDirectory(blocks, live: [3, 7])
        let kept = (0..<4).map { page in
            (page * chunk..<min((page + 1) * chunk, count)).count { expected($0) != .dropped }
        }
        #expect(directory.pages.map(\.kept) == kept, "kept blocks are counted before the pages are written")
        let layout = directory.encoded().count
        try io.replaceAtomically(path, directory: folder.path) { fd in
            var file = BufferedFileWriter(io: io, fd: fd, at: 0)
            file.pending.raw([UInt8](repeating: 0xEE, count: 100))
            try Checkpoint.writeBlockTable(blocks, live: [3, 7], directory: &directory, to: &file)
            try file.flush()
        }
        let tail = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(directory.pages.map(\.kept) == kept && directory.encoded().count == layout)
        #expect(
            tail.count == 100 + (chunk + 40) * BlockTablePage.entryBytes,
            "pages of dropped numbers only are not written")
        let decoded = try directory.encoded().withUnsafeBytes {
            try BlockTableDirectory.decode($0, fileSize: Int64(tail.count))
        }
        #expect(decoded.count == count && decoded.pagesOffset == 100)
        #expect(decoded.pages.map(\.kept) == kept && decoded.pages.map(\.checksum) == directory.pages.map(\.checksum))

        func table(_ bytes: [UInt8], sizes: [UInt32: Int64]) throws -> (BlockTable, CheckpointFile) {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let file = CheckpointFile(
                path: path, fd: open(path, O_RDONLY), blockCount: count, segmentSizes: sizes, io: SystemFileIO())
            return (try Checkpoint.blockTable(decoded, file: file), file)
        }
        let sizes: [UInt32: Int64] = [3: 1 << 20, 7: 1 << 20]
        var (opened, _) = try table(tail, sizes: sizes)
        #expect(opened.count == count)
        #expect(opened.stored.occupiedRanges == [(3 * chunk)..<count], "only the last, partial page is read")
        #expect(opened.pendingBlockCount == kept[2])
        #expect(opened.allocatedBytesWhenRead > opened.allocatedBytes)
        #expect(try opened.location(2 * chunk + 1) == expected(2 * chunk + 1))
        #expect(opened.pendingBlockCount == 0)
        for number in 0..<count { #expect(try opened.location(number) == expected(number), "block \(number)") }

        // Segment 3 long enough for the last page's blocks, not for those of the page before.
        var (short, shortFile) = try table(tail, sizes: [3: 64 + 50 + 10, 7: 1 << 20])
        let past = #expect(throws: StoreError.self) { _ = try short.location(2 * chunk + 2) }
        #expect(past?.code == .corrupt && past?.path == path)
        #expect(shortFile.isDamaged)
        var damaged = tail
        damaged[100 + 7] ^= 1
        var (flipped, flippedFile) = try table(damaged, sizes: sizes)
        let checksum = #expect(throws: StoreError.self) { _ = try flipped.location(2 * chunk) }
        #expect(checksum?.code == .corrupt && checksum?.offset == 100)
        #expect(flippedFile.isDamaged)

        func decodes(_ count: Int, pages: [Int], fileSize: Int64 = 1 << 20) -> Bool {
            var writer = BinaryWriter()
            writer.varint(count)
            writer.u64(0)
            writer.varint(pages.count)
            for kept in pages {
                writer.varint(kept)
                if kept > 0 { writer.u32(0) }
            }
            return writer.bytes.withUnsafeBytes { (try? BlockTableDirectory.decode($0, fileSize: fileSize)) != nil }
        }
        #expect(decodes(10, pages: [10]))
        #expect(decodes(chunk + 1, pages: [0, 1]))
        #expect(!decodes(10, pages: [10, 0]), "a page too many")
        #expect(!decodes(chunk + 1, pages: [chunk]), "a page too few")
        #expect(!decodes(10, pages: [11]), "more kept blocks than numbers")
        #expect(!decodes(10, pages: [10], fileSize: 139), "a page past the file's end")
        #expect(!decodes(Checkpoint.maximumBlockCount + 1, pages: []))
    }
}
