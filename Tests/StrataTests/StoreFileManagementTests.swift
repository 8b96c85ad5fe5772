import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The coordinator's store file management (Core Data's `destroyPersistentStore`,
/// `replacePersistentStore`, `migratePersistentStore`) and `PersistentStore.metadata`, on stores
/// on disk, reopened afterwards.
@Suite struct StoreFileManagementTests {
    /// A coordinator on the reference model with the store at `url` added.
    private static func coordinator(at url: URL) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        return (coordinator, store)
    }

    /// Saves employees named `names` through `coordinator`.
    private static func insert(_ names: [String], into coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for name in names { Employee(context: context).name = name }
            try context.save()
        }
    }

    /// The names of the employees in the store at `url`, read by a new coordinator.
    private static func names(at url: URL) throws -> Set<String> {
        let (coordinator, store) = try coordinator(at: url)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait { Set(try context.fetch(Employee.fetchRequest()).map(\.name)) }
    }

    @Test func destroyRemovesTheAddedStoreAndItsFiles() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Destroyed")
        let (coordinator, _) = try Self.coordinator(at: url)
        try Self.insert(["Ada"], into: coordinator)
        try coordinator.destroyPersistentStore(at: url, type: .sqlite)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(try Self.names(at: url).isEmpty, "a store added again starts empty")
        try coordinator.destroyPersistentStore(at: folder.store("Missing"), ofType: SQLiteStoreType)
    }

    @Test func destroyRefusesAStoreOpenElsewhereAndKeepsIt() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Open")
        let (owner, store) = try Self.coordinator(at: url)
        try Self.insert(["Ada"], into: owner)
        let other = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
        let error = #expect(throws: CoreDataError.self) { try other.destroyPersistentStore(at: url, type: .sqlite) }
        #expect(error?.code == .persistentStoreOpen)
        try owner.remove(store)
        #expect(try Self.names(at: url) == ["Ada"])
    }

    @Test func replaceCopiesTheSourceOverTheDestination() throws {
        let folder = TemporaryDirectory()
        let source = folder.store("Source"), destination = folder.store("Destination")
        for (url, names) in [(source, ["Ada", "Grace"]), (destination, ["Linus"])] {
            let (coordinator, store) = try Self.coordinator(at: url)
            try Self.insert(names, into: coordinator)
            try coordinator.remove(store)
        }
        let (coordinator, _) = try Self.coordinator(at: destination)
        try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .sqlite)
        #expect(coordinator.persistentStores.isEmpty, "the replaced store is removed from the coordinator")
        #expect(try Self.names(at: destination) == ["Ada", "Grace"])
        #expect(try Self.names(at: source) == ["Ada", "Grace"], "the source is left as it was")
        #expect(
            !FileManager.default.fileExists(
                atPath: PersistentStoreCoordinator.migrationStagingURL(for: destination).path))
    }

    @Test func migrateAddsACopyInThePlaceOfTheStore() throws {
        let folder = TemporaryDirectory()
        let original = folder.store("Original"), copy = folder.store("Copy")
        let (coordinator, store) = try Self.coordinator(at: original)
        try Self.insert(["Ada"], into: coordinator)
        let moved = try coordinator.migratePersistentStore(store, to: copy, options: nil, type: .sqlite)
        #expect(coordinator.persistentStores.map(\.url) == [copy])
        #expect(moved.url == copy)
        try Self.insert(["Grace"], into: coordinator)
        try coordinator.remove(moved)
        #expect(try Self.names(at: copy) == ["Ada", "Grace"])
        #expect(try Self.names(at: original) == ["Ada"], "the original's files are left as they were")

        let (again, reopened) = try Self.coordinator(at: original)
        let error = #expect(throws: CoreDataError.self) {
            try again.migratePersistentStore(reopened, to: copy, type: .sqlite)
        }
        #expect(error?.code == .persistentStoreOperation)
        #expect(again.persistentStores.count == 1, "a refused copy leaves the store added")
    }

    @Test func storeMetadataIsReadAndWrittenThroughTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Metadata")
        do {
            let (coordinator, store) = try Self.coordinator(at: url)
            #expect(store.metadata[StoreUUIDKey] as? String == store.identifier)
            var metadata = store.metadata!
            metadata["lastSync"] = "2026-11-27"
            store.metadata = metadata
            try coordinator.remove(store)
        }
        let (coordinator, store) = try Self.coordinator(at: url)
        #expect(store.metadata["lastSync"] as? String == "2026-11-27")
        #expect(store.metadata[StoreTypeKey] as? String == SQLiteStoreType)
        try coordinator.remove(store)
    }
}
