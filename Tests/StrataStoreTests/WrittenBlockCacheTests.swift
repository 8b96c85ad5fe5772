import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A commit puts the blocks it wrote into the block cache's free room, decoded: reading rows just
/// written (a commit's or a replay's) decompresses nothing, a full cache evicts nothing for them,
/// a transaction keeps no more of them than the cache has room for, and a failed commit leaves
/// nothing a later commit's blocks could be taken for.
@Suite struct WrittenBlockCacheTests {
    /// Relaxed commits, no background thread, blocks of about 1 KiB (so a few hundred rows make
    /// many blocks), the given cache size and seam.
    static func configuration(cacheSize: Int = 256 << 20, io: any FileIO = SystemFileIO()) -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.blockSize = 1 << 10
        configuration.cacheSize = cacheSize
        configuration.io = io
        configuration.logger.logLevel = .critical
        return configuration
    }

    /// Employees `range`, keyed by their index, in one transaction.
    static func insert(_ range: ClosedRange<Int>, into store: Store) throws {
        var transaction = Transaction()
        for index in range {
            transaction.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index))
        }
        try store.commit(transaction)
    }

    /// The number of blocks the store holds.
    static func blockCount(_ store: Store) -> Int {
        store.state.withLock { $0.blocks.count }
    }

    @Test func rowsJustCommittedAreReadFromTheCacheAndFromDiskAfterReopening() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try Self.insert(1...300, into: store)
        var update = Transaction()
        update.update(TestSchema.employee, key: 7, row: TestSchema.employee(7_000), changedColumns: [0, 1, 2])
        try store.commit(update)
        #expect(Self.blockCount(store) > 10, "the rows span many blocks")

        for index in 1...300 {
            let expected = TestSchema.employee(index == 7 ? 7_000 : index)
            #expect(try store.read(TestSchema.employee, key: Int64(index)) == expected)
        }
        #expect(store.statistics.cacheMisses == 0, "every block was cached by its commit")
        #expect(store.statistics.cacheHits >= 300)

        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        defer { try? store.close() }
        for index in 1...300 {
            let expected = TestSchema.employee(index == 7 ? 7_000 : index)
            #expect(try store.read(TestSchema.employee, key: Int64(index)) == expected)
        }
        let misses = store.statistics.cacheMisses
        #expect(
            misses > 10 && misses <= Self.blockCount(store), "a reopened store reads each block holding live rows once")
    }

    @Test func aReplayedCopyOfTheSourcesBlocksIsCachedToo() throws {
        let directory = TemporaryDirectory()
        let source = try Store.open(
            at: directory.store("Source"), schema: TestSchema.schema, configuration: Self.configuration())
        defer { try? source.close() }
        try HistoryReplayBlockReuseTests.fill(source)
        let destination = try Store.open(
            at: directory.store("Destination"), schema: TestSchema.schema, configuration: Self.configuration())
        defer { try? destination.close() }
        #expect(try destination.replayHistory(from: source) == 42)

        for entity in [TestSchema.department, TestSchema.employee] {
            for key in 1...40 as ClosedRange<Int64> {
                #expect(try destination.read(entity, key: key) == source.read(entity, key: key))
            }
        }
        #expect(destination.statistics.cacheMisses == 0)
    }

    @Test func aReplayReadsTheSourcesBlocksFromTheSourcesCacheWhileItHoldsThem() throws {
        let directory = TemporaryDirectory()
        let sourceURL = directory.store("Source")
        var source = try Store.open(at: sourceURL, schema: TestSchema.schema, configuration: Self.configuration())
        try HistoryReplayBlockReuseTests.fill(source)
        /// Replays the source into a new store `name`, checks the source's cache counted a hit a
        /// record at least (`fromCache`) or nothing, and compares rows and history.
        func replayMatchesTheSource(_ name: String, fromCache: Bool) throws {
            let destination = try Store.open(
                at: directory.store(name), schema: TestSchema.schema, configuration: Self.configuration())
            defer { try? destination.close() }
            let (hits, misses) = (source.statistics.cacheHits, source.statistics.cacheMisses)
            #expect(try destination.replayHistory(from: source) == 42)
            if fromCache {
                #expect(source.statistics.cacheHits >= hits + 42)
                #expect(source.statistics.cacheMisses == misses, "the replay decompressed the source's blocks")
            } else {
                #expect(source.statistics.cacheHits == hits)
            }
            for entity in [TestSchema.department, TestSchema.employee] {
                for key in 1...40 as ClosedRange<Int64> {
                    #expect(try destination.read(entity, key: key) == source.read(entity, key: key))
                }
            }
            #expect(try destination.history(after: 0).map(\.changes) == source.history(after: 0).map(\.changes))
        }
        // Every history record's blocks (at least one a record) come from the cache.
        try replayMatchesTheSource("Destination", fromCache: true)

        // Reopened, the source knows its records from its checkpoint: the replay decodes them.
        try source.close()
        source = try Store.open(at: sourceURL, schema: TestSchema.schema, configuration: Self.configuration())
        defer { try? source.close() }
        try replayMatchesTheSource("Second destination", fromCache: false)
    }

    @Test func aReplayAfterCompactionMovedTheSourcesHistoryReadsTheMovedBlocks() throws {
        let directory = TemporaryDirectory()
        let source = try Store.open(
            at: directory.store("Source"), schema: TestSchema.schema, configuration: HistoryTests.configuration())
        defer { try? source.close() }
        var insert = Transaction()
        insert.insert(TestSchema.employee, key: 1, row: TestSchema.employee(0))
        try source.commit(insert)
        for version in 1...60 {
            var transaction = Transaction(author: "v\(version)")
            transaction.update(
                TestSchema.employee, key: 1, row: TestSchema.employee(version), changedColumns: [0, 1, 2])
            try source.commit(transaction)
        }
        let segments = source.segments()
        try source.compact()
        #expect(source.segments() != segments, "compaction moved the history records")
        // Only the moved records' blocks are cached, under their new numbers.
        source.cache.removeAll()
        let (blocks, files) = try source.state.withLock { (try $0.blocks.loaded(), $0.files) }
        for (number, block) in blocks.enumerated() {
            if let file = files[block.segment] { _ = try source.loadBlock(UInt32(number), block, file: file) }
        }
        let destination = try Store.open(
            at: directory.store("Destination"), schema: TestSchema.schema, configuration: Self.configuration())
        defer { try? destination.close() }
        let misses = source.statistics.cacheMisses
        #expect(try destination.replayHistory(from: source) == 61)
        #expect(source.statistics.cacheMisses == misses, "every block came from the cache")
        #expect(try destination.read(TestSchema.employee, key: 1) == TestSchema.employee(60))
        #expect(try destination.history(after: 0).map(\.changes) == source.history(after: 0).map(\.changes))
    }

    @Test func writtenBlocksTakeOnlyFreeRoomAndEvictNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try Self.insert(1...10, into: store)
        try store.close()
        // Room for a few blocks of about 1 KiB.
        store = try Store.open(
            at: url, schema: TestSchema.schema, configuration: Self.configuration(cacheSize: 4 << 10))
        defer { try? store.close() }
        #expect(try store.read(TestSchema.employee, key: 1) == TestSchema.employee(1))
        #expect(store.statistics.cacheMisses == 1)

        try Self.insert(11...200, into: store)
        #expect(try store.read(TestSchema.employee, key: 1) == TestSchema.employee(1))
        #expect(store.statistics.cacheMisses == 1, "the block read before the commit stays cached")
        for index in 11...200 {
            #expect(try store.read(TestSchema.employee, key: Int64(index)) == TestSchema.employee(index))
        }
        #expect(store.statistics.cacheMisses > 1, "the commit's blocks did not all fit")
    }

    @Test func aTransactionKeepsNoMoreDecodedBlocksThanTheCacheHasRoomFor() throws {
        let directory = TemporaryDirectory()
        let room = 4 << 10
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: Self.configuration(cacheSize: room))
        defer { try? store.close() }
        var transaction = Transaction()
        for index in 1...200 {
            transaction.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index))
        }
        var written: [EntityKey: Row?] = [:]
        let pending = try store.encode(transaction, written: &written)
        let kept = pending.record.decodedBlocks.compactMap { $0 }
        #expect(!kept.isEmpty)
        #expect(kept.reduce(0) { $0 + $1.cost } <= room)
        #expect(kept.count < pending.record.blocks.count, "the blocks past the room are not kept")
    }

    @Test func aFailedCommitCachesNothingALaterCommitsBlocksCouldBeTakenFor() throws {
        let directory = TemporaryDirectory()
        let io = FaultyIO()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: Self.configuration(io: io))
        defer { try? store.close() }
        try Self.insert(1...20, into: store)
        let blocks = Self.blockCount(store)

        io.arm([.segmentWrite(.fail(EIO))])
        #expect(throws: StoreError.self) { try Self.insert(21...60, into: store) }
        #expect(Self.blockCount(store) == blocks)
        var other = Transaction()
        for index in 21...60 {
            other.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index * 3))
        }
        try store.commit(other)

        for index in 1...60 {
            let expected = TestSchema.employee(index > 20 ? index * 3 : index)
            #expect(try store.read(TestSchema.employee, key: Int64(index)) == expected)
        }
        #expect(store.statistics.cacheMisses == 0)
    }
}
