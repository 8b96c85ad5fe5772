import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A property removed from one entity of a hierarchy and added again later, while a sibling
/// entity declares the same name and type throughout (so both entities' rows hold it in one
/// shared engine column): the re-added property is a new property, as in Core Data, so the
/// entity's objects saved before the removal read its default value (or nil), and the sibling's
/// objects keep theirs.
@Suite struct ReaddedSharedColumnMigrationTests {
    static let count = 8

    /// The `Library` model: books and films are items with a `note`, a `score` and a `shelf`;
    /// version 2 removes the three from books (with `resized`, it adds a `size` on shelves too, so
    /// that the engine schema changes); version 3 adds them back on books (`score` now with the default 5) and
    /// a `color` on shelves.
    static func library(in folder: TemporaryDirectory, resized: Bool) throws -> VersionedModelBundle {
        func own(_ entity: String, inverse: String, score: String = "") -> String {
            """
            <attribute name="note" optional="YES" attributeType="String"/>
            <attribute name="score" optional="YES" attributeType="Integer 32" \(score) usesScalarValueType="YES"/>
            <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="\(inverse)" inverseEntity="Shelf"/>
            """
        }
        func shelfTo(_ name: String, _ entity: String) -> String {
            """
            <relationship name="\(name)" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="\(entity)" inverseName="shelf" inverseEntity="\(entity)"/>
            """
        }
        func entities(book: String, shelf: String) -> String {
            """
            <entity name="Item" syncable="YES"><attribute name="title" attributeType="String"/></entity>
            <entity name="Book" parentEntity="Item" syncable="YES">\(book)</entity>
            <entity name="Film" parentEntity="Item" syncable="YES">\(own("Film", inverse: "films"))</entity>
            <entity name="Shelf" syncable="YES"><attribute name="label" attributeType="String"/>\(shelf)</entity>
            """
        }
        let books = shelfTo("books", "Book")
        let films = shelfTo("films", "Film")
        let size =
            resized
            ? #"<attribute name="size" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>"# : ""
        return try VersionedModelBundle(
            in: folder, name: "Library",
            versions: [
                entities(book: own("Book", inverse: "books"), shelf: books + films),
                entities(book: "", shelf: size + films),
                entities(
                    book: own("Book", inverse: "books", score: #"defaultValueString="5""#),
                    shelf: size + #"<attribute name="color" optional="YES" attributeType="String"/>"# + books + films),
            ])
    }

    /// Writes books and films with notes, scores and a shelf under version 1; returns the books' URIs.
    static func fill(_ url: URL, model: ManagedObjectModel) throws -> [URL] {
        let container = try GraphModel.container(at: url, model: model)
        let context = container.newBackgroundContext()
        let uris = try context.performAndWait {
            let shelf = EntityDescription.insertNewObject(forEntityName: "Shelf", into: context)
            shelf.setValue("S", forKey: "label")
            var books: [ManagedObject] = []
            for i in 0..<count {
                for entity in ["Book", "Film"] {
                    let item = EntityDescription.insertNewObject(forEntityName: entity, into: context)
                    item.setValue("\(entity) \(i)", forKey: "title")
                    item.setValue("old \(entity) \(i)", forKey: "note")
                    item.setValue(Int32(100 + i), forKey: "score")
                    item.setValue(shelf, forKey: "shelf")
                    if entity == "Book" { books.append(item) }
                }
            }
            try context.save()
            return books.map { $0.objectID.uriRepresentation() }
        }
        try container.close()
        return uris
    }

    /// The objects of `entity` matching `format`: a count and a fetch.
    static func matches(
        _ entity: String, _ format: String, _ arguments: Any..., in context: ManagedObjectContext
    ) throws -> (count: Int, fetched: Int) {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: entity)
            request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            return (try context.count(for: request), try context.fetch(request).count)
        }
    }

    /// Checks, with version 3 open, that the old books read no old value and the films keep theirs.
    static func expectBooksReadNoOldValues(_ container: PersistentContainer, uris: [URL]) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for uri in uris {
                let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
                let book = try context.existingObject(with: id)
                #expect(book.value(forKey: "note") == nil)
                #expect(book.value(forKey: "score") as? Int32 == 5)
                #expect(book.value(forKey: "shelf") == nil)
            }
            let shelves = try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf"))
            #expect(shelves.count == 1)
            #expect((shelves.first?.value(forKey: "books") as? Set<ManagedObject>)?.count ?? 0 == 0)
            #expect((shelves.first?.value(forKey: "films") as? Set<ManagedObject>)?.count == count)
        }
        #expect(try matches("Book", "note == nil", in: context) == (count, count))
        #expect(try matches("Book", "note BEGINSWITH %@", "old", in: context) == (0, 0))
        #expect(try matches("Book", "score == %@", Int32(5), in: context) == (count, count))
        #expect(try matches("Book", "shelf == nil", in: context) == (count, count))
        #expect(try matches("Film", "note BEGINSWITH %@", "old", in: context) == (count, count))
        #expect(try matches("Film", "score >= %@", Int32(100), in: context) == (count, count))
        #expect(try matches("Film", "shelf.label == %@", "S", in: context) == (count, count))
    }

    @Test(arguments: [false, true]) func propertiesReaddedInALaterOpenReadNoOldValues(resized: Bool) throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.library(in: folder, resized: resized)
        let url = folder.store()
        let uris = try Self.fill(url, model: bundle.version(1))
        try GraphModel.container(at: url, model: bundle.version(2)).close()

        for _ in 0..<2 {
            let container = try GraphModel.container(at: url, model: bundle.version(3))
            try Self.expectBooksReadNoOldValues(container, uris: uris)
            try container.close()
        }
    }

    @Test(arguments: [false, true]) func propertiesReaddedInAChainOfVersionsReadNoOldValues(resized: Bool) throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.library(in: folder, resized: resized)
        let url = folder.store()
        let uris = try Self.fill(url, model: bundle.version(1))

        for _ in 0..<2 {
            let container = try GraphModel.container(at: url, model: bundle.chained())
            try Self.expectBooksReadNoOldValues(container, uris: uris)
            try container.close()
        }
    }
}
