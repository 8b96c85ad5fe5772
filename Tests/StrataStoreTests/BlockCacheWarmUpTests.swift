import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Once a store opens, a background thread loads the newest blocks into the block cache's free
/// room: reads after reopening find every block decoded, a small cache takes the newest blocks
/// without evicting what reads cached, closing stops the warm-up, commits and compaction during
/// it read their rows, and a damaged block stops it without hiding the damage from the read
/// that needs the block.
@Suite struct BlockCacheWarmUpTests {
    /// Relaxed commits, blocks of about 1 KiB (so a few hundred rows make many blocks), the
    /// warm-up on or off, the given cache size.
    static func configuration(warming: Bool = true, cacheSize: Int = 256 << 20) -> StoreConfiguration {
        var configuration = WrittenBlockCacheTests.configuration(cacheSize: cacheSize)
        configuration.backgroundMaintenance = true
        configuration.warmsCacheAfterOpening = warming
        return configuration
    }

    /// A store at `url` holding employees 1...300 (in 60 transactions, so that blocks come in
    /// several records), closed.
    static func fill(_ url: URL) throws {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration(warming: false))
        for first in stride(from: 1, through: 300, by: 5) {
            try WrittenBlockCacheTests.insert(first...(first + 4), into: store)
        }
        try store.close()
    }

    /// Opens the store at `url` and waits until its warm-up is over.
    static func openWarmed(_ url: URL, configuration: StoreConfiguration = configuration()) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        store.blockCacheWarming.wait()
        return store
    }

    @Test func aReopenedStoreReadsEveryBlockFromTheCache() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)

        let store = try Self.openWarmed(url)
        #expect(WrittenBlockCacheTests.blockCount(store) > 10, "the rows span many blocks")
        for index in 1...300 {
            #expect(try store.read(TestSchema.employee, key: Int64(index)) == TestSchema.employee(index))
        }
        #expect(store.statistics.cacheMisses == 0, "the warm-up decoded every block before the reads")
        #expect(store.statistics.cacheHits >= 300)
        try store.close()

        let cold = try Self.openWarmed(url, configuration: Self.configuration(warming: false))
        for index in 1...300 {
            #expect(try cold.read(TestSchema.employee, key: Int64(index)) == TestSchema.employee(index))
        }
        #expect(
            cold.statistics.cacheMisses > 10, "without the warm-up, each block is read by the first read that needs it")
        try cold.close()
    }

    @Test func aSmallCacheTakesTheNewestBlocksIntoFreeRoomOnly() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)
        // Room for a few decoded blocks of about 1 KiB.
        let cacheSize = 6 << 10

        // A read before the warm-up cannot be evicted by it: the warm-up fills free room only.
        let store = try Store.open(
            at: url, schema: TestSchema.schema, configuration: Self.configuration(cacheSize: cacheSize))
        let oldest = try store.read(TestSchema.employee, key: 1)
        store.blockCacheWarming.wait()
        #expect(oldest == TestSchema.employee(1))
        let blocks = WrittenBlockCacheTests.blockCount(store)
        let cached = store.cache.count
        #expect(cached > 1 && cached < blocks, "the cache holds some blocks, not all")
        #expect(store.cache.totalCost <= cacheSize)
        let oldestBlock = try #require(store.state.withLock { try $0.resolve(TestSchema.employee, 1) }).location.block
        #expect(store.cache.contains(UInt64(oldestBlock)), "the warm-up evicted nothing a read cached")
        #expect(store.cache.contains(UInt64(blocks - 1)), "the newest block went in")

        let misses = store.statistics.cacheMisses
        #expect(try store.read(TestSchema.employee, key: 300) == TestSchema.employee(300))
        #expect(store.statistics.cacheMisses == misses, "the newest rows are read from the cache")
        try store.close()
    }

    @Test func closingStopsTheWarmUpAndAReopenedStoreStillReadsEverything() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)
        for _ in 0..<3 {
            let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
            try store.close()
            #expect(
                store.blockCacheWarming.wait(timeout: .now()) == .success, "the warm-up was still running after close()"
            )
        }
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        store = nil  // a crash during the warm-up: it stops, and the store opens again
        store = try Self.openWarmed(url)
        for index in 1...300 {
            #expect(try store!.read(TestSchema.employee, key: Int64(index)) == TestSchema.employee(index))
        }
        try store!.close()
    }

    /// A store released while its warm-up is reading a block opens again at once: the warm-up's
    /// thread does not hold the store, whose release unlocks it (`make tsan` found it held).
    @Test func aStoreReleasedWhileTheWarmUpReadsABlockOpensAgainAtOnce() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)
        let io = FaultyIO()
        io.arm([.holdBackgroundRead])
        var configuration = Self.configuration()
        configuration.io = io
        defer { io.releaseBackgroundRead() }
        do {
            let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
            try #require(io.backgroundReadHeld.wait(timeout: .now() + 10) == .success, "the warm-up read no block")
            withExtendedLifetime(store) {}
        }  // released here, as a crash does, while the warm-up waits in its read
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try reopened.read(TestSchema.employee, key: 300) == TestSchema.employee(300))
        try reopened.close()
    }

    /// Commits and a compaction while the warm-up runs: rows moved to new blocks read their new
    /// values, whatever the warm-up cached under the blocks they left.
    @Test func commitsAndCompactionDuringTheWarmUpReadTheirRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)
        var configuration = Self.configuration()
        configuration.segmentSize = 4 << 10
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        for key in stride(from: 1, through: 300, by: 3) {
            var update = Transaction()
            update.update(
                TestSchema.employee, key: Int64(key), row: TestSchema.employee(key + 10_000), changedColumns: [0, 1, 2])
            try store.commit(update)
        }
        try store.deleteHistory(before: store.lastSequence + 1)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0, "\(report)")
        store.blockCacheWarming.wait()
        for key in 1...300 {
            let expected = TestSchema.employee(key % 3 == 1 ? key + 10_000 : key)
            #expect(try store.read(TestSchema.employee, key: Int64(key)) == expected)
        }
        try store.close()
        let reopened = try Self.openWarmed(url)
        for key in 1...300 {
            let expected = TestSchema.employee(key % 3 == 1 ? key + 10_000 : key)
            #expect(try reopened.read(TestSchema.employee, key: Int64(key)) == expected)
        }
        try reopened.close()
    }

    @Test func aDamagedBlockStopsTheWarmUpAndItsReadSaysCorrupt() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        try Self.fill(url)
        let store = try Self.openWarmed(url, configuration: Self.configuration(warming: false))
        let newest = try #require(store.state.withLock { try $0.resolve(TestSchema.employee, 300) })
        #expect(Int(newest.location.block) == WrittenBlockCacheTests.blockCount(store) - 1)
        try store.close()
        try CorruptionTests.flipByte(newest.file.path, at: Int64(newest.block.offset) + Int64(newest.block.length / 2))

        let damaged = try Self.openWarmed(url)
        #expect(damaged.cache.count == 0, "the warm-up stopped at the damaged block, the newest")
        let error = #expect(throws: StoreError.self) { _ = try damaged.read(TestSchema.employee, key: 300) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == newest.file.path)
        #expect(try damaged.read(TestSchema.employee, key: 1) == TestSchema.employee(1))
        try damaged.close()
    }
}
