import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Commits of many updates and deletes, each key written once (a batch update or delete): the
/// store reads their committed rows block by block, without history only the columns the fetch
/// indexes and tombstones take, and keeps no written row for later operations. The fetch
/// indexes, the rows and the history must come out as committing them one by one leaves them.
@Suite struct BulkUpdateDeleteCommitTests {
    /// Employees `0..<count` inserted under fresh keys; returns the keys.
    static func seed(_ store: Store, count: Int) throws -> [PrimaryKey] {
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: count))
        try store.commit(BulkCommitTests.inserts(keys))
        return keys
    }

    /// One transaction updating the employees at `updated` to the rows of employees `1_000 + i`
    /// (a new salary, name and notes), then deleting those at `deleted`, keys rising.
    static func changes(_ keys: [PrimaryKey], updated: Range<Int>, deleted: Range<Int>) -> Transaction {
        var transaction = Transaction(author: "batch")
        for index in updated {
            transaction.update(
                TestSchema.employee, key: keys[index], row: TestSchema.employee(1_000 + index),
                changedColumns: [0, 1, 2])
        }
        for index in deleted { transaction.delete(TestSchema.employee, key: keys[index]) }
        return transaction
    }

    /// The salary of employee `index`'s row.
    static func salary(_ index: Int) throws -> Int64 {
        guard case .int(let salary) = TestSchema.employee(index)[1] else {
            throw StoreError(.invalidValue, "salary is not an integer")
        }
        return salary
    }

    /// Expects the rows and the salary index of the 100 employees after ``changes(_:updated:deleted:)``
    /// of `20..<60` updated and `60..<90` deleted.
    static func expectChanged(_ store: Store, _ keys: [PrimaryKey]) throws {
        #expect(store.count(TestSchema.employee) == 70)
        for index in 0..<100 {
            let row = try store.read(TestSchema.employee, key: keys[index])
            let salaryKeys = try BulkCommitTests.keys(salary: try salary(index), in: store)
            switch index {
            case 20..<60:
                #expect(row == TestSchema.employee(1_000 + index), "the whole new row is kept, not a projection")
                #expect(try BulkCommitTests.keys(salary: try salary(1_000 + index), in: store).contains(keys[index]))
                #expect(!salaryKeys.contains(keys[index]), "the old salary is no longer indexed")
            case 60..<90:
                #expect(row == nil)
                #expect(!salaryKeys.contains(keys[index]))
            default:
                #expect(row == TestSchema.employee(index))
                #expect(salaryKeys.contains(keys[index]))
            }
        }
    }

    @Test func updatesAndDeletesWithoutHistoryKeepTheFetchIndexAndSurviveReplay() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = try Self.seed(store, count: 100)
        try store.commit(Self.changes(keys, updated: 20..<60, deleted: 60..<90))
        try Self.expectChanged(store, keys)
        try store.close()

        // Without checkpoints the log is replayed, fetch indexes included.
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.expectChanged(store, keys)
        try store.close()
    }

    @Test func updatesAndDeletesWithHistoryRecordWholePriorRowsAndTombstones() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        let keys = try Self.seed(store, count: 100)
        let sequence = try store.commit(Self.changes(keys, updated: 20..<60, deleted: 60..<90))
        try Self.expectChanged(store, keys)
        let history = try store.history(after: sequence - 1)
        try #require(history.count == 1)
        #expect(history[0].changes.count == 70 && history[0].author == "batch")
        for change in history[0].changes {
            let index = try #require(keys.firstIndex(of: change.key))
            #expect(change.previousRow == TestSchema.employee(index), "the prior row is whole: notes too")
            if change.kind == .delete { #expect(change.tombstone?[0] == .string("Employee \(index)")) }
        }
        try store.close()
    }

    /// The committed rows a bulk commit replaces go into the history as their bytes when the
    /// current schema encodes them alike, and encoded again, their added column padded, when
    /// they were written before a column was added: either way the prior rows read back whole,
    /// and the salary index moves.
    @Test func priorRowsWrittenBeforeAColumnWasAddedAreRecordedInTheCurrentLayout() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        let keys = try Self.seed(store!, count: 100)
        try store!.close()
        var entities = TestSchema.schema.entities
        entities[TestSchema.employee].columns.append(ColumnSchema(name: "title", type: .string))
        let evolved = try Schema(entities: entities)
        store = nil
        #expect(
            try Store.evolveSchema(
                at: url, to: evolved, defaults: [TestSchema.employee: [4: .string("none")]],
                configuration: configuration))
        store = try Store.open(at: url, schema: evolved, configuration: configuration)
        // Rows 0..<10 rewritten under the new layout first, so that the bulk commit finds both layouts.
        var rewrite = Transaction()
        for index in 0..<10 {
            rewrite.update(
                TestSchema.employee, key: keys[index],
                row: Row(TestSchema.employee(index).values + [.string("t\(index)")]), changedColumns: [4])
        }
        try store!.commit(rewrite)
        var transaction = Transaction(author: "batch")
        for index in 0..<40 {
            transaction.update(
                TestSchema.employee, key: keys[index],
                row: Row(TestSchema.employee(1_000 + index).values + [.string("new")]), changedColumns: [0, 1, 2, 4])
        }
        for index in 60..<90 { transaction.delete(TestSchema.employee, key: keys[index]) }
        let sequence = try store!.commit(transaction)
        let history = try store!.history(after: sequence - 1)
        try #require(history.count == 1 && history[0].changes.count == 70)
        for change in history[0].changes {
            let index = try #require(keys.firstIndex(of: change.key))
            let title: Value = index < 10 ? .string("t\(index)") : .string("none")
            #expect(change.previousRow == Row(TestSchema.employee(index).values + [title]), "employee \(index)")
        }
        for index in 0..<40 {
            #expect(try BulkCommitTests.keys(salary: try Self.salary(1_000 + index), in: store!).contains(keys[index]))
            #expect(try !BulkCommitTests.keys(salary: try Self.salary(index), in: store!).contains(keys[index]))
        }
        try store!.close()
    }

    @Test func aKeyWrittenTwiceInOneTransactionStillSeesItsEarlierWrite() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = try Self.seed(store, count: 100)
        var transaction = Self.changes(keys, updated: 20..<60, deleted: 60..<90)
        // The keys no longer rise: the update's new salary must leave the index when the row goes.
        transaction.delete(TestSchema.employee, key: keys[30])
        try store.commit(transaction)
        #expect(try store.read(TestSchema.employee, key: keys[30]) == nil)
        #expect(try !BulkCommitTests.keys(salary: try Self.salary(1_030), in: store).contains(keys[30]))
        #expect(try !BulkCommitTests.keys(salary: try Self.salary(30), in: store).contains(keys[30]))
        #expect(store.count(TestSchema.employee) == 69)
    }
}
