import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// Splits `fullName` into `first` and `last`: a change inference cannot make.
final class SplitNamePolicy: EntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let person = EntityDescription.insertNewObject(forEntityName: "Person", into: manager.destinationContext)
        let parts = (sInstance.value(forKey: "fullName") as? String ?? "").split(separator: " ", maxSplits: 1).map(
            String.init)
        person.setValue(parts.first, forKey: "first")
        person.setValue(parts.count > 1 ? parts[1] : nil, forKey: "last")
        manager.associate(sourceInstance: sInstance, withDestinationInstance: person, for: mapping)
    }
}

@Suite struct MigrationManagerTests {
    static func sourceModel() -> ManagedObjectModel {
        let person = ModelBuilder.entity("Person", [ModelBuilder.attribute("fullName", .string)])
        let pet = ModelBuilder.entity("Pet", [ModelBuilder.attribute("name", .string)])
        let pets = ModelBuilder.relationship("pets", from: person, to: pet, toMany: true)
        let owner = ModelBuilder.relationship("owner", from: pet, to: person)
        ModelBuilder.inverse(pets, owner)
        return ModelBuilder.model([person, pet])
    }

    static func destinationModel() -> ManagedObjectModel {
        let person = ModelBuilder.entity(
            "Person", [ModelBuilder.attribute("first", .string), ModelBuilder.attribute("last", .string)])
        let pet = ModelBuilder.entity("Pet", [ModelBuilder.attribute("name", .string)])
        let pets = ModelBuilder.relationship("pets", from: person, to: pet, toMany: true)
        let owner = ModelBuilder.relationship("owner", from: pet, to: person)
        ModelBuilder.inverse(pets, owner)
        return ModelBuilder.model([person, pet])
    }

    /// A custom mapping with a migration policy subclass for one entity and the inferred mapping
    /// for the other, through `migrateStore(from:…toDestinationURL:…)`, in batches smaller than the store.
    @Test func customPolicySplitsAnAttribute() throws {
        let folder = TemporaryDirectory()
        let sourceURL = folder.store("People"), destinationURL = folder.store("People2")
        let source = Self.sourceModel(), destination = Self.destinationModel()
        let container = try GraphModel.container(at: sourceURL, model: source)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<25 {
                let person = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue("Ada\(i) Lovelace\(i)", forKey: "fullName")
                for j in 0..<(i % 3) {
                    let pet = EntityDescription.insertNewObject(forEntityName: "Pet", into: context)
                    pet.setValue("pet\(i)-\(j)", forKey: "name")
                    pet.setValue(person, forKey: "owner")
                }
            }
            try context.save()
        }
        try container.close()

        let inferredPets = try #require(
            try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
                .entityMappingsByName["PetToPet"])
        let people = EntityMapping()
        people.name = "SplitPeople"
        people.mappingType = .customEntityMappingType
        people.sourceEntityName = "Person"
        people.destinationEntityName = "Person"
        people.entityMigrationPolicyClassName = String(reflecting: SplitNamePolicy.self)
        people.relationshipMappings = [
            PropertyMapping(name: "pets", valueExpression: FetchExpression(forKeyPath: "pets"))
        ]
        let manager = MigrationManager(sourceModel: source, destinationModel: destination)
        manager.batchSize = 7
        try manager.migrateStore(
            from: sourceURL, sourceType: SQLiteStoreType, with: MappingModel(entityMappings: [people, inferredPets]),
            toDestinationURL: destinationURL, destinationType: SQLiteStoreType)
        #expect(manager.migrationProgress == 1)

        let migrated = try GraphModel.container(at: destinationURL, model: Self.destinationModel())
        let reader = migrated.newBackgroundContext()
        try reader.performAndWait {
            let persons = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            #expect(persons.count == 25)
            for person in persons {
                let first = try #require(person.value(forKey: "first") as? String)
                let i = try #require(Int(first.dropFirst(3)))
                #expect(person.value(forKey: "last") as? String == "Lovelace\(i)")
                let names = Set(ShopModels.related(person, "pets").compactMap { $0.value(forKey: "name") as? String })
                #expect(names == Set((0..<(i % 3)).map { "pet\(i)-\($0)" }))
            }
        }
        try migrated.close()
        #expect(
            try ManagedObjectModel.storeModel(at: sourceURL)?.entitiesByName["Person"]?.attributesByName["fullName"]
                != nil, "the source store is unchanged")
    }

    /// A mapping naming a policy class that does not exist fails with Core Data's code.
    @Test func unknownPolicyClassIsAnError() throws {
        let folder = TemporaryDirectory()
        let url = folder.store("People")
        try GraphModel.container(at: url, model: Self.sourceModel()).close()
        let mapping = EntityMapping()
        mapping.name = "People"
        mapping.mappingType = .customEntityMappingType
        mapping.sourceEntityName = "Person"
        mapping.destinationEntityName = "Person"
        mapping.entityMigrationPolicyClassName = "NoSuchModule.NoSuchPolicy"
        let manager = MigrationManager(sourceModel: Self.sourceModel(), destinationModel: Self.destinationModel())
        let error = #expect(throws: CoreDataError.self) {
            try manager.migrateStore(
                from: url, type: .sqlite, mapping: MappingModel(entityMappings: [mapping]), to: folder.store("Out"),
                type: .sqlite)
        }
        #expect(error?.code == .entityMigrationPolicy)
    }
}
