extension MappingModel {
    /// Infers the mapping from `sourceModel` to `destinationModel` (Core Data's
    /// `inferredMappingModel(forSourceModel:destinationModel:)`), as lightweight migration does.
    ///
    /// A destination entity maps from the source entity its ``EntityDescription/renamingIdentifier``
    /// names, else from the one of its own name; its properties likewise. Inferred: added and
    /// removed entities and properties (an added attribute gets its default value), renames,
    /// optional ↔ required (a required attribute left without a value gets its default value,
    /// or the migration fails validation), entities moved in or out of a hierarchy, changed fetch
    /// indexes and uniqueness constraints, to-one ↔ to-many, and attribute type changes Core Data
    /// converts: integers to wider integers, integers and floats to `Double`, `Float` and
    /// `Decimal`, `Float` to `Double`, numbers and Booleans to and from strings, integers to and
    /// from Booleans, UUIDs and URIs to strings.
    ///
    /// - Returns: a mapping with a `copy` mapping for each unchanged entity, `transform` for each
    ///   changed one, `add` and `remove` for entities only one model has.
    /// - Throws: ``CoreDataError`` `inferredMappingModel` naming the entity, property and change
    ///   when a change cannot be inferred (another attribute type, a relationship to an unrelated
    ///   entity, two entities mapping from one).
    public static func inferredMappingModel(
        forSourceModel sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) throws -> MappingModel {
        var mappings: [EntityMapping] = []
        var claimed: [String: String] = [:]
        for entity in destinationModel.entities {
            let mapping = EntityMapping()
            mapping.destinationEntityName = entity.entityName
            mapping.destinationEntityVersionHash = entity.versionHash
            guard
                let source = Self.counterpart(
                    of: entity.renamingIdentifier, entity.entityName, in: sourceModel.entitiesByName)
            else {
                mapping.name = entity.entityName
                mapping.mappingType = .addEntityMappingType
                mappings.append(mapping)
                continue
            }
            if let other = claimed[source.entityName] {
                throw Self.notInferable(
                    "\(entity.entityName) and \(other) both map from the entity \(source.entityName)")
            }
            claimed[source.entityName] = entity.entityName
            mapping.name = "\(source.entityName)To\(entity.entityName)"
            mapping.sourceEntityName = source.entityName
            mapping.sourceEntityVersionHash = source.versionHash
            mapping.mappingType =
                source.name == entity.entityName && source.versionHash == entity.versionHash
                ? .copyEntityMappingType : .transformEntityMappingType
            mapping.attributeMappings = try Self.attributeMappings(entity, from: source)
            mapping.relationshipMappings = try Self.relationshipMappings(entity, from: source, sourceModel: sourceModel)
            mappings.append(mapping)
        }
        for entity in sourceModel.entities where claimed[entity.entityName] == nil {
            let mapping = EntityMapping()
            mapping.name = entity.entityName
            mapping.mappingType = .removeEntityMappingType
            mapping.sourceEntityName = entity.entityName
            mapping.sourceEntityVersionHash = entity.versionHash
            mappings.append(mapping)
        }
        let inferred = MappingModel(entityMappings: mappings)
        inferred.isInferred = true
        return inferred
    }

    /// The element of `candidates` a renaming identifier names, else the one named `name`.
    static func counterpart<Element>(
        of renamingIdentifier: String?, _ name: String, in candidates: [String: Element]
    ) -> Element? {
        if let renamingIdentifier, let found = candidates[renamingIdentifier] { return found }
        return candidates[name]
    }

    /// The attribute mappings of a destination entity from its source entity.
    private static func attributeMappings(
        _ entity: EntityDescription, from source: EntityDescription
    ) throws -> [PropertyMapping] {
        let sourceAttributes = source.attributesByName.filter { !$0.value.isTransient }
        return try entity.properties.compactMap { property -> PropertyMapping? in
            guard let attribute = property as? AttributeDescription, !attribute.isTransient,
                !(attribute is DerivedAttributeDescription)
            else { return nil }
            guard let from = counterpart(of: attribute.renamingIdentifier, attribute.name, in: sourceAttributes) else {
                return PropertyMapping(name: attribute.name, valueExpression: nil)
            }
            guard MigrationValueConversion.canConvert(from.attributeType, to: attribute.attributeType) else {
                throw notInferable(
                    "\(entity.entityName).\(attribute.name): the type changed from \(from.attributeType.xmlName) to \(attribute.attributeType.xmlName), which no lightweight migration converts"
                )
            }
            return PropertyMapping(name: attribute.name, valueExpression: FetchExpression(forKeyPath: from.name))
        }
    }

    /// The relationship mappings of a destination entity from its source entity.
    private static func relationshipMappings(
        _ entity: EntityDescription, from source: EntityDescription, sourceModel: ManagedObjectModel
    ) throws -> [PropertyMapping] {
        let sourceRelationships = source.relationshipsByName.filter { !$0.value.isTransient }
        return try entity.properties.compactMap { property -> PropertyMapping? in
            guard let relationship = property as? RelationshipDescription, !relationship.isTransient else { return nil }
            guard
                let from = counterpart(of: relationship.renamingIdentifier, relationship.name, in: sourceRelationships)
            else {
                return PropertyMapping(name: relationship.name, valueExpression: nil)
            }
            guard let destination = relationship.destinationEntity, let fromDestination = from.destinationEntity,
                let mapped = counterpart(
                    of: destination.renamingIdentifier, destination.entityName, in: sourceModel.entitiesByName),
                mapped.isKindOf(entity: fromDestination) || fromDestination.isKindOf(entity: mapped)
            else {
                throw notInferable(
                    "\(entity.entityName).\(relationship.name): the relationship led to \(from.destinationEntity?.entityName ?? "nothing") and now leads to "
                        + "\(relationship.destinationEntity?.entityName ?? "nothing"), an entity that does not map from it"
                )
            }
            return PropertyMapping(name: relationship.name, valueExpression: FetchExpression(forKeyPath: from.name))
        }
    }

    /// The error of a change inference cannot map.
    private static func notInferable(_ change: String) -> CoreDataError {
        CoreDataError(.inferredMappingModel, "cannot infer a mapping model: \(change)")
    }
}
