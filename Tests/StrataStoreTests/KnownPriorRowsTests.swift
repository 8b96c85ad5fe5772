import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A transaction carrying the rows its caller read (``Transaction/knownRows``, a batch delete's
/// fetch): the store takes them as the rows its deletes replace when no commit came since they
/// were read, and reads the rows itself when one did, so a stale row never reaches the history
/// or the fetch indexes.
@Suite struct KnownPriorRowsTests {
    /// A transaction deleting the employees at `deleted`, keys rising, carrying `rows` as read
    /// at `sequence`.
    static func deletion(_ keys: [PrimaryKey], _ deleted: Range<Int>, rows: [Row?], sequence: UInt64) -> Transaction {
        var transaction = Transaction(author: "batch")
        for index in deleted { transaction.delete(TestSchema.employee, key: keys[index]) }
        transaction.knownRows = rows
        transaction.knownRowsSequence = sequence
        return transaction
    }

    @Test func currentRowsAreTakenAsTheyAre() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        let keys = try BulkUpdateDeleteCommitTests.seed(store, count: 100)
        // Rows as read, except one whose notes the history will show: the store did not read it.
        var rows = try (60..<90).map { try store.read(TestSchema.employee, key: keys[$0]) }
        rows[0]?[2] = .string("as the caller read it")
        let sequence = try store.commit(Self.deletion(keys, 60..<90, rows: rows, sequence: store.lastSequence))
        #expect(store.count(TestSchema.employee) == 70)
        let history = try store.history(after: sequence - 1)
        try #require(history.count == 1 && history[0].changes.count == 30)
        #expect(history[0].changes[0].previousRow?[2] == .string("as the caller read it"))
        for index in 60..<90 {
            #expect(
                try !BulkCommitTests.keys(salary: try BulkUpdateDeleteCommitTests.salary(index), in: store).contains(
                    keys[index]))
        }
        try store.close()
    }

    @Test func rowsReadBeforeALaterCommitAreReadAgain() throws {
        let directory = TemporaryDirectory()
        var configuration = TestSchema.configuration()
        configuration.historyTracking = true
        let store = try Store.open(at: directory.store(), schema: TestSchema.schema, configuration: configuration)
        let keys = try BulkUpdateDeleteCommitTests.seed(store, count: 100)
        let readAt = store.lastSequence
        let stale = try (60..<90).map { try store.read(TestSchema.employee, key: keys[$0]) }
        // A commit after the read changes the salaries (indexed) of five of the rows.
        try store.commit(BulkUpdateDeleteCommitTests.changes(keys, updated: 60..<65, deleted: 0..<0))
        let sequence = try store.commit(Self.deletion(keys, 60..<90, rows: stale, sequence: readAt))
        #expect(store.count(TestSchema.employee) == 70)
        let history = try store.history(after: sequence - 1)
        try #require(history.count == 1)
        for change in history[0].changes {
            let index = try #require(keys.firstIndex(of: change.key))
            #expect(change.previousRow == TestSchema.employee(index < 65 ? 1_000 + index : index))
        }
        for index in 60..<65 {
            // The index entry the later commit made is gone, not the stale one looked for.
            #expect(
                try !BulkCommitTests.keys(salary: try BulkUpdateDeleteCommitTests.salary(1_000 + index), in: store)
                    .contains(keys[index]))
        }
        try store.close()
    }
}
