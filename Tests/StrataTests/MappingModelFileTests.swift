import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The custom migration policy the mapping model below names as Xcode writes it
/// (`$(PRODUCT_MODULE_NAME).NameSplittingPolicy`): its functions split a full name.
final class NameSplittingPolicy: EntityMigrationPolicy {
    override func value(forFunction selectorName: String, arguments: [Any?]) throws -> Any? {
        let words = (arguments.first as? String ?? "").split(separator: " ").map(String.init)
        switch selectorName {
        case "firstWordOf:": return words.first
        case "lastWordOf:": return words.dropFirst().joined(separator: " ")
        default: return try super.value(forFunction: selectorName, arguments: arguments)
        }
    }
}

/// Mapping models made in Xcode: an `.xcmappingmodel` (its `xcmapping.xml`, with expressions and
/// user info as keyed archives) and a compiled `.cdm`, read and used to migrate real stores, by
/// a migration manager and by automatic migration; corrupt files give typed errors.
@Suite struct MappingModelFileTests {
    typealias A = AppleArchives

    /// People 1: people with a full `name` and pets; People 2: a first and last name, and the
    /// pets become animals.
    static func models(in folder: TemporaryDirectory) throws -> VersionedModelBundle {
        try VersionedModelBundle(
            in: folder, name: "People",
            versions: [
                """
                <entity name="Person" syncable="YES"><attribute name="name" attributeType="String"/><attribute name="age" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/><relationship name="pets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/></entity>
                <entity name="Pet" syncable="YES"><attribute name="name" attributeType="String"/><relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/></entity>
                """,
                """
                <entity name="Person" syncable="YES"><attribute name="firstName" attributeType="String"/><attribute name="lastName" attributeType="String"/><attribute name="age" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/><relationship name="animals" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Animal" inverseName="owner" inverseEntity="Animal"/></entity>
                <entity name="Animal" syncable="YES"><attribute name="name" attributeType="String"/><relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="animals" inverseEntity="Person"/></entity>
                """,
            ])
    }

    /// Writes `Mapping.xcmappingmodel` into `folder` as Xcode writes it: `PersonToPerson` with
    /// the policy, written expressions for the names and the animals, a generated one for
    /// `age`; `PetToAnimal` filtered to pets not named Ghost, its owner generated.
    static func writeMapping(in folder: TemporaryDirectory) throws -> URL {
        let source = A.variable("source")
        let policy = A.variable("entityPolicy")
        func attribute(_ id: String, _ name: String, _ entity: String, _ expression: AppleArchived?) -> String {
            let value =
                expression.map { #"<attribute name="valueexpressiondata" type="binary">\#(A.base64($0))</attribute>"# }
                ?? #"<attribute name="autogenerateexpression" type="bool">1</attribute>"#
            return """
                <object type="XDDEVATTRIBUTEMAPPING" id="\(id)"><attribute name="name" type="string">\(name)</attribute>\(value)<relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(entity)"></relationship></object>
                """
        }
        let animals = A.function(
            A.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:",
            [A.constant("PetToAnimal"), A.keyPath("pets", on: source)])
        let userInfo = A.base64(["reviewedBy": "Grace"])
        let xml = """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
            <database>
                <databaseInfo><version>134481920</version><UUID>5B8E5F2C-7D0E-4C59-9C3E-2B1C7E0F2A11</UUID><nextObjectID>112</nextObjectID></databaseInfo>
                \(attribute("z102", "firstName", "z101", A.function(policy, "firstWordOf:", [A.keyPath("name", on: source)])))
                \(attribute("z103", "lastName", "z101", A.function(policy, "lastWordOf:", [A.keyPath("name", on: source)])))
                \(attribute("z104", "age", "z101", nil))
                <object type="XDDEVRELATIONSHIPMAPPING" id="z105"><attribute name="name" type="string">animals</attribute><attribute name="valueexpressiondata" type="binary">\(A.base64(animals))</attribute><relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z101"></relationship></object>
                <object type="XDDEVENTITYMAPPING" id="z101">
                    <attribute name="sourcename" type="string">Person</attribute>
                    <attribute name="destinationname" type="string">Person</attribute>
                    <attribute name="mappingtypename" type="string">Undefined</attribute>
                    <attribute name="mappingnumber" type="int16">1</attribute>
                    <attribute name="migrationpolicyclassname" type="string">$(PRODUCT_MODULE_NAME).NameSplittingPolicy</attribute>
                    <attribute name="userinfodata" type="binary">\(userInfo)</attribute>
                    <attribute name="autogenerateexpression" type="bool">1</attribute>
                    <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z100"></relationship>
                    <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z102 z103 z104"></relationship>
                    <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="z105"></relationship>
                </object>
                \(attribute("z107", "name", "z106", A.keyPath("name", on: source)))
                <object type="XDDEVRELATIONSHIPMAPPING" id="z108"><attribute name="name" type="string">owner</attribute><attribute name="autogenerateexpression" type="bool">1</attribute><relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z106"></relationship></object>
                <object type="XDDEVENTITYMAPPING" id="z106">
                    <attribute name="name" type="string">PetToAnimal</attribute>
                    <attribute name="sourcename" type="string">Pet</attribute>
                    <attribute name="destinationname" type="string">Animal</attribute>
                    <attribute name="mappingtypename" type="string">Undefined</attribute>
                    <attribute name="mappingnumber" type="int16">2</attribute>
                    <attribute name="sourcefilterpredicatestring" type="string">name != "Ghost"</attribute>
                    <attribute name="autogenerateexpression" type="bool">1</attribute>
                    <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z100"></relationship>
                    <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z107"></relationship>
                    <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="z108"></relationship>
                </object>
                <object type="XDDEVMAPPINGMODEL" id="z100">
                    <attribute name="sourcemodelpath" type="string">App/People.xcdatamodeld/People.xcdatamodel</attribute>
                    <attribute name="destinationmodelpath" type="string">App/People.xcdatamodeld/People 2.xcdatamodel</attribute>
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z101 z106"></relationship>
                </object>
            </database>
            """
        let url = folder.url.appendingPathComponent("Mapping.xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: url.appendingPathComponent("xcmapping.xml"))
        return url
    }

    /// A store of People 1: Ada Lovelace (36) with Rex and Ghost, Alan Turing with Tom.
    static func fillStore(at url: URL, model: ManagedObjectModel) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for (name, age, pets) in [("Ada Lovelace", 36, ["Rex", "Ghost"]), ("Alan Turing", 41, ["Tom"])] {
                let person = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
                person.setValue(name, forKey: "name")
                person.setValue(Int64(age), forKey: "age")
                for petName in pets {
                    let pet = EntityDescription.insertNewObject(forEntityName: "Pet", into: context)
                    pet.setValue(petName, forKey: "name")
                    pet.setValue(person, forKey: "owner")
                }
            }
            try context.save()
        }
        try coordinator.remove(store)
    }

    /// The migrated store, read back in a new coordinator: each person's first name, last name,
    /// age and animals' names, and every animal's owner's first name.
    static func migratedContents(
        at url: URL, model: ManagedObjectModel
    ) throws -> (
        people: [String], animals: [String]
    ) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try context.performAndWait {
            let people = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")).map { person in
                let animals = (person.value(forKey: "animals") as? Set<ManagedObject> ?? [])
                    .compactMap { $0.value(forKey: "name") as? String }.sorted()
                return "\(person.value(forKey: "firstName")!)|\(person.value(forKey: "lastName")!)|"
                    + "\(person.value(forKey: "age")!)|\(animals.joined(separator: ","))"
            }.sorted()
            let animals = try context.fetch(FetchRequest<ManagedObject>(entityName: "Animal")).map { animal in
                let owner = animal.value(forKey: "owner") as? ManagedObject
                return "\(animal.value(forKey: "name")!)>\(owner?.value(forKey: "firstName") ?? "none")"
            }.sorted()
            return (people, animals)
        }
    }

    static let expectedPeople = ["Ada|Lovelace|36|Rex", "Alan|Turing|41|Tom"]
    static let expectedAnimals = ["Rex>Ada", "Tom>Alan"]

    @Test(
        "an Xcode mapping model reads as Xcode compiles it: types, policy, written and generated expressions, filter, user info"
    )
    func readsXcodeMappingModel() throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.models(in: folder)
        let url = try Self.writeMapping(in: folder)
        let mapping = try #require(MappingModel(contentsOf: url))
        #expect(mapping.entityMappings.map(\.name) == ["PersonToPerson", "PetToAnimal"])
        let person = try #require(mapping.entityMappingsByName["PersonToPerson"])
        #expect(person.mappingType == .transformEntityMappingType)
        #expect(person.entityMigrationPolicyClassName == "$(PRODUCT_MODULE_NAME).NameSplittingPolicy")
        let (old, new) = (try bundle.version(1), try bundle.version(2))
        #expect(person.sourceEntityVersionHash == old.entitiesByName["Person"]?.versionHash)
        #expect(person.destinationEntityVersionHash == new.entitiesByName["Person"]?.versionHash)
        #expect(person.userInfo?["reviewedBy"] as? String == "Grace")
        let attributes = person.attributeMappingsByName
        #expect(
            attributes["firstName"]?.valueExpression?.expressionFormat
                == #"FUNCTION($entityPolicy, "firstWordOf:", $source.name)"#)
        #expect(attributes["age"]?.valueExpression?.expressionFormat == "$source.age")
        #expect(
            person.relationshipMappingsByName["animals"]?.valueExpression?.expressionFormat
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PetToAnimal", $source.pets)"#
        )
        let pet = try #require(mapping.entityMappingsByName["PetToAnimal"])
        #expect(
            pet.sourceExpression?.expressionFormat
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Pet", "name != \"Ghost\""), $manager.sourceContext, NO)"#
        )
        #expect(
            pet.relationshipMappingsByName["owner"]?.valueExpression?.expressionFormat
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
        )
        // The expressions' format parses back to the same expression.
        let owner = try #require(pet.relationshipMappingsByName["owner"]?.valueExpression)
        #expect(try FetchExpression(checkedFormat: owner.expressionFormat).expressionFormat == owner.expressionFormat)
    }

    @Test("a migration manager migrates a store through an Xcode mapping model, and a fresh coordinator reads it")
    func migratesThroughXcodeMappingModel() throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.models(in: folder)
        let mapping = try #require(MappingModel(contentsOf: try Self.writeMapping(in: folder)))
        let old = folder.store("Old")
        try Self.fillStore(at: old, model: try bundle.version(1))
        let new = folder.store("New")
        let manager = MigrationManager(sourceModel: try bundle.version(1), destinationModel: try bundle.version(2))
        try manager.migrateStore(
            from: old, sourceType: SQLiteStoreType, with: mapping, toDestinationURL: new,
            destinationType: SQLiteStoreType)
        let contents = try Self.migratedContents(at: new, model: try bundle.version(2))
        #expect(contents.people == Self.expectedPeople)
        #expect(contents.animals == Self.expectedAnimals)
    }

    @Test("automatic migration finds the mapping model beside the model and uses it; without it and inference, 134140")
    func automaticMigrationUsesMappingModel() throws {
        let folder = TemporaryDirectory()
        let bundle = try Self.models(in: folder)
        let store = folder.store("People")
        try Self.fillStore(at: store, model: try bundle.version(1))

        let options: [AnyHashable: Any] = [
            MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: false,
        ]
        func open(with model: ManagedObjectModel) throws {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.remove(
                try coordinator.addPersistentStore(
                    ofType: SQLiteStoreType, configurationName: nil, at: store, options: options))
        }
        #expect { try open(with: try bundle.chained()) } throws: {
            ($0 as? CoreDataError)?.code == .migrationMissingMappingModel
        }

        _ = try Self.writeMapping(in: folder)
        let folderBundle = try #require(Bundle(url: folder.url))
        #expect(
            MappingModel(
                from: [folderBundle], forSourceModel: try bundle.version(1), destinationModel: try bundle.version(2))
                != nil)
        #expect(
            MappingModel(
                from: [folderBundle], forSourceModel: try bundle.version(2), destinationModel: try bundle.version(1))
                == nil)
        try open(with: try bundle.chained())
        let contents = try Self.migratedContents(at: store, model: try bundle.chained())
        #expect(contents.people == Self.expectedPeople)
        #expect(contents.animals == Self.expectedAnimals)
    }

    @Test("a compiled mapping model (.cdm, a keyed archive of NSMappingModel) reads with its hashes and expressions")
    func readsCompiledMappingModel() throws {
        let folder = TemporaryDirectory()
        let hash = Data(repeating: 7, count: 32)
        let property = AppleArchived(
            "NSPropertyMapping",
            [
                ("NSDestinationPropertyName", "title"),
                ("NSValueExpression", A.keyPath("name", on: A.variable("source"))),
                ("NSUserInfo", ["unit": "none"]),
            ])
        let entity = AppleArchived(
            "NSEntityMapping",
            [
                ("NSMappingName", "NoteToNote"), ("NSMappingType", 5), ("NSSourceEntityName", "Note"),
                ("NSSourceEntityVersionHash", hash), ("NSDestinationEntityName", "Note"),
                ("NSDestinationEntityVersionHash", hash), ("NSEntityMigrationPolicyClassName", "App.NotePolicy"),
                ("NSAttributeMappings", [property]), ("NSRelationshipMappings", [Any]()),
            ])
        let url = folder.url.appendingPathComponent("Notes.cdm")
        try A.archive(AppleArchived("NSMappingModel", [("NSEntityMappings", [entity])])).write(to: url)
        let mapping = try MappingModel(checkedContentsOf: url)
        let note = try #require(mapping.entityMappings.first)
        #expect(note.name == "NoteToNote")
        #expect(note.mappingType == .transformEntityMappingType)
        #expect(note.sourceEntityVersionHash == hash)
        #expect(note.entityMigrationPolicyClassName == "App.NotePolicy")
        #expect(note.attributeMappingsByName["title"]?.valueExpression?.expressionFormat == "$source.name")
        #expect(note.attributeMappingsByName["title"]?.userInfo?["unit"] as? String == "none")
        #expect(note.relationshipMappings?.isEmpty == true)
    }

    @Test("FUNCTION and FETCH expressions parse, print and evaluate with Core Data's context variables")
    func functionExpressions() throws {
        let expression = try FetchExpression(checkedFormat: #"FUNCTION($source, "valueForKey:", "name")"#)
        #expect(expression.function == "valueForKey:")
        #expect(expression.operand?.variable == "source")
        #expect(expression.expressionValue(with: nil, context: ["source": ["name": "Ada"]]) as? String == "Ada")
        // A rewrite in place reads such a mapping as the key path it is.
        #expect(PropertyMapping(name: "name", valueExpression: expression).sourceKeyPath == "name")
        let path = try FetchExpression(checkedFormat: #"FUNCTION($source, "valueForKeyPath:", "owner.name")"#)
        #expect(path.expressionValue(with: nil, context: ["source": ["owner": ["name": "Ada"]]]) as? String == "Ada")
        let built = FetchExpression(
            forFunction: FetchExpression(forVariable: "x"), selectorName: "valueForKey:", arguments: ["k"])
        #expect(built.expressionFormat == #"FUNCTION($x, "valueForKey:", "k")"#)
        let fetch = FetchRequestExpression.expression(
            forFetch: FetchExpression(forVariable: "request"), context: FetchExpression(forVariable: "context"),
            countOnly: true)
        #expect(
            try FetchExpression(checkedFormat: fetch.expressionFormat).expressionFormat
                == "FETCH($request, $context, YES)")
        #expect(throws: FetchPredicateError.self) { try FetchExpression(checkedFormat: #"FUNCTION($x)"#) }
    }

    @Test(
        "corrupt mapping files and archives are typed errors, never a crash: garbage, truncation, cycles, flipped bytes"
    )
    func corruptFiles() throws {
        let folder = TemporaryDirectory()
        let url = folder.url.appendingPathComponent("Broken.cdm")
        try Data("not an archive".utf8).write(to: url)
        #expect(MappingModel(contentsOf: url) == nil)
        #expect { try MappingModel(checkedContentsOf: url) } throws: { ($0 as? ModelError)?.code == .invalidValue }
        #expect {
            try MappingModel(checkedContentsOf: folder.url.appendingPathComponent("Missing.xcmappingmodel"))
        } throws: { ($0 as? ModelError)?.code == .fileNotFound }

        // An expression that is its own operand.
        let loop = A.function(A.variable("x"), "f:", [])
        loop.fields[1] = ("NSOperand", loop)
        let cyclic = try KeyedArchive(data: A.archive(loop), path: nil)
        #expect { try cyclic.expression(cyclic.root) } throws: { ($0 as? ModelError)?.code == .invalidValue }

        // Every truncation and many flipped bytes of a valid archive read or throw a ModelError.
        let valid = A.archive(
            A.function(
                A.variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:",
                [A.constant("PetToAnimal"), A.keyPath("pets", on: A.variable("source"))]))
        var generator = SplitMix64(seed: 64)
        var mutants = (0..<valid.count).map { Data(valid.prefix($0)) }
        for _ in 0..<2_000 {
            var bytes = valid
            let index = Int(generator.next() % UInt64(bytes.count))
            bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            mutants.append(bytes)
        }
        for mutant in mutants {
            do {
                let archive = try KeyedArchive(data: mutant, path: nil)
                _ = try archive.expression(archive.root)
            } catch is ModelError {
            }
        }
    }
}
