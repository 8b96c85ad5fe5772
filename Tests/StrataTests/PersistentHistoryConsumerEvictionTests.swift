import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A history consumer that stopped reading is evicted once it is past its
/// `HistoryConsumerAgeLimitKey` bound when it next reads, even when no purge ran since: its read
/// fails with `persistentHistoryTokenExpired` naming the token to resync from.
@Suite struct PersistentHistoryConsumerEvictionTests {
    typealias History = PersistentHistoryTests

    @Test func aStalledConsumerIsEvictedWhenItNextReads() throws {
        let folder = TemporaryDirectory()
        let container = try History.container(
            at: folder.store(), options: [PersistentHistoryTrackingKey: true, HistoryConsumerAgeLimitKey: 1.0])
        let consumer = try container.persistentStoreCoordinator.historyConsumer(named: "stalled")
        try History.insert(["Ada"], in: container)
        try History.insert(["Grace"], in: container)
        let latest = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        _ = try History.run(.deleteHistory(before: latest), in: container)
        #expect(try consumer.token.sequence == 0, "within its bound, the consumer holds the deleted history")
        #expect(try History.transactions(.fetchHistory(after: try consumer.token), in: container).count == 2)

        Thread.sleep(forTimeInterval: 1.2)
        let error = #expect(throws: CoreDataError.self) { try consumer.token }
        #expect(error?.code == .persistentHistoryTokenExpired)
        #expect(try #require(error?.underlyingError as? PersistentHistoryConsumerEvicted).resyncToken == latest)
        let released = #expect(throws: CoreDataError.self) {
            try History.run(
                .fetchHistory(after: PersistentHistoryToken(storeIdentifier: latest.storeIdentifier, sequence: 0)),
                in: container)
        }
        #expect(released?.code == .persistentHistoryTokenExpired, "the history it held is released")
        try container.close()
    }
}
