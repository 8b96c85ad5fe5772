import OrderedCollections
import Synchronization

/// What managed objects of one entity need at run time: every property (inherited ones
/// first) with its slot in the object's value array.
// @unchecked: every property is immutable; `initialValues` holds the model's default values,
// which the model itself shares across threads once frozen.
final class EntityRuntime: @unchecked Sendable {
    /// The entity.
    let entity: EntityDescription
    /// Every property, superentities' first, in a stable order.
    let properties: [PropertyDescription]
    /// The slot of each property, by name.
    let slots: [String: Int]
    /// The slots of relationships.
    let relationshipSlots: [Int]
    /// The values of a new object: attribute defaults, empty to-many relationships.
    let initialValues: [Any?]

    private init(_ entity: EntityDescription) {
        self.entity = entity
        let properties = entity.properties
        self.properties = properties
        slots = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        relationshipSlots = properties.indices.filter { properties[$0] is RelationshipDescription }
        initialValues = properties.map { property in
            if let attribute = property as? AttributeDescription { return attribute.defaultValue }
            if let relationship = property as? RelationshipDescription, relationship.isToMany {
                return OrderedSet<ManagedObjectID>()
            }
            return nil
        }
    }

    private static let cache = Mutex<[ObjectIdentifier: EntityRuntime]>([:])

    /// The runtime of `entity`, built once.
    static func of(_ entity: EntityDescription) -> EntityRuntime {
        cache.withLock { cache in
            if let known = cache[ObjectIdentifier(entity)], known.entity === entity { return known }
            let runtime = EntityRuntime(entity)
            cache[ObjectIdentifier(entity)] = runtime
            return runtime
        }
    }

    /// The slot of `key`, or a ``CoreDataError`` naming the entity and key.
    func slot(_ key: String) throws -> Int {
        guard let slot = slots[key] else {
            throw CoreDataError(.keyValueValidation, "the entity \(entity.name) has no property named \"\(key)\"", key: key)
        }
        return slot
    }
}
