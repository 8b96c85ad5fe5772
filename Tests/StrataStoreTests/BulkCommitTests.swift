import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Commits of many inserts with rising keys (a bulk insert), which the store validates and
/// applies without keeping an image per key: key conflicts are still refused whole, fetch
/// indexes and history hold every row, and later commits in the same group see the rows.
@Suite struct BulkCommitTests {
    /// A transaction inserting employees `range` under `keys`, in order.
    static func inserts(_ keys: [PrimaryKey], from first: Int = 0) -> Transaction {
        var transaction = Transaction(author: "bulk")
        for (offset, key) in keys.enumerated() {
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(first + offset))
        }
        return transaction
    }

    /// The keys of employees whose salary is `salary`, through the fetch index.
    static func keys(salary: Int64, in store: Store) throws -> [PrimaryKey] {
        try store.keys(TestSchema.employee, column: 1, matching: .equal(.int(salary)))
    }

    @Test func aBulkInsertIsIndexedKeptInHistoryAndSurvivesReopening() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 10_000))
        let sequence = try store.commit(Self.inserts(keys))
        #expect(store.count(TestSchema.employee) == 10_000)
        let history = try store.history(after: sequence - 1)
        #expect(history.count == 1 && history[0].changes.count == 10_000 && history[0].author == "bulk")
        #expect(history[0].changes.map(\.key) == keys)
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        #expect(store.count(TestSchema.employee) == 10_000)
        for index in [0, 4_095, 4_096, 9_999] {
            #expect(try store.read(TestSchema.employee, key: keys[index]) == TestSchema.employee(index))
            guard case .int(let salary) = TestSchema.employee(index)[1] else {
                Issue.record("salary is not an integer")
                continue
            }
            #expect(try Self.keys(salary: salary, in: store).contains(keys[index]))
        }
        try store.close()
    }

    @Test func aBulkInsertOfOneLiveKeyIsRefusedWholeAndWritesNothing() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 1_000))
        try store.commit(Self.inserts([keys[500]], from: 500))
        let before = store.lastSequence
        #expect { try store.commit(Self.inserts(keys)) } throws: { ($0 as? StoreError)?.code == .keyConflict }
        #expect(store.lastSequence == before)
        #expect(store.count(TestSchema.employee) == 1)
        guard case .int(let salary) = TestSchema.employee(0)[1] else {
            Issue.record("salary is not an integer")
            return
        }
        #expect(try Self.keys(salary: salary, in: store).isEmpty, "the refused rows are not indexed")
    }

    @Test func aBatchThatInsertsAKeyTwiceIsRefusedAndOneThatUpdatesAnInsertedRowIsIndexedAsUpdated() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: 2_000))
        #expect { try store.commit([Self.inserts(keys), Self.inserts([keys[7]], from: 7)]) } throws: {
            ($0 as? StoreError)?.code == .keyConflict
        }
        #expect(store.count(TestSchema.employee) == 0)

        var update = Transaction()
        update.update(TestSchema.employee, key: keys[7], row: TestSchema.employee(5_000), changedColumns: [0, 1, 2])
        try store.commit([Self.inserts(keys), update])
        guard case .int(let old) = TestSchema.employee(7)[1], case .int(let new) = TestSchema.employee(5_000)[1] else {
            Issue.record("salary is not an integer")
            return
        }
        #expect(try !Self.keys(salary: old, in: store).contains(keys[7]))
        #expect(try Self.keys(salary: new, in: store).contains(keys[7]))
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try store.read(TestSchema.employee, key: keys[7]) == TestSchema.employee(5_000))
        #expect(store.count(TestSchema.employee) == 2_000)
        try store.close()
    }
}
