import Foundation
import StrataStore
import Testing
@testable import Strata

/// A lightweight migration in place that adds optional attributes with default values: as in
/// Core Data, objects saved before read the default (not nil) through every read path, and
/// predicates on the new attributes match them, before and after reopening.
@Suite struct InPlaceMigrationDefaultTests {
    /// The first version with an optional, indexed `rank` (default 7) and an optional `status`
    /// (default "active") on employees.
    static func withDefaults() -> ManagedObjectModel {
        let model = GraphModel.make()
        let employee = model.entitiesByName["Employee"]!
        let rank = ModelBuilder.attribute("rank", .integer32, defaultValue: Int32(7))
        let status = ModelBuilder.attribute("status", .string, defaultValue: "active")
        employee.properties += [rank, status]
        employee.indexes.append(FetchIndexDescription(name: "byRank", elements: [FetchIndexElementDescription(property: rank, collationType: .binary)]))
        return model
    }

    /// The number of employees matching `format`, as a count request and as a fetch.
    static func matches(_ format: String, _ arguments: Any..., in context: ManagedObjectContext) throws -> (count: Int, fetched: Int) {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
            return (try context.count(for: request), try context.fetch(request).count)
        }
    }

    @Test func oldObjectsReadTheDefaultOfAnAddedOptionalAttribute() throws {
        let folder = TemporaryFolder()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let count = InPlaceMigrationTests.employeeCount
        let container = try PersistentHistoryTests.container(at: url, model: Self.withDefaults())
        #expect(try InPlaceMigrationTests.keepsSegments(url, filled))

        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<count {
                let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
                let employee = try context.existingObject(with: id)
                #expect(employee.value(forKey: "rank") as? Int32 == 7)
                #expect(employee.value(forKey: "status") as? String == "active")
            }
            let everyone = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee"))
            #expect(everyone.count == count)
            #expect(everyone.allSatisfy { $0.value(forKey: "rank") as? Int32 == 7 })

            let dictionaries = FetchRequest<[String: Any]>(entityName: "Employee")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name", "rank", "status"]
            let rows = try context.fetch(dictionaries)
            #expect(rows.count == count)
            #expect(rows.allSatisfy { $0["rank"] as? Int32 == 7 && $0["status"] as? String == "active" })
        }
        #expect(try Self.matches("rank == %@", Int32(7), in: context) == (count, count))
        #expect(try Self.matches("status == %@", "active", in: context) == (count, count))
        #expect(try Self.matches("rank > %@", Int32(5), in: context) == (count, count))
        #expect(try Self.matches("rank == nil", in: context) == (0, 0))

        try context.performAndWait {
            for (name, rank) in [("E1", nil), ("E2", Int32(9))] as [(String, Int32?)] {
                let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris[name]!))
                try context.existingObject(with: id).setValue(rank, forKey: "rank")
            }
            let hired = EntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            hired.setValue("New", forKey: "name")
            try context.save()
        }
        try container.close()

        let reopened = try PersistentHistoryTests.container(at: url, model: Self.withDefaults())
        let again = reopened.newBackgroundContext()
        #expect(try Self.matches("rank == %@", Int32(7), in: again) == (count - 1, count - 1))
        #expect(try Self.matches("rank == nil", in: again) == (1, 1))
        #expect(try Self.matches("rank == %@", Int32(9), in: again) == (1, 1))
        #expect(try Self.matches("status == %@", "active", in: again) == (count + 1, count + 1))
        try again.performAndWait {
            let id = try #require(reopened.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E3"]!))
            #expect(try again.existingObject(with: id).value(forKey: "rank") as? Int32 == 7)
        }
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }
}
