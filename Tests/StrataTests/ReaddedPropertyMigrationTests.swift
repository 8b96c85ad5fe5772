import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A property removed in one model version and added again, same name and type, in a later one:
/// as in Core Data, the re-added property is a new property, so objects saved before the removal
/// read its default value (or nil) and none of their old values, whether the store goes through
/// the versions one open at a time or in one open that chains them.
@Suite struct ReaddedPropertyMigrationTests {
    static let noteCount = 12

    /// The `Notes` model: version 1 has notes with a `body`, a `rank` and a `tag`; version 2
    /// removes all three; version 3 adds them back (`rank` now with the default 5) and a `pinned`
    /// flag. (Without the flag, version 3 would have version 1's version hashes, and a store of
    /// version 1 would open with it unmigrated, as Core Data opens it.)
    static func notes(in folder: TemporaryDirectory) throws -> VersionedModelBundle {
        let inverse = """
            <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tag" inverseEntity="Note"/>
            """
        let tag = """
            <relationship name="tag" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
            """
        func entities(_ note: String, _ tagged: String) -> String {
            """
            <entity name="Note" syncable="YES"><attribute name="title" attributeType="String"/>\(note)</entity>
            <entity name="Tag" syncable="YES"><attribute name="label" attributeType="String"/>\(tagged)</entity>
            """
        }
        let body = #"<attribute name="body" optional="YES" attributeType="String"/>"#
        return try VersionedModelBundle(
            in: folder, name: "Notes",
            versions: [
                entities(
                    body
                        + #"<attribute name="rank" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>"#
                        + tag, inverse),
                entities("", ""),
                entities(
                    #"<attribute name="pinned" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>"#
                        + body
                        + #"<attribute name="rank" optional="YES" attributeType="Integer 32" defaultValueString="5" usesScalarValueType="YES"/>"#
                        + tag,
                    inverse),
            ])
    }

    /// Writes the first version's notes (each with a body, a rank and a tag); returns their URIs.
    static func fill(_ url: URL, model: ManagedObjectModel) throws -> [URL] {
        let container = try GraphModel.container(at: url, model: model)
        let context = container.newBackgroundContext()
        let uris = try context.performAndWait {
            let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("old", forKey: "label")
            let notes = (0..<noteCount).map { i in
                let note = EntityDescription.insertNewObject(forEntityName: "Note", into: context)
                note.setValue("N\(i)", forKey: "title")
                note.setValue("old body \(i)", forKey: "body")
                note.setValue(Int32(100 + i), forKey: "rank")
                note.setValue(tag, forKey: "tag")
                return note
            }
            try context.save()
            return notes.map { $0.objectID.uriRepresentation() }
        }
        try container.close()
        return uris
    }

    /// The notes matching `format`: a count and a fetch.
    static func matches(
        _ format: String, _ arguments: Any..., in context: ManagedObjectContext
    ) throws -> (count: Int, fetched: Int) {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Note")
            request.predicate = try FetchPredicate(checkedFormat: format, argumentArray: arguments)
            return (try context.count(for: request), try context.fetch(request).count)
        }
    }

    /// Checks, with version 3 open, that every old note reads the re-added properties as new ones:
    /// object by object through a fault, by fetch and through predicates on them.
    static func expectNoOldValues(_ container: PersistentContainer, uris: [URL]) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for uri in uris {
                let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
                let note = try context.existingObject(with: id)
                #expect(note.value(forKey: "title") as? String != nil)
                #expect(note.value(forKey: "body") == nil)
                #expect(note.value(forKey: "rank") as? Int32 == 5)
                #expect(note.value(forKey: "tag") == nil)
            }
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            #expect(tags.count == 1)
            #expect(tags.allSatisfy { ($0.value(forKey: "notes") as? Set<ManagedObject>)?.isEmpty ?? true })
        }
        let all = uris.count
        #expect(try matches("body == nil", in: context) == (all, all))
        #expect(try matches("body BEGINSWITH %@", "old", in: context) == (0, 0))
        #expect(try matches("rank == %@", Int32(5), in: context) == (all, all))
        #expect(try matches("rank >= %@", Int32(100), in: context) == (0, 0))
        #expect(try matches("tag == nil", in: context) == (all, all))
        #expect(try matches("tag.label == %@", "old", in: context) == (0, 0))
    }

    /// Sets new values on the first note under version 3, then checks after reopening that it
    /// keeps them and the other notes still read no old value.
    static func expectNewValuesKept(at url: URL, model: () throws -> ManagedObjectModel, uris: [URL]) throws {
        let container = try GraphModel.container(at: url, model: model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let id = try #require(container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uris[0]))
            let note = try context.existingObject(with: id)
            let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("new", forKey: "label")
            note.setValue("new body", forKey: "body")
            note.setValue(Int32(9), forKey: "rank")
            note.setValue(tag, forKey: "tag")
            try context.save()
        }
        try container.close()

        let reopened = try GraphModel.container(at: url, model: model())
        let again = reopened.newBackgroundContext()
        let others = uris.count - 1
        #expect(try matches("body == %@", "new body", in: again) == (1, 1))
        #expect(try matches("body == nil", in: again) == (others, others))
        #expect(try matches("rank == %@", Int32(9), in: again) == (1, 1))
        #expect(try matches("rank == %@", Int32(5), in: again) == (others, others))
        #expect(try matches("tag.label == %@", "new", in: again) == (1, 1))
        #expect(try matches("tag == nil", in: again) == (others, others))
        try again.performAndWait {
            for uri in uris.dropFirst() {
                let id = try #require(reopened.persistentStoreCoordinator.managedObjectID(forURIRepresentation: uri))
                let note = try again.existingObject(with: id)
                #expect(note.value(forKey: "body") == nil)
                #expect(note.value(forKey: "rank") as? Int32 == 5)
                #expect(note.value(forKey: "tag") == nil)
            }
        }
        try reopened.close()
    }

    @Test func propertiesReaddedInALaterOpenReadNoOldValues() throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.notes(in: folder)
        let url = folder.store()
        let uris = try Self.fill(url, model: bundle.version(1))
        try GraphModel.container(at: url, model: bundle.version(2)).close()

        let container = try GraphModel.container(at: url, model: bundle.version(3))
        try Self.expectNoOldValues(container, uris: uris)
        try container.close()
        let reopened = try GraphModel.container(at: url, model: bundle.version(3))
        try Self.expectNoOldValues(reopened, uris: uris)
        try reopened.close()
        try Self.expectNewValuesKept(at: url, model: { try bundle.version(3) }, uris: uris)
    }

    @Test func propertiesReaddedInAChainOfVersionsReadNoOldValues() throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.notes(in: folder)
        let url = folder.store()
        let uris = try Self.fill(url, model: bundle.version(1))

        let container = try GraphModel.container(at: url, model: bundle.chained())
        try Self.expectNoOldValues(container, uris: uris)
        try container.close()
        let reopened = try GraphModel.container(at: url, model: bundle.chained())
        try Self.expectNoOldValues(reopened, uris: uris)
        try reopened.close()
        try Self.expectNewValuesKept(at: url, model: { try bundle.chained() }, uris: uris)
    }
}
