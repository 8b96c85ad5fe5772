import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Models built in code as Core Data code builds them: an entity's optional name, validation
/// predicates, derived attributes from their initializer and fetched properties with untyped
/// requests, each used through a store on disk.
@Suite struct ModelInCodeTests {
    /// A model of `Person` (name, age, derived `searchName`, fetched `namesakes`) with a
    /// validation predicate on `age`.
    private static func model() -> ManagedObjectModel {
        let person = EntityDescription()
        #expect(person.name == nil, "a new entity has no name, as Core Data's")
        person.name = "Person"
        let name = AttributeDescription(name: "name", type: .string)
        let age = AttributeDescription(name: "age", type: .integer64)
        age.setValidationPredicates(
            [FetchPredicate(format: "SELF >= 0"), FetchPredicate(format: "SELF < 150")],
            withValidationWarnings: ["age is negative", "age is too large"])
        let searchName = DerivedAttributeDescription(
            name: "searchName", type: .string,
            derivationExpression: FetchExpression(
                forFunction: "lowercase:", arguments: [FetchExpression(forKeyPath: "name")]))
        let request = FetchRequest<FetchRequestResult>(entityName: "Person")
        request.predicate = FetchPredicate(format: "name == $FETCH_SOURCE.name AND SELF != $FETCH_SOURCE")
        let namesakes = FetchedPropertyDescription()
        namesakes.name = "namesakes"
        namesakes.fetchRequest = request
        person.properties = [name, age, searchName, namesakes]
        let model = ManagedObjectModel()
        model.entities = [person]
        return model
    }

    @Test func anEntityNameIsOptional() throws {
        let entity = EntityDescription()
        #expect(entity.name == nil)
        entity.name = "Thing"
        if let name = entity.name { #expect(name == "Thing") } else { Issue.record("the name was set") }
        entity.name = nil
        #expect(entity.name == nil)
        let model = ManagedObjectModel()
        model.entities = [EntityDescription(name: "Named")]
        #expect(model.entitiesByName["Named"]?.name == "Named")
    }

    @Test func validationPredicatesCheckValuesOnSave() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let person = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("Ada", forKey: "name")
            person.setValue(Int64(-1), forKey: "age")
            let error = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(error?.code == .managedObjectValidation)
            #expect(error?.key == "age")
            #expect(error.map { "\($0)" }?.contains("age is negative") == true)
            person.setValue(Int64(200), forKey: "age")
            let tooLarge = #expect(throws: CoreDataError.self) { try context.save() }
            #expect(tooLarge.map { "\($0)" }?.contains("age is too large") == true)
            person.setValue(Int64(36), forKey: "age")
            try context.save()
            let unset = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
            unset.setValue("Grace", forKey: "name")
            try context.save()
        }
        let entity = try #require(container.managedObjectModel.entitiesByName["Person"])
        let age = try #require(entity.attributesByName["age"])
        #expect(age.validationPredicates.map(\.predicateFormat) == ["SELF >= 0", "SELF < 150"])
        #expect(age.validationWarnings.compactMap { $0 as? String } == ["age is negative", "age is too large"])
        try container.close()
    }

    @Test func derivedAttributesAndFetchedPropertiesFromTheirInitializers() throws {
        let folder = TemporaryDirectory()
        let container = try GraphModel.container(at: folder.store(), model: Self.model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["Ada", "Ada", "Grace"] {
                EntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue(name, forKey: "name")
            }
            try context.save()
        }
        try container.close()
        let reopened = try GraphModel.container(at: folder.store(), model: Self.model())
        let reader = reopened.newBackgroundContext()
        try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Person")
            request.predicate = FetchPredicate(format: "searchName == 'ada'")
            let adas = try reader.fetch(request)
            #expect(adas.count == 2)
            let namesakes = try #require(adas.first?.value(forKey: "namesakes") as? [ManagedObject])
            #expect(namesakes.count == 1)
            #expect(namesakes.first?.value(forKey: "name") as? String == "Ada")
            #expect(namesakes.first !== adas.first)
        }
        try reopened.close()
    }

    /// `FetchExpression(format:)` parses what `NSExpression(format:)` does for models and fetches.
    @Test func expressionsFromFormatStrings() throws {
        func format(_ expression: FetchExpression) -> String { expression.expressionFormat }
        #expect(
            format(FetchExpression(format: "department.name")) == format(FetchExpression(forKeyPath: "department.name"))
        )
        #expect(format(FetchExpression(format: "%K", "salary")) == format(FetchExpression(forKeyPath: "salary")))
        #expect(
            format(FetchExpression(format: "lowercase:(name)"))
                == format(FetchExpression(forFunction: "lowercase:", arguments: [FetchExpression(forKeyPath: "name")])))
        #expect(format(FetchExpression(format: "now()")) == format(FetchExpression(forFunction: "now", arguments: [])))
        #expect(format(FetchExpression(format: "$LIMIT")) == format(FetchExpression(forVariable: "LIMIT")))
        #expect(FetchExpression(format: "%@", 42).constantValue as? Int == 42)
        #expect(throws: FetchPredicateError.self) { _ = try FetchExpression(checkedFormat: "name ==") }
    }
}
