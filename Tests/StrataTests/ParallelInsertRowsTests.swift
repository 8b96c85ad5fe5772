import Foundation
import Testing
@testable import Strata

/// A save of thousands of inserted objects makes their rows on every core, a part of them each
/// (``StoreWriter``): the rows read back as one pass makes them, and the first object in order
/// whose row fails is the error, with nothing saved.
@Suite struct ParallelInsertRowsTests {
    /// Items (title, rank, a to-one `tag`) in the "Catalog" configuration, tags in "Tagging".
    static func model() -> ManagedObjectModel {
        let tag = EntityDescription(name: "Tag", properties: [AttributeDescription(name: "name", type: .string)])
        let link = RelationshipDescription()
        link.name = "tag"
        link.destinationEntity = tag
        link.maxCount = 1
        link.isOptional = true
        let item = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "title", type: .string), AttributeDescription(name: "rank", type: .integer64), link,
        ])
        let model = ManagedObjectModel()
        model.entities = [item, tag]
        model.setEntities([item], forConfigurationName: "Catalog")
        model.setEntities([tag], forConfigurationName: "Tagging")
        return model
    }

    /// A coordinator of `model` with the catalog and tagging stores in `folder`.
    static func coordinator(_ model: ManagedObjectModel, in folder: TemporaryFolder) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .strata, configuration: "Catalog", at: folder.store("Catalog"))
        try coordinator.addPersistentStore(type: .strata, configuration: "Tagging", at: folder.store("Tagging"))
        return coordinator
    }

    @Test func thousandsOfInsertedObjectsAreSavedAsOnePassWouldAndTheFirstBadOneFailsTheSave() throws {
        let folder = TemporaryFolder()
        let model = Self.model()
        let count = 3 * StoreWriter.objectsPerPart
        let bad = 2 * StoreWriter.objectsPerPart + 11
        do {
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = try Self.coordinator(model, in: folder)
            try context.performAndWait {
                let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                tag.setValue("elsewhere", forKey: "name")
                try context.save()
                let items = (0..<count).map { index in
                    let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    item.setValue("Item \(index)", forKey: "title")
                    item.setValue(Int64(index * 3), forKey: "rank")
                    return item
                }
                // A to-one relationship to an object of another store, in the last part.
                items[bad].setValue(tag, forKey: "tag")
                let error = #expect(throws: CoreDataError.self) { try context.save() }
                #expect(error?.code == .managedObjectExternalRelationship && error?.key == "tag")
                #expect(error?.objectID == items[bad].objectID)
                #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == count, "unsaved objects still count")
                items[bad].setValue(nil, forKey: "tag")
                try context.save()
            }
        }
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = try Self.coordinator(model, in: folder)
        try context.performAndWait {
            let fetch = FetchRequest<ManagedObject>(entityName: "Item")
            fetch.sortDescriptors = [FetchSortDescriptor(key: "rank", ascending: true)]
            let items = try context.fetch(fetch)
            #expect(items.count == count)
            #expect(items.map { $0.value(forKey: "title") as? String } == (0..<count).map { "Item \($0)" })
            #expect(items.map { $0.value(forKey: "rank") as? Int64 } == (0..<count).map { Int64($0 * 3) })
            #expect(items.allSatisfy { $0.value(forKey: "tag") == nil })
        }
    }
}
