import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A replay cursor counts the source store's sequences: it must neither hold the destination's
/// history floor nor be evicted by the destination's lag limits, and a destination whose own
/// history floor already moved still replays the source from its first transaction.
@Suite struct HistoryReplayCursorFloorTests {
    /// Commits `count` transactions to `store`, each inserting one employee from `first` on.
    static func insert(_ count: Int, from first: Int, into store: Store) throws {
        for index in first..<(first + count) {
            var transaction = Transaction(author: "local")
            transaction.insert(TestSchema.employee, key: Int64(index), row: TestSchema.employee(index))
            try store.commit(transaction)
        }
    }

    @Test func theReplayCursorDoesNotHoldTheDestinationsHistoryFloor() throws {
        let directory = TemporaryDirectory()
        let source = try HistoryReplayBatchTests.source(at: directory.store("Source"), count: 10)
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.insert(3, from: 1_000, into: destination)
        #expect(try destination.replayHistory(from: source) == 10)
        #expect(destination.lastSequence == 13)
        #expect(destination.historyConsumers[Store.replayConsumerName(source: source.storeID)]?.sequence == 10)

        try destination.deleteHistory(before: 13)
        #expect(
            destination.historyFloor == 12,
            "the replay cursor (source sequence 10) must not hold destination sequences 10-12")
        #expect(try destination.history(after: 12).map(\.sequence) == [13])
        try destination.close()

        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(destination.historyFloor == 12)
        #expect(
            try destination.replayHistory(from: source) == 0, "the cursor survives the reopen: nothing is applied twice"
        )
        try destination.close()
        try source.close()
    }

    @Test func aDestinationWithDeletedHistoryReplaysTheSourceFromItsStart() throws {
        let directory = TemporaryDirectory()
        let source = try HistoryReplayBatchTests.source(at: directory.store("Source"), count: 4)
        let destination = try Store.open(
            at: directory.store("Destination"), schema: TestSchema.schema, configuration: TestSchema.configuration())
        try Self.insert(6, from: 1_000, into: destination)
        try destination.deleteHistory(before: 7)
        #expect(destination.historyFloor == 6)

        #expect(
            try destination.replayHistory(from: source) == 4,
            "the cursor starts at the source's sequence 0, not the destination's floor")
        for key in 1...4 {
            #expect(
                try destination.read(TestSchema.employee, key: Int64(key))
                    == source.read(TestSchema.employee, key: Int64(key)))
        }
        try destination.close()
        try source.close()
    }

    @Test func aLagLimitDoesNotEvictTheReplayCursor() throws {
        let directory = TemporaryDirectory()
        let source = try HistoryReplayBatchTests.source(at: directory.store("Source"), count: 5)
        var configuration = TestSchema.configuration()
        configuration.historyConsumerLagLimit = 1
        let destination = try Store.open(
            at: directory.store("Destination"), schema: TestSchema.schema, configuration: configuration)
        #expect(try destination.replayHistory(from: source) == 5)
        try Self.insert(20, from: 1_000, into: destination)
        try destination.deleteHistory(before: destination.lastSequence)
        #expect(try destination.evictLaggingHistoryConsumers().isEmpty)

        let name = Store.replayConsumerName(source: source.storeID)
        #expect(destination.historyConsumers[name]?.evictedAt == nil)
        var more = Transaction(author: "writer")
        more.insert(TestSchema.employee, key: 500, row: TestSchema.employee(500))
        try source.commit(more)
        #expect(try destination.replayHistory(from: source) == 1, "the replay resumes after the cursor")
        #expect(try destination.read(TestSchema.employee, key: 500) == TestSchema.employee(500))
        try destination.close()
        try source.close()
    }
}
