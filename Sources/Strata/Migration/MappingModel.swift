/// How to migrate a store from one model to another: one entity mapping per entity (Core Data's
/// `NSMappingModel`). Infer one with ``inferredMappingModel(forSourceModel:destinationModel:)``,
/// or build one with custom mappings and policies for changes inference cannot make.
public final class MappingModel {
    /// The entity mappings, in the order they are migrated.
    public var entityMappings: [EntityMapping]
    /// Whether ``inferredMappingModel(forSourceModel:destinationModel:)`` made it: a lightweight
    /// migration, whose objects Core Data does not validate.
    var isInferred = false

    /// Creates a mapping model of `entityMappings`.
    public init(entityMappings: [EntityMapping] = []) {
        self.entityMappings = entityMappings
    }

    /// The entity mappings by name.
    public var entityMappingsByName: [String: EntityMapping] {
        Dictionary(entityMappings.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
