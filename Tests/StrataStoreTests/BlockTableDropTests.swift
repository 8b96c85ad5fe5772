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

    /// The bytes of the block table section of the store's newest checkpoint.
    private static func checkpointTableBytes(_ url: URL) throws -> Int {
        let directory = url.path + "/checkpoints"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".ckpt") }
        let newest = try #require(names.max())
        let layout = Checkpoint.Layout(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + newest))))
        return try #require(layout.sections.dropFirst().first).count
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
        #expect(try Self.checkpointTableBytes(url) < 20 * 14 + 32)

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

    /// A checkpoint's block table round trips with its dropped numbers, whatever runs of kept
    /// and dropped blocks it holds; a table that does not add up is refused as malformed.
    @Test func checkpointBlockTableRoundTripsAndRefusesRunsThatDoNotAddUp() throws {
        var state = StoreState(schema: TestSchema.schema)
        state.segmentOrder = [3, 7]
        let chunk = ChunkedArray<BlockLocation>.chunkCount
        for number in 0..<(3 * chunk + 40) {
            // Segment 1 (deleted) fills the first two chunks and every fifth block after.
            let segment: UInt32 = number < 2 * chunk || number % 5 == 0 ? 1 : (number % 2 == 0 ? 3 : 7)
            state.blocks.append(
                BlockLocation(segment: segment, offset: UInt32(number), length: 10, entity: UInt16(number % 2)))
        }
        state.dropBlocksOfDeletedSegments()
        let bytes = Checkpoint.encodeBlockTable(state)
        var decoded = ChunkedArray<BlockLocation>()
        try bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            try Checkpoint.decodeBlockTable(&reader, into: &decoded)
            #expect(reader.remaining == 0)
        }
        #expect(decoded.count == state.blocks.count)
        for number in 0..<decoded.count {
            let block = state.blocks[number]
            #expect(decoded[number] == (block.segment == 1 ? .dropped : block), "block \(number)")
        }
        #expect(decoded.occupiedRanges.first?.lowerBound == 2 * chunk, "the dropped chunks take no storage")

        func decodes(_ varints: [Int]) -> Bool {
            var writer = BinaryWriter(capacity: 16)
            for value in varints { writer.varint(value) }
            var table = ChunkedArray<BlockLocation>()
            return writer.bytes.withUnsafeBytes { raw in
                var reader = BinaryReader(raw)
                return (try? Checkpoint.decodeBlockTable(&reader, into: &table)) != nil
            }
        }
        #expect(decodes([10, 10, 0]))
        #expect(!decodes([10, 0, 0]), "an empty run")
        #expect(!decodes([10, 11, 0]), "runs past the count")
        #expect(!decodes([10, 4, 1]), "a kept block with no bytes")
        #expect(!decodes([Checkpoint.maximumBlockCount + 1, Checkpoint.maximumBlockCount + 1, 0]))
    }
}
