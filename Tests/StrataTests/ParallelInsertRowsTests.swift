import Foundation
import StrataTestSupport
import Testing
@testable import Strata
@testable import StrataStore

/// A save of thousands of inserted objects makes their rows on every core, a part of them each
/// (``StoreWriter``), as the engine encodes them when the save only inserts: the rows read back
/// as one pass makes them, related to each other, in one history transaction, unseen by a
/// context pinned before the save; the first object in order whose row fails is the error,
/// with nothing saved.
@Suite struct ParallelInsertRowsTests {
    /// Items (title, rank, a to-one `tag`) in the "Catalog" configuration, tags in "Tagging".
    static func model() -> ManagedObjectModel {
        let tag = EntityDescription(name: "Tag", properties: [AttributeDescription(name: "name", type: .string)])
        let link = RelationshipDescription()
        link.name = "tag"
        link.destinationEntity = tag
        link.maxCount = 1
        link.isOptional = true
        let item = EntityDescription(
            name: "Item",
            properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "rank", type: .integer64), link,
            ])
        let model = ManagedObjectModel()
        model.entities = [item, tag]
        model.setEntities([item], forConfigurationName: "Catalog")
        model.setEntities([tag], forConfigurationName: "Tagging")
        return model
    }

    /// A coordinator of `model` with the catalog and tagging stores in `folder`.
    static func coordinator(
        _ model: ManagedObjectModel, in folder: TemporaryDirectory
    ) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .strata, configuration: "Catalog", at: folder.store("Catalog"))
        try coordinator.addPersistentStore(type: .strata, configuration: "Tagging", at: folder.store("Tagging"))
        return coordinator
    }

    @Test func thousandsOfInsertedObjectsAreSavedAsOnePassWouldAndTheFirstBadOneFailsTheSave() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let count = 3 * ParallelParts.rowsPerPart
        let bad = 2 * ParallelParts.rowsPerPart + 11
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
                #expect(
                    try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == count,
                    "unsaved objects still count")
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

    @Test func aSaveOfThousandsOfRelatedNewObjectsReadsBackRelatedAndInOneHistoryTransaction() throws {
        let folder = TemporaryDirectory()
        var container = try PersistentHistoryTests.container(at: folder.store())
        let seeded = try PersistentHistoryTests.insert(["Seed"], in: container)
        let pinned = container.newBackgroundContext()
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        let count = 3 * ParallelParts.rowsPerPart + 7
        let context = container.newBackgroundContext()
        context.transactionAuthor = "loader"
        let ids = try context.performAndWait {
            let departments = (0..<10).map { index in
                let department = Department(context: context)
                department.name = "Department \(index)"
                return department
            }
            let employees = (0..<count).map { index in
                let employee = Employee(context: context)
                employee.name = "Employee \(index)"
                employee.salary = Int64(index)
                employee.department = departments[index % 10]
                return employee
            }
            try context.save()
            return (departments.map(\.objectID), employees.map(\.objectID))
        }
        let seen = try pinned.performAndWait { try pinned.count(for: Employee.fetchRequest()) }
        #expect(seen == seeded.count)

        let history = try PersistentHistoryTests.transactions(
            .fetchHistory(after: nil as PersistentHistoryToken?), in: container)
        #expect(history.count == 2 && history.last?.author == "loader")
        #expect(history.last?.changes?.count == count + 10)
        try container.close()
        container = try PersistentHistoryTests.container(at: folder.store())
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let third = try #require(try reader.existingObject(with: ids.0[3]) as? Department)
            #expect(third.name == "Department 3" && third.employees.count == (count - 3 + 9) / 10)
            let last = try #require(try reader.existingObject(with: ids.1[count - 1]) as? Employee)
            #expect(last.name == "Employee \(count - 1)" && last.salary == Int64(count - 1))
            #expect(last.department?.objectID == ids.0[(count - 1) % 10])
            let request = Employee.fetchRequest()
            request.predicate = FetchPredicate(andPredicateWithSubpredicates: [
                FetchPredicate(key: "salary", .greaterThanOrEqualTo, Int64(count - 3)),
                FetchPredicate(key: "salary", .lessThan, Int64(count)),
            ])
            #expect(try reader.count(for: request) == 3)
        }
    }
}
