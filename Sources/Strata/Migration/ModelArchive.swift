import Foundation

/// The parts of a model that shape a store, kept in the store's metadata so that the store knows
/// the model it was written with: a migration rebuilds that model to read the old rows and to
/// infer a mapping from it.
///
/// Keeps entities (name, class, parent, abstractness, renaming identifier, version hash modifier),
/// attributes (type, optionality, transience, transformer, composite elements), relationships
/// (destination, inverse, counts, order, delete rule), fetch indexes and uniqueness constraints.
/// Fetched properties, default values, validation rules and derivation expressions are not kept:
/// they shape no row, and a migration reads the stored values.
struct ModelArchive: Codable, Sendable, Equatable {
    /// One entity.
    struct Entity: Codable, Sendable, Equatable {
        var name: String
        var className: String
        var parent: String?
        var isAbstract: Bool
        var renamingIdentifier: String?
        var versionHashModifier: String?
        var properties: [Property]
        var indexes: [Index]
        var uniquenessConstraints: [[String]]
    }

    /// One attribute or relationship.
    struct Property: Codable, Sendable, Equatable {
        var name: String
        var isOptional: Bool
        var isTransient: Bool
        var renamingIdentifier: String?
        var versionHashModifier: String?
        /// The attribute type's raw value; `nil` for a relationship.
        var attributeType: UInt?
        var valueTransformerName: String?
        var attributeValueClassName: String?
        var allowsExternalBinaryDataStorage: Bool?
        var preservesValueInHistoryOnDeletion: Bool?
        /// A composite attribute's elements.
        var elements: [Property]?
        var destination: String?
        var inverse: String?
        var minCount: Int?
        var maxCount: Int?
        var isOrdered: Bool?
        var deleteRule: UInt?
    }

    /// One fetch index.
    struct Index: Codable, Sendable, Equatable {
        var name: String
        var properties: [String]
        var ascending: [Bool]
        var collationTypes: [UInt]
    }

    /// The entities, in the model's order.
    var entities: [Entity]
    /// The model's version identifiers that are strings.
    var versionIdentifiers: [String]

    /// Archives `model`.
    init(_ model: ManagedObjectModel) {
        entities = model.entities.map { entity in
            Entity(
                name: entity.entityName, className: entity.managedObjectClassName,
                parent: entity.superentity?.entityName,
                isAbstract: entity.isAbstract, renamingIdentifier: entity.renamingIdentifier,
                versionHashModifier: entity.versionHashModifier,
                properties: entity.ownProperties.compactMap(Self.archive),
                indexes: entity.indexes.map { index in
                    Index(
                        name: index.name, properties: index.elements.map { $0.propertyName ?? "" },
                        ascending: index.elements.map(\.isAscending),
                        collationTypes: index.elements.map(\.collationType.rawValue))
                },
                uniquenessConstraints: entity.uniquenessConstraints.map {
                    $0.map(EntityDescription.constraintElementName)
                })
        }
        versionIdentifiers = model.versionIdentifiers.compactMap { $0.base as? String }.sorted()
    }

    /// The archive of an attribute or relationship (`nil` for a fetched property).
    private static func archive(_ property: PropertyDescription) -> Property? {
        var archived = Property(
            name: property.name, isOptional: property.isOptional, isTransient: property.isTransient,
            renamingIdentifier: property.renamingIdentifier, versionHashModifier: property.versionHashModifier)
        if let attribute = property as? AttributeDescription {
            archived.attributeType = attribute.attributeType.rawValue
            archived.valueTransformerName = attribute.valueTransformerName
            archived.attributeValueClassName = attribute.attributeValueClassName
            archived.allowsExternalBinaryDataStorage = attribute.allowsExternalBinaryDataStorage
            archived.preservesValueInHistoryOnDeletion = attribute.preservesValueInHistoryOnDeletion
            if let composite = attribute as? CompositeAttributeDescription {
                archived.elements = composite.elements.compactMap(archive)
            }
        } else if let relationship = property as? RelationshipDescription {
            archived.destination = relationship.destinationEntity?.entityName
            archived.inverse = relationship.inverseRelationship?.name
            archived.minCount = relationship.minCount
            archived.maxCount = relationship.maxCount
            archived.isOrdered = relationship.isOrdered
            archived.deleteRule = relationship.deleteRule.rawValue
        } else {
            return nil
        }
        return archived
    }

    /// The model the archive describes (not frozen).
    ///
    /// - Throws: ``CoreDataError`` `migrationMissingSourceModel` when the archive names an
    ///   entity or property it does not hold.
    func model() throws -> ManagedObjectModel {
        let built = entities.map { archived -> EntityDescription in
            let entity = EntityDescription(name: archived.name)
            entity.managedObjectClassName = archived.className
            entity.isAbstract = archived.isAbstract
            entity.renamingIdentifier = archived.renamingIdentifier
            entity.versionHashModifier = archived.versionHashModifier
            return entity
        }
        let byName = Dictionary(built.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func missing(_ what: String) -> CoreDataError {
            CoreDataError(
                .migrationMissingSourceModel, "the store's model archive names \(what), which it does not hold")
        }
        var relationships: [(RelationshipDescription, Property)] = []
        for (archived, entity) in zip(entities, built) {
            entity.properties = archived.properties.map { property -> PropertyDescription in
                if property.attributeType != nil { return Self.attribute(property) }
                let relationship = RelationshipDescription()
                Self.applyCommon(property, to: relationship)
                relationship.minCount = property.minCount ?? 0
                relationship.maxCount = property.maxCount ?? 1
                relationship.isOrdered = property.isOrdered ?? false
                relationship.deleteRule = DeleteRule(rawValue: property.deleteRule ?? 1) ?? .nullifyDeleteRule
                relationships.append((relationship, property))
                return relationship
            }
        }
        for (relationship, property) in relationships {
            guard let name = property.destination, let destination = byName[name] else {
                throw missing("the destination of \(property.name)")
            }
            relationship.destinationEntity = destination
        }
        for (relationship, property) in relationships {
            guard let inverse = property.inverse else { continue }
            guard let found = relationship.destinationEntity?.ownRelationship(named: inverse) else {
                throw missing("the inverse \(inverse)")
            }
            relationship.inverseRelationship = found
        }
        for (archived, entity) in zip(entities, built) {
            if let parent = archived.parent {
                guard let superentity = byName[parent] else { throw missing("the entity \(parent)") }
                superentity.subentities.append(entity)
            }
        }
        for (archived, entity) in zip(entities, built) {
            entity.indexes = try archived.indexes.map { index in
                let elements = try zip(index.properties, zip(index.ascending, index.collationTypes)).map {
                    name, options in
                    guard let property = entity.inheritedProperty(named: name) else {
                        throw missing("the indexed property \(name)")
                    }
                    let element = FetchIndexElementDescription(
                        property: property, collationType: FetchIndexElementType(rawValue: options.1) ?? .binary)
                    element.isAscending = options.0
                    return element
                }
                return FetchIndexDescription(name: index.name, elements: elements)
            }
            entity.uniquenessConstraints = archived.uniquenessConstraints.map { $0 as [Any] }
        }
        let model = ManagedObjectModel()
        model.entities = built
        model.versionIdentifiers = Set(versionIdentifiers.map { AnyHashable($0) })
        return model
    }

    /// The attribute an archived attribute describes.
    private static func attribute(_ property: Property) -> AttributeDescription {
        let attribute: AttributeDescription
        if let elements = property.elements {
            attribute = CompositeAttributeDescription(name: property.name, elements: elements.map(Self.attribute))
        } else {
            attribute = AttributeDescription(
                name: property.name, type: AttributeDescription.AttributeType(rawValue: property.attributeType ?? 0))
        }
        applyCommon(property, to: attribute)
        attribute.valueTransformerName = property.valueTransformerName
        if let className = property.attributeValueClassName { attribute.attributeValueClassName = className }
        attribute.allowsExternalBinaryDataStorage = property.allowsExternalBinaryDataStorage ?? false
        attribute.preservesValueInHistoryOnDeletion = property.preservesValueInHistoryOnDeletion ?? false
        return attribute
    }

    /// Sets what every property has.
    private static func applyCommon(_ property: Property, to description: PropertyDescription) {
        description.name = property.name
        description.isOptional = property.isOptional
        description.isTransient = property.isTransient
        description.renamingIdentifier = property.renamingIdentifier
        description.versionHashModifier = property.versionHashModifier
    }
}

extension EntityDescription {
    /// The relationship named `name` the entity declares itself.
    fileprivate func ownRelationship(named name: String) -> RelationshipDescription? {
        ownProperties.first { $0.name == name } as? RelationshipDescription
    }

    /// The property named `name`, declared by the entity or a superentity (which may not be
    /// linked into ``properties`` yet while a model is built).
    fileprivate func inheritedProperty(named name: String) -> PropertyDescription? {
        var current: EntityDescription? = self
        while let entity = current {
            if let found = entity.ownProperties.first(where: { $0.name == name }) { return found }
            current = entity.superentity
        }
        return nil
    }
}
