import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// History consumers with their own cursor: cursors kept in the store across reopen, history a
/// live consumer has not consumed kept through purges and compaction, eviction of a consumer
/// that holds back too much and its resync, and cursors advanced in the same save as changes.
@Suite struct PersistentHistoryConsumerTests {
    typealias History = PersistentHistoryTests

    static func current(_ container: PersistentContainer) throws -> PersistentHistoryToken {
        try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
    }

    @Test func cursorSurvivesReopen() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        let consumer = try container.persistentStoreCoordinator.historyConsumer(named: "indexer")
        #expect(try consumer.token.sequence == 0)
        try History.insert(["Ada"], in: container)
        let token = try Self.current(container)
        try History.insert(["Grace"], in: container)
        try consumer.advance(to: token)
        try consumer.advance(to: PersistentHistoryToken(storeIdentifier: token.storeIdentifier, sequence: 0))
        #expect(try consumer.token == token, "a cursor never moves back")
        try container.close()

        container = try History.container(at: folder.store())
        let reopened = try container.persistentStoreCoordinator.historyConsumer(named: "indexer")
        #expect(try reopened.token == token)
        let pending = try History.transactions(.fetchHistory(after: try reopened.token), in: container)
        #expect(pending.count == 1)
        #expect(pending.first?.changes?.count == 1)
    }

    @Test func purgeAndCompactionKeepWhatALiveConsumerHasNotRead() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        let consumer = try container.persistentStoreCoordinator.historyConsumer(named: "sync")
        try History.insert(["Ada"], in: container)
        let read = try Self.current(container)
        try consumer.advance(to: read)
        try History.insert(["Grace"], in: container)
        try History.insert(["Linus"], in: container)
        let latest = try Self.current(container)

        _ = try History.run(.deleteHistory(before: latest), in: container)
        _ = try #require(container.persistentStoreCoordinator.persistentStores[0].engineStore).compact()
        try container.close()
        container = try History.container(at: folder.store())
        let pending = try History.transactions(.fetchHistory(after: try consumer.token), in: container)
        #expect(pending.count == 2, "the consumer's unread history is kept")
        #expect(pending.last?.token == latest)
        let before = PersistentHistoryToken(storeIdentifier: read.storeIdentifier, sequence: 0)
        let expired = #expect(throws: CoreDataError.self) {
            try History.run(.fetchHistory(after: before), in: container)
        }
        #expect(expired?.code == .persistentHistoryTokenExpired)

        let reopened = try container.persistentStoreCoordinator.historyConsumer(named: "sync")
        try reopened.advance(to: latest)
        let released = #expect(throws: CoreDataError.self) {
            try History.run(.fetchHistory(after: read), in: container)
        }
        #expect(released?.code == .persistentHistoryTokenExpired, "advancing releases what the purge asked for")
        #expect(try History.transactions(.fetchHistory(after: latest), in: container).isEmpty)
    }

    @Test func consumerHoldingBackTooMuchIsEvictedAndResyncs() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(
            at: folder.store(), options: [PersistentHistoryTrackingKey: true, HistoryConsumerLagLimitKey: 1])
        let consumer = try container.persistentStoreCoordinator.historyConsumer(named: "slow")
        try History.insert(["Ada"], in: container)
        try History.insert(["Grace"], in: container)
        let latest = try Self.current(container)
        _ = try History.run(.deleteHistory(before: latest), in: container)
        try container.close()
        container = try History.container(
            at: folder.store(), options: [PersistentHistoryTrackingKey: true, HistoryConsumerLagLimitKey: 1])

        let evicted = try container.persistentStoreCoordinator.historyConsumer(named: "slow")
        let error = #expect(throws: CoreDataError.self) { try evicted.token }
        #expect(error?.code == .persistentHistoryTokenExpired)
        let resync = try #require(error?.underlyingError as? PersistentHistoryConsumerEvicted).resyncToken
        #expect(resync == latest)
        #expect(throws: CoreDataError.self) {
            try consumer.advance(to: PersistentHistoryToken(storeIdentifier: latest.storeIdentifier, sequence: 1))
        }

        try evicted.advance(to: resync)
        #expect(try evicted.token == resync)
        try History.insert(["Linus"], in: container)
        #expect(try History.transactions(.fetchHistory(after: try evicted.token), in: container).count == 1)
        try evicted.remove()
        #expect(throws: CoreDataError.self) { try evicted.token }
    }

    @Test func saveAdvancingCommitsTheCursorWithTheChanges() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        let consumer = try container.persistentStoreCoordinator.historyConsumer(named: "auditor")
        try History.insert(["Ada", "Grace"], author: "hr", in: container)

        // The consumer applies what it read (here: notes on the inserted employees) and advances
        // in the same save.
        let context = container.newBackgroundContext()
        context.transactionAuthor = "auditor"
        let applied = try context.performAndWait {
            let transactions = try History.transactions(.fetchHistory(after: try consumer.token), in: container)
            for change in transactions.flatMap({ $0.changes ?? [] }) where change.changeType == .insert {
                let employee = try #require(try context.existingObject(with: change.changedObjectID) as? Employee)
                employee.notes = "audited"
            }
            let last = try #require(transactions.last?.token)
            try context.save(advancing: consumer, to: last)
            return last
        }
        #expect(try consumer.token == applied)
        try container.close()

        container = try History.container(at: folder.store())
        let reopened = try container.persistentStoreCoordinator.historyConsumer(named: "auditor")
        #expect(try reopened.token == applied)
        let since = try History.transactions(.fetchHistory(after: applied), in: container)
        #expect(since.map(\.author) == ["auditor"], "the consumer's own save follows its cursor")

        // Without changes, the cursor still moves.
        let idle = container.newBackgroundContext()
        let latest = try Self.current(container)
        try idle.performAndWait { try idle.save(advancing: reopened, to: latest) }
        #expect(try reopened.token == latest)
        let other = PersistentHistoryToken(storeIdentifier: "another store", sequence: 1)
        let error = #expect(throws: CoreDataError.self) {
            try idle.performAndWait { try idle.save(advancing: reopened, to: other) }
        }
        #expect(error?.code == .persistentHistoryTokenExpired)
    }
}
