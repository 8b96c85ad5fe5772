import OrderedCollections
import StrataSynchronization
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
    /// The name of the property of each slot.
    let names: [String]
    /// What each slot holds, decided once so that loading a row and reading a value need no casts.
    let kinds: [SlotKind]
    /// The slots of relationships.
    let relationshipSlots: [Int]
    /// How each slot's value is made from its column, with no reference to count: what loading
    /// a row reads for each property.
    let loads: [SlotLoad]
    /// The slots a row load decodes at once (``RowDecoding/decodesEagerly(_:)``, and past
    /// ``LazyRow/trackedSlots`` those whose value is kept, ``RowDecoding/keepsDecodedValue(_:)``);
    /// the others are decoded when read.
    let eagerSlots: [Int]
    /// The destination of each to-one relationship slot (`nil` for other slots), held strongly
    /// so that loading a row reads no weak reference.
    let toOneDestinations: [EntityDescription?]
    /// For each relationship slot with an inverse, the inverse's slot in the runtime of the
    /// inverse's entity (-1 for other slots): the inverse's slot in a related object, found with
    /// ``slot(of:hint:)`` and no name lookup (an inherited property keeps its slot in sub-entities).
    let inverseSlots: [Int]
    /// The slots ``ManagedObject/validateProperties()`` validates: every persistent property but
    /// optional to-many relationships with no count limits, which every value passes.
    let validatedSlots: [Int]
    /// Whether each slot is an attribute with a minimum, a maximum or a regular expression to
    /// check its values against.
    let checksValues: [Bool]
    /// How ``ManagedObject/validateProperties()`` may tell that each slot's value passes the
    /// model's checks without converting it (``ValidationShortcut``).
    let validationShortcuts: [ValidationShortcut]
    /// The entity's uniqueness constraints and its superentities', each with the entity that
    /// declares it (``ManagedObjectContext/uniquenessConstraints(of:)``), found once.
    let uniquenessConstraints: [(owner: EntityDescription, names: [String])]
    /// The values a new object starts with other than `nil`, by slot: attribute defaults, empty
    /// to-many relationships (``newObjectValues()``).
    private let initialValues: [(slot: Int, value: Any)]
    /// The Swift type each attribute slot holds when a value of exactly that type is stored as
    /// it is (``ValueConversion/exactType(of:)``; `nil` for other slots and derived attributes),
    /// so that a typed setter of that type converts nothing.
    let exactTypes: [ObjectIdentifier?]
    /// The slots by name again, for ``slotIndex(_:)``: an open-addressing table on a cheap hash
    /// of the name's bytes (``slots`` hashes with a `Hasher`, which costs more than the search).
    /// Each entry is a slot, or -1; its size is a power of two at least twice the properties'.
    private let nameTable: [Int]
    /// The subclass an instance was last created as with ``ManagedObject/init(entity:insertInto:)``
    /// (its `ObjectIdentifier`'s bits; 0: none), which registered it for the entity
    /// (``ManagedObjectClassRegistry/register(_:for:runtime:)``): creating more instances of it takes
    /// no lock. A lock per object made saves from many threads at once queue on it.
    let registeredClass = Atomic<UInt>(0)

    private init(_ entity: EntityDescription) {
        self.entity = entity
        let properties = entity.properties
        self.properties = properties
        slots = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        names = properties.map(\.name)
        kinds = properties.map { property in
            if let attribute = property as? AttributeDescription { return .attribute(attribute) }
            if let relationship = property as? RelationshipDescription {
                return relationship.isToMany ? .toMany(relationship) : .toOne(relationship)
            }
            return .other
        }
        relationshipSlots = properties.indices.filter { properties[$0] is RelationshipDescription }
        loads = properties.map { property in
            if let attribute = property as? AttributeDescription {
                switch attribute.attributeType {
                case .integer16AttributeType: return .integer16
                case .integer32AttributeType: return .integer32
                case .objectIDAttributeType, .transformableAttributeType, .compositeAttributeType: return .converted
                default: return .plain
                }
            }
            if let relationship = property as? RelationshipDescription, !relationship.isToMany {
                return relationship.destinationEntity.map { $0.subentities.isEmpty ? .toOne : .toOneOfHierarchy }
                    ?? .none
            }
            return .none
        }
        let slotLoads = loads
        eagerSlots = slotLoads.indices.filter { slot in
            RowDecoding.decodesEagerly(slotLoads[slot])
                || (slot >= LazyRow.trackedSlots && RowDecoding.keepsDecodedValue(slotLoads[slot]))
        }
        toOneDestinations = properties.map { property in
            guard let relationship = property as? RelationshipDescription, !relationship.isToMany else { return nil }
            return relationship.destinationEntity
        }
        validatedSlots = properties.indices.filter { slot in
            let property = properties[slot]
            guard !property.isTransient else { return false }
            guard let relationship = property as? RelationshipDescription, relationship.isToMany,
                property.validationPredicates.isEmpty
            else { return true }
            return !relationship.isOptional || relationship.minCount != 0 || relationship.maxCount != 0
        }
        checksValues = properties.map { property in
            guard let attribute = property as? AttributeDescription else { return false }
            return attribute.minValue != nil || attribute.maxValue != nil
                || !(attribute.regularExpressionString?.isEmpty ?? true)
                || !attribute.validationPredicates.isEmpty
        }
        inverseSlots = properties.map { property in
            guard let inverse = (property as? RelationshipDescription)?.inverseRelationship else { return -1 }
            return inverse.entity?.properties.firstIndex { $0 === inverse } ?? -1
        }
        initialValues = properties.indices.compactMap { slot -> (slot: Int, value: Any)? in
            let property = properties[slot]
            if let attribute = property as? AttributeDescription {
                // Defaults set in code (`defaultValue = 0` on an Integer 64 attribute) take the
                // attribute's type; one that does not fit is kept for validation to report.
                let value =
                    (try? ValueConversion.normalize(attribute.defaultValue, for: attribute, entity: entity))
                    ?? attribute.defaultValue
                return value.map { (slot, $0) }
            }
            if let relationship = property as? RelationshipDescription, relationship.isToMany {
                return (slot, OrderedSet<ManagedObjectID>())
            }
            return nil
        }
        exactTypes = properties.map { property in
            guard let attribute = property as? AttributeDescription, !(attribute is DerivedAttributeDescription) else {
                return nil
            }
            return ValueConversion.exactType(of: attribute.attributeType).map(ObjectIdentifier.init)
        }
        let (exactTypes, checksValues) = (exactTypes, checksValues)
        validationShortcuts = properties.indices.map {
            ValidationShortcut(properties[$0], exactType: exactTypes[$0], checksValues: checksValues[$0])
        }
        uniquenessConstraints = ManagedObjectContext.uniquenessConstraints(of: entity)
        nameTable = Self.nameTable(properties.map(\.name))
    }

    /// The table of ``nameTable`` for properties named `names`, in slot order; a name used twice
    /// finds its first slot, as ``slots``.
    private static func nameTable(_ names: [String]) -> [Int] {
        var size = 2
        while size < 2 * names.count { size *= 2 }
        var table = Array(repeating: -1, count: size)
        var seen = Set<String>()
        for (slot, name) in names.enumerated() where seen.insert(name).inserted {
            var position = nameHash(name) & (size - 1)
            while table[position] >= 0 { position = (position + 1) & (size - 1) }
            table[position] = slot
        }
        return table
    }

    /// The FNV-1a hash of `name`'s UTF-8 bytes.
    private static func nameHash(_ name: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The slot of the property named `key`, if the entity has one.
    func slotIndex(_ key: String) -> Int? {
        let mask = nameTable.count - 1
        var position = Self.nameHash(key) & mask
        while true {
            let slot = nameTable[position]
            if slot < 0 { return nil }
            if names[slot] == key { return slot }
            position = (position + 1) & mask
        }
    }

    private static let cache = Lock<[ObjectIdentifier: EntityRuntime]>([:])

    /// The runtime of `entity`, built once.
    static func of(_ entity: EntityDescription) -> EntityRuntime {
        cache.withLock { cache in
            if let known = cache[ObjectIdentifier(entity)], known.entity === entity { return known }
            let runtime = EntityRuntime(entity)
            cache[ObjectIdentifier(entity)] = runtime
            return runtime
        }
    }

    /// The slot of `property`: `hint` when it is the property's slot here (a pointer comparison),
    /// else looked up by the property's name.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when the entity has no property of that name.
    func slot(of property: PropertyDescription, hint: Int) throws -> Int {
        if hint >= 0, hint < properties.count, properties[hint] === property { return hint }
        return try slot(property.name)
    }

    /// The slot of `key`, or a ``CoreDataError`` naming the entity and key.
    func slot(_ key: String) throws -> Int {
        guard let slot = slotIndex(key) else {
            throw CoreDataError(
                .keyValueValidation, "the entity \(entity.entityName) has no property named \"\(key)\"", key: key)
        }
        return slot
    }

    /// The values of a new object, by slot (``initialValues``, `nil` elsewhere), in an array of
    /// its own: the object's first change writes in place. Sharing one array of initial values
    /// made that change copy every slot through `Optional<Any>`'s generic value witnesses
    /// (~350 instructions a new object: callgrind of strata-graph-bench, 1% of W1's and of a
    /// W2.relaxed save's).
    func newObjectValues() -> [Any?] {
        var values: [Any?] = []
        values.reserveCapacity(properties.count)
        for _ in properties.indices { values.append(nil) }
        for (slot, value) in initialValues { values[slot] = value }
        return values
    }
}

/// What one slot of an object holds.
enum SlotKind {
    /// An attribute's value.
    case attribute(AttributeDescription)
    /// A to-one relationship: the related object's ID, or `nil`.
    case toOne(RelationshipDescription)
    /// A to-many relationship: an `OrderedSet<ManagedObjectID>`, or `nil` while it is a fault.
    case toMany(RelationshipDescription)
    /// Any other property, its value held as set.
    case other
}

/// How a slot's object value is made from its column's stored value.
enum SlotLoad {
    /// The stored value as is: its payload (an `Int64` for integers).
    case plain
    /// An `Int16` from the stored integer.
    case integer16
    /// An `Int32` from the stored integer.
    case integer32
    /// Through ``RowDecoding/attributeValue(_:for:coordinator:)`` (object IDs, transformable values).
    case converted
    /// The ID of the object a to-one reference names, of an entity with no sub-entities.
    case toOne
    /// The ID of the object a to-one reference names, whose concrete entity may be a sub-entity.
    case toOneOfHierarchy
    /// Always `nil` when loading (to-many relationships, other properties).
    case none
}
