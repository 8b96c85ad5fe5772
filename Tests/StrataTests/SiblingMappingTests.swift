import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Entities of one hierarchy (or unrelated entities) that declare the same property names:
/// relationships to one destination with different inverses, and same-named properties of
/// different types, saved, reopened and read back.
@Suite struct SiblingMappingTests {
    /// RevisionDiff.contentDiffs <->> DiffContentValue.revisionDiff and
    /// RevisionDiff.titleDiffs <->> DiffTitleValue.revisionDiff; the two value entities are
    /// siblings under an abstract DiffValue when `siblings`, unrelated entities otherwise.
    static func diffModel(siblings: Bool) -> ManagedObjectModel {
        let revision = ModelBuilder.entity("RevisionDiff", [ModelBuilder.attribute("name", .string)])
        let content = ModelBuilder.entity("DiffContentValue", siblings ? [] : [ModelBuilder.attribute("name", .string)])
        let title = ModelBuilder.entity("DiffTitleValue", siblings ? [] : [ModelBuilder.attribute("name", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship(
                "contentDiffs", from: revision, to: content, toMany: true, deleteRule: .cascadeDeleteRule),
            ModelBuilder.relationship("revisionDiff", from: content, to: revision))
        ModelBuilder.inverse(
            ModelBuilder.relationship(
                "titleDiffs", from: revision, to: title, toMany: true, deleteRule: .cascadeDeleteRule),
            ModelBuilder.relationship("revisionDiff", from: title, to: revision))
        guard siblings else { return ModelBuilder.model([revision, content, title]) }
        let value = ModelBuilder.entity("DiffValue", [ModelBuilder.attribute("name", .string)], isAbstract: true)
        value.subentities = [content, title]
        return ModelBuilder.model([revision, value, content, title])
    }

    /// Two revisions, each with content and title values, saved, then read back after a reopen.
    @Test(arguments: [true, false])
    func relationshipsToOneDestinationWithDifferentInversesStayApart(siblings: Bool) throws {
        let folder = TemporaryDirectory()
        let model = Self.diffModel(siblings: siblings)
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            for revision in ["r1", "r2"] {
                let diff = try RelationshipTests.make("RevisionDiff", revision, in: context)
                for index in 1...2 {
                    let content = try RelationshipTests.make(
                        "DiffContentValue", "\(revision)-content\(index)", in: context)
                    content.setValue(diff, forKey: "revisionDiff")
                }
                let title = try RelationshipTests.make("DiffTitleValue", "\(revision)-title", in: context)
                title.setValue(diff, forKey: "revisionDiff")
            }
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            for revision in ["r1", "r2"] {
                let diff = try RelationshipTests.fetch("RevisionDiff", revision, in: context)
                #expect(
                    try RelationshipTests.names(diff, "contentDiffs") == [
                        "\(revision)-content1", "\(revision)-content2",
                    ])
                #expect(try RelationshipTests.names(diff, "titleDiffs") == ["\(revision)-title"])
                let contents = try #require(diff.value(forKey: "contentDiffs") as? Set<ManagedObject>)
                #expect(
                    contents.allSatisfy {
                        $0.entity.name == "DiffContentValue" && $0.objectID.entity.name == "DiffContentValue"
                    })
                let titles = try #require(diff.value(forKey: "titleDiffs") as? Set<ManagedObject>)
                #expect(
                    titles.allSatisfy {
                        $0.entity.name == "DiffTitleValue" && $0.objectID.entity.name == "DiffTitleValue"
                    })
                let title = try RelationshipTests.fetch("DiffTitleValue", "\(revision)-title", in: context)
                #expect(try RelationshipTests.names(title, "revisionDiff") == [revision])
            }
            // A predicate on the to-one finds only the fetched entity's rows.
            let r1 = try RelationshipTests.fetch("RevisionDiff", "r1", in: context)
            let request = FetchRequest<ManagedObject>(entityName: "DiffContentValue")
            request.predicate = FetchPredicate(key: "revisionDiff", .equalTo, r1)
            #expect(try context.count(for: request) == 2)
            // Deleting a revision cascades to exactly its own values.
            context.delete(r1)
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "DiffContentValue")) == 2)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "DiffTitleValue")) == 1)
            let r2 = try RelationshipTests.fetch("RevisionDiff", "r2", in: context)
            #expect(try RelationshipTests.names(r2, "contentDiffs") == ["r2-content1", "r2-content2"])
            #expect(try RelationshipTests.names(r2, "titleDiffs") == ["r2-title"])
        }
    }

    /// An abstract Post with Article (Integer 32 `commentCount`, String `source`, unique
    /// `slug`) and Photo (Integer 16 `commentCount`, `source` a to-one relationship to Origin,
    /// `slug` without a constraint) as sub-entities.
    static func postModel() -> ManagedObjectModel {
        let post = ModelBuilder.entity("Post", [ModelBuilder.attribute("name", .string)], isAbstract: true)
        let article = ModelBuilder.entity(
            "Article",
            [
                ModelBuilder.attribute("commentCount", .integer32), ModelBuilder.attribute("source", .string),
                ModelBuilder.attribute("slug", .string),
            ])
        article.uniquenessConstraints = [["slug"]]
        let photo = ModelBuilder.entity(
            "Photo", [ModelBuilder.attribute("commentCount", .integer16), ModelBuilder.attribute("slug", .string)])
        let origin = ModelBuilder.entity("Origin", [ModelBuilder.attribute("name", .string)])
        ModelBuilder.inverse(
            ModelBuilder.relationship("source", from: photo, to: origin),
            ModelBuilder.relationship("photos", from: origin, to: photo, toMany: true))
        post.subentities = [article, photo]
        return ModelBuilder.model([post, article, photo, origin])
    }

    @Test func siblingPropertiesOfOneNameAndDifferentTypesRoundTrip() throws {
        let folder = TemporaryDirectory()
        let model = Self.postModel()
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let article = try RelationshipTests.make("Article", "essay", in: context)
            article.setValue(Int32(70_000), forKey: "commentCount")
            article.setValue("wire", forKey: "source")
            article.setValue("essay-slug", forKey: "slug")
            let photo = try RelationshipTests.make("Photo", "sunset", in: context)
            photo.setValue(Int16(12), forKey: "commentCount")
            photo.setValue("photo-slug", forKey: "slug")
            photo.setValue(try RelationshipTests.make("Origin", "camera", in: context), forKey: "source")
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            let article = try RelationshipTests.fetch("Article", "essay", in: context)
            #expect(article.value(forKey: "commentCount") as? Int32 == 70_000)
            #expect(article.value(forKey: "source") as? String == "wire")
            let photo = try RelationshipTests.fetch("Photo", "sunset", in: context)
            #expect(photo.value(forKey: "commentCount") as? Int16 == 12)
            #expect(try RelationshipTests.names(photo, "source") == ["camera"])
            #expect(
                try RelationshipTests.names(try RelationshipTests.fetch("Origin", "camera", in: context), "photos") == [
                    "sunset"
                ])
            // Predicates on the same name read each entity's own column.
            let articles = FetchRequest<ManagedObject>(entityName: "Article")
            articles.predicate = FetchPredicate(key: "commentCount", .greaterThan, 100)
            #expect(try context.count(for: articles) == 1)
            let photos = FetchRequest<ManagedObject>(entityName: "Photo")
            photos.predicate = FetchPredicate(key: "commentCount", .greaterThan, 100)
            #expect(try context.count(for: photos) == 0)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Post")) == 2)
            // Article's uniqueness constraint keeps articles apart, not photos.
            let other = try RelationshipTests.make("Article", "other", in: context)
            other.setValue("essay-slug", forKey: "slug")
            #expect(throws: CoreDataError.self) { try context.save() }
            other.setValue("photo-slug", forKey: "slug")
            let copy = try RelationshipTests.make("Photo", "copy", in: context)
            copy.setValue("photo-slug", forKey: "slug")
            try context.save()
        }
        try RelationshipTests.withContext(at: folder.store(), model: model) { context throws in
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Post")) == 4)
        }
    }

    /// Same-named properties of one type share a column, as stores written before columns of
    /// their own existed laid them out (so those stores still open); another type gets its own.
    @Test func onlyPropertiesOfAnotherTypeGetAColumnOfTheirOwn() throws {
        let model = Self.postModel()
        model.freeze()
        let mapping = try StoreMapping(model: model)
        let post = try #require(mapping.layouts["Post"])
        let columns = mapping.schema.entities[post.storeEntity].columns.map(\.name)
        #expect(columns == ["_entity", "name", "commentCount", "source", "slug", "Photo.commentCount", "Photo.source"])
        let siblings = Self.diffModel(siblings: true)
        siblings.freeze()
        let shared = try StoreMapping(model: siblings)
        let value = try #require(shared.layouts["DiffValue"])
        #expect(shared.schema.entities[value.storeEntity].columns.map(\.name) == ["_entity", "name", "revisionDiff"])
        #expect(shared.layouts["DiffContentValue"]?.sharedColumns == [1, 2])
        #expect(shared.layouts["DiffValue"]?.sharedColumns == [])
    }
}
