import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The object index takes memory for the pages of live rows: a workload that creates and deletes
/// (a queue, the service's steady run) uses new keys all the time, and a page of 4,096 keys whose
/// rows are all deleted gives its 48 KiB back, in memory and through a checkpoint and a reopen.
@Suite struct IndexPageVacancyTests {
    /// The employee index's pages that hold memory of their own.
    private static func residentPages(_ store: Store) -> Int {
        store.state.withLock { $0.entities[TestSchema.employee].pages.count(where: \.isResident) }
    }

    /// Inserts `count` employees in one transaction; returns their keys.
    private static func insert(_ count: Int, into store: Store) throws -> [PrimaryKey] {
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: count))
        var transaction = Transaction()
        for key in keys { transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key))) }
        try store.commit(transaction)
        return keys
    }

    /// Deletes `keys` in one transaction.
    private static func delete(_ keys: some Sequence<PrimaryKey>, from store: Store) throws {
        var transaction = Transaction()
        for key in keys { transaction.delete(TestSchema.employee, key: key) }
        try store.commit(transaction)
    }

    @Test func pagesWhoseRowsAreAllDeletedTakeNoMemory() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        // Twelve rounds of a queue: 2,048 created, then the oldest 2,048 deleted, so that 2,048
        // live rows move through six pages' worth of keys.
        var live: [PrimaryKey] = try Self.insert(2_048, into: store)
        for _ in 0..<11 {
            live += try Self.insert(2_048, into: store)
            try Self.delete(live.prefix(2_048), from: store)
            live.removeFirst(2_048)
        }
        let pages = store.state.withLock { $0.entities[TestSchema.employee].pages.count }
        #expect(pages >= 6)
        // The live rows span at most two pages, and the last page stays for the keys to come.
        #expect(Self.residentPages(store) <= 3, "\(Self.residentPages(store)) of \(pages) pages resident")
        #expect(store.count(TestSchema.employee) == live.count)
        let deleted = live[0] - 1
        #expect(try store.read(TestSchema.employee, key: deleted) == nil)
        #expect(try store.read(TestSchema.employee, key: live[0])?.values == TestSchema.employee(Int(live[0])).values)

        // A row put back under a key of a vacated page (a replay or an import may) copies the
        // shared empty page, which stays empty for every other index.
        var transaction = Transaction()
        transaction.insert(TestSchema.employee, key: 1, row: TestSchema.employee(1))
        try store.commit(transaction)
        #expect(IndexPage.vacant.liveCount == 0)
        #expect(try IndexPage.vacant.location(1) == 0)
        #expect(try store.read(TestSchema.employee, key: 1)?.values == TestSchema.employee(1).values)
        try Self.delete([1], from: store)
        let contents = try StoreContents(store)
        try store.close()

        // Through a checkpoint: the same rows, and the vacated pages are not read back.
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try StoreContents(store) == contents)
        #expect(Self.residentPages(store) <= 3)
        for key in live.prefix(3) { try Self.delete([key], from: store) }
        #expect(store.count(TestSchema.employee) == live.count - 3)
        try store.close()
        #expect(try Store.verify(at: url).problems == [])
    }

    /// A key far past the others (an import that keeps its keys, a replay) adds the pages between
    /// without memory: only the new key's page is resident until a key in another one is set.
    @Test func aJumpInKeysAddsPagesWithoutMemory() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        defer { try? store.close() }
        let far = PrimaryKey(10 * IndexPage.capacity + 5)
        var transaction = Transaction()
        transaction.insert(TestSchema.employee, key: far, row: TestSchema.employee(Int(far)))
        try store.commit(transaction)
        #expect(store.state.withLock { $0.entities[TestSchema.employee].pages.count } == 11)
        #expect(Self.residentPages(store) == 1)
        #expect(try store.read(TestSchema.employee, key: far - PrimaryKey(IndexPage.capacity)) == nil)

        let between = PrimaryKey(4 * IndexPage.capacity + 1)
        transaction = Transaction()
        transaction.insert(TestSchema.employee, key: between, row: TestSchema.employee(Int(between)))
        try store.commit(transaction)
        #expect(Self.residentPages(store) == 2)
        #expect(IndexPage.vacant.liveCount == 0)
        #expect(try store.read(TestSchema.employee, key: between)?.values == TestSchema.employee(Int(between)).values)
        #expect(try store.read(TestSchema.employee, key: far)?.values == TestSchema.employee(Int(far)).values)
        #expect(store.count(TestSchema.employee) == 2)
    }
}
