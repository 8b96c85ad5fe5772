import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A class that rejects the name "forbidden" in its own `validateValue(_:forKey:)`.
class RejectingGadget: ManagedObject {
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        if key == "name", value as? String == "forbidden" {
            throw CoreDataError(.validationStringPatternMatching, "Gadget.name may not be forbidden", key: key)
        }
        try super.validateValue(&value, forKey: key)
    }
}

/// A subclass of a class with an override, with none of its own.
final class InheritingRejectingGadget: RejectingGadget {}

/// A class with no override.
final class PlainGadget: ManagedObject {}

/// Generic classes, whose metadata is made at run time.
final class GenericRejectingGadget<Tag>: ManagedObject {
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        try super.validateValue(&value, forKey: key)
    }
}
final class GenericPlainGadget<Tag>: ManagedObject {}

/// Saving skips the per-property `validateValue(_:forKey:)` call only for classes that do not
/// override it: an override (also an inherited one) still sees every value, and the model's own
/// checks still fail the save with their codes when the call is skipped.
@Suite struct ValidateValueOverrideTests {
    static func model() -> ManagedObjectModel {
        let owner = ModelBuilder.entity("Owner", [ModelBuilder.attribute("name", .string)])
        func gadget(_ name: String, _ className: String) -> EntityDescription {
            let entity = ModelBuilder.entity(
                name,
                [
                    ModelBuilder.attribute("name", .string, isOptional: false),
                    ModelBuilder.attribute("count", .integer64),
                    ModelBuilder.attribute("weight", .double, isOptional: false, defaultValue: 1.0),
                ], className: className)
            ModelBuilder.relationship("owner", from: entity, to: owner, isOptional: false)
            return entity
        }
        let entities = [
            owner, gadget("Plain", "PlainGadget"), gadget("Rejecting", "RejectingGadget"),
            gadget("Inheriting", "InheritingRejectingGadget"),
        ]
        PlainGadget.register(for: "Plain")
        RejectingGadget.register(for: "Rejecting")
        InheritingRejectingGadget.register(for: "Inheriting")
        return ModelBuilder.model(entities)
    }

    @Test func overridesAreToldFromTheClass() {
        #expect(!ValidateValueOverride.isOverridden(in: ManagedObject.self))
        #expect(!ValidateValueOverride.isOverridden(in: PlainGadget.self))
        #expect(!ValidateValueOverride.isOverridden(in: Employee.self))
        #expect(!ValidateValueOverride.isOverridden(in: GenericPlainGadget<Int>.self))
        #expect(ValidateValueOverride.isOverridden(in: RejectingGadget.self))
        #expect(ValidateValueOverride.isOverridden(in: InheritingRejectingGadget.self))
        #expect(ValidateValueOverride.isOverridden(in: CrossCheckedObject.self))
        #expect(ValidateValueOverride.isOverridden(in: GenericRejectingGadget<Int>.self))
    }

    @Test(arguments: ["Rejecting", "Inheriting"])
    func anOverrideStillValidatesEveryValue(entity: String) throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            let gadget = EntityDescription.insertNewObject(forEntityName: entity, into: context)
            gadget.setValue("forbidden", forKey: "name")
            gadget.setValue(owner, forKey: "owner")
            let failure = try #require(ValidationTests.failure { try context.save() })
            #expect(failure.code == .validationStringPatternMatching)
            #expect(failure.key == "name")
            gadget.setValue("allowed", forKey: "name")
            try context.save()
        }
        try container.close()
        #expect(try Self.names(of: entity, at: folder.store(), model: model) == ["allowed"])
    }

    @Test func theModelsChecksFailTheSaveWithoutACall() throws {
        let folder = TemporaryDirectory()
        let model = Self.model()
        let container = try GraphModel.container(at: folder.store(), model: model)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = EntityDescription.insertNewObject(forEntityName: "Owner", into: context)
            let gadget = EntityDescription.insertNewObject(forEntityName: "Plain", into: context)
            #expect(gadget is PlainGadget)
            // A required attribute and a required to-one left nil.
            let missing = try #require(ValidationTests.failure { try context.save() })
            #expect(missing.code == .validationMultipleErrors)
            #expect(Set(missing.detailedErrors.map(\.code)) == [.validationMissingMandatoryProperty])
            #expect(Set(missing.detailedErrors.compactMap(\.key)) == ["name", "owner"])
            gadget.setValue("gadget", forKey: "name")
            gadget.setValue(owner, forKey: "owner")
            // A value of the wrong type, kept by setValue(_:forKey:).
            gadget.setValue("three", forKey: "count")
            let wrongType = try #require(ValidationTests.failure { try context.save() })
            #expect(wrongType.code == .managedObjectValidation)
            #expect(wrongType.key == "count")
            // An Int for an Integer 64 attribute is converted, not refused.
            gadget.setValue(3, forKey: "count")
            try context.save()
            // An update is validated the same way.
            gadget.setValue(nil, forKey: "weight")
            let update = try #require(ValidationTests.failure { try context.save() })
            #expect(update.code == .validationMissingMandatoryProperty)
            #expect(update.key == "weight")
            gadget.setValue(2.5, forKey: "weight")
            try context.save()
        }
        try container.close()

        let reopened = try GraphModel.container(at: folder.store(), model: model)
        let reader = reopened.newBackgroundContext()
        let values = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Plain")).map {
                (
                    $0.value(forKey: "name") as? String, $0.value(forKey: "count") as? Int64,
                    $0.value(forKey: "weight") as? Double,
                    ($0.value(forKey: "owner") as? ManagedObject)?.objectID.isTemporaryID
                )
            }
        }
        try reopened.close()
        #expect(values.count == 1)
        #expect(values.first?.0 == "gadget")
        #expect(values.first?.1 == 3)
        #expect(values.first?.2 == 2.5)
        #expect(values.first?.3 == false)
    }

    /// The names of the objects of `entity` in the store at `url`, read after reopening it.
    static func names(of entity: String, at url: URL, model: ManagedObjectModel) throws -> [String?] {
        let container = try GraphModel.container(at: url, model: model)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).map {
                $0.value(forKey: "name") as? String
            }
        }
    }
}
