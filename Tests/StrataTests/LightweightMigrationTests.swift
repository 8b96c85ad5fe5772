import Foundation
import StrataTestSupport
import Testing
@testable import Strata

@Suite struct LightweightMigrationTests {
    /// Version 1 → 2: an attribute added, one removed, one renamed, one made optional, an integer
    /// widened, a required attribute with a default added, a fetch index and a uniqueness
    /// constraint added. Every object is checked after the migration and after reopening.
    @Test func addRemoveRenameWidenAndMakeOptional() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        for pass in ["migrated", "reopened"] {
            let container = try GraphModel.container(at: url, model: ShopModels.version("Shop 2"))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let customers = try ShopModels.customers(in: context)
                #expect(customers.count == ShopModels.customerCount, "\(pass)")
                for i in 0..<ShopModels.customerCount {
                    let customer = try #require(customers["Customer \(i)"], "\(pass)")
                    #expect(
                        customer.value(forKey: "mail") as? String == ShopModels.email(i),
                        "\(pass): the renamed attribute keeps its values")
                    #expect(customer.value(forKey: "phone") == nil, "\(pass)")
                    #expect(customer.entity.attributesByName["age"] == nil)
                    let tags = ShopModels.related(customer, "tags").map { $0.value(forKey: "label") as? String }
                    #expect(tags == ["tag\(i % 3)"], "\(pass)")
                    let orders = ShopModels.related(customer, "orders").sorted {
                        ($0.value(forKey: "number") as! Int64) < ($1.value(forKey: "number") as! Int64)
                    }
                    #expect(orders.count == i % 3, "\(pass)")
                    for (n, order) in orders.enumerated() {
                        #expect(
                            order.value(forKey: "number") as? Int64 == Int64(i * 10 + n),
                            "\(pass): Integer 32 widened to Integer 64")
                        #expect(order.value(forKey: "total") as? Double == Double(i) + 0.5, "\(pass)")
                        #expect(order.value(forKey: "paid") as? Bool == (n == 0), "\(pass)")
                        #expect(
                            order.value(forKey: "status") as? String == "open",
                            "\(pass): a new required attribute gets its default")
                        #expect(order.value(forKey: "customer") as? ManagedObject === customer, "\(pass)")
                    }
                }
                let byMail = FetchRequest<ManagedObject>(entityName: "Customer")
                byMail.predicate = try FetchPredicate(checkedFormat: "mail == %@", "c4@example.com")
                #expect(
                    try context.fetch(byMail).map { $0.value(forKey: "name") as? String } == ["Customer 4"],
                    "\(pass): the new fetch index answers")
            }
            let store = try #require(container.persistentStoreCoordinator.persistentStores.first)
            let metadata = container.persistentStoreCoordinator.metadata(for: store)
            #expect(
                container.managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata),
                "\(pass)")
            try container.close()
        }
    }

    /// Version 1 → 3 in one step: the customer moves into a new abstract `Party` hierarchy, a
    /// `Double` becomes a `String`, a relationship is renamed.
    @Test func splitIntoHierarchyAndChangeType() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        for pass in ["migrated", "reopened"] {
            let container = try GraphModel.container(at: url, model: ShopModels.version("Shop 3"))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let parties = try context.fetch(FetchRequest<ManagedObject>(entityName: "Party"))
                #expect(parties.count == ShopModels.customerCount, "\(pass)")
                #expect(parties.allSatisfy { $0.entity.name == "Customer" }, "\(pass)")
                let customers = try ShopModels.customers(in: context)
                for i in 0..<ShopModels.customerCount {
                    let customer = try #require(customers["Customer \(i)"], "\(pass)")
                    #expect(customer.value(forKey: "mail") as? String == ShopModels.email(i), "\(pass)")
                    let orders = ShopModels.related(customer, "orders")
                    #expect(orders.count == i % 3, "\(pass)")
                    for order in orders {
                        let number = try #require(order.value(forKey: "number") as? Int64)
                        #expect(
                            order.value(forKey: "total") as? String == "\(Double(i) + 0.5)",
                            "\(pass): Double converted to String")
                        #expect(
                            order.value(forKey: "buyer") as? ManagedObject === customer, "\(pass): renamed relationship"
                        )
                        #expect(number / 10 == Int64(i), "\(pass)")
                    }
                }
                #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Supplier")) == 0)
            }
            try container.close()
        }
    }

    /// Each step of the version history in turn: 1 → 2, then 2 → 3.
    @Test func consecutiveVersions() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        for version in ["Shop 2", "Shop 3"] {
            let container = try GraphModel.container(at: url, model: ShopModels.version(version))
            let context = container.newBackgroundContext()
            let counts = try context.performAndWait {
                try ["Customer", "Order", "Tag"].map {
                    try context.count(for: FetchRequest<ManagedObject>(entityName: $0))
                }
            }
            #expect(
                counts == [ShopModels.customerCount, (0..<ShopModels.customerCount).reduce(0) { $0 + $1 % 3 }, 3],
                "\(version)")
            try container.close()
        }
        let versions = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)[
            StoreModelVersionIdentifiersKey]
        #expect(versions as? [String] == ["3"])
    }

    /// A store of the first version opened with the `.xcdatamodeld` (current version 4) steps
    /// through versions 2, 3 and 4: `email` renamed to `mail` (version 2), then to `contact`
    /// (version 4, whose renaming identifier names only `mail`) keeps its values, which one
    /// direct step from version 1 could not map.
    @Test func chainedVersionsFollowEveryRename() throws {
        let direct = try MappingModel.inferredMappingModel(
            forSourceModel: ShopModels.version("Shop"), destinationModel: ShopModels.version("Shop 4"))
        #expect(
            direct.entityMappingsByName["CustomerToCustomer"]?.attributeMappingsByName["contact"]?.valueExpression
                == nil)
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        for pass in ["migrated", "reopened"] {
            let container = try GraphModel.container(
                at: url, model: ManagedObjectModel(checkedContentsOf: ShopModels.bundle))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let customers = try ShopModels.customers(in: context)
                #expect(customers.count == ShopModels.customerCount, "\(pass)")
                for i in 0..<ShopModels.customerCount {
                    #expect(
                        customers["Customer \(i)"]?.value(forKey: "contact") as? String == ShopModels.email(i),
                        "\(pass)")
                    #expect(
                        customers["Customer \(i)"].map { ShopModels.related($0, "orders").count } == i % 3, "\(pass)")
                }
            }
            try container.close()
        }
        let versions = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)[
            StoreModelVersionIdentifiersKey]
        #expect(versions as? [String] == ["4"])
    }

    /// With migration off, opening with a newer model fails with Core Data's code and the store
    /// is left as it was.
    @Test func migrationOffRefusesAndKeepsTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let segments = try ShopModels.segmentFiles(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ShopModels.version("Shop 2"))
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url,
                options: [MigratePersistentStoresAutomaticallyOption: false])
        }
        #expect(error?.code == .persistentStoreIncompatibleVersionHash)
        let noInference = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(
                ofType: SQLiteStoreType, configurationName: nil, at: url,
                options: [
                    MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: false,
                ])
        }
        #expect(noInference?.code == .migrationMissingMappingModel)
        #expect(try ShopModels.segmentFiles(url) == segments)
        try expectVersion1(at: url)
    }

    /// A change inference cannot map is an error naming the entity, property and change; the
    /// store is left as it was.
    @Test func notInferableChangeKeepsTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let model = try ShopModels.version("Shop")
        model.entitiesByName["Order"]!.attributesByName["total"]!.attributeType = .dateAttributeType
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: ShopModels.migrating)
        }
        #expect(error?.code == .inferredMappingModel)
        #expect(error?.message.contains("Order.total") == true)
        #expect(error?.message.contains("Date") == true)
        try expectVersion1(at: url)
    }

    /// Objects that do not validate against the new model fail the migration; the store is left
    /// as it was.
    @Test func invalidObjectsFailTheMigration() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let model = try ShopModels.version("Shop")
        model.entitiesByName["Customer"]!.attributesByName["email"]!.isOptional = false
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let error = #expect(throws: CoreDataError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: ShopModels.migrating)
        }
        #expect(error?.code == .validationMultipleErrors || error?.code == .validationMissingMandatoryProperty)
        #expect(!FileManager.default.fileExists(atPath: PersistentStoreCoordinator.migrationStagingURL(for: url).path))
        try expectVersion1(at: url)
    }

    /// A lightweight migration does not validate the objects it migrates, as Core Data's does
    /// not: a new required to-many relationship (which no migrated customer has an object for)
    /// migrates, and a migrated customer fails validation only when it is saved again.
    @Test func migratedObjectsAreNotValidated() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let model = try ShopModels.version("Shop 3")
        let customer = try #require(model.entitiesByName["Customer"])
        let favorites = RelationshipDescription()
        favorites.name = "favorites"
        favorites.destinationEntity = model.entitiesByName["Tag"]
        favorites.maxCount = 0
        favorites.minCount = 1
        favorites.isOptional = false
        customer.properties.append(favorites)
        for pass in ["migrated", "reopened"] {
            let container = try GraphModel.container(at: url, model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let customers = try ShopModels.customers(in: context)
                #expect(customers.count == ShopModels.customerCount, "\(pass)")
                let first = try #require(customers["Customer 0"])
                #expect(ShopModels.related(first, "favorites").isEmpty, "\(pass)")
                first.setValue("Customer zero", forKey: "name")
                let error = #expect(throws: CoreDataError.self, "\(pass): saved again, it validates") {
                    try context.save()
                }
                #expect(
                    error?.code == .validationRelationshipLacksMinimumCount || error?.code == .validationMultipleErrors,
                    "\(pass)")
                context.rollback()
            }
            try container.close()
        }
    }

    /// A change that leaves every row as it is (an attribute made optional) rewrites only the
    /// metadata: the segment files are untouched.
    @Test func rowCompatibleChangeDoesNotRewrite() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let segments = try ShopModels.segmentFiles(url)
        let model = try ShopModels.version("Shop")
        model.entitiesByName["Customer"]!.attributesByName["name"]!.isOptional = true
        let container = try GraphModel.container(at: url, model: model)
        let metadata = container.persistentStoreCoordinator.metadata(
            for: container.persistentStoreCoordinator.persistentStores[0])
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        try container.close()
        #expect(try ShopModels.segmentFiles(url) == segments, "no segment was rewritten")
        let reopened = try GraphModel.container(at: url, model: model)
        let context = reopened.newBackgroundContext()
        try context.performAndWait {
            let customers = try ShopModels.customers(in: context)
            #expect(customers.count == ShopModels.customerCount)
            #expect(customers["Customer 4"]?.value(forKey: "email") as? String == ShopModels.email(4))
        }
        try reopened.close()
    }

    /// The metadata API: the store's type, UUID and version hashes, without adding the store.
    @Test func metadataDescribesTheStore() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(metadata[StoreTypeKey] as? String == SQLiteStoreType)
        #expect((metadata[StoreUUIDKey] as? String).flatMap(UUID.init(uuidString:)) != nil)
        #expect(metadata[StoreModelVersionIdentifiersKey] as? [String] == ["1"])
        #expect(try ShopModels.version("Shop").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(try !ShopModels.version("Shop 2").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(
            try ManagedObjectModel.storeModel(at: url)?.entitiesByName["Customer"]?.attributesByName["email"] != nil)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ShopModels.version("Shop"))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        #expect(coordinator.metadata(for: store)[StoreUUIDKey] as? String == store.identifier)
        var custom = coordinator.metadata(for: store)
        custom["lastImport"] = "2026-11-22"
        custom[StoreModelVersionHashesKey] = [String: Data]()
        coordinator.setMetadata(custom, for: store)
        try coordinator.remove(store)
        let reread = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(reread["lastImport"] as? String == "2026-11-22")
        #expect(
            try ShopModels.version("Shop").isConfiguration(withName: nil, compatibleWithStoreMetadata: reread),
            "the store keeps its hashes")
        #expect(throws: CoreDataError.self) {
            try PersistentStoreCoordinator.metadataForPersistentStore(
                ofType: SQLiteStoreType, at: folder.store("Missing"))
        }
        try PersistentStoreCoordinator.setMetadata(
            ["lastImport": "2026-11-23"], forPersistentStoreOfType: SQLiteStoreType, at: url)
        let again = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(again["lastImport"] as? String == "2026-11-23")
        #expect(again[StoreUUIDKey] as? String == reread[StoreUUIDKey] as? String)
    }

    /// A directory an interrupted migration left beside the store is removed when it is next added.
    @Test func leftoverOfAnInterruptedMigrationIsRemoved() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Shop")
        try ShopModels.fillVersion1(at: url)
        let staging = PersistentStoreCoordinator.migrationStagingURL(for: url)
        try FileManager.default.createDirectory(
            at: staging.appendingPathComponent("segments"), withIntermediateDirectories: true)
        try expectVersion1(at: url)
        #expect(!FileManager.default.fileExists(atPath: staging.path))
    }

    /// Opens the store with the first version, migration off, and checks every customer.
    private func expectVersion1(at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ShopModels.version("Shop"))
        let store = try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: url,
            options: [MigratePersistentStoresAutomaticallyOption: false])
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let customers = try ShopModels.customers(in: context)
            #expect(customers.count == ShopModels.customerCount)
            for i in 0..<ShopModels.customerCount {
                #expect(customers["Customer \(i)"]?.value(forKey: "email") as? String == ShopModels.email(i))
                #expect(customers["Customer \(i)"]?.value(forKey: "age") as? Int16 == Int16(20 + i))
            }
        }
        try coordinator.remove(store)
    }
}
