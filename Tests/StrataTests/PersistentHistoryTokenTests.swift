import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// History tokens as consumers keep them: encoded with `Codable`, restored after a relaunch,
/// ordered, and refused by another store.
@Suite struct PersistentHistoryTokenTests {
    @Test func tokenPersistedWithCodableFetchesAfterReopen() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        try PersistentHistoryTests.insert(["Ada"], in: container)
        let token = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let saved = try JSONEncoder().encode(token)
        try container.close()

        container = try PersistentHistoryTests.container(at: folder.store())
        let restored = try JSONDecoder().decode(PersistentHistoryToken.self, from: saved)
        #expect(restored == token)
        #expect(restored.hashValue == token.hashValue)
        #expect(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil) == restored)
        #expect(try PersistentHistoryTests.transactions(.fetchHistory(after: restored), in: container).isEmpty)

        let ids = try PersistentHistoryTests.insert(["Grace"], in: container)
        let later = try PersistentHistoryTests.transactions(.fetchHistory(after: restored), in: container)
        #expect(later.count == 1)
        #expect(later.first?.changes?.map(\.changedObjectID) == ids)
        #expect(try #require(later.first?.token) > restored)
        #expect(!(restored < restored))
        let stores = container.persistentStoreCoordinator.persistentStores
        #expect(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: stores) == later.first?.token
        )
    }

    @Test func tokenFromAnotherStoreIsRefused() throws {
        let folder = TemporaryDirectory()
        let first = try PersistentHistoryTests.container(at: folder.store("First"))
        let second = try PersistentHistoryTests.container(at: folder.store("Second"))
        try PersistentHistoryTests.insert(["Ada"], in: first)
        try PersistentHistoryTests.insert(["Grace"], in: second)
        let foreign = try #require(first.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let own = try #require(second.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(foreign != own)

        let fetch = #expect(throws: CoreDataError.self) {
            try PersistentHistoryTests.run(.fetchHistory(after: foreign), in: second)
        }
        #expect(fetch?.code == .persistentHistoryTokenExpired)
        let delete = #expect(throws: CoreDataError.self) {
            try PersistentHistoryTests.run(.deleteHistory(before: foreign), in: second)
        }
        #expect(delete?.code == .persistentHistoryTokenExpired)
        #expect(
            try PersistentHistoryTests.transactions(.fetchHistory(after: nil as PersistentHistoryToken?), in: second)
                .count == 1, "nothing was deleted")
    }

    @Test func compactionKeepsHistoryAfterThePurgeAndTokensExpireBelowIt() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let ids = try PersistentHistoryTests.insert(["Ada", "Grace"], in: container)
        let early = try #require(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        try PersistentHistoryTests.insert(["Linus"], in: container)
        let purgeToken = try #require(
            container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try #require(try context.existingObject(with: ids[0]) as? Employee)
            ada.salary = 80_000
            try context.save()
        }
        _ = try PersistentHistoryTests.run(.deleteHistory(before: purgeToken), in: container)
        _ = try #require(container.persistentStoreCoordinator.persistentStores[0].engineStore).compact()
        try container.close()

        container = try PersistentHistoryTests.container(at: folder.store())
        let kept = try PersistentHistoryTests.transactions(.fetchHistory(after: purgeToken), in: container)
        #expect(kept.count == 1)
        #expect(kept.first?.changes?.first?.changedObjectID == ids[0])
        #expect(kept.first?.changes?.first?.updatedProperties?.map(\.name) == ["salary"])
        let error = #expect(throws: CoreDataError.self) {
            try PersistentHistoryTests.run(.fetchHistory(after: early), in: container)
        }
        #expect(error?.code == .persistentHistoryTokenExpired)
    }
}
