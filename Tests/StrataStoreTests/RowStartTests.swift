import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A row's location keeps where the row starts in its block (``RowLocation/rowStart``) when this
/// process wrote or moved the row, and checkpoints keep it, so that a fault reads the row without
/// the block's offset table. The start kept is always the one the table gives; a row known from
/// replaying the log keeps none and is read through the table, as is a row whose start is wrong.
@Suite struct RowStartTests {
    /// The employees of the tests: names of growing length, so that rows start at uneven places.
    static func employee(_ index: Int) -> Row {
        Row([
            .string("Employee \(index) " + String(repeating: "x", count: index % 37)), .int(Int64(30_000 + index)),
            index % 3 == 0 ? .null : .string("notes \(index)"), .null,
        ])
    }

    /// Opens a store with small blocks (so that the rows fill many) and history tracking as asked.
    static func open(_ url: URL, tracking: Bool = true) throws -> Store {
        var configuration = TestSchema.configuration()
        configuration.blockSize = 1024
        configuration.historyTracking = tracking
        return try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
    }

    /// Inserts `count` employees in one commit; returns their keys.
    static func insert(_ count: Int, into store: Store) throws -> [Int64] {
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: count))
        var transaction = Transaction()
        for (index, key) in keys.enumerated() {
            transaction.insert(TestSchema.employee, key: key, row: employee(index))
        }
        try store.commit(transaction)
        return keys
    }

    /// For each key: the start its location keeps, and where the block's offset table says the
    /// row starts among the block's row data.
    static func starts(_ store: Store, _ keys: [Int64]) throws -> [(kept: Int?, table: Int)] {
        try keys.map { key in
            let resolved = try #require(try store.state.withLock { try $0.resolve(TestSchema.employee, key) })
            let block = try store.loadBlock(resolved.location.block, resolved.block, file: resolved.file)
            let table = block.withRowData(from: 0) { data in
                block.withRow(at: resolved.location.slot) { row in row.baseAddress! - data.baseAddress! }
            }
            return (resolved.location.rowStart, table)
        }
    }

    /// Every key's row reads (as the encoded bytes a fault reads) as its decoded read gives it.
    static func expectReads(_ store: Store, _ keys: [Int64], _ expected: (Int) -> Row, _ stage: Comment) throws {
        for (index, key) in keys.enumerated() {
            EncodedRowTests.check(
                try store.readEncoded(TestSchema.employee, key: key), expected(index), "\(stage) key \(key)")
        }
    }

    @Test func aCommittedRowKeepsTheStartTheTableGivesAcrossAReopen() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Self.open(url)
        let keys = try Self.insert(300, into: store)
        var update = Transaction()
        for key in keys where key % 4 == 0 {
            update.update(
                TestSchema.employee, key: key, row: Self.employee(Int(key) + 1000), changedColumns: [0, 1, 2])
        }
        try store.commit(update)
        func expected(_ index: Int) -> Row {
            keys[index] % 4 == 0 ? Self.employee(Int(keys[index]) + 1000) : Self.employee(index)
        }
        for stage in ["after the commits", "after a reopen"] {
            let starts = try Self.starts(store, keys)
            #expect(
                starts.allSatisfy { $0.kept == $0.table }, "\(stage): every row keeps the start its block's table gives"
            )
            #expect(Set(starts.map(\.table)).count > 50, "\(stage): the rows start at many places")
            try Self.expectReads(store, keys, expected, "\(stage)")
            try store.close()
            store = try Self.open(url)
        }
        try store.close()
    }

    @Test func rowsKnownFromReplayingTheLogReadThroughTheTableUntilWrittenAgain() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Self.open(url)
        let keys = try Self.insert(200, into: store)
        try store.close()
        try StoreFiles.deleteCheckpoints(url)
        store = try Self.open(url)
        #expect(try Self.starts(store, keys).allSatisfy { $0.kept == nil }, "a replayed row keeps no start")
        try Self.expectReads(store, keys, Self.employee, "replayed")
        var update = Transaction()
        update.update(TestSchema.employee, key: keys[7], row: Self.employee(9_999), changedColumns: [0, 1, 2])
        try store.commit(update)
        let written = try #require(try Self.starts(store, [keys[7]]).first)
        #expect(written.kept == written.table, "a row written again keeps its start")
        try Self.expectReads(store, [keys[7]], { _ in Self.employee(9_999) }, "written again")
        try store.close()
    }

    @Test(arguments: [true, false])
    func compactionGivesTheRowsItMovesOrCopiesTheirNewStart(tracking: Bool) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.open(url, tracking: tracking)
        let keys = try Self.insert(300, into: store)
        var delete = Transaction()
        for key in keys where key % 3 == 0 { delete.delete(TestSchema.employee, key: key) }
        try store.commit(delete)
        let report = try store.compact()
        #expect(report.segmentsCompacted > 0, "the deletes left dead rows to compact")
        let live = keys.enumerated().filter { $0.element % 3 != 0 }
        let starts = try Self.starts(store, live.map(\.element))
        #expect(
            starts.allSatisfy { $0.kept != nil && $0.kept == $0.table },
            "every live row keeps its start in its new block")
        try Self.expectReads(store, live.map(\.element), { Self.employee(live[$0].offset) }, "after compaction")
        try store.close()
    }

    @Test func aStartPastTheBlocksRowsReadsThroughTheTable() throws {
        let directory = TemporaryDirectory()
        let store = try Self.open(directory.store())
        let keys = try Self.insert(50, into: store)
        try store.state.withLock { state in
            for key in keys {
                let location = try state.entities[TestSchema.employee].location(of: key)
                let wrong = RowLocation(block: location.block, slot: location.slot, start: 60_000)
                let size = try state.entities[TestSchema.employee].size(of: key)
                state.entities[TestSchema.employee].set(key, to: wrong, size: size)
            }
        }
        #expect(try Self.starts(store, keys).allSatisfy { $0.kept == 60_000 })
        try Self.expectReads(store, keys, Self.employee, "wrong starts")
        try store.close()
    }
}
