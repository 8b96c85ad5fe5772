import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Staged migration through ``StagedMigrationManager`` under
/// ``PersistentStoreStagedMigrationManagerOptionKey``: a lightweight stage, a custom stage whose
/// handlers see the store at the version before and after their step, and the last step to the
/// coordinator's model; errors leave the store at the version it reached.
@Suite struct StagedMigrationManagerTests {
    /// What the handlers saw, in order.
    final class Events {
        var list: [String] = []
    }

    /// The stages Shop → Shop 2 (lightweight), Shop 2 → Shop 3 (custom: before, every customer
    /// gets a phone; after, a supplier is added), then Shop 4 is reached by a last lightweight step.
    static func manager(_ events: Events, failing: Bool = false) throws -> StagedMigrationManager {
        let v1 = try ShopModels.version("Shop"), v2 = try ShopModels.version("Shop 2"),
            v3 = try ShopModels.version("Shop 3")
        let custom = CustomMigrationStage(
            migratingFrom: ManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum),
            to: ManagedObjectModelReference(
                fileURL: ShopModels.bundle.appendingPathComponent("Shop 3.xcdatamodel"),
                versionChecksum: v3.versionChecksum))
        custom.label = "Customers become parties"
        custom.willMigrateHandler = { manager, stage in
            #expect(stage === custom)
            #expect(manager.container.managedObjectModel.versionChecksum == v2.versionChecksum)
            let context = manager.container.newBackgroundContext()
            try context.performAndWait {
                let customers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Customer"))
                events.list.append("will: \(customers.count) customers")
                for customer in customers { customer.setValue("unknown", forKey: "phone") }
                try context.save()
            }
            if failing { throw CoreDataError(.migration, "the handler refuses") }
        }
        custom.didMigrateHandler = { manager, _ in
            #expect(manager.container.managedObjectModel.versionChecksum == v3.versionChecksum)
            let context = manager.container.newBackgroundContext()
            try context.performAndWait {
                let parties = try context.count(for: FetchRequest<ManagedObject>(entityName: "Party"))
                events.list.append("did: \(parties) parties")
                let supplier = EntityDescription.insertNewObject(forEntityName: "Supplier", into: context)
                supplier.setValue("Acme", forKey: "name")
                supplier.setValue(Int16(5), forKey: "rating")
                try context.save()
            }
        }
        return StagedMigrationManager([LightweightMigrationStage([v1.versionChecksum, v2.versionChecksum]), custom])
    }

    /// Adds the store at `url` with the bundle's current model (Shop 4) through `manager`.
    static func open(
        _ url: URL, model: ManagedObjectModel? = nil, manager: StagedMigrationManager?
    ) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try model ?? ManagedObjectModel(checkedContentsOf: ShopModels.bundle))
        var options = ShopModels.migrating
        options[PersistentStoreStagedMigrationManagerOptionKey] = manager
        _ = try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    @Test func aChainWithACustomStageRunsItsHandlersOnTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let events = Events()
        let manager = try Self.manager(events)
        #expect(manager.stages.count == 2)

        let coordinator = try Self.open(url, manager: manager)
        #expect(
            events.list == ["will: \(ShopModels.customerCount) customers", "did: \(ShopModels.customerCount) parties"])
        #expect(manager.container.persistentStoreCoordinator.persistentStores.isEmpty, "the handlers' store is closed")
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let customers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Customer"))
            #expect(customers.count == ShopModels.customerCount)
            for customer in customers {
                let name = try #require(customer.value(forKey: "name") as? String)
                let i = try #require(Int(name.dropFirst("Customer ".count)))
                #expect(customer.value(forKey: "phone") as? String == "unknown")
                #expect(customer.value(forKey: "contact") as? String == ShopModels.email(i))
                #expect((customer.value(forKey: "orders") as? Set<ManagedObject>)?.count == i % 3)
            }
            let suppliers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Supplier"))
            #expect(suppliers.map { $0.value(forKey: "name") as? String } == ["Acme"])
            #expect(suppliers.first?.value(forKey: "rating") as? Int16 == 5)
            #expect(
                try context.count(for: FetchRequest<ManagedObject>(entityName: "Party")) == ShopModels.customerCount + 1
            )
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }

        // Reopened without the manager: the store is at the current version.
        let reopened = try Self.open(url, manager: nil)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(try ShopModels.version("Shop 4").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        for store in reopened.persistentStores { try reopened.remove(store) }
    }

    @Test func aHandlerErrorLeavesTheStoreAtTheVersionReached() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let events = Events()
        #expect(throws: CoreDataError.self) { try Self.open(url, manager: try Self.manager(events, failing: true)) }
        #expect(events.list == ["will: \(ShopModels.customerCount) customers"])
        // At Shop 2, with what the handler saved.
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(try ShopModels.version("Shop 2").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        let coordinator = try Self.open(url, model: try ShopModels.version("Shop 2"), manager: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let customers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Customer"))
            #expect(customers.count == ShopModels.customerCount)
            #expect(customers.allSatisfy { $0.value(forKey: "phone") as? String == "unknown" })
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }

        // The next add with a working manager goes on from Shop 2: only the custom step runs.
        let again = Events()
        let finished = try Self.open(url, manager: try Self.manager(again))
        #expect(
            again.list == ["will: \(ShopModels.customerCount) customers", "did: \(ShopModels.customerCount) parties"])
        for store in finished.persistentStores { try finished.remove(store) }
    }

    @Test func aChecksumNoModelHasFailsAndKeepsTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let v1 = try ShopModels.version("Shop")
        let manager = StagedMigrationManager([LightweightMigrationStage([v1.versionChecksum, "bm8gc3VjaCBtb2RlbA=="])])
        let error = try #require(throws: CoreDataError.self) { try Self.open(url, manager: manager) }
        #expect(error.code == .migrationMissingSourceModel)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func aReferenceByNameFindsTheVersionWithItsChecksum() throws {
        let v3 = try ShopModels.version("Shop 3")
        let reference = ManagedObjectModelReference(
            name: "Shop", in: Bundle.module, versionChecksum: v3.versionChecksum)
        #expect(reference.resolvedModel.versionChecksum == v3.versionChecksum)
        #expect(reference.resolvedModel.entitiesByName["Supplier"] != nil)

        // A name or checksum no model has fails the migration and keeps the store.
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let v1 = try ShopModels.version("Shop")
        for missing in [
            ManagedObjectModelReference(name: "NoSuchModel", in: Bundle.module, versionChecksum: v3.versionChecksum),
            ManagedObjectModelReference(name: "Shop", in: Bundle.module, versionChecksum: "bm8gc3VjaCBtb2RlbA=="),
        ] {
            let stage = CustomMigrationStage(
                migratingFrom: ManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum), to: missing)
            let error = try #require(throws: CoreDataError.self) {
                try Self.open(url, manager: StagedMigrationManager([stage]))
            }
            #expect(error.code == .migrationMissingSourceModel)
            let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
            #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        }
    }
}
