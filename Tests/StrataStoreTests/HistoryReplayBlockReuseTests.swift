import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Replay copies a source record's blocks whole when the destination reads them alike and holds
/// the same prior rows: the destination's records still replay from its log alone (checkpoints
/// removed) to the source's rows and history, and a destination whose row differs from the
/// source's prior row keeps its own prior row in its history.
@Suite struct HistoryReplayBlockReuseTests {
    /// Transactions of every kind the replay copies: inserts with references, updates of indexed
    /// and plain columns, an insert and update of one key in one transaction, deletes with
    /// tombstones, and a transaction of departments only.
    static func fill(_ store: Store) throws {
        var departments = Transaction(author: "departments")
        for key in 1...3 as ClosedRange<Int64> {
            departments.insert(
                TestSchema.department, key: key, row: Row([.string("Department \(key)"), .double(Double(key) * 1_000)]))
        }
        try store.commit(departments)
        for index in 1...40 {
            var transaction = Transaction(author: "writer \(index)")
            let key = Int64(index)
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(index, department: key % 3 + 1))
            if index % 4 == 0 {
                // The same key inserted and updated in one transaction.
                transaction.update(
                    TestSchema.employee, key: key, row: TestSchema.employee(index * 11, department: 1),
                    changedColumns: [1, 3])
            }
            if index > 1 {
                transaction.update(
                    TestSchema.employee, key: key - 1, row: TestSchema.employee(index * 100, department: 2),
                    changedColumns: [0, 1, 3])
            }
            if index > 5 && index % 5 == 0 { transaction.delete(TestSchema.employee, key: key - 5) }
            try store.commit(transaction)
        }
        var budgets = Transaction(author: "budgets")
        budgets.update(
            TestSchema.department, key: 2, row: Row([.string("Department 2"), .double(9_999)]), changedColumns: [1])
        try store.commit(budgets)
    }

    @Test func replayedRecordsReplayFromTheDestinationsLogAlone() throws {
        let directory = TemporaryDirectory()
        let source = try Store.open(
            at: directory.store("Source"), schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.fill(source)
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination.replayHistory(from: source) == 42)
        try destination.close()
        #expect(try Store.verify(at: url).problems == [])
        try StoreFiles.deleteCheckpoints(url)

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let replica = try destination.history()
        let original = try source.history()
        #expect(replica.count == 42)
        #expect(replica.map(\.author) == original.map(\.author))
        #expect(replica.map(\.changes) == original.map(\.changes), "rows, prior rows and tombstones")
        for entity in [TestSchema.department, TestSchema.employee] {
            #expect(destination.count(entity) == source.count(entity))
            for key in 1...40 as ClosedRange<Int64> {
                #expect(try destination.read(entity, key: key) == source.read(entity, key: key))
            }
        }
        #expect(try destination.replayHistory(from: source) == 0)
        try destination.close()
        try source.close()
    }

    @Test func aDestinationRowThatDiffersFromTheSourcesPriorRowIsTheOneItsHistoryKeeps() throws {
        let directory = TemporaryDirectory()
        let source = try Store.open(
            at: directory.store("Source"), schema: TestSchema.schema, configuration: TestSchema.configuration())
        var insert = Transaction(author: "insert")
        insert.insert(TestSchema.employee, key: 1, row: TestSchema.employee(1))
        try source.commit(insert)
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination.replayHistory(from: source) == 1)
        // The destination changes the row on its own, outside the replay.
        let local = TestSchema.employee(77)
        var edit = Transaction(author: "local")
        edit.update(TestSchema.employee, key: 1, row: local, changedColumns: [0, 1, 2])
        try destination.commit(edit)
        var update = Transaction(author: "update")
        update.update(TestSchema.employee, key: 1, row: TestSchema.employee(2), changedColumns: [0, 1, 2])
        try source.commit(update)
        var delete = Transaction(author: "delete")
        delete.delete(TestSchema.employee, key: 1)
        try source.commit(delete)

        #expect(try destination.replayHistory(from: source) == 2)
        try destination.close()
        try StoreFiles.deleteCheckpoints(url)
        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let history = try destination.history()
        #expect(history.map(\.author) == ["insert", "local", "update", "delete"])
        #expect(
            history[2].changes.first?.previousRow == local, "the destination's row before the update, not the source's")
        #expect(history[2].changes.first?.row == TestSchema.employee(2))
        #expect(history[3].changes.first?.previousRow == TestSchema.employee(2))
        #expect(try destination.read(TestSchema.employee, key: 1) == nil)
        try destination.close()
        try source.close()
    }
}
