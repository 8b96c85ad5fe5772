import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// ``Store/commit(_:inserting:)``: rows made as they are encoded read back, indexed and in the
/// history as the same inserts committed as operations do, before and after reopening; a row
/// that cannot be made or stored fails the commit as the first bad row alone would, writing
/// nothing; the images the group's validation takes from the recorded changes are the rows',
/// so an update of an inserted row in the same group moves its index entry.
@Suite struct InsertedRowsTests {
    /// The rows of employees `keys`, made by ``ParallelEncodingTests/inserts(_:)``'s rule, with
    /// `fill` failing for the rows `failing` names with the error it gives.
    static func rows(
        _ keys: Range<PrimaryKey>, failing: @escaping @Sendable (Int) -> (any Error)? = { _ in nil }
    ) -> InsertedRows {
        InsertedRows(entity: TestSchema.employee, keys: keys, template: Row([.null, .null, .string("default"), .null]))
        { index, row in
            if let error = failing(index) { throw error }
            let made = TestSchema.employee(index)
            row.values[0] = made.values[0]
            row.values[1] = made.values[1]
            if index % 3 != 0 { row.values[2] = .string(String(repeating: "note \(index) ", count: index % 97)) }
        }
    }

    /// The row ``rows(_:failing:)`` makes at `index`.
    static func row(_ index: Int) -> Row {
        var row = TestSchema.employee(index)
        row.values[2] =
            index % 3 == 0 ? .string("default") : .string(String(repeating: "note \(index) ", count: index % 97))
        row.values[3] = .null
        return row
    }

    @Test(arguments: [5, 3 * ParallelParts.rowsPerPart + 5])
    func insertedRowsReadBackIndexedAndInHistoryAfterReopening(count: Int) throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        let allocated = store.allocateKeys(for: TestSchema.employee, count: count)
        let keys = allocated.lowerBound..<(allocated.upperBound + 1)
        let sequence = try store.commit(Transaction(author: "importer"), inserting: Self.rows(keys))
        for reopen in [false, true] {
            if reopen {
                try store.close()
                store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
            }
            #expect(store.count(TestSchema.employee) == count)
            for (index, key) in keys.enumerated() where try store.read(TestSchema.employee, key: key) != Self.row(index)
            {
                Issue.record("employee \(key) reads back otherwise (reopened: \(reopen))")
                break
            }
            let history = try store.history(after: sequence - 1)
            #expect(
                history.count == 1 && history.first?.changes.map(\.key) == Array(keys),
                "one transaction, its inserts in order")
            #expect(history.first?.author == "importer")
            guard case .int(let salary) = Self.row(count - 1)[1] else {
                Issue.record("no salary")
                return
            }
            #expect(
                try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(salary))).contains(
                    keys.upperBound - 1))
        }
        #expect(store.allocateKeys(for: TestSchema.employee, count: 1).lowerBound > keys.upperBound - 1)
        try store.close()
    }

    /// What a test's `fill` throws.
    struct MadeUpError: Error, Equatable {
        var index: Int
    }

    @Test func theFirstRowThatFailsFailsTheCommitAndNothingIsWritten() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let count = 3 * ParallelParts.rowsPerPart
        let allocated = store.allocateKeys(for: TestSchema.employee, count: count)
        let keys = allocated.lowerBound..<(allocated.upperBound + 1)
        // Two failing rows in different parts: the first in row order is the one reported.
        let failing = [2 * ParallelParts.rowsPerPart + 17, count - 1]
        let thrown = #expect(throws: MadeUpError.self) {
            try store.commit(
                Transaction(), inserting: Self.rows(keys) { failing.contains($0) ? MadeUpError(index: $0) : nil })
        }
        #expect(thrown == MadeUpError(index: failing[0]))
        // A row the store refuses (no salary) fails it as that row alone would.
        var bad = Self.rows(keys)
        let made = bad.make
        bad.make = { index, row in
            try made(index, &row)
            if index == failing[0] { row.values[1] = .null }
        }
        let error = #expect(throws: StoreError.self) { try store.commit(Transaction(), inserting: bad) }
        var alone = Transaction()
        alone.insert(TestSchema.employee, key: keys.lowerBound, row: Row([.string("x"), .null, .null, .null]))
        let expected = #expect(throws: StoreError.self) { try store.commit(alone) }
        #expect(error?.code == .invalidValue && error?.message == expected?.message)
        #expect(store.lastSequence == 0 && store.count(TestSchema.employee) == 0)
        guard case .int(let salary) = Self.row(0)[1] else {
            Issue.record("no salary")
            return
        }
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(salary))).isEmpty)

        // Operations besides the rows are refused; the store still commits.
        var withOperations = Transaction()
        withOperations.insert(TestSchema.employee, key: keys.lowerBound, row: Self.row(0))
        let refused = #expect(throws: StoreError.self) { try store.commit(withOperations, inserting: Self.rows(keys)) }
        #expect(refused?.code == .invalidValue)
        #expect(try store.commit(Transaction(), inserting: Self.rows(keys.prefix(3))) == 1)
        #expect(store.count(TestSchema.employee) == 3)
        try store.close()
    }

    @Test func theImagesOfInsertsRecordedInPartsAreTheRowsIndexedValues() throws {
        // Employees (salary indexed) and departments (name indexed) inserted in turn, recorded
        // as a bulk insert's parts record them, in two parts appended.
        var ops: [RecordOp] = []
        var parts = [FetchIndexChanges(), FetchIndexChanges()]
        var expected: [(op: Int, value: Value)] = []
        for index in 0..<10 {
            let entity = index % 3 == 0 ? TestSchema.department : TestSchema.employee
            let row =
                entity == TestSchema.employee
                ? TestSchema.employee(index) : Row([.string("Department \(index)"), .double(1)])
            let column = entity == TestSchema.employee ? 1 : 0
            ops.append(
                RecordOp(
                    kind: .insert, entity: entity, key: Int64(100 + index), block: 0, slot: index, size: 0,
                    changedColumns: []))
            parts[index < 4 ? 0 : 1].record(entity, Int64(100 + index), columns: [column], old: nil, new: .row(row))
            expected.append((index, row[column]))
        }
        var changes = parts[0]
        changes.append(parts[1])
        let images = changes.insertedRows(ops, indexedColumns: [[0], [1]])
        #expect(images.map(\.op) == expected.map(\.op))
        #expect(images.map { $0.new?.value(at: 0, column: -1) } == expected.map(\.value))
        #expect(images.allSatisfy { $0.old == nil })
    }

    @Test func anUpdateInTheGroupOfABulkInsertMovesTheInsertedRowsIndexEntry() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 3 * ParallelParts.rowsPerPart))
        // The bulk insert records its index changes in parts and keeps no rows; the update of
        // one of its keys in the same group takes the row's old indexed value from them.
        let bulk = ParallelEncodingTests.inserts(keys)
        let moved = 2 * ParallelParts.rowsPerPart + 3
        guard case .insert(_, let key, var row) = bulk.operations[moved], case .int(let before) = row[1] else {
            Issue.record("no salary")
            return
        }
        row.values[1] = .int(999_999)
        var update = Transaction()
        update.update(TestSchema.employee, key: key, row: row, changedColumns: [1])
        try store.commit([bulk, update])
        #expect(!(try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(before))).contains(key)))
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(999_999))) == [key])
        #expect(
            try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(before))).count
                == bulk.operations.count {
                    if case .insert(_, _, let row) = $0 { row[1] == .int(before) } else { false }
                } - 1)
        try store.close()
    }
}
