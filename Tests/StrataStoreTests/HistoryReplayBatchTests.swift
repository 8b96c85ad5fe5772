import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// `Store.replayHistory(from:)` in batches: more transactions than one batch holds are applied
/// each as its own commit with the source's history, in a few appends, and a replay stopped by
/// its progress callback in the middle of a batch resumes exactly after what it counted.
@Suite struct HistoryReplayBatchTests {
    /// A source store with `count` transactions, each inserting one employee and updating the previous one.
    static func source(at url: URL, count: Int) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        let transactions = (1...count).map { index in
            var transaction = Transaction(author: "writer \(index)")
            transaction.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index))
            if index > 1 {
                transaction.update(
                    TestSchema.employee, key: Int64(index - 1), row: TestSchema.employee(index * 1_000),
                    changedColumns: [0, 1])
            }
            return transaction
        }
        try store.commit(transactions)
        return store
    }

    @Test func moreThanOneBatchIsAppliedWithTheSourcesHistory() throws {
        let directory = TemporaryDirectory()
        let count = Store.replayBatchLimits.transactions + 30
        let source = try Self.source(at: directory.store("Source"), count: count)
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        var reported: [Int] = []
        var totals: Set<Int> = []
        let applied = try destination.replayHistory(from: source) { applied, total in
            reported.append(applied)
            totals.insert(total)
        }
        #expect(applied == count)
        #expect(reported == Array(1...count))
        #expect(totals == [count])
        #expect(destination.statistics.commits == count)
        #expect(destination.statistics.commitGroups < 4, "batches, not one append per transaction")
        try destination.close()

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination.replayHistory(from: source) == 0)
        let replica = try destination.history()
        let original = try source.history()
        #expect(replica.map(\.author) == original.map(\.author))
        #expect(replica.map(\.timestamp) == original.map(\.timestamp))
        #expect(replica.map { $0.changes.map(\.key) } == original.map { $0.changes.map(\.key) })
        #expect(replica.map { $0.changes.map(\.previousRow) } == original.map { $0.changes.map(\.previousRow) })
        for key in [1, count / 2, count] {
            #expect(
                try destination.read(TestSchema.employee, key: Int64(key))
                    == source.read(TestSchema.employee, key: Int64(key)))
        }
        try destination.close()
        try source.close()
    }

    @Test func aStopInTheMiddleOfABatchResumesAfterWhatWasCounted() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(at: directory.store("Source"), count: 40)
        let url = directory.store("Destination")
        var destination: Store? = try Store.open(
            at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try destination!.replayHistory(from: source) { applied, _ in
                if applied == 17 { throw Stop() }
            }
        }
        #expect(destination!.lastSequence == 17)
        // Dropped without closing, as a crash would.
        destination = nil
        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(destination!.historyConsumers[Store.replayConsumerName(source: source.storeID)]?.sequence == 17)
        #expect(try destination!.replayHistory(from: source) == 23)
        #expect(try destination!.history().map(\.author) == (1...40).map { "writer \($0)" })
        try destination!.close()
        try source.close()
    }
}
