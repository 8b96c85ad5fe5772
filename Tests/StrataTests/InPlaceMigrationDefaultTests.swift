import Foundation
import StrataStore
import StrataTestSupport
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
        employee.indexes.append(
            FetchIndexDescription(
                name: "byRank", elements: [FetchIndexElementDescription(property: rank, collationType: .binary)]))
        return model
    }

    /// The number of employees matching `format`, as a count request and as a fetch.
    static func matches(
        _ format: String, _ arguments: Any..., in context: ManagedObjectContext
    ) throws -> (count: Int, fetched: Int) {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            return (try context.count(for: request), try context.fetch(request).count)
        }
    }

    @Test func oldObjectsReadTheDefaultOfAnAddedOptionalAttribute() throws {
        let folder = TemporaryDirectory()
        let url = folder.store()
        let filled = try InPlaceMigrationTests.fill(url)
        let count = InPlaceMigrationTests.employeeCount
        let container = try PersistentHistoryTests.container(at: url, model: Self.withDefaults())
        #expect(try InPlaceMigrationTests.keepsSegments(url, filled))

        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<count {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E\(i)"]!))
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
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris[name]!))
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
            let id = try #require(
                reopened.persistentStoreCoordinator.managedObjectID(forURIRepresentation: filled.uris["E3"]!))
            #expect(try again.existingObject(with: id).value(forKey: "rank") as? Int32 == 7)
        }
        try reopened.close()
        #expect(try Store.verify(at: url).problems.isEmpty)
    }

    /// Abstract `Item` (name) with sub-entities `Book` (optional `rank`) and `Film`; with
    /// `filmRank`, films also declare `rank` (default 7), sharing the books' column.
    static func media(filmRank: Bool) -> ManagedObjectModel {
        let item = ModelBuilder.entity("Item", [ModelBuilder.attribute("name", .string)], isAbstract: true)
        let book = ModelBuilder.entity("Book", [ModelBuilder.attribute("rank", .integer32)])
        let film = ModelBuilder.entity(
            "Film", filmRank ? [ModelBuilder.attribute("rank", .integer32, defaultValue: Int32(7))] : [])
        item.subentities = [book, film]
        return ModelBuilder.model([item, book, film])
    }

    /// Each object of `entity` as "name rank", sorted; the ranks matching `predicate` counted.
    static func media(
        _ entity: String, in container: PersistentContainer, predicate: String
    ) throws -> (rows: [String], matching: Int) {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let rows = try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map { object in
                "\(object.value(forKey: "name") as? String ?? "-") \((object.value(forKey: "rank") as? Int32).map(String.init) ?? "nil")"
            }.sorted()
            let request = FetchRequest<ManagedObject>(entityName: entity)
            request.predicate = try FetchPredicate(checkedFormat: predicate)
            return (rows, try context.count(for: request))
        }
    }

    @Test func oldObjectsReadTheDefaultOfAnAttributeSharingASiblingsColumn() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("Media")
        let first = try GraphModel.container(at: url, model: Self.media(filmRank: false))
        let context = first.newBackgroundContext()
        try context.performAndWait {
            for (name, rank) in [("b1", Int32(1)), ("b2", nil)] as [(String, Int32?)] {
                let book = EntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue(name, forKey: "name")
                book.setValue(rank, forKey: "rank")
            }
            for name in ["f1", "f2"] {
                EntityDescription.insertNewObject(forEntityName: "Film", into: context).setValue(name, forKey: "name")
            }
            try context.save()
        }
        try first.close()

        for _ in 0..<2 {
            let container = try GraphModel.container(at: url, model: Self.media(filmRank: true))
            let films = try Self.media("Film", in: container, predicate: "rank == 7")
            #expect(films.rows == ["f1 7", "f2 7"])
            #expect(films.matching == 2)
            let books = try Self.media("Book", in: container, predicate: "rank == nil")
            #expect(books.rows == ["b1 1", "b2 nil"])
            #expect(books.matching == 1)
            try container.close()
        }
    }
}
