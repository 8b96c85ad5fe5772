import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The object index opened from a checkpoint is read lazily, a page (4,096 keys) at a time: opening
/// reads no per-object state, a lookup reads only its own page, and a checkpoint cut short or
/// damaged anywhere loses nothing.
@Suite struct LazyIndexTests {
    /// Employees enough for five pages of the employee index.
    static let employees = 5 * IndexPage.capacity

    /// A closed store at `url` holding ``employees`` employees in one department, in transactions
    /// of 1,000, with a checkpoint covering all of them; returns the rows by key.
    static func makeStore(at url: URL, configuration: StoreConfiguration) throws -> [PrimaryKey: Row] {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        var rows: [PrimaryKey: Row] = [:]
        let department = store.allocateKeys(for: TestSchema.department).lowerBound
        var transaction = Transaction()
        transaction.insert(TestSchema.department, key: department, row: Row([.string("Lab"), .double(1)]))
        try store.commit(transaction)
        while rows.count < employees {
            var transaction = Transaction()
            for key in store.allocateKeys(for: TestSchema.employee, count: 1_000) {
                let row = TestSchema.employee(Int(key), department: department)
                transaction.insert(TestSchema.employee, key: key, row: row)
                rows[key] = row
            }
            try store.commit(transaction)
        }
        try store.close()
        return rows
    }

    /// The employee index's pages that hold memory.
    static func residentPages(_ store: Store) -> Int {
        store.state.withLock { $0.entities[TestSchema.employee].pages.count(where: \.isResident) }
    }

    @Test("statistics report the fetch indexes' memory, loaded with the checkpoint, and the cache's")
    func fetchIndexAndCacheBytes() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.cacheSize = 1 << 20
        let rows = try Self.makeStore(at: url, configuration: configuration)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        defer { try? store.close() }
        // A salary and a department entry an employee (16 bytes each: integers and references are
        // packed) and a name entry for the department (32), in chunks filled to three quarters as
        // a checkpoint's indexes load.
        let opened = store.statistics
        let entries =
            2 * rows.count * MemoryLayout<PackedIndexEntry<IntIndexKind>>.stride + MemoryLayout<GeneralIndexEntry>.stride
        #expect(opened.fetchIndexBytes >= entries, "\(opened.fetchIndexBytes) for \(entries) of entries")
        #expect(opened.fetchIndexBytes <= entries * 11 / 10, "\(opened.fetchIndexBytes) for \(entries) of entries")
        for key in rows.keys { _ = try store.read(TestSchema.employee, key: key) }
        let read = store.statistics
        #expect(read.cacheBytes > 0)
        #expect(read.cacheBytes <= configuration.cacheSize)
        #expect(read.fetchIndexBytes == opened.fetchIndexBytes)
    }

    @Test func aColdOpenReadsNoPageUntilAKeyInItIsUsed() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let rows = try Self.makeStore(at: url, configuration: TestSchema.configuration())

        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? store.close() }
        let pages = store.state.withLock { $0.entities[TestSchema.employee].pages.count }
        #expect(pages >= 5)
        #expect(Self.residentPages(store) == 0)
        #expect(store.statistics.indexBytes < IndexPage.byteCount, "no page of the index is in memory")
        #expect(store.count(TestSchema.employee) == rows.count)

        let key = PrimaryKey(2 * IndexPage.capacity + 17)
        #expect(try store.read(TestSchema.employee, key: key) == rows[key])
        #expect(Self.residentPages(store) == 1)
        #expect(try store.read(TestSchema.employee, key: key + 1) == rows[key + 1])
        #expect(Self.residentPages(store) == 1, "a second key of the same page reads nothing more")

        // A commit to a key of a page not yet read reads that page only.
        let updated = TestSchema.employee(99, department: nil)
        var transaction = Transaction()
        transaction.update(TestSchema.employee, key: 3, row: updated, changedColumns: [0, 1, 2, 3])
        try store.commit(transaction)
        #expect(Self.residentPages(store) == 2)
        #expect(try store.read(TestSchema.employee, key: 3) == updated)

        for (key, row) in rows where key != 3 {
            #expect(try store.read(TestSchema.employee, key: key) == row)
        }
        #expect(Self.residentPages(store) == pages)
    }

    /// A store of many segments read through a cache of a few blocks: every lookup reads its page
    /// and its block from disk, and each answers right.
    @Test func anIndexAndLogLargerThanTheCacheServeEveryKey() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.segmentSize = 32 << 10
        configuration.blockSize = 4 << 10
        configuration.cacheSize = 16 << 10
        configuration.warmsCacheAfterOpening = false
        let rows = try Self.makeStore(at: url, configuration: configuration)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.path + "/segments").count > 10)

        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        defer { try? store.close() }
        var generator = SystemRandomNumberGenerator()
        let keys = rows.keys.sorted()
        for _ in 0..<2_000 {
            let key = keys.randomElement(using: &generator)!
            #expect(try store.read(TestSchema.employee, key: key) == rows[key])
        }
        #expect(store.statistics.cacheMisses > 1_000, "the reads went to disk")
    }

    /// Where a checkpoint is cut short.
    enum Cut: String, CaseIterable, Sendable {
        /// Inside the fixed prefix.
        case prefix
        /// Inside the head's sections.
        case head
        /// Inside a page of the employee index.
        case page
        /// One byte short: inside the last entity's fetch indexes.
        case lastByte
    }

    /// A checkpoint cut short, as a crash that left a partly written file in its place would:
    /// the open either replays the whole log or, when the cut is in a page read later, reading a
    /// key of that page throws `corrupt` naming the checkpoint and the next open replays the log.
    /// Either way every row is there, `strata verify` names the checkpoint, and the store, once
    /// closed again, writes a sound checkpoint.
    @Test(arguments: Cut.allCases)
    func aCheckpointCutShortLosesNothing(_ cut: Cut) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let rows = try Self.makeStore(at: url, configuration: TestSchema.configuration())
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
        let file = url.path + "/checkpoints/" + (try #require(names.first { $0.hasSuffix(".ckpt") }))
        let checkpoint = try StoreFiles.openCheckpoint(file)
        let lastSection = checkpoint.sectionOffsets.last!
        let size = try FaultInjectionTests.fileSize(file)
        let pages = Checkpoint.Layout([UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))).pages
        let third = try #require(pages[TestSchema.employee].dropFirst(2).first)
        let length: Int64 =
            switch cut {
            case .prefix: 12
            case .head: lastSection + 4
            case .page: Int64(third.lowerBound + third.count / 2)
            case .lastByte: size - 1
            }
        #expect(truncate(file, off_t(length)) == 0)

        let problems = try Store.verify(at: url).problems
        #expect(problems.contains { $0.file == file }, "\(problems)")

        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        do {
            for (key, row) in rows { #expect(try store.read(TestSchema.employee, key: key) == row) }
        } catch let error as StoreError {
            #expect(cut == .page)
            #expect(error.code == .corrupt)
            #expect(error.path == file)
            try store.close()
            store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
            for (key, row) in rows { #expect(try store.read(TestSchema.employee, key: key) == row) }
        }
        try store.close()
        #expect(try Store.verify(at: url).problems == [])
    }
}
