import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A fetch makes the objects of rows whose earlier objects the context freed again with their
/// IDs (``RecentObjectIDs``): each object gets the ID of its own row, never one of the same
/// primary key in another entity or another store, and the ID equals the one the first fetch gave.
@Suite struct RecentObjectIDsTests {
    /// Two unrelated entities, so that their primary keys overlap.
    static func model() -> ManagedObjectModel {
        ModelBuilder.model([
            ModelBuilder.entity("RecentTag", [ModelBuilder.attribute("name", .string, isOptional: false)]),
            ModelBuilder.entity("RecentLabel", [ModelBuilder.attribute("name", .string, isOptional: false)]),
        ])
    }

    /// Saves a tag and a label for each of `names` in a new store at `url`.
    static func save(_ names: [String], at url: URL, model: ManagedObjectModel) throws {
        let container = try GraphModel.container(at: url, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in names {
                ManagedObject(entity: model.entitiesByName["RecentTag"]!, insertInto: context).setValue(
                    "tag " + name, forKey: "name")
                ManagedObject(entity: model.entitiesByName["RecentLabel"]!, insertInto: context).setValue(
                    "label " + name, forKey: "name")
            }
            try context.save()
        }
        try container.close()
    }

    /// The names and IDs of every object of `entity`, fetched, the objects freed on return.
    static func fetch(_ entity: String, in context: ManagedObjectContext) throws -> [String: ManagedObjectID] {
        let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: entity))
        return Dictionary(uniqueKeysWithValues: objects.map { ($0.value(forKey: "name") as! String, $0.objectID) })
    }

    @Test func refetchedObjectsGetTheIDsOfTheirOwnRowsAcrossEntitiesAndStores() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try Self.save(["a1", "a2", "a3"], at: folder.store("A"), model: model)
        try Self.save(["b1", "b2", "b3"], at: folder.store("B"), model: model)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let first = try coordinator.addPersistentStore(type: .strata, at: folder.store("A"))
        let second = try coordinator.addPersistentStore(type: .strata, at: folder.store("B"))
        defer {
            try? coordinator.remove(first)
            try? coordinator.remove(second)
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let tags = try Self.fetch("RecentTag", in: context)
            let labels = try Self.fetch("RecentLabel", in: context)
            #expect(tags.count == 6 && labels.count == 6)
            // Each store's rows have the same primary keys, and so do the two entities'.
            for (name, id) in tags {
                let store = name.hasSuffix("a1") || name.hasSuffix("a2") || name.hasSuffix("a3") ? first : second
                #expect(id.storeIdentifier == store.identifier)
                #expect(id.entity.name == "RecentTag")
            }
            // Fetched again after their objects were freed, in every order: the same IDs, each
            // the ID of the object's own row.
            for entity in ["RecentLabel", "RecentTag", "RecentLabel", "RecentTag"] {
                let again = try Self.fetch(entity, in: context)
                #expect(again == (entity == "RecentTag" ? tags : labels))
                for (name, id) in again {
                    #expect(id.entity.name == entity)
                    let object = try context.existingObject(with: id)
                    #expect(object.value(forKey: "name") as? String == name)
                }
            }
            // A reset forgets the kept IDs; fetched again, the objects still have theirs.
            context.reset()
            #expect(try Self.fetch("RecentTag", in: context) == tags)
        }
    }
}
