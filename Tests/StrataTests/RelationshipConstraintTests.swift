import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Uniqueness constraints whose first property is a to-one relationship (`Head: ["unit"]`,
/// `Role: ["unit", "title"]`): a new object conflicts with a stored one that points at the same
/// related object, as with attribute constraints, in the engine store (after reopening) and
/// the in-memory store.
@Suite struct RelationshipConstraintTests {
    /// `Unit` (name) —< `Role` (title, level; unique on unit and title), `Unit` —< `Head`
    /// (name; unique on unit: the to-many inverse leaves a stored head on its unit), `Unit` —<
    /// `Desk` (number; unique on number and unit, the relationship second).
    static func model() -> ManagedObjectModel {
        let unit = ModelBuilder.entity("Unit", [ModelBuilder.attribute("name", .string)])
        let role = ModelBuilder.entity(
            "Role",
            [
                ModelBuilder.attribute("title", .string),
                ModelBuilder.attribute("level", .integer64, defaultValue: Int64(0)),
            ])
        let head = ModelBuilder.entity("Head", [ModelBuilder.attribute("name", .string)])
        let desk = ModelBuilder.entity("Desk", [ModelBuilder.attribute("number", .integer64, defaultValue: Int64(0))])
        ModelBuilder.inverse(
            ModelBuilder.relationship("unit", from: role, to: unit),
            ModelBuilder.relationship("roles", from: unit, to: role, toMany: true))
        ModelBuilder.inverse(
            ModelBuilder.relationship("unit", from: head, to: unit),
            ModelBuilder.relationship("heads", from: unit, to: head, toMany: true))
        ModelBuilder.inverse(
            ModelBuilder.relationship("unit", from: desk, to: unit),
            ModelBuilder.relationship("desks", from: unit, to: desk, toMany: true))
        role.uniquenessConstraints = [["unit", "title"]]
        head.uniquenessConstraints = [["unit"]]
        desk.uniquenessConstraints = [["number", "unit"]]
        return ModelBuilder.model([unit, role, head, desk])
    }

    /// Saves units Core and Labs, a head of Core, a role "lead" (level 1) and desk 1 on Core; returns
    /// the container, reopened when it is the engine store.
    static func seeded(
        _ kind: ContractStoreKind, in folder: TemporaryDirectory, model: ManagedObjectModel
    ) throws -> PersistentContainer {
        let container = try kind.container(named: "Units", in: folder, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let core = EntityDescription.insertNewObject(forEntityName: "Unit", into: context)
            core.setValue("Core", forKey: "name")
            EntityDescription.insertNewObject(forEntityName: "Unit", into: context).setValue("Labs", forKey: "name")
            let head = EntityDescription.insertNewObject(forEntityName: "Head", into: context)
            head.setValue("Ada", forKey: "name")
            head.setValue(core, forKey: "unit")
            let role = EntityDescription.insertNewObject(forEntityName: "Role", into: context)
            role.setValue("lead", forKey: "title")
            role.setValue(Int64(1), forKey: "level")
            role.setValue(core, forKey: "unit")
            let desk = EntityDescription.insertNewObject(forEntityName: "Desk", into: context)
            desk.setValue(Int64(1), forKey: "number")
            desk.setValue(core, forKey: "unit")
            try context.save()
        }
        guard kind == .engine else { return container }
        try container.close()
        return try kind.container(named: "Units", in: folder, model: model)
    }

    /// The unit named `name`, fetched in `context`.
    static func unit(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: "Unit")
        request.predicate = try FetchPredicate(checkedFormat: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    /// Every object of `entity` as (unit name, `key`'s value, level), sorted.
    static func rows(_ entity: String, _ key: String, in container: PersistentContainer) throws -> [String] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map { object in
                let unit = (object.value(forKey: "unit") as? ManagedObject)?.value(forKey: "name") as? String
                let level = entity == "Role" ? " \(object.value(forKey: "level") as? Int64 ?? -1)" : ""
                return "\(unit ?? "-") \(object.value(forKey: key) as? String ?? "-")\(level)"
            }.sorted()
        }
    }

    @Test(arguments: ContractStoreKind.allCases)
    func aSecondObjectOnTheSameRelatedObjectFailsUnderTheErrorPolicy(kind: ContractStoreKind) throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try Self.seeded(kind, in: folder, model: model)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.mergePolicy = MergePolicy(merge: .errorMergePolicyType)
            let core = try Self.unit("Core", in: context)
            let grace = EntityDescription.insertNewObject(forEntityName: "Head", into: context)
            grace.setValue("Grace", forKey: "name")
            grace.setValue(core, forKey: "unit")
            let desk = EntityDescription.insertNewObject(forEntityName: "Desk", into: context)
            desk.setValue(Int64(1), forKey: "number")
            desk.setValue(core, forKey: "unit")
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectConstraintMerge)
            #expect(Set(error?.detailedErrors.compactMap(\.objectID) ?? []) == [grace.objectID, desk.objectID])
            #expect(context.insertedObjects == [grace, desk], "the failed save keeps the changes")

            let labs = try Self.unit("Labs", in: context)
            grace.setValue(labs, forKey: "unit")
            desk.setValue(labs, forKey: "unit")
            try context.save()
        }
        #expect(try Self.rows("Head", "name", in: container) == ["Core Ada", "Labs Grace"])
        #expect(try Self.rows("Desk", "unit", in: container).count == 2)
    }

    @Test(arguments: ContractStoreKind.allCases)
    func aDuplicateOnARelationshipAndAnAttributeMergesIntoTheStoredObject(kind: ContractStoreKind) throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        var container = try Self.seeded(kind, in: folder, model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            context.mergePolicy = MergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
            let core = try Self.unit("Core", in: context)
            let labs = try Self.unit("Labs", in: context)
            for (title, level, unit) in [("lead", Int64(5), core), ("lead", 2, labs), ("intern", 3, core)] {
                let role = EntityDescription.insertNewObject(forEntityName: "Role", into: context)
                role.setValue(title, forKey: "title")
                role.setValue(level, forKey: "level")
                role.setValue(unit, forKey: "unit")
            }
            let grace = EntityDescription.insertNewObject(forEntityName: "Head", into: context)
            grace.setValue("Grace", forKey: "name")
            grace.setValue(core, forKey: "unit")
            try context.save()
        }
        if kind == .engine {
            try container.close()
            container = try kind.container(named: "Units", in: folder, model: model)
        }
        defer { try? container.close() }
        #expect(try Self.rows("Role", "title", in: container) == ["Core intern 3", "Core lead 5", "Labs lead 2"])
        #expect(try Self.rows("Head", "name", in: container) == ["Core Grace"])
    }
}
