import Foundation

/// Migrates the objects of one entity mapping (Core Data's `NSEntityMigrationPolicy`).
///
/// The default creates one destination object a source object, with the attribute values the
/// mapping's property mappings give (converted to the destination types), then sets the
/// relationships to the destination objects migrated from the source's related objects.
/// Subclass it for the changes inference cannot make (split a value in two, merge entities,
/// compute a value), name the subclass in ``EntityMapping/entityMigrationPolicyClassName``
/// (module-qualified, as `NSClassFromString` reads it) and call ``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``
/// for each object a custom ``createDestinationInstances(forSource:in:manager:)`` creates.
/// A plain class name (`SplitNamePolicy`, or Xcode's `$(PRODUCT_MODULE_NAME).SplitNamePolicy`)
/// is found among the loaded images' classes on Linux.
///
/// Property mappings' value expressions are evaluated with Core Data's variables: `$source`,
/// `$destination` (when relationships are set), `$manager`, `$entityMapping`,
/// `$propertyMapping` and `$entityPolicy` (this policy). A mapping's
/// `FUNCTION($entityPolicy, "selector:", …)` calls ``value(forFunction:arguments:)``: override it
/// for the custom functions of your mapping models (there is no Objective-C runtime to call a
/// method by its selector).
///
/// The manager calls, for each mapping in turn: ``begin(_:with:)``, then
/// ``createDestinationInstances(forSource:in:manager:)`` for every source object,
/// ``endInstanceCreation(forMapping:manager:)``; after every mapping created its objects,
/// ``createRelationships(forDestination:in:manager:)`` for every destination object,
/// ``endRelationshipCreation(forMapping:manager:)``; then
/// ``performCustomValidation(forMapping:manager:)`` and ``end(_:manager:)``.
open class EntityMigrationPolicy: ExpressionFunctionTarget {
    /// Creates a policy.
    public required init() {}

    /// The value of a custom function a mapping's expression calls on `$entityPolicy`
    /// (`FUNCTION($entityPolicy, "fullNameForFirst:last:", $source.first, $source.last)`).
    /// Override it and switch on `selectorName`; the default has no functions.
    ///
    /// - Throws: ``CoreDataError`` `migration` naming the selector, which ends the migration.
    open func value(forFunction selectorName: String, arguments: [Any?]) throws -> Any? {
        throw CoreDataError(
            .migration,
            "\(type(of: self)) has no function \(selectorName); override value(forFunction:arguments:) to answer it")
    }

    /// The value of a property mapping's expression, with Core Data's variables bound; `nil`
    /// when a key cannot be read.
    ///
    /// - Throws: what a function the expression calls throws.
    private func value(
        of propertyMapping: PropertyMapping, source: ManagedObject, destination: ManagedObject?,
        mapping: EntityMapping, manager: MigrationManager
    ) throws -> Any? {
        guard let expression = propertyMapping.valueExpression else { return nil }
        var variables: [String: Any] = [
            "source": source, "manager": manager, "entityMapping": mapping, "propertyMapping": propertyMapping,
            "entityPolicy": self,
        ]
        variables["destination"] = destination
        do {
            return try PredicateEvaluation(valueForKey: FetchPredicate.value(of:forKey:), substitutionVariables: nil)
                .value(expression, object: source, bindings: variables)
        } catch is PredicateEvaluation.Failure {
            return nil
        }
    }

    /// Called before the mapping's objects are created.
    ///
    /// - Throws: an error, which ends the migration.
    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {}

    /// Creates the destination objects of `sInstance` in the manager's destination context and
    /// associates them with it.
    ///
    /// - Throws: ``CoreDataError`` `migration` when a value does not convert; what a subclass throws.
    open func createDestinationInstances(
        forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard let name = mapping.destinationEntityName,
            let entity = manager.destinationModel.entitiesByName[name]
        else { return }
        let destination = EntityDescription.insertNewObject(
            forEntityName: entity.entityName, into: manager.destinationContext)
        for attributeMapping in mapping.attributeMappings ?? [] {
            guard let key = attributeMapping.name, attributeMapping.valueExpression != nil,
                let attribute = entity.attributesByName[key]
            else { continue }
            let value = try MigrationValueConversion.convert(
                try value(of: attributeMapping, source: sInstance, destination: nil, mapping: mapping, manager: manager),
                to: attribute, entity: entity)
            if value != nil || attribute.isOptional { destination.setValue(value, forKey: key) }
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: destination, for: mapping)
    }

    /// Called after the mapping's objects are created.
    ///
    /// - Throws: an error, which ends the migration.
    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Sets the relationships of `dInstance`: each relationship mapping's source objects become
    /// the destination objects migrated from them.
    ///
    /// - Throws: ``CoreDataError`` `migration` when a to-many relationship with several objects
    ///   became a to-one; what a subclass throws.
    open func createRelationships(
        forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard
            let source = manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [dInstance])
                .first
        else { return }
        for relationshipMapping in mapping.relationshipMappings ?? [] {
            guard let key = relationshipMapping.name, relationshipMapping.valueExpression != nil,
                let relationship = dInstance.entity.relationshipsByName[key], manager.setsRelationship(relationship)
            else { continue }
            let related: [ManagedObject]
            switch try value(of: relationshipMapping, source: source, destination: dInstance, mapping: mapping, manager: manager) {
            case let object as ManagedObject: related = [object]
            case let objects as [ManagedObject]: related = objects
            case let objects as Set<ManagedObject>: related = Array(objects)
            case let objects as [Any?]: related = objects.compactMap { $0 as? ManagedObject }
            default: related = []
            }
            // Core Data's expressions give the destination objects
            // (`destinationInstancesForEntityMappingNamed:sourceInstances:`); a key path of the
            // source gives source objects, whose destination objects are taken.
            let destinations =
                related.allSatisfy { $0.managedObjectContext === manager.destinationContext }
                ? related : manager.destinationInstances(forSourceInstances: related)
            if relationship.isToMany {
                if relationship.isOrdered {
                    dInstance.setValue(destinations, forKey: key)
                } else {
                    dInstance.setValue(Set(destinations), forKey: key)
                }
            } else {
                guard destinations.count <= 1 else {
                    throw CoreDataError(
                        .migration,
                        "\(dInstance.entity.entityName).\(key) became a to-one relationship, but an object has \(destinations.count) related objects",
                        objectID: source.objectID, key: key)
                }
                dInstance.setValue(destinations.first, forKey: key)
            }
        }
    }

    /// Called after the relationships of the mapping's objects are set.
    ///
    /// - Throws: an error, which ends the migration.
    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called after every object is created and related, to check what the model's validation
    /// cannot.
    ///
    /// - Throws: an error, which ends the migration.
    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called last for the mapping.
    ///
    /// - Throws: an error, which ends the migration.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}
}
