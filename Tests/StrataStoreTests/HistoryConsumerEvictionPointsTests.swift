import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// A history consumer past its bound is evicted not only by `deleteHistory(before:)` but also
/// when the store opens, when compaction computes what history it keeps and when a consumer
/// registers (reads), so a consumer that stopped never holds history back for long.
@Suite struct HistoryConsumerEvictionPointsTests {
    /// A store with consumer `stalled` at 0, three commits and the history before the third deleted.
    static func storeHoldingHistory(at url: URL, configuration: StoreConfiguration) throws -> Store {
        let store = try Store.open(at: url, schema: TestSchema.schema, configuration: configuration)
        try store.registerHistoryConsumer("stalled")
        for key in 1...3 as ClosedRange<Int64> {
            var transaction = Transaction()
            transaction.insert(TestSchema.employee, key: key, row: TestSchema.employee(Int(key)))
            try store.commit(transaction)
        }
        try store.deleteHistory(before: 3)
        return store
    }

    static func ageLimited(_ seconds: Double) -> StoreConfiguration {
        var configuration = TestSchema.configuration()
        configuration.historyConsumerAgeLimit = seconds
        configuration.logger.logLevel = .error
        return configuration
    }

    @Test func evictedWhenTheStoreOpens() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Self.storeHoldingHistory(at: url, configuration: TestSchema.configuration())
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil)
        #expect(store.historyFloor == 0, "the live consumer holds the deleted history")
        try store.close()

        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.ageLimited(0))
        #expect(store.historyConsumers["stalled"]?.evictedAt == 3)
        #expect(store.historyFloor == 2)
        #expect(try store.history(after: 2).map(\.sequence) == [3])
        try store.close()

        // The eviction was written: a store opened without a bound still sees it.
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(store.historyConsumers["stalled"]?.evictedAt == 3)
        #expect(store.historyFloor == 2)
        try store.close()
    }

    @Test func evictedWhenCompactionComputesTheFloor() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.storeHoldingHistory(at: url, configuration: Self.ageLimited(1))
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil, "not past its bound when the history was deleted")
        Thread.sleep(forTimeInterval: 1.2)
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil, "nothing evicts it until the store looks")
        try store.compact()
        #expect(store.historyConsumers["stalled"]?.evictedAt == 3)
        #expect(store.historyFloor == 2)
        try store.close()
    }

    @Test func evictedWhenItRegistersAgain() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        let store = try Self.storeHoldingHistory(at: url, configuration: Self.ageLimited(1))
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil)
        Thread.sleep(forTimeInterval: 1.2)
        let state = try store.registerHistoryConsumer("stalled")
        #expect(state.evictedAt == 3)
        #expect(store.historyFloor == 2)
        // Advancing to its resync point makes it live again.
        try store.advanceHistoryConsumer("stalled", to: 3)
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil)
        try store.close()
    }

    @Test func aConsumerWithinItsBoundStays() throws {
        let directory = TemporaryDirectory()
        let url = directory.store()
        var store = try Self.storeHoldingHistory(at: url, configuration: Self.ageLimited(3_600))
        try store.compact()
        try store.close()
        store = try Store.open(at: url, schema: TestSchema.schema, configuration: Self.ageLimited(3_600))
        #expect(store.historyConsumers["stalled"]?.evictedAt == nil)
        #expect(try store.history(after: 0).map(\.sequence) == [1, 2, 3])
        try store.close()
    }
}
