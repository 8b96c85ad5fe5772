import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// The block table opened from a checkpoint is read lazily, a page (4,096 block numbers) at a
/// time: an open reads only its last page, a read or a commit reads the page of the blocks it
/// needs, and a damaged page fails only the reads that need it and loses nothing.
@Suite struct LazyBlockTableTests {
    /// Employees enough for three full pages of the table and part of a fourth, at about one
    /// row a block.
    static let employees = 3 * BlockTable.capacity + 500

    /// Blocks of about one row each, and no warm-up (which reads the newest blocks' pages).
    static func configuration() -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.blockSize = 64
        configuration.warmsCacheAfterOpening = false
        return configuration
    }

    /// A closed store at `url` holding ``employees`` employees, in transactions of 1,000, with a
    /// checkpoint covering all of them; returns the rows by key and the statistics' block count.
    static func makeStore(at url: URL) throws -> (rows: [PrimaryKey: Row], blocks: Int) {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration())
        var rows: [PrimaryKey: Row] = [:]
        while rows.count < employees {
            var transaction = Transaction()
            for key in store.allocateKeys(for: TestSchema.employee, count: 1_000) {
                let row = TestSchema.employee(Int(key))
                transaction.insert(TestSchema.employee, key: key, row: row)
                rows[key] = row
            }
            try store.commit(transaction)
        }
        let blocks = store.statistics.blocks
        try store.close()
        return (rows, blocks)
    }

    /// The blocks of the table's pages not read yet.
    static func pendingBlocks(_ store: Store) -> Int {
        store.state.withLock { $0.blocks.pendingBlockCount }
    }

    /// The page of the table holding the block of employee `key`.
    static func page(of key: PrimaryKey, _ store: Store) throws -> Int {
        try store.state.withLock {
            Int(try $0.entities[TestSchema.employee].location(of: key).block) / BlockTable.capacity
        }
    }

    /// A key of `rows` whose block is in page `page`.
    static func key(inPage page: Int, of rows: [PrimaryKey: Row], _ store: Store) throws -> PrimaryKey {
        try #require(try rows.keys.sorted().first { try Self.page(of: $0, store) == page })
    }

    /// The newest checkpoint file of the store at `url`.
    static func checkpoint(_ url: URL) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path + "/checkpoints")
        return url.path + "/checkpoints/" + (try #require(names.filter { $0.hasSuffix(".ckpt") }.max()))
    }

    /// Where the table's second page (block numbers 4,096 to 8,191) lies in checkpoint `file`.
    static func secondPage(of file: String) throws -> Range<Int> {
        try #require(Checkpoint.Layout([UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))).blockPages[1])
    }

    /// Opens the store at `url`, checks that it reads every row of `rows`, closes it and checks
    /// that `strata verify` finds nothing.
    static func expectIntact(_ url: URL, holding rows: [PrimaryKey: Row]) throws {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration())
        for (key, row) in rows { #expect(try store.read(TestSchema.employee, key: key) == row) }
        try store.close()
        let problems = try Store.verify(at: url).problems
        #expect(problems == [], "\(problems)")
    }

    @Test func anOpenReadsOnlyTheLastPageAndEachUseItsOwn() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let (rows, blocks) = try Self.makeStore(at: url)
        #expect(blocks > 3 * BlockTable.capacity)

        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(Self.pendingBlocks(store) == 3 * BlockTable.capacity, "three full pages wait; the last was read")
        #expect(store.statistics.blocks == blocks, "the pages not read count their blocks")
        #expect(store.statistics.indexBytes < store.statistics.indexBytesWhenRead)

        let read = try Self.key(inPage: 1, of: rows, store)
        #expect(try store.read(TestSchema.employee, key: read) == rows[read])
        #expect(Self.pendingBlocks(store) == 2 * BlockTable.capacity, "a read reads its block's page only")

        // An update of a row whose block is in a page not read: the commit reads that page.
        let updated = try Self.key(inPage: 0, of: rows, store)
        let row = TestSchema.employee(99)
        var transaction = Transaction()
        transaction.update(TestSchema.employee, key: updated, row: row, changedColumns: [0, 1, 2, 3])
        try store.commit(transaction)
        #expect(Self.pendingBlocks(store) == BlockTable.capacity)
        #expect(try store.read(TestSchema.employee, key: updated) == row)

        var expected = rows
        expected[updated] = row
        for (key, row) in expected { #expect(try store.read(TestSchema.employee, key: key) == row) }
        #expect(Self.pendingBlocks(store) == 0)
        #expect(try StoreContents(store).rows[TestSchema.employee].count == rows.count)
        try store.close()
        let verified = try Store.verify(at: url).problems
        #expect(verified == [], "\(verified)")

        // Reopened from the checkpoint the close wrote, a scan reads every page.
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(Self.pendingBlocks(reopened) > 0)
        #expect(try StoreContents(reopened).rows[TestSchema.employee] == expected)
        #expect(Self.pendingBlocks(reopened) == 0)
        try reopened.close()
    }

    /// Compaction right after an open reads the pages it needs and drops the blocks of the
    /// segments it deletes; nothing is lost through a reopen.
    @Test func compactionAfterAnOpenKeepsEveryRow() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let (rows, _) = try Self.makeStore(at: url)
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var transaction = Transaction()
        for key in rows.keys.sorted().prefix(2 * BlockTable.capacity) { transaction.delete(TestSchema.employee, key: key) }
        try store.commit(transaction)
        try store.deleteHistory(before: store.lastSequence + 1)
        try store.compact()
        let kept = rows.filter { key, _ in (try? store.contains(TestSchema.employee, key: key)) == true }
        #expect(kept.count == rows.count - 2 * BlockTable.capacity)
        try store.close()
        try Self.expectIntact(url, holding: kept)
    }

    /// A page of the table damaged on disk (its checksum fails): the open succeeds, reads of
    /// blocks in other pages answer, a read of one in that page throws `corrupt` naming the
    /// checkpoint and the page, `strata verify` reports it, and the close stops naming the
    /// checkpoint, so that the next open replays the whole log and every row is there.
    @Test func aDamagedPageFailsOnlyTheReadsThatNeedItAndLosesNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let (rows, _) = try Self.makeStore(at: url)
        let file = try Self.checkpoint(url)
        let page = try Self.secondPage(of: file)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        bytes[page.lowerBound + 5] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try Store.verify(at: url).problems.contains { $0.file == file && $0.offset == Int64(page.lowerBound) })

        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let sound = try Self.key(inPage: 0, of: rows, store)
        #expect(try store.read(TestSchema.employee, key: sound) == rows[sound])
        let damaged = try Self.key(inPage: 1, of: rows, store)
        let error = #expect(throws: StoreError.self) { _ = try store.read(TestSchema.employee, key: damaged) }
        #expect(error?.code == .corrupt)
        #expect(error?.path == file)
        #expect(error?.offset == Int64(page.lowerBound))
        try store.close()
        try Self.expectIntact(url, holding: rows)
    }

    /// A checkpoint cut short inside a page of the block table, as a crash that left a partly
    /// written file in its place would: its directory places pages past the file's end, so the
    /// open ignores it and replays the whole log; every row is there and `strata verify` names it.
    @Test func aCheckpointCutInsideTheBlockTableLosesNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let (rows, _) = try Self.makeStore(at: url)
        let file = try Self.checkpoint(url)
        #expect(truncate(file, off_t(try Self.secondPage(of: file).lowerBound + 100)) == 0)
        #expect(try Store.verify(at: url).problems.contains { $0.file == file })

        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(Self.pendingBlocks(store) == 0, "the log's replay numbered every block")
        try store.close()
        try Self.expectIntact(url, holding: rows)
    }
}
