import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// History: transactions in order with their metadata, change kinds, changed columns, row images
/// and tombstones; limits; deletion of old history; reopen and compaction; tracking turned off.
@Suite struct HistoryTests {
    static let department = TestSchema.department
    static let employee = TestSchema.employee

    static func configuration(historyTracking: Bool = true) -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.historyTracking = historyTracking
        configuration.segmentSize = 4 << 10
        configuration.logger.logLevel = .error
        return configuration
    }

    static func date(_ seconds: Double) -> Date { Date(timeIntervalSinceReferenceDate: 700_000_000 + seconds) }

    /// The transactions the main test commits, and the history each must leave.
    static func commitScript(_ store: Store) throws -> [HistoryTransaction] {
        var expected: [HistoryTransaction] = []
        func commit(_ transaction: Transaction, _ changes: [HistoryChange]) throws {
            let sequence = try store.commit(transaction)
            #expect(sequence == UInt64(expected.count + 1))
            expected.append(
                HistoryTransaction(
                    sequence: sequence, timestamp: transaction.timestamp, author: transaction.author,
                    contextName: transaction.contextName, bundleID: transaction.bundleID,
                    processID: transaction.processID,
                    changes: changes))
        }
        let research = Row([.string("Research"), .double(1.5e6)])
        let sales = Row([.string("Sales"), .double(2e5)])
        var first = Transaction(author: "importer", contextName: "background")
        first.timestamp = date(1)
        first.insert(department, key: 1, row: research)
        first.insert(department, key: 2, row: sales)
        var changes = [
            HistoryChange(kind: .insert, entity: department, key: 1, changedColumns: [0, 1], row: research),
            HistoryChange(kind: .insert, entity: department, key: 2, changedColumns: [0, 1], row: sales),
        ]
        for key in 1...20 as ClosedRange<Int64> {
            let row = TestSchema.employee(Int(key), department: key % 2 + 1)
            first.insert(employee, key: key, row: row)
            changes.append(
                HistoryChange(kind: .insert, entity: employee, key: key, changedColumns: [0, 1, 2, 3], row: row))
        }
        try commit(first, changes)

        var raise = Transaction(author: "hr")
        raise.timestamp = date(2)
        var raised = TestSchema.employee(3, department: 2)
        raised[1] = .int(99_000)
        raise.update(employee, key: 3, row: raised, changedColumns: [1])
        var moved = TestSchema.employee(4, department: 1)
        moved[2] = .null
        moved[3] = .reference(2)
        raise.update(employee, key: 4, row: moved, changedColumns: [2, 3])
        try commit(
            raise,
            [
                HistoryChange(
                    kind: .update, entity: employee, key: 3, changedColumns: [1], row: raised,
                    previousRow: TestSchema.employee(3, department: 2)),
                HistoryChange(
                    kind: .update, entity: employee, key: 4, changedColumns: [2, 3], row: moved,
                    previousRow: TestSchema.employee(4, department: 1)),
            ])

        var removal = Transaction(contextName: "cleanup")
        removal.timestamp = date(3)
        removal.delete(employee, key: 5)
        removal.delete(department, key: 2)
        removal.insert(employee, key: 21, row: TestSchema.employee(21))
        try commit(
            removal,
            [
                // Employee keeps only its name in tombstones; Department keeps nothing.
                HistoryChange(
                    kind: .delete, entity: employee, key: 5, changedColumns: [],
                    row: nil, tombstone: Row([.string("Employee 5"), .null, .null, .null]),
                    previousRow: TestSchema.employee(5, department: 2)),
                HistoryChange(
                    kind: .delete, entity: department, key: 2, changedColumns: [], row: nil, tombstone: nil,
                    previousRow: sales),
                HistoryChange(
                    kind: .insert, entity: employee, key: 21, changedColumns: [0, 1, 2, 3], row: TestSchema.employee(21)
                ),
            ])

        for round in 4...12 {
            var transaction = Transaction(author: "round \(round)")
            transaction.timestamp = date(Double(round))
            let key = Int64(round + 2)
            let row = TestSchema.employee(round * 100, department: 1)
            transaction.update(employee, key: key, row: row, changedColumns: [0, 1, 2])
            try commit(
                transaction,
                [
                    HistoryChange(
                        kind: .update, entity: employee, key: key, changedColumns: [0, 1, 2], row: row,
                        previousRow: TestSchema.employee(Int(key), department: key % 2 + 1))
                ])
        }
        return expected
    }

    @Test func historyKeepsTransactionsInOrderThroughDeletionReopenAndCompaction() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        let expected = try Self.commitScript(store!)
        #expect(try store!.history() == expected)
        #expect(store!.historyRange == 1...12)
        #expect(try store!.history(after: 0, limit: 2) == Array(expected.prefix(2)))
        #expect(try store!.history(after: 2, limit: 3) == Array(expected[2..<5]))
        #expect(try store!.history(after: 11) == [expected[11]])
        #expect(try store!.history(after: 12).isEmpty)
        #expect(try store!.history(after: 99).isEmpty)
        #expect(try store!.history(limit: 0).isEmpty)
        var streamed: [UInt64] = []
        try store!.forEachHistoryTransaction(after: 3) { transaction in
            streamed.append(transaction.sequence)
            return transaction.sequence < 6
        }
        #expect(streamed == [4, 5, 6])

        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try store!.history() == expected, "after reopen")

        try store!.deleteHistory(before: 4)
        #expect(store!.historyFloor == 3)
        #expect(store!.historyRange == 4...12)
        #expect(try store!.history(after: 3) == Array(expected[3...]))
        #expect(try store!.history(after: 5, limit: 1) == [expected[5]])
        for older in [0, 1, 2] as [UInt64] {
            let error = #expect(throws: StoreError.self) { try store!.history(after: older) }
            #expect(error?.code == .historyUnavailable, "after \(older)")
        }
        try store!.deleteHistory(before: 2)  // lowering the floor does nothing
        #expect(store!.historyFloor == 3)

        store = nil  // crash: the floor is in the manifest
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try store!.history(after: 3) == Array(expected[3...]), "after crash")
        #expect(throws: StoreError.self) { try store!.history() }

        let report = try store!.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(try store!.history(after: 3) == Array(expected[3...]), "after compaction")
        #expect(try store!.read(Self.employee, key: 12) == TestSchema.employee(1000, department: 1))
        try store!.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try store!.history(after: 3) == Array(expected[3...]), "after compaction and reopen")
        try store!.close()
        store = nil
        try StoreFiles.deleteCheckpoints(url)
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        #expect(try store!.history(after: 3) == Array(expected[3...]), "after compaction and full replay")

        var more = Transaction(author: "later")
        more.timestamp = Self.date(13)
        more.delete(Self.employee, key: 12)
        #expect(try store!.commit(more) == 13)
        let latest = try store!.history(after: 12)
        #expect(latest.map(\.sequence) == [13])
        #expect(
            latest.first?.changes == [
                HistoryChange(
                    kind: .delete, entity: Self.employee, key: 12, changedColumns: [], row: nil,
                    tombstone: Row([.string("Employee 1000"), .null, .null, .null]),
                    previousRow: TestSchema.employee(1000, department: 1))
            ])

        try store!.deleteHistory(before: 14)
        #expect(try store!.history(after: 13).isEmpty)
        #expect(store!.historyRange == nil)
        let all = try store!.compact()
        #expect(all.bytesAfter < all.bytesBefore, "\(all)")
        #expect(store!.segments().allSatisfy { $0.deadBytes == 0 }, "\(store!.segments())")
        #expect(store!.count(Self.employee) == 19)
        try store!.close()
    }

    @Test func historyAfterCompactionWithRetainedHistoryKeepsRowImagesOfDeadRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        var expectedRows: [UInt64: Row] = [:]
        var insert = Transaction()
        insert.insert(Self.employee, key: 1, row: TestSchema.employee(0))
        try store!.commit(insert)
        for version in 1...60 {
            var transaction = Transaction(author: "v\(version)")
            let row = TestSchema.employee(version)
            transaction.update(Self.employee, key: 1, row: row, changedColumns: [0, 1, 2])
            expectedRows[try store!.commit(transaction)] = row
        }
        try store!.deleteHistory(before: 30)
        #expect(store!.segments().count > 2)
        try store!.compact()
        func check(_ stage: Comment) throws {
            let history = try store!.history(after: 29)
            #expect(history.map(\.sequence) == Array(30...61), "\(stage)")
            for transaction in history {
                #expect(transaction.author == "v\(transaction.sequence - 1)", "\(stage)")
                #expect(
                    transaction.changes.first?.row == expectedRows[transaction.sequence],
                    "\(stage) \(transaction.sequence)")
            }
            #expect(try store!.read(Self.employee, key: 1) == TestSchema.employee(60), "\(stage)")
        }
        try check("after compaction")
        try store!.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.configuration())
        try check("after reopen")
        try store!.close()
    }

    @Test func storeWithoutHistoryTrackingThrowsAndCompactionReclaimsEverythingDead() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: Self.configuration(historyTracking: false))
        let keys = store!.allocateKeys(for: Self.employee, count: 50)
        var insert = Transaction()
        for key in keys { insert.insert(Self.employee, key: key, row: TestSchema.employee(Int(key))) }
        try store!.commit(insert)
        for round in 1...8 {
            var transaction = Transaction()
            for key in keys where key % 5 != 0 {
                transaction.update(
                    Self.employee, key: key, row: TestSchema.employee(Int(key) * 1000 + round), changedColumns: [0, 1])
            }
            try store!.commit(transaction)
        }
        var removal = Transaction()
        for key in keys where key % 5 == 0 { removal.delete(Self.employee, key: key) }
        try store!.commit(removal)

        for after in [0, 5] as [UInt64] {
            let error = #expect(throws: StoreError.self) { try store!.history(after: after) }
            #expect(error?.code == .historyUnavailable)
        }
        #expect(store!.historyRange == nil)
        let deadBefore = store!.segments().reduce(Int64(0)) { $0 + $1.deadBytes }
        #expect(deadBefore > 0)
        let report = try store!.compact()
        #expect(report.segmentsCompacted > 0)
        #expect(report.bytesAfter < report.bytesBefore / 3, "\(report)")
        #expect(store!.segments().allSatisfy { $0.deadBytes == 0 }, "\(store!.segments())")
        for key in keys {
            #expect(
                try store!.read(Self.employee, key: key)
                    == (key % 5 == 0 ? nil : TestSchema.employee(Int(key) * 1000 + 8)))
        }
        try store!.close()

        // The store keeps the setting it was created with.
        store = try Store.open(
            at: url, schema: TestSchema.schema, configuration: Self.configuration(historyTracking: true))
        #expect(throws: StoreError.self) { try store!.history() }
        #expect(store!.count(Self.employee) == 40)
        try store!.close()
    }
}
