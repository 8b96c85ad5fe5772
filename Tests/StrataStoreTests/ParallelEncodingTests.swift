import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A bulk insert is encoded on every core, a part of its rows each (``Store/encodeInserts``),
/// and its blocks compressed likewise: the record reads back as one encoded in one pass would,
/// and a bad row in any part fails the commit as one pass would, writing nothing.
@Suite struct ParallelEncodingTests {
    /// A transaction inserting employee `i` (with a note `i % 97` times longer, so that rows
    /// differ in size and blocks are cut at different places) under `keys[i]`.
    static func inserts(_ keys: [PrimaryKey]) -> Transaction {
        var transaction = Transaction(author: "parts")
        for (index, key) in keys.enumerated() {
            var row = TestSchema.employee(index)
            row.values[2] = .string(String(repeating: "note \(index) ", count: index % 97))
            transaction.insert(TestSchema.employee, key: key, row: row)
        }
        return transaction
    }

    @Test func partsCoverTheRangeInOrderAndOnlyWhenEachHasItsMinimum() {
        #expect(ParallelParts.ranges(count: 10, minimumPerPart: 4, cores: 8) == [0..<5, 5..<10])
        #expect(ParallelParts.ranges(count: 7, minimumPerPart: 4, cores: 8) == [0..<7])
        #expect(ParallelParts.ranges(count: 0, minimumPerPart: 4, cores: 8) == [0..<0])
        #expect(ParallelParts.ranges(count: 100, minimumPerPart: 1, cores: 3) == [0..<33, 33..<66, 66..<100])
        let sums = ParallelParts.map(count: 100_000, minimumPerPart: 10) { range in range.reduce(0, +) }
        #expect(sums.reduce(0, +) == (0..<100_000).reduce(0, +))
        #expect(ParallelParts.map(count: 50_000, minimumPerPart: 10) { $0 }.flatMap { $0 } == Array(0..<50_000))
    }

    @Test func aBulkInsertEncodedInPartsReadsBackIndexedAndInHistoryAfterReopening() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        let count = 3 * ParallelParts.rowsPerPart + 5
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: count))
        let transaction = Self.inserts(keys)
        let sequence = try store.commit(transaction)
        for reopen in [false, true] {
            if reopen {
                try store.close()
                store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
            }
            #expect(store.count(TestSchema.employee) == count)
            for case .insert(_, let key, let row) in transaction.operations {
                guard try store.read(TestSchema.employee, key: key) == row else {
                    Issue.record("employee \(key) reads back otherwise (reopened: \(reopen))")
                    return
                }
            }
            let history = try store.history(after: sequence - 1)
            #expect(
                history.count == 1 && history.first?.changes.map(\.key) == keys, "one transaction, its inserts in order"
            )
            guard case .insert(_, _, let last) = transaction.operations[count - 1], case .int(let salary) = last[1]
            else {
                Issue.record("no salary")
                return
            }
            #expect(
                try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(salary))).contains(keys[count - 1])
            )
        }
        // The next key allocated follows every key the parts wrote.
        #expect(store.allocateKeys(for: TestSchema.employee, count: 1).lowerBound > keys[count - 1])
        try store.close()
    }

    @Test func aBadRowInALaterPartFailsTheCommitAsOnePassWouldAndWritesNothing() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 3 * ParallelParts.rowsPerPart))
        var transaction = Self.inserts(keys)
        // Two bad rows in different parts: the first in operation order is the one reported.
        let first = 2 * ParallelParts.rowsPerPart + 17
        transaction.operations[first] = .insert(
            entity: TestSchema.employee, key: keys[first], row: Row([.string("x"), .string("no salary"), .null, .null]))
        transaction.operations[keys.count - 1] = .insert(
            entity: TestSchema.employee, key: keys[keys.count - 1], row: Row([.null, .int(1), .null, .null]))
        var alone = Transaction()
        alone.operations = [transaction.operations[first]]
        let expected = #expect(throws: StoreError.self) { try store.commit(alone) }
        let error = #expect(throws: StoreError.self) { try store.commit(transaction) }
        #expect(error?.code == .invalidValue && error?.message == expected?.message)
        #expect(store.lastSequence == 0 && store.count(TestSchema.employee) == 0)
        guard case .int(let salary) = TestSchema.employee(0)[1] else {
            Issue.record("no salary")
            return
        }
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(salary))).isEmpty)
        try store.close()
    }
}
