import Foundation
import Testing
@testable import Strata

@Suite struct MappingModelInferenceTests {
    /// The mapping of the Shop model's first two versions: what is copied, transformed, renamed,
    /// added and converted.
    @Test func inferredMappingOfConsecutiveVersions() throws {
        let mapping = try MappingModel.inferredMappingModel(
            forSourceModel: ShopModels.version("Shop"), destinationModel: ShopModels.version("Shop 2"))
        let byName = mapping.entityMappingsByName
        let customer = try #require(byName["CustomerToCustomer"])
        #expect(customer.mappingType == .transformEntityMappingType)
        #expect(customer.sourceEntityName == "Customer" && customer.destinationEntityName == "Customer")
        let attributes = customer.attributeMappingsByName
        #expect(attributes["mail"]?.valueExpression?.keyPath == "email", "renamed through its renaming identifier")
        #expect(attributes["phone"] != nil && attributes["phone"]?.valueExpression == nil, "added: default value")
        #expect(attributes["age"] == nil, "removed")
        #expect(customer.relationshipMappingsByName["orders"]?.valueExpression?.keyPath == "orders")
        #expect(byName["OrderToOrder"]?.attributeMappingsByName["number"]?.valueExpression?.keyPath == "number")
        #expect(Set(mapping.entityMappings.map(\.mappingType)) == [.transformEntityMappingType])
    }

    /// Unchanged entities are copied; entities only one model has are added or removed.
    @Test func copyAddAndRemove() throws {
        func model(_ names: [String]) -> ManagedObjectModel {
            ModelBuilder.model(names.map { ModelBuilder.entity($0, [ModelBuilder.attribute("title", .string)]) })
        }
        let mapping = try MappingModel.inferredMappingModel(
            forSourceModel: model(["Kept", "Gone"]), destinationModel: model(["Kept", "New"]))
        let types = Dictionary(uniqueKeysWithValues: mapping.entityMappings.map { ($0.name, $0.mappingType) })
        #expect(
            types == [
                "KeptToKept": .copyEntityMappingType, "New": .addEntityMappingType, "Gone": .removeEntityMappingType,
            ])
    }

    /// The type changes Core Data converts are inferred; others are errors naming the entity,
    /// the attribute and both types.
    @Test(arguments: [
        (AttributeType.integer16AttributeType, AttributeType.integer64AttributeType, true),
        (.integer32AttributeType, .doubleAttributeType, true),
        (.integer64AttributeType, .stringAttributeType, true),
        (.stringAttributeType, .decimalAttributeType, true),
        (.booleanAttributeType, .integer16AttributeType, true),
        (.floatAttributeType, .doubleAttributeType, true),
        (.integer64AttributeType, .integer16AttributeType, false),
        (.doubleAttributeType, .integer32AttributeType, false),
        (.stringAttributeType, .dateAttributeType, false),
        (.binaryDataAttributeType, .stringAttributeType, false),
    ])
    func typeChanges(from source: AttributeType, to destination: AttributeType, inferable: Bool) throws {
        func model(_ type: AttributeType) -> ManagedObjectModel {
            let attribute = AttributeDescription(name: "value", type: AttributeDescription.AttributeType(type))
            return ModelBuilder.model([ModelBuilder.entity("Reading", [attribute])])
        }
        if inferable {
            let mapping = try MappingModel.inferredMappingModel(
                forSourceModel: model(source), destinationModel: model(destination))
            #expect(mapping.entityMappings.first?.attributeMappingsByName["value"]?.valueExpression?.keyPath == "value")
        } else {
            let error = #expect(throws: CoreDataError.self) {
                try MappingModel.inferredMappingModel(
                    forSourceModel: model(source), destinationModel: model(destination))
            }
            #expect(error?.code == .inferredMappingModel)
            #expect(error?.message.contains("Reading.value") == true)
            #expect(
                error?.message.contains(source.xmlName) == true && error?.message.contains(destination.xmlName) == true)
        }
    }

    /// A relationship that now leads to an entity unrelated to its old destination cannot be inferred.
    @Test func relationshipToAnUnrelatedEntityIsRefused() throws {
        func model(destination: String) -> ManagedObjectModel {
            let owner = ModelBuilder.entity("Owner", [ModelBuilder.attribute("name", .string)])
            let pet = ModelBuilder.entity("Pet", [ModelBuilder.attribute("name", .string)])
            let car = ModelBuilder.entity("Car", [ModelBuilder.attribute("name", .string)])
            ModelBuilder.relationship("thing", from: owner, to: destination == "Pet" ? pet : car)
            return ModelBuilder.model([owner, pet, car])
        }
        let error = #expect(throws: CoreDataError.self) {
            try MappingModel.inferredMappingModel(
                forSourceModel: model(destination: "Pet"), destinationModel: model(destination: "Car"))
        }
        #expect(error?.code == .inferredMappingModel)
        #expect(error?.message.contains("Owner.thing") == true)
    }

    /// A renamed entity maps from the entity its renaming identifier names.
    @Test func renamedEntity() throws {
        let source = ModelBuilder.model([ModelBuilder.entity("Client", [ModelBuilder.attribute("name", .string)])])
        let renamed = ModelBuilder.entity("Customer", [ModelBuilder.attribute("name", .string)])
        renamed.renamingIdentifier = "Client"
        let mapping = try MappingModel.inferredMappingModel(
            forSourceModel: source, destinationModel: ModelBuilder.model([renamed]))
        #expect(mapping.entityMappings.map(\.name) == ["ClientToCustomer"])
        #expect(mapping.entityMappings.first?.mappingType == .transformEntityMappingType)
    }

    /// The archive a store keeps of its model rebuilds a model with the same version hashes.
    @Test func modelArchiveKeepsTheVersionHashes() throws {
        for version in ["Shop", "Shop 2", "Shop 3"] {
            let model = try ShopModels.version(version)
            let rebuilt = try ModelArchive(model).model()
            #expect(rebuilt.entityVersionHashesByName == model.entityVersionHashesByName, "\(version)")
        }
    }
}
