/// What an entity mapping does (Core Data's `NSEntityMappingType`).
public enum EntityMappingType: UInt, Sendable, Hashable, CaseIterable {
    /// Not set.
    case undefinedEntityMappingType = 0x00
    /// A policy creates the destination objects (``EntityMapping/entityMigrationPolicyClassName``).
    case customEntityMappingType = 0x01
    /// The entity is new: no source objects.
    case addEntityMappingType = 0x02
    /// The entity is gone: its source objects are not migrated.
    case removeEntityMappingType = 0x03
    /// The entity is unchanged: objects are copied.
    case copyEntityMappingType = 0x04
    /// The entity changed: objects are copied through the property mappings.
    case transformEntityMappingType = 0x05
}
