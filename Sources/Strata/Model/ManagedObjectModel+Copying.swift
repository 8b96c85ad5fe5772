import Foundation

extension ManagedObjectModel {
    /// A model holding copies of the entities, configurations and fetch request templates of
    /// `models` (Core Data's `init?(byMerging:)`); the models themselves are left as they are.
    /// `nil` when two models have an entity, a configuration or a template of one name (logged
    /// at error level), as in Core Data.
    public convenience init?(byMerging models: [ManagedObjectModel]?) {
        self.init()
        guard merge(loaded: (models ?? []).map { $0.copiedForMerging() }) else { return nil }
    }

    /// The merged model of `models` (``init(byMerging:)``) when it is the model of a store with
    /// the metadata `metadata` (Core Data's `init?(byMerging:forStoreMetadata:)`); else `nil`.
    public convenience init?(byMerging models: [ManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        self.init(byMerging: models)
        guard isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else { return nil }
    }

    /// A copy of the model, unfrozen: every entity, property, fetch index, configuration and
    /// fetch request template copied, relationships and indexes pointing into the copy.
    func copiedForMerging() -> ManagedObjectModel {
        var entityCopies: [ObjectIdentifier: EntityDescription] = [:]
        var propertyCopies: [ObjectIdentifier: PropertyDescription] = [:]
        let copies = entities.map { entity in
            let copy = EntityDescription()
            copy.name = entity.name
            copy.managedObjectClassName = entity.managedObjectClassName
            copy.isAbstract = entity.isAbstract
            copy.userInfo = entity.userInfo
            copy.versionHashModifier = entity.versionHashModifier
            copy.renamingIdentifier = entity.renamingIdentifier
            copy.uniquenessConstraints = entity.uniquenessConstraints.map {
                $0.map(EntityDescription.constraintElementName)
            }
            copy.properties = entity.ownProperties.map { property in
                let propertyCopy = Self.copy(of: property)
                propertyCopies[ObjectIdentifier(property)] = propertyCopy
                return propertyCopy
            }
            entityCopies[ObjectIdentifier(entity)] = copy
            return copy
        }
        for (entity, copy) in zip(entities, copies) {
            copy.subentities = entity.subentities.compactMap { entityCopies[ObjectIdentifier($0)] }
            for case let relationship as RelationshipDescription in entity.ownProperties {
                let relationshipCopy = propertyCopies[ObjectIdentifier(relationship)] as! RelationshipDescription
                relationshipCopy.destinationEntity = relationship.destinationEntity.flatMap {
                    entityCopies[ObjectIdentifier($0)]
                }
                relationshipCopy.inverseRelationship = relationship.inverseRelationship.flatMap {
                    propertyCopies[ObjectIdentifier($0)] as? RelationshipDescription
                }
            }
            copy.indexes = entity.indexes.map { index in
                FetchIndexDescription(
                    name: index.name,
                    elements: index.elements.compactMap { element in
                        guard let property = element.property.flatMap({ propertyCopies[ObjectIdentifier($0)] }) else {
                            return nil
                        }
                        let elementCopy = FetchIndexElementDescription(
                            property: property, collationType: element.collationType)
                        elementCopy.isAscending = element.isAscending
                        return elementCopy
                    })
            }
        }
        let model = ManagedObjectModel()
        model.entities = entities.compactMap { entityCopies[ObjectIdentifier($0)] }
        for name in configurations {
            model.setEntities(
                (entities(forConfigurationName: name) ?? []).compactMap { entityCopies[ObjectIdentifier($0)] },
                forConfigurationName: name)
        }
        for (name, template) in fetchRequestTemplatesByName {
            let copy = template.copied()
            copy.entity = template.entity.flatMap { entityCopies[ObjectIdentifier($0)] }
            model.setFetchRequestTemplate(copy, forName: name)
        }
        model.versionIdentifiers = versionIdentifiers
        return model
    }

    /// A copy of `property` with what every kind has and its own kind's facts; a relationship's
    /// destination and inverse are left for the caller to point into the copy.
    private static func copy(of property: PropertyDescription) -> PropertyDescription {
        let copy: PropertyDescription
        switch property {
        case let attribute as AttributeDescription:
            let attributeCopy: AttributeDescription
            if let composite = attribute as? CompositeAttributeDescription {
                let compositeCopy = CompositeAttributeDescription()
                compositeCopy.elements = composite.elements.compactMap { self.copy(of: $0) as? AttributeDescription }
                attributeCopy = compositeCopy
            } else if let derived = attribute as? DerivedAttributeDescription {
                let derivedCopy = DerivedAttributeDescription()
                derivedCopy.derivationExpression = derived.derivationExpression
                attributeCopy = derivedCopy
            } else {
                attributeCopy = AttributeDescription()
            }
            attributeCopy.attributeType = attribute.attributeType
            attributeCopy.attributeValueClassName = attribute.attributeValueClassName
            attributeCopy.defaultValue = attribute.defaultValue
            attributeCopy.allowsExternalBinaryDataStorage = attribute.allowsExternalBinaryDataStorage
            attributeCopy.valueTransformerName = attribute.valueTransformerName
            attributeCopy.preservesValueInHistoryOnDeletion = attribute.preservesValueInHistoryOnDeletion
            attributeCopy.minValue = attribute.minValue
            attributeCopy.maxValue = attribute.maxValue
            attributeCopy.regularExpressionString = attribute.regularExpressionString
            copy = attributeCopy
        case let relationship as RelationshipDescription:
            let relationshipCopy = RelationshipDescription()
            relationshipCopy.minCount = relationship.minCount
            relationshipCopy.maxCount = relationship.maxCount
            relationshipCopy.isOrdered = relationship.isOrdered
            relationshipCopy.deleteRule = relationship.deleteRule
            copy = relationshipCopy
        case let fetched as FetchedPropertyDescription:
            let fetchedCopy = FetchedPropertyDescription()
            fetchedCopy.fetchRequest = fetched.fetchRequest?.copied()
            copy = fetchedCopy
        default:
            copy = PropertyDescription()
        }
        copy.name = property.name
        copy.isOptional = property.isOptional
        copy.isTransient = property.isTransient
        copy.userInfo = property.userInfo
        copy.versionHashModifier = property.versionHashModifier
        copy.renamingIdentifier = property.renamingIdentifier
        copy.setValidationPredicates(
            property.validationPredicates, withValidationWarnings: property.validationWarnings.map { "\($0)" })
        return copy
    }
}
