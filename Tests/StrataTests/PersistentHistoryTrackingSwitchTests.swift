import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// `PersistentHistoryTrackingKey` changed between opens, as Core Data handles it: a store that
/// kept no history starts keeping it when reopened with the key (the first token is the current
/// one; what came before has no history), and a store that kept history reopened without the
/// key is forced read-only, losing nothing.
@Suite struct PersistentHistoryTrackingSwitchTests {
    typealias History = PersistentHistoryTests

    static func employeeNames(in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest<Employee>(entityName: "Employee")).map(\.name).sorted()
        }
    }

    @Test func trackingTurnedOnLaterRecordsHistoryFromThen() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store(), options: [:])
        try History.insert(["Ada", "Grace"], in: container)
        #expect(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
        try container.close()

        container = try History.container(at: folder.store())
        let store = container.persistentStoreCoordinator.persistentStores[0]
        #expect(!store.isReadOnly)
        let first = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(try History.transactions(.fetchHistory(after: first), in: container).isEmpty)
        #expect(
            try History.transactions(.fetchHistory(after: Date.distantPast), in: container).isEmpty,
            "the saves before tracking have no history")
        try History.insert(["Linus"], author: "later", in: container)
        let recorded = try History.transactions(.fetchHistory(after: first), in: container)
        #expect(recorded.map(\.author) == ["later"])
        #expect(recorded.first?.changes?.count == 1)
        #expect(
            try History.transactions(.fetchHistory(after: Date.distantPast), in: container).map(\.author) == ["later"])
        try container.close()

        // The store keeps history from then on: reopened with the key, the history is still there.
        container = try History.container(at: folder.store())
        #expect(try History.transactions(.fetchHistory(after: first), in: container).map(\.author) == ["later"])
        #expect(try Self.employeeNames(in: container) == ["Ada", "Grace", "Linus"])
        try container.close()
    }

    @Test func reopenedWithoutTrackingIsForcedReadOnly() throws {
        let folder = TemporaryDirectory()
        var container = try History.container(at: folder.store())
        try History.insert(["Ada"], author: "tracked", in: container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try container.close()

        container = try History.container(at: folder.store(), options: [:])
        let store = container.persistentStoreCoordinator.persistentStores[0]
        #expect(store.isReadOnly)
        #expect(try Self.employeeNames(in: container) == ["Ada"])
        let error = #expect(throws: CoreDataError.self) { try History.insert(["Grace"], in: container) }
        #expect(error?.code == .persistentStoreSave)
        try container.close()

        // Nothing was written unrecorded: reopened with the key, the store is writable and its
        // history is whole.
        container = try History.container(at: folder.store())
        #expect(!container.persistentStoreCoordinator.persistentStores[0].isReadOnly)
        #expect(try Self.employeeNames(in: container) == ["Ada"])
        try History.insert(["Grace"], author: "again", in: container)
        let after = try History.transactions(.fetchHistory(after: Date.distantPast), in: container)
        #expect(after.map(\.author) == ["tracked", "again"])
        #expect(try History.transactions(.fetchHistory(after: token), in: container).map(\.author) == ["again"])
        try container.close()
    }
}
