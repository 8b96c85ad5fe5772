import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// A value a custom transformer stores: a point, kept as "x;y".
struct SamplePoint: Equatable {
    var x: Double
    var y: Double
}

/// Stores ``SamplePoint``s as UTF-8 "x;y" and counts its calls.
struct SamplePointTransformer: AttributeValueTransformer {
    let calls = Locked((encoded: 0, decoded: 0))

    func transformedValue(_ value: Any) throws -> Data {
        guard let point = value as? SamplePoint else { throw CoreDataError(.coreData, "not a SamplePoint: \(value)") }
        calls.withLock { $0.encoded += 1 }
        return Data("\(point.x);\(point.y)".utf8)
    }

    func reverseTransformedValue(_ data: Data) throws -> Any {
        calls.withLock { $0.decoded += 1 }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ";").compactMap { Double($0) }
        guard parts.count == 2 else { throw CoreDataError(.coreData, "not a stored SamplePoint") }
        return SamplePoint(x: parts[0], y: parts[1])
    }
}

/// Storing objects of the sample Xcode models: every entity, every attribute, every relationship,
/// saved, reopened and read back equal. (ModelLoadingTests covers loading the files.)
@Suite struct SampleModelTests {
    /// The sample models, by a short name.
    static let models: [String: URL] = [
        "Company": Bundle.module.url(forResource: "Company", withExtension: "xcdatamodeld", subdirectory: "Models")!,
        "Company 1": Bundle.module.url(
            forResource: "Company", withExtension: "xcdatamodel", subdirectory: "Models/Company.xcdatamodeld")!,
        "Library": Bundle.module.url(forResource: "Library", withExtension: "xcdatamodel", subdirectory: "Models")!,
        "Minimal": Bundle.module.url(forResource: "Minimal", withExtension: "xcdatamodel", subdirectory: "Models")!,
    ]

    /// A valid value of `attribute` for the `index`th object of its entity: within its limits
    /// and matching its pattern (checked with `validateValue`).
    static func value(for attribute: AttributeDescription, of object: ManagedObject, index: Int) throws -> Any? {
        let minimum = attribute.minValue.flatMap(FetchValue.number)
        let maximum = attribute.maxValue.flatMap(FetchValue.number)
        func number(_ fallback: Double) -> Double {
            switch (minimum, maximum) {
            case let (low?, high?): return ((low + high) / 2).rounded(.down) + Double(index)
            case let (low?, nil): return low + 7 + Double(index)
            case let (nil, high?): return high - 3 - Double(index)
            default: return fallback + Double(index)
            }
        }
        let letter = String(UnicodeScalar(UInt8(65 + index)))
        switch attribute.attributeType {
        case .integer16AttributeType: return Int16(number(42))
        case .integer32AttributeType: return Int32(number(420_000))
        case .integer64AttributeType: return Int64(number(4_200_000_000))
        case .decimalAttributeType: return Decimal(string: "12.34")! + Decimal(index)
        case .doubleAttributeType: return number(3.25) + 0.5
        case .floatAttributeType: return Float(number(1.25)) + 0.25
        case .booleanAttributeType: return index % 2 == 0 ? false : true
        case .binaryDataAttributeType: return Data([0, 1, 2, 0xFF, UInt8(index)])
        case .UUIDAttributeType: return UUID()
        case .URIAttributeType:
            return URL(string: "https://example.com/\(object.entity.name!)/\(attribute.name)/\(index)")!
        case .transformableAttributeType: return ["entity": object.entity.name, "index": "\(index)"]
        case .objectIDAttributeType: return object.objectID
        case .compositeAttributeType:
            var elements: [String: Any] = [:]
            for element in (attribute as! CompositeAttributeDescription).elements {
                elements[element.name] =
                    element.attributeType == .stringAttributeType
                    ? "\(element.name) \(letter)" : try value(for: element, of: object, index: index)
            }
            return elements
        case .undefinedAttributeType: return "scratch \(index)"
        case .dateAttributeType:
            let low = (attribute.minValue as? Date)?.timeIntervalSinceReferenceDate
            let high = (attribute.maxValue as? Date)?.timeIntervalSinceReferenceDate
            switch (low, high) {
            case let (low?, high?):
                return Date(timeIntervalSinceReferenceDate: ((low + high) / 2).rounded() + Double(index))
            default: return Date(timeIntervalSinceReferenceDate: 700_000_000.5 + Double(index))
            }
        case .stringAttributeType:
            let candidates = [
                "\(object.entity.name!) \(attribute.name) \(letter)",
                "\(object.entity.name!.lowercased())\(index)@example.com",
                letter,
            ]
            for candidate in candidates {
                var value: Any? = candidate
                if (try? object.validateValue(&value, forKey: attribute.name)) != nil { return candidate }
            }
            Issue.record("no candidate string is valid for \(object.entity.name).\(attribute.name)")
            return candidates[0]
        }
    }

    /// Whether two attribute values are equal, of the same type.
    static func same(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case let (left?, right?):
            if let a = left as? [String: String], let b = right as? [String: String] { return a == b }
            if let a = left as? SamplePoint, let b = right as? SamplePoint { return a == b }
            if let a = left as? [String: Any], let b = right as? [String: Any] {
                return Set(a.keys) == Set(b.keys) && a.keys.allSatisfy { same(a[$0], b[$0]) }
            }
            if let a = left as? ManagedObjectID, let b = right as? ManagedObjectID {
                return a.uriRepresentation() == b.uriRepresentation()
            }
            guard type(of: left) == type(of: right) else { return false }
            return FetchValue.equal(left, right)
        default: return false
        }
    }

    /// What an object holds, by key: attribute values, and relationships as URIs (sorted unless
    /// ordered).
    static func snapshot(_ object: ManagedObject) throws -> [String: Any] {
        var result: [String: Any] = [:]
        for property in object.entity.properties where !property.isTransient {
            if property is AttributeDescription {
                result[property.name] = object.value(forKey: property.name) ?? NSNull()
            } else if let relationship = property as? RelationshipDescription {
                let uris = object.objectIDs(forRelationshipNamed: property.name).map {
                    $0.uriRepresentation().absoluteString
                }
                result[property.name] = relationship.isOrdered ? uris : uris.sorted()
            }
        }
        return result
    }

    /// Fills `model` with two objects of every non-abstract entity, every attribute and
    /// relationship set; saves, reopens and checks everything reads back equal. Returns the
    /// reopened container (its store still open) and the saved objects' snapshots by URI.
    @discardableResult
    static func storeEverything(
        _ model: ManagedObjectModel, reload: () throws -> ManagedObjectModel, at url: URL
    ) throws -> (PersistentContainer, [String: [String: Any]]) {
        var snapshots: [String: [String: Any]] = [:]
        do {
            let container = try GraphModel.container(at: url, model: model)
            let context = container.newBackgroundContext()
            try context.performAndWait {
                var objects: [ManagedObject] = []
                let concrete = model.entities.filter { !$0.isAbstract }
                for entity in concrete {
                    for _ in 0..<2 {
                        objects.append(EntityDescription.insertNewObject(forEntityName: entity.name!, into: context))
                    }
                }
                try context.obtainPermanentIDs(for: objects)
                for entity in concrete {
                    for (index, object) in objects.filter({ $0.entity === entity }).enumerated() {
                        for case let attribute as AttributeDescription in entity.properties
                        where !(attribute is DerivedAttributeDescription) {
                            object.setValue(try value(for: attribute, of: object, index: index), forKey: attribute.name)
                        }
                    }
                }
                for object in objects {
                    for case let relationship as RelationshipDescription in object.entity.properties {
                        guard let destination = relationship.destinationEntity else { continue }
                        let candidates = objects.filter { $0 !== object && $0.entity.isKindOf(entity: destination) }
                        if relationship.isToMany {
                            guard object.objectIDs(forRelationshipNamed: relationship.name).isEmpty else { continue }
                            let count = min(
                                max(relationship.minCount, 2), relationship.maxCount == 0 ? 2 : relationship.maxCount)
                            let chosen = Array(candidates.prefix(count))
                            object.setValue(
                                relationship.isOrdered ? Array(chosen.reversed()) as Any : Set(chosen) as Any,
                                forKey: relationship.name)
                        } else if object.value(forKey: relationship.name) == nil, let first = candidates.first {
                            object.setValue(first, forKey: relationship.name)
                        }
                    }
                }
                try context.save()
                for object in objects {
                    snapshots[object.objectID.uriRepresentation().absoluteString] = try snapshot(object)
                }
                #expect(snapshots.count == concrete.count * 2)
            }
            try container.close()
        }
        let container = try GraphModel.container(at: url, model: try reload())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            var total = 0
            for entity in container.managedObjectModel.entities where entity.superentity == nil {
                total += try context.count(for: FetchRequest<ManagedObject>(entityName: entity.name!))
            }
            #expect(total == snapshots.count, "every saved object and nothing else")
            for (uri, expected) in snapshots {
                let id = try #require(
                    container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: URL(string: uri)!))
                let object = try context.existingObject(with: id)
                #expect(object.objectID.uriRepresentation().absoluteString == uri)
                let actual = try snapshot(object)
                #expect(Set(actual.keys) == Set(expected.keys))
                for (key, value) in expected {
                    let left = value is NSNull ? nil : value
                    let right = actual[key] is NSNull ? nil : actual[key]
                    #expect(
                        same(left, right),
                        "\(object.entity.name).\(key): saved \(String(describing: left)), read \(String(describing: right))"
                    )
                }
                for property in object.entity.properties where property.isTransient {
                    #expect(
                        object.value(forKey: property.name) == nil,
                        "transient \(object.entity.name).\(property.name) is not stored")
                }
            }
        }
        return (container, snapshots)
    }

    @Test(arguments: ["Company", "Company 1", "Library", "Minimal"])
    func everyEntityAndAttributeRoundTrips(_ name: String) throws {
        let url = try #require(Self.models[name])
        let folder = TemporaryDirectory()
        let model = try ManagedObjectModel(checkedContentsOf: url)
        #expect(!model.entities.isEmpty)
        let (container, _) = try Self.storeEverything(
            model, reload: { try ManagedObjectModel(checkedContentsOf: url) }, at: folder.store(name))
        try container.close()
    }

    /// The Library model's special attributes, one by one: the property-list transformable, the
    /// object ID attribute, transients, the ordered many-to-many and the model's default values.
    @Test func libraryValuesReadBackAsTheirTypes() throws {
        let url = try #require(Self.models["Library"])
        let folder = TemporaryDirectory()
        let metadata = ["genre": "essay", "language": "en"]
        var bookID: ManagedObjectID?
        var authorIDs: [ManagedObjectID] = []
        do {
            let container = try GraphModel.container(
                at: folder.store(), model: try ManagedObjectModel(checkedContentsOf: url))
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let authors = ["Ursula", "Italo"].map { name in
                    let author = EntityDescription.insertNewObject(forEntityName: "Author", into: context)
                    author.setValue(name, forKey: "name")
                    return author
                }
                #expect(
                    authors[0].value(forKey: "website") as? URL == URL(string: "https://example.com/authors"), "default"
                )
                let book = EntityDescription.insertNewObject(forEntityName: "Book", into: context)
                #expect(book.value(forKey: "price") as? Decimal == Decimal(string: "9.99"), "default")
                #expect(book.value(forKey: "pages") as? Int16 == 1, "default")
                #expect(book.value(forKey: "inPrint") as? Bool == true, "default")
                book.setValue("The Dispossessed", forKey: "title")
                book.setValue(UUID(), forKey: "identifier")
                book.setValue(metadata, forKey: "metadata")
                book.setValue("shown only", forKey: "displayTitle")
                book.setValue(authors, forKey: "authors")
                authors[0].setValue([book], forKey: "books")
                try context.obtainPermanentIDs(for: authors)
                book.setValue(authors[1].objectID, forKey: "sourceID")
                try context.save()
                bookID = book.objectID
                authorIDs = authors.map(\.objectID)
            }
            try container.close()
        }
        let container = try GraphModel.container(
            at: folder.store(), model: try ManagedObjectModel(checkedContentsOf: url))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let book = try context.existingObject(with: try #require(bookID))
            #expect(book.value(forKey: "metadata") as? [String: String] == metadata)
            #expect(book.value(forKey: "displayTitle") == nil)
            #expect(book.value(forKey: "price") as? Decimal == Decimal(string: "9.99"))
            #expect(book.value(forKey: "weight") as? Float == 0.5)
            #expect(book.value(forKey: "rating") as? Double == 2.5)
            #expect(book.value(forKey: "published") as? Date == Date(timeIntervalSinceReferenceDate: 694_224_000))
            let source = try #require(book.value(forKey: "sourceID") as? ManagedObjectID)
            #expect(source == authorIDs[1])
            #expect(try context.existingObject(with: source).value(forKey: "name") as? String == "Italo")
            let authors = try #require(book.value(forKey: "authors") as? Set<ManagedObject>)
            #expect(Set(authors.map(\.objectID)) == Set(authorIDs))
            let ursula = try context.existingObject(with: authorIDs[0])
            #expect(ursula.value(forKey: "books") as? [ManagedObject] == [book])
        }
        try container.close()
    }

    /// The Library model's configurations put Author and Book in one store and Tag in another.
    @Test func configurationsPlaceEntitiesInTheirStores() throws {
        let url = try #require(Self.models["Library"])
        let folder = TemporaryDirectory()
        func open() throws -> (PersistentStoreCoordinator, catalog: PersistentStore, tagging: PersistentStore) {
            let coordinator = PersistentStoreCoordinator(
                managedObjectModel: try ManagedObjectModel(checkedContentsOf: url))
            let catalog = try coordinator.addPersistentStore(
                type: .strata, configuration: "Catalog", at: folder.store("Catalog"))
            let tagging = try coordinator.addPersistentStore(
                type: .strata, configuration: "Tagging", at: folder.store("Tagging"))
            return (coordinator, catalog, tagging)
        }
        do {
            let (coordinator, catalog, tagging) = try open()
            let context = ManagedObjectContext(.privateQueue)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                let author = EntityDescription.insertNewObject(forEntityName: "Author", into: context)
                author.setValue("Ursula", forKey: "name")
                let book = EntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue("Lathe", forKey: "title")
                book.setValue(UUID(), forKey: "identifier")
                book.setValue(Set([author]), forKey: "authors")
                let tag = EntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                tag.setValue("classic", forKey: "name")
                try context.save()
                #expect(author.objectID.storeIdentifier == catalog.identifier)
                #expect(book.objectID.storeIdentifier == catalog.identifier)
                #expect(tag.objectID.storeIdentifier == tagging.identifier)

                book.setValue(Set([tag]), forKey: "tags")
                let error = #expect(throws: CoreDataError.self, "a relationship cannot cross stores") {
                    try context.save()
                }
                #expect(error?.code == .managedObjectExternalRelationship)
                context.rollback()
            }
            try coordinator.remove(catalog)
            try coordinator.remove(tagging)
        }
        let (coordinator, catalog, tagging) = try open()
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book"))
            #expect(books.map { $0.value(forKey: "title") as? String } == ["Lathe"])
            #expect((books.first?.value(forKey: "tags") as? Set<ManagedObject>)?.isEmpty == true)
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            #expect(tags.map { $0.value(forKey: "name") as? String } == ["classic"])
            #expect(tags.first?.objectID.storeIdentifier == tagging.identifier)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Author")) == 1)
        }
        try coordinator.remove(catalog)
        try coordinator.remove(tagging)
    }

    /// A transformable attribute whose value transformer the application registered by name.
    @Test func registeredCustomTransformerStoresItsValues() throws {
        let url = try #require(Self.models["Minimal"])
        let transformerName = "SampleModelTests.Point.\(UUID().uuidString)"
        let transformer = SamplePointTransformer()
        ValueTransformers.register(transformer, forName: transformerName)
        func model() throws -> ManagedObjectModel {
            let model = try ManagedObjectModel(checkedContentsOf: url)
            let point = ModelBuilder.attribute("point", .transformable)
            point.valueTransformerName = transformerName
            let missing = ModelBuilder.attribute("unregistered", .transformable)
            missing.valueTransformerName = "\(transformerName).missing"
            model.entitiesByName["Item"]!.properties.append(contentsOf: [point, missing])
            return model
        }
        let folder = TemporaryDirectory()
        var ids: [ManagedObjectID] = []
        do {
            let container = try GraphModel.container(at: folder.store(), model: try model())
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let points = [SamplePoint(x: 1.5, y: -2), SamplePoint(x: 0, y: 1e10)]
                let items = points.enumerated().map { index, point in
                    let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    item.setValue("item \(index)", forKey: "title")
                    item.setValue(point, forKey: "point")
                    #expect(item.value(forKey: "point") as? SamplePoint == point)
                    return item
                }
                try context.save()
                ids = items.map(\.objectID)
                #expect(transformer.calls.current.encoded == 2)

                let bad = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                bad.setValue("bad", forKey: "title")
                bad.setValue(SamplePoint(x: 1, y: 1), forKey: "unregistered")
                let error = #expect(throws: CoreDataError.self) { try context.save() }
                #expect(error?.code == .coreData, "no transformer is registered under that name")
                #expect(context.insertedObjects == [bad], "the failed save keeps the change")
                context.delete(bad)
                try context.save()
            }
            try container.close()
        }
        let container = try GraphModel.container(at: folder.store(), model: try model())
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let points = try ids.map { try context.existingObject(with: $0).value(forKey: "point") as? SamplePoint }
            #expect(points == [SamplePoint(x: 1.5, y: -2), SamplePoint(x: 0, y: 1e10)])
            #expect(transformer.calls.current.decoded == 2)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 2)
        }
        try container.close()
    }
}
