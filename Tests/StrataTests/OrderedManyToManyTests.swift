import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A many-to-many relationship ordered on one side keeps that side's order through save and
/// reopen, whichever entity's name sorts first.
@Suite struct OrderedManyToManyTests {
    /// `Album.tracks` (unordered) <<->> `Bundle.albums` (ordered); "Album" sorts before "Bundle",
    /// so the join entity is laid out from the unordered side.
    static func model() -> ManagedObjectModel {
        let album = ModelBuilder.entity("Album", [ModelBuilder.attribute("name", .string)])
        let bundle = ModelBuilder.entity("Bundle", [ModelBuilder.attribute("name", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship("bundles", from: album, to: bundle, toMany: true),
            ModelBuilder.relationship("albums", from: bundle, to: album, toMany: true, isOrdered: true))
        return ModelBuilder.model([album, bundle])
    }

    @Test func theOrderedSideKeepsItsOrder() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let albums = try ["a0", "a1", "a2", "a3"].map { try RelationshipTests.make("Album", $0, in: context) }
            let box = try RelationshipTests.make("Bundle", "box", in: context)
            box.setValue([albums[3], albums[1], albums[0], albums[2]], forKey: "albums")
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let box = try RelationshipTests.fetch("Bundle", "box", in: context)
            #expect(try RelationshipTests.names(box, "albums") == ["a3", "a1", "a0", "a2"])
            // Reordering from the ordered side, and adding from the unordered side, both last.
            let ordered = box.mutableOrderedSetValue(forKey: "albums")
            ordered.remove(try RelationshipTests.fetch("Album", "a0", in: context))
            ordered.insert(try RelationshipTests.fetch("Album", "a2", in: context), at: 0)
            let extra = try RelationshipTests.make("Album", "a4", in: context)
            extra.mutableSetValue(forKey: "bundles").add(box)
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let box = try RelationshipTests.fetch("Bundle", "box", in: context)
            #expect(try RelationshipTests.names(box, "albums") == ["a2", "a3", "a1", "a4"])
            #expect(
                try RelationshipTests.names(try RelationshipTests.fetch("Album", "a1", in: context), "bundles") == [
                    "box"
                ])
            #expect(
                try RelationshipTests.names(try RelationshipTests.fetch("Album", "a0", in: context), "bundles") == [])
        }
    }
}
