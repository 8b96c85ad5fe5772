import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Uniqueness constraints are checked on save, against the store and within the save.
@Suite struct UniquenessConstraintTests {
    private static func model() -> ManagedObjectModel {
        let member = ModelBuilder.entity(
            "ConstrainedMember",
            [
                ModelBuilder.attribute("email", .string, isOptional: false),
                ModelBuilder.attribute("name", .string),
            ])
        member.uniquenessConstraints = [["email"]]
        return ModelBuilder.model([member])
    }

    private static func insert(_ email: String, into context: ManagedObjectContext) throws -> ManagedObject {
        let member = EntityDescription.insertNewObject(forEntityName: "ConstrainedMember", into: context)
        member.setValue(email, forKey: "email")
        return member
    }

    @Test func duplicatesAreRejectedAgainstTheStoreAndWithinASave() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store("Members"), model: Self.model())
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = try Self.insert("ada@example.com", into: context)
            try context.save()

            // Against the store: the save fails, names both objects, and keeps the change.
            let copy = try Self.insert("ada@example.com", into: context)
            let error = try #require(throws: CoreDataError.self) { try context.save() }
            #expect(error.code == .managedObjectConstraintMerge)
            #expect(error.detailedErrors.count == 1)
            #expect(error.detailedErrors[0].objectID == copy.objectID)
            #expect(error.detailedErrors[0].message.contains(ada.objectID.description))
            #expect(context.insertedObjects == [copy])

            // Fixed, it saves.
            copy.setValue("ada.lovelace@example.com", forKey: "email")
            try context.save()

            // Within one save.
            _ = try Self.insert("grace@example.com", into: context)
            _ = try Self.insert("grace@example.com", into: context)
            #expect(throws: CoreDataError.self) { try context.save() }
            context.rollback()

            // Changing a saved object onto a taken value fails too.
            copy.setValue("ada@example.com", forKey: "email")
            #expect(throws: CoreDataError.self) { try context.save() }
            context.rollback()

            // A value freed by a delete in the same save can be taken.
            context.delete(ada)
            _ = try Self.insert("ada@example.com", into: context)
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "ConstrainedMember")
            #expect(try context.count(for: request) == 2)
        }
    }
}
