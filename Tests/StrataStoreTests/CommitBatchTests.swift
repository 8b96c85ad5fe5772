import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// `Store.commit(_:)` of a batch: each transaction its own record, sequence and history, in
/// one append; a transaction sees what the ones before it wrote; a failing one writes none of
/// the batch; batches and single commits from other threads interleave without loss.
@Suite struct CommitBatchTests {
    @Test func eachTransactionIsItsOwnRecordWithItsHistory() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var first = Transaction(author: "first")
        first.insert(TestSchema.employee, key: 1, row: TestSchema.employee(1))
        var second = Transaction(author: "second", contextName: "editing")
        second.update(TestSchema.employee, key: 1, row: TestSchema.employee(100), changedColumns: [0, 1])
        var third = Transaction(author: "third")
        third.insert(TestSchema.employee, key: 2, row: TestSchema.employee(2))
        third.delete(TestSchema.employee, key: 1)
        let groupWritesBefore = store.statistics.commitGroups
        #expect(try store.commit([first, second, third]) == [1, 2, 3])
        #expect(store.statistics.commitGroups == groupWritesBefore + 1, "one append for the batch")
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(store.lastSequence == 3)
        #expect(try store.read(TestSchema.employee, key: 1) == nil)
        #expect(try store.read(TestSchema.employee, key: 2) == TestSchema.employee(2))
        let history = try store.history()
        #expect(history.map(\.sequence) == [1, 2, 3])
        #expect(history.map(\.author) == ["first", "second", "third"])
        #expect(history[1].contextName == "editing")
        // Prior rows and tombstones come from the rows the earlier transactions of the batch wrote.
        #expect(history[1].changes.first?.previousRow == TestSchema.employee(1))
        #expect(history[2].changes.last?.previousRow == TestSchema.employee(100))
        #expect(history[2].changes.last?.tombstone == Row([.string("Employee 100"), .null, .null, .null]))
        #expect(try store.countKeys(TestSchema.employee, column: 1, matching: .equal(TestSchema.employee(100)[1])) == 0)
        #expect(try store.keys(TestSchema.employee, column: 1, matching: .equal(TestSchema.employee(2)[1])) == [2])
        try store.close()
    }

    @Test func aFailingTransactionWritesNoneOfTheBatch() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var existing = Transaction()
        existing.insert(TestSchema.employee, key: 1, row: TestSchema.employee(1))
        try store.commit(existing)
        var fresh = Transaction()
        fresh.insert(TestSchema.employee, key: 2, row: TestSchema.employee(2))
        var conflicting = Transaction()
        conflicting.insert(TestSchema.employee, key: 1, row: TestSchema.employee(3))
        let error = #expect(throws: StoreError.self) { try store.commit([fresh, conflicting]) }
        #expect(error?.code == .keyConflict)
        #expect(store.lastSequence == 1)
        #expect(try !store.contains(TestSchema.employee, key: 2))
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(store.lastSequence == 1)
        #expect(try !store.contains(TestSchema.employee, key: 2))
        #expect(try store.read(TestSchema.employee, key: 1) == TestSchema.employee(1))
        try store.close()
    }

    /// Concurrent saves queue their commits in any order, each inserting keys reserved before it
    /// was encoded: a group whose commits insert key ranges out of order takes them all.
    @Test func aGroupOfCommitsInsertingKeyRangesOutOfOrderTakesThemAll() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let ranges: [ClosedRange<Int64>] = [11...15, 1...5, 6...8]
        var batch = ranges.map { range in
            var transaction = Transaction()
            for key in range { transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key))) }
            return transaction
        }
        batch[2].insert(TestSchema.department, key: 1, row: Row([.string("Sales"), .double(1)]))
        #expect(try store.commit(batch) == [1, 2, 3])
        for reopened in [false, true] {
            if reopened {
                try store.close()
                store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
            }
            #expect(store.count(TestSchema.employee) == 13)
            for key in ranges.joined() {
                #expect(try store.read(TestSchema.employee, key: key) == TestSchema.employee(Int(key)))
                #expect(
                    try store.keys(TestSchema.employee, column: 1, matching: .equal(TestSchema.employee(Int(key))[1]))
                        .contains(key))
            }
            #expect(try store.keys(TestSchema.department, column: 0, matching: .equal(.string("Sales"))) == [1])
        }
        try store.close()
    }

    /// A group whose commits insert overlapping key ranges, out of order, refuses the commit that
    /// inserts a key an earlier one of the group inserted, and writes none of its batch.
    @Test func aGroupOfCommitsInsertingOverlappingKeyRangesRefusesTheDuplicate() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        for (first, second) in [([10, 11, 12], [1, 11]), ([5], [5]), ([7, 9], [8, 9])] as [([Int64], [Int64])] {
            let batch = [first, second].map { keys in
                var transaction = Transaction()
                for key in keys {
                    transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
                }
                return transaction
            }
            let error = #expect(throws: StoreError.self) { try store.commit(batch) }
            #expect(error?.code == .keyConflict, "\(first) then \(second)")
            #expect(store.count(TestSchema.employee) == 0)
        }
        #expect(store.lastSequence == 0)
        try store.close()
    }

    @Test func batchesAndSingleCommitsFromManyThreadsAllLand() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let shared = store
        let failures = LockedBox(0)
        let threads = 4
        let rounds = 25
        let batchSize = 8
        runThreads(
            (0..<threads).map { thread in
                {
                    for round in 0..<rounds {
                        do {
                            if thread.isMultiple(of: 2) {
                                let keys = shared.allocateKeys(for: TestSchema.employee, count: batchSize)
                                let batch = keys.map { key in
                                    var transaction = Transaction(author: "batch \(thread)")
                                    transaction.insert(
                                        TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
                                    return transaction
                                }
                                let sequences = try shared.commit(batch)
                                if sequences != Array(sequences[0]...(sequences[0] + UInt64(batchSize) - 1)) {
                                    failures.withLock { $0 += 1 }
                                }
                            } else {
                                let key = shared.allocateKeys(for: TestSchema.employee).lowerBound
                                var transaction = Transaction(author: "single \(thread) \(round)")
                                transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
                                try shared.commit(transaction)
                            }
                        } catch {
                            failures.withLock { $0 += 1 }
                        }
                    }
                }
            })
        #expect(failures.withLock { $0 } == 0, "every commit succeeds and a batch's sequences are consecutive")
        let expected = (threads / 2) * rounds * batchSize + (threads / 2) * rounds
        #expect(store.count(TestSchema.employee) == expected)
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(store.count(TestSchema.employee) == expected)
        #expect(store.lastSequence == UInt64(expected))
        #expect(try store.history().count == expected)
        try store.close()
    }
}
