import Foundation

/// How the objects of one source entity become objects of one destination entity (Core Data's
/// `NSEntityMapping`).
public final class EntityMapping {
    /// The mapping's name, unique in its mapping model (an inferred one's is
    /// `SourceToDestination`, or the entity's name when it is added or removed).
    public var name: String = ""
    /// What the mapping does.
    public var mappingType: EntityMappingType = .undefinedEntityMappingType
    /// The source entity's name (`nil` for an added entity).
    public var sourceEntityName: String?
    /// The source entity's version hash.
    public var sourceEntityVersionHash: Data?
    /// The destination entity's name (`nil` for a removed entity).
    public var destinationEntityName: String?
    /// The destination entity's version hash.
    public var destinationEntityVersionHash: Data?
    /// The source objects the mapping migrates (Core Data's `sourceExpression`): an expression
    /// evaluated with `$manager` bound to the ``MigrationManager``, whose value is the objects,
    /// such as `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:",
    /// "Employee", "active == YES"), $manager.sourceContext, NO)`. `nil` migrates every object of
    /// the source entity (its subentities have mappings of their own).
    public var sourceExpression: FetchExpression?
    /// How the destination object's attributes get their values.
    public var attributeMappings: [PropertyMapping]?
    /// How the destination object's relationships get their objects.
    public var relationshipMappings: [PropertyMapping]?
    /// The module-qualified name of the ``EntityMigrationPolicy`` subclass that migrates the
    /// entity's objects (`"MyApp.SplitNamePolicy"`); `nil` for ``EntityMigrationPolicy`` itself.
    public var entityMigrationPolicyClassName: String?
    /// Anything the program keeps with the mapping.
    public var userInfo: [AnyHashable: Any]?

    /// Creates an empty mapping.
    public init() {}

    /// The attribute mappings by destination property name.
    public var attributeMappingsByName: [String: PropertyMapping] {
        Dictionary(
            (attributeMappings ?? []).compactMap { mapping in mapping.name.map { ($0, mapping) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// The relationship mappings by destination property name.
    public var relationshipMappingsByName: [String: PropertyMapping] {
        Dictionary(
            (relationshipMappings ?? []).compactMap { mapping in mapping.name.map { ($0, mapping) } },
            uniquingKeysWith: { first, _ in first })
    }
}
