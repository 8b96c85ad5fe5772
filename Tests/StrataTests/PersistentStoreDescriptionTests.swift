import Foundation
import StrataStore
import StrataTestSupport
import Testing
@testable import Strata

/// `PersistentStoreDescription` as Core Data code uses it: a class whose options take effect when
/// the stores load, the store-type strings, and the coordinator's `addPersistentStore(ofType:…)`.
@Suite struct PersistentStoreDescriptionTests {
    /// Loads `container`'s stores, throwing the first error.
    static func load(_ container: PersistentContainer) throws {
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
    }

    @Test func newDescriptionHasCoreDataDefaults() {
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/Defaults.strata"))
        #expect(description.type == SQLiteStoreType)
        #expect(description.configuration == nil)
        #expect(!description.isReadOnly)
        #expect(description.timeout == 240)
        #expect(description.shouldMigrateStoreAutomatically)
        #expect(description.shouldInferMappingModelAutomatically)
        #expect(!description.shouldAddStoreAsynchronously)
        #expect(description.options[MigratePersistentStoresAutomaticallyOption] as? Bool == true)
        #expect(description.options[InferMappingModelAutomaticallyOption] as? Bool == true)
        #expect(description.sqlitePragmas.isEmpty)
        #expect(description.durability == .durable)
    }

    @Test func storeTypeNamesMeanStrataStores() {
        #expect(StrataStoreType == SQLiteStoreType)
        #expect(PersistentStore.StoreType.sqlite.rawValue == SQLiteStoreType)
        #expect(PersistentStore.StoreType.strata == .sqlite)
        #expect(PersistentStore.StoreType.inMemory.rawValue == InMemoryStoreType)
        #expect(InMemoryStoreType != SQLiteStoreType)
    }

    @Test func propertiesReadAndWriteTheirOptions() {
        let description = PersistentStoreDescription()
        description.isReadOnly = true
        description.timeout = 5
        description.shouldMigrateStoreAutomatically = false
        description.shouldInferMappingModelAutomatically = false
        #expect(description.options[ReadOnlyPersistentStoreOption] as? Bool == true)
        #expect(description.options[PersistentStoreTimeoutOption] as? Double == 5)
        #expect(description.options[MigratePersistentStoresAutomaticallyOption] as? Bool == false)
        description.setOption(false as NSNumber, forKey: ReadOnlyPersistentStoreOption)
        #expect(!description.isReadOnly, "an NSNumber option is read as a Bool")
        description.setOption(true as NSNumber, forKey: InferMappingModelAutomaticallyOption)
        #expect(description.shouldInferMappingModelAutomatically)
        description.setOption(nil, forKey: PersistentStoreTimeoutOption)
        #expect(description.options[PersistentStoreTimeoutOption] == nil)
        #expect(description.timeout == 240)

        description.setValue("WAL" as NSString, forPragmaNamed: "journal_mode")
        description.setValue("OFF", forPragmaNamed: "synchronous")
        #expect(description.sqlitePragmas["journal_mode"] as? String == "WAL")
        #expect(description.durability == .relaxed, "synchronous = OFF relaxes durability")
        description.setValue(nil, forPragmaNamed: "synchronous")
        #expect(description.sqlitePragmas.keys.sorted() == ["journal_mode"])
        #expect(description.durability == .durable)

        let copy = description.copy() as! PersistentStoreDescription
        description.type = InMemoryStoreType
        #expect(copy.type == SQLiteStoreType, "a copy is independent")
        #expect(copy.sqlitePragmas["journal_mode"] as? String == "WAL")
    }

    /// `container.persistentStoreDescriptions.first?.setOption(…)` changes what the container
    /// loads: history tracking is on in the store, unknown keys reach the store's options.
    @Test func optionsSetOnTheContainersDescriptionTakeEffect() throws {
        let folder = TemporaryDirectory()
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: folder.store())]
        container.persistentStoreDescriptions.first?.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        container.persistentStoreDescriptions.first?.setOption(
            true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
        container.persistentStoreDescriptions.first?.setOption("complete", forKey: PersistentStoreFileProtectionKey)
        container.persistentStoreDescriptions.first?.setOption("kept", forKey: "MyAppCustomOption")
        try Self.load(container)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        #expect(store.type == SQLiteStoreType)
        #expect(store.options?["MyAppCustomOption"] as? String == "kept")
        #expect(store.options?[PersistentStoreFileProtectionKey] as? String == "complete")
        #expect(store.options?[PersistentStoreRemoteChangeNotificationPostOptionKey] as? NSNumber == true)
        let context = container.newBackgroundContext()
        context.transactionAuthor = "importer"
        try context.performAndWait {
            Department(context: context).name = "Research"
            try context.save()
        }
        let history = try #require(store.engineStore).history()
        #expect(history.map(\.author) == ["importer"], "history tracking is on")
        try container.close()
    }

    /// Strata's engine options (durability, cache size, the cache's warm-up) reach the engine store the container opens; without them it takes the engine's
    /// defaults.
    @Test func engineOptionsReachTheEngineStore() throws {
        let folder = TemporaryDirectory()
        for options in [false, true] {
            let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
            let description = PersistentStoreDescription(url: folder.store(options ? "Tuned" : "Default"))
            if options {
                description.durability = .relaxed
                description.cacheSize = 1 << 20
                description.warmsCacheAfterOpening = false
                #expect(description.options[PersistentStoreOptionKey.warmsCacheAfterOpening] as? Bool == false)
            }
            container.persistentStoreDescriptions = [description]
            try Self.load(container)
            let engine = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
            #expect(engine.configuration.durability == (options ? .relaxed : .durable))
            #expect(engine.configuration.cacheSize == (options ? 1 << 20 : StoreConfiguration().cacheSize))
            #expect(engine.configuration.warmsCacheAfterOpening == !options)
            try container.close()
        }
    }

    @Test func historyIsOffWithoutTheOption() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            Department(context: context).name = "Research"
            try context.save()
        }
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first?.engineStore)
        #expect(throws: StoreError.self) { _ = try store.history() }
        try container.close()
    }

    /// A read-only description opens the store without writing: reads work, a save fails and
    /// the stored data is intact afterwards.
    @Test func readOnlyDescriptionRefusesSavesAndLosesNothing() throws {
        let folder = TemporaryDirectory()
        do {
            let container = try GraphModel.container(at: folder.store())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                Department(context: context).name = "Research"
                try context.save()
            }
            try container.close()
        }
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription(url: folder.store())
        description.isReadOnly = true
        container.persistentStoreDescriptions = [description]
        try Self.load(container)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let names = try context.fetch(Department.fetchRequest()).map(\.name)
            #expect(names == ["Research"])
            Department(context: context).name = "Sales"
            #expect(throws: CoreDataError.self) { try context.save() }
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let names = try reader.fetch(Department.fetchRequest()).map(\.name)
            #expect(names == ["Research"])
        }
        try reopened.close()
    }

    /// Core Data's `addPersistentStore(ofType:configurationName:at:options:)` with each type name.
    @Test func addPersistentStoreOfTypeRoundTrips() throws {
        let folder = TemporaryDirectory()
        for type in [SQLiteStoreType, StrataStoreType] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
            let store = try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: folder.store(),
                options: [ReadOnlyPersistentStoreOption: false, MigratePersistentStoresAutomaticallyOption: true])
            #expect(store.type == SQLiteStoreType)
            #expect(store.engineStore != nil)
            #expect(FileManager.default.fileExists(atPath: folder.store().path))
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                Department(context: context).name = type
                try context.save()
            }
            try coordinator.remove(store)
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: folder.store())
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let names = try context.fetch(Department.fetchRequest()).map(\.name)
            #expect(names.count == 2, "both names opened one store")
            #expect(Set(names) == [SQLiteStoreType])
        }

        let memory = try PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
            .addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: nil)
        #expect(memory.type == InMemoryStoreType)
        #expect(memory.engineStore == nil)
    }

    /// Core Data's test idiom, a SQLite store at `/dev/null`, gives a store in memory.
    @Test func devNullStoreIsHeldInMemory() throws {
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        container.persistentStoreDescriptions.first?.url = URL(fileURLWithPath: "/dev/null")
        try Self.load(container)
        let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
        #expect(store.engineStore == nil)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            Department(context: context).name = "Research"
            try context.save()
            let names = try context.fetch(Department.fetchRequest()).map(\.name)
            #expect(names == ["Research"])
        }
    }

    @Test func unknownStoreTypeIsATypedError() throws {
        let folder = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: GraphModel.make())
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(ofType: "Binary", configurationName: nil, at: folder.store())
        }
        #expect(error?.code == .persistentStoreInvalidType)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.store().path), "nothing is created")
    }

    @Test func asynchronousDescriptionsLoadOnAnotherQueue() async throws {
        let folder = TemporaryDirectory()
        let container = PersistentContainer(name: "Company", managedObjectModel: GraphModel.make())
        let description = PersistentStoreDescription(url: folder.store())
        description.shouldAddStoreAsynchronously = true
        container.persistentStoreDescriptions = [description]
        let failure: String? = await withCheckedContinuation { continuation in
            container.loadPersistentStores { _, error in continuation.resume(returning: error.map { "\($0)" }) }
        }
        #expect(failure == nil)
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
        try container.close()
    }
}
