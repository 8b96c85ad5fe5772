import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Conditional commits (``CommitCondition``): refused with `writeConflict`, writing nothing,
/// when a commit since the condition's sequence wrote a watched row or entity; committed
/// otherwise.
@Suite struct CommitConditionTests {
    /// Inserts `count` employees; returns their keys.
    static func insertEmployees(_ count: Int, into store: Store) throws -> [PrimaryKey] {
        let keys = Array(store.allocateKeys(for: TestSchema.employee, count: count))
        var transaction = Transaction()
        for (index, key) in keys.enumerated() {
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(index))
        }
        try store.commit(transaction)
        return keys
    }

    /// An update of the employee at `key` to the row of employee `index`, under `condition`.
    static func update(_ key: PrimaryKey, to index: Int, condition: CommitCondition? = nil) -> Transaction {
        var transaction = Transaction()
        transaction.update(TestSchema.employee, key: key, row: TestSchema.employee(index), changedColumns: [0, 1, 2])
        transaction.condition = condition
        return transaction
    }

    @Test func aWatchedRowWrittenSinceRefusesTheCommitAndNothingIsWritten() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = try Self.insertEmployees(2, into: store)
        let since = store.lastSequence
        try store.commit(Self.update(keys[0], to: 10))
        let before = store.lastSequence
        let watchFirst = CommitCondition(since: since, rows: [TestSchema.employee: [keys[0]]])
        #expect { try store.commit(Self.update(keys[0], to: 20, condition: watchFirst)) } throws: {
            ($0 as? StoreError)?.code == .writeConflict
        }
        #expect(store.lastSequence == before, "a refused commit takes no sequence")
        #expect(try store.read(TestSchema.employee, key: keys[0]) == TestSchema.employee(10))
        // A condition on another row holds: the commit since did not write it.
        let watchSecond = CommitCondition(since: since, rows: [TestSchema.employee: [keys[1]]])
        #expect(try store.commit(Self.update(keys[1], to: 30, condition: watchSecond)) == before + 1)
        try store.close()

        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try reopened.read(TestSchema.employee, key: keys[0]) == TestSchema.employee(10))
        #expect(try reopened.read(TestSchema.employee, key: keys[1]) == TestSchema.employee(30))
        try reopened.close()
    }

    @Test func aWatchedEntityIsBrokenOnlyByCommitsWritingIt() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = try Self.insertEmployees(1, into: store)
        let since = store.lastSequence
        let watchDepartments = CommitCondition(since: since, entities: [TestSchema.department])
        try store.commit(Self.update(keys[0], to: 5))
        // An employee written since does not break a condition on departments.
        try store.commit(Self.update(keys[0], to: 6, condition: watchDepartments))
        var department = Transaction()
        department.insert(
            TestSchema.department, key: store.allocateKeys(for: TestSchema.department, count: 1).lowerBound,
            row: Row([.string("Research"), .double(1)]))
        try store.commit(department)
        #expect { try store.commit(Self.update(keys[0], to: 7, condition: watchDepartments)) } throws: {
            ($0 as? StoreError)?.code == .writeConflict
        }
        #expect(try store.read(TestSchema.employee, key: keys[0]) == TestSchema.employee(6))
        try store.close()
    }

    /// The store remembers the commits since it was opened: a condition on an older sequence
    /// cannot be checked, and fails rather than risk a lost update.
    @Test func aConditionOlderThanTheOpenStoreFails() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let keys = try Self.insertEmployees(1, into: store)
        let since = store.lastSequence
        try store.close()
        let reopened = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try reopened.commit(Self.update(keys[0], to: 2))
        let stale = CommitCondition(since: since, rows: [TestSchema.employee: [keys[0]]])
        #expect { try reopened.commit(Self.update(keys[0], to: 3, condition: stale)) } throws: {
            ($0 as? StoreError)?.code == .writeConflict
        }
        let current = CommitCondition(since: reopened.lastSequence, rows: [TestSchema.employee: [keys[0]]])
        try reopened.commit(Self.update(keys[0], to: 4, condition: current))
        #expect(try reopened.read(TestSchema.employee, key: keys[0]) == TestSchema.employee(4))
        try reopened.close()
    }

    /// Threads committing at once share log writes and syncs: the statistics count fewer
    /// groups and `fdatasync`s than commits.
    @Test func concurrentDurableCommitsShareSyncs() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            at: directory.store(), schema: TestSchema.schema,
            configuration: TestSchema.configuration(durability: .durable))
        let keys = try Self.insertEmployees(16, into: store)
        let before = store.statistics
        let failures = LockedBox(0)
        runThreads(
            keys.map { key in
                { @Sendable in
                    for round in 0..<20 {
                        let condition = CommitCondition(since: store.lastSequence, rows: [TestSchema.employee: [key]])
                        do { try store.commit(Self.update(key, to: round, condition: condition)) } catch {
                            failures.withLock { $0 += 1 }
                        }
                    }
                }
            })
        let after = store.statistics
        #expect(failures.withLock { $0 } == 0, "commits on disjoint rows never conflict")
        #expect(after.commits - before.commits == 320)
        #expect(after.commitGroups - before.commitGroups < 320)
        #expect(after.fsyncs - before.fsyncs < 320)
        try store.close()
    }
}
