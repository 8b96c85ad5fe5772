import Foundation
import PostgresNIO
import Strata
import StrataStore
import StrataTestSupport
import Testing
@testable import StrataMirror

/// To-many relationships kept in join entities apply per pair (MirrorPairs): two asynchronous
/// instances adding the same pair while apart store it once, and removing it removes it everywhere.
@Suite(
    "Mirror to-many pairs", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PrivatePostgres.isAvailable, "PostgreSQL binaries are missing (apt-get install postgresql)"))
struct MirrorToManyPairTests {
    /// The tests' model plus `Tag(label)`, and `Item.tags` ⟷ `Tag.items`, many-to-many.
    private func taggedModel() -> ManagedObjectModel {
        let model = mirrorTestModel()
        let item = model.entitiesByName["Item"]!
        let tag = EntityDescription(name: "Tag")
        let tags = RelationshipDescription()
        tags.name = "tags"
        tags.destinationEntity = tag
        tags.maxCount = 0
        tags.isOptional = true
        let items = RelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.maxCount = 0
        items.isOptional = true
        tags.inverseRelationship = items
        items.inverseRelationship = tags
        item.properties.append(tags)
        tag.properties = [AttributeDescription(name: "label", type: .string), items]
        model.entities.append(tag)
        return model
    }

    /// Adds (or removes) the tag to (from) the item, in one save.
    private func tag(_ instance: MirrorInstance, adding: Bool) throws {
        let context = instance.container.newBackgroundContext()
        try context.performAndWait {
            let item = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0]
            let tag = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0]
            if adding {
                item.mutableSetValue(forKey: "tags").add(tag)
            } else {
                item.mutableSetValue(forKey: "tags").remove(tag)
            }
            try context.save()
        }
    }

    /// The join rows the instance's store holds.
    private func pairRows(_ instance: MirrorInstance) throws -> Int {
        let engine = instance.mirror.engine
        let entity = try #require(engine.schema.entities.firstIndex { $0.name.hasPrefix("_join_") })
        var count = 0
        try engine.scan(entity) { _, _ in count += 1 }
        return count
    }

    /// Waits until the instance holds the whole log of `count` entries (at most 20 s).
    private func caughtUp(
        _ instance: MirrorInstance, _ count: Int64, _ postgres: PostgresConnection.Configuration
    ) async throws -> Bool {
        guard try await waitForLog(count, postgres) else { return false }
        for _ in 0..<400 {
            if try instance.mirror.cursor() == count { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test(
        "the same pair added by two instances while apart is stored once everywhere; removed by one, it is gone everywhere"
    )
    func samePairAddedApart() async throws {
        let postgres = try await PrivatePostgres.shared.newDatabase()
        let folder = TemporaryDirectory()
        let model = taggedModel()
        let a = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous, model: model)
        let b = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous, model: model)
        a.startTailing()
        b.startTailing()
        let context = a.container.newBackgroundContext()
        try context.performAndWait {
            EntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue("item", forKey: "name")
            EntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue("tag", forKey: "label")
            try context.save()
        }
        #expect(try await caughtUp(b, 1, postgres))
        try await a.close()
        try await b.close()

        // Neither tails: both add the same pair, unaware of each other.
        let a2 = try MirrorInstance("a", folder: folder, postgres: postgres, mode: .asynchronous, model: model)
        let b2 = try MirrorInstance("b", folder: folder, postgres: postgres, mode: .asynchronous, model: model)
        try tag(a2, adding: true)
        try tag(b2, adding: true)
        let first = try await a2.mirror.connect()
        #expect(try await a2.mirror.step(on: first))  // a exports first: b meets a's pair before exporting its own
        try await first.close()
        a2.startTailing()
        b2.startTailing()
        #expect(try await caughtUp(a2, 3, postgres))
        #expect(try await caughtUp(b2, 3, postgres))
        #expect(try pairRows(a2) == 1)
        #expect(try pairRows(b2) == 1)

        // b removes the pair (under its own key): a, holding it under another, removes it too.
        try tag(b2, adding: false)
        #expect(try await caughtUp(a2, 4, postgres))
        #expect(try await caughtUp(b2, 4, postgres))
        #expect(try pairRows(a2) == 0)
        #expect(try pairRows(b2) == 0)
        try await a2.close()
        try await b2.close()

        // A new instance bootstrapping from the log ends the same.
        let c = try MirrorInstance("c", folder: folder, postgres: postgres, mode: .asynchronous, model: model)
        c.startTailing()
        #expect(try await caughtUp(c, 4, postgres))
        #expect(try pairRows(c) == 0)
        try await c.close()
    }
}
