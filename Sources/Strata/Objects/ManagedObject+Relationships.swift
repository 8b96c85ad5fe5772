import OrderedCollections

extension ManagedObject {
    /// Sets a relationship, keeping the inverse relationship of every object involved in step.
    func setRelationship(_ value: Any?, _ relationship: RelationshipDescription, slot: Int) throws {
        if value != nil { try requireContext(toSet: relationship) }
        let new = try relationshipStorage(value, relationship)
        guard relationship.isToMany else {
            return try setToOne(id: SlotValueCast.cast(new, to: ManagedObjectID.self), relationship, slot: slot)
        }
        try fireFault()
        try loadToMany(slot)
        willChangeValue(forKey: relationship.name)
        defer { didChangeValue(forKey: relationship.name) }
        let old = SlotValueCast.cast(values[slot], to: OrderedSet<ManagedObjectID>.self) ?? []
        let updated = new as! OrderedSet<ManagedObjectID>
        for id in old where !updated.contains(id) { try unlinkInverse(of: relationship, slot: slot, at: id) }
        for id in updated where !old.contains(id) { try linkInverse(of: relationship, slot: slot, at: id) }
        values[slot] = updated
        noteChange(slot)
    }

    /// Sets the to-one relationship in `slot` to `object` (`nil` clears it), as
    /// ``setRelationship(_:_:slot:)`` does, without making an `Any` of the object or casting
    /// one back: the path of a typed setter (`@Managed`).
    func setToOne(_ object: ManagedObject?, _ relationship: RelationshipDescription, slot: Int) throws {
        guard let object else { return try setToOne(id: nil, relationship, slot: slot) }
        try requireContext(toSet: relationship)
        try setToOne(id: try checkedID(of: object, for: relationship), relationship, slot: slot)
    }

    /// Sets the to-one relationship in `slot` to the object `updated` names (`nil` clears it),
    /// keeping the inverse relationships of the objects involved in step.
    private func setToOne(id updated: ManagedObjectID?, _ relationship: RelationshipDescription, slot: Int) throws {
        try fireFault()
        willChangeValue(forKey: relationship.name)
        defer { didChangeValue(forKey: relationship.name) }
        let old = SlotValueCast.cast(values[slot], to: ManagedObjectID.self)
        guard old != updated else { return }
        if let old { try unlinkInverse(of: relationship, slot: slot, at: old) }
        if let updated { try linkInverse(of: relationship, slot: slot, at: updated) }
        values[slot] = updated
        noteChange(slot)
    }

    /// Throws unless the object is in a context: a relationship is set to objects only there.
    private func requireContext(toSet relationship: RelationshipDescription) throws {
        guard liveContext == nil else { return }
        throw CoreDataError(
            .managedObjectReferentialIntegrity,
            "insert \(entity.entityName) into a context before setting \(relationship.name)", objectID: objectID,
            key: relationship.name)
    }

    /// Makes the inverse of `relationship` (at `slot` here) on the object `id` include this object.
    private func linkInverse(of relationship: RelationshipDescription, slot: Int, at id: ManagedObjectID) throws {
        guard let inverse = relationship.inverseRelationship, let context = managedObjectContext else { return }
        let other = context.object(with: id)
        try other.fireFault()
        let inverseSlot = try other.runtime.slot(of: inverse, hint: runtime.inverseSlots[slot])
        if !inverse.isToMany, let previous = SlotValueCast.cast(other.values[inverseSlot], to: ManagedObjectID.self),
            previous != objectID
        {
            // The other object leaves its previous partner, whose side of `relationship` drops it.
            let partner = context.object(with: previous)
            try partner.fireFault()
            try partner.editRelationship(try partner.runtime.slot(of: relationship, hint: slot), removing: id)
        }
        try other.editRelationship(inverseSlot, adding: objectID)
    }

    /// Makes the inverse of `relationship` (at `slot` here) on the object `id` drop this object.
    private func unlinkInverse(of relationship: RelationshipDescription, slot: Int, at id: ManagedObjectID) throws {
        guard let inverse = relationship.inverseRelationship, let context = managedObjectContext else { return }
        let other = context.object(with: id)
        try other.fireFault()
        try other.editRelationship(
            try other.runtime.slot(of: inverse, hint: runtime.inverseSlots[slot]), removing: objectID)
    }

    /// Adds `id` to a relationship slot (or sets a to-one slot to it), without inverse maintenance.
    /// A to-many relationship that is still a fault records the addition instead of loading
    /// (``keepsEdits(of:slot:)``).
    func editRelationship(_ slot: Int, adding id: ManagedObjectID) throws {
        let relationship = runtime.properties[slot] as! RelationshipDescription
        if relationship.isToMany, keepsEdits(of: relationship, slot: slot) {
            editFault(slot) { $0.add(id) }
        } else if relationship.isToMany {
            try loadToMany(slot)
            var ids = SlotValueCast.cast(values[slot], to: OrderedSet<ManagedObjectID>.self) ?? []
            values[slot] = nil
            let inserted = ids.appendKeepingTableSparse(id)
            values[slot] = ids
            guard inserted else { return }
        } else {
            guard SlotValueCast.cast(values[slot], to: ManagedObjectID.self) != id else { return }
            values[slot] = id
        }
        willChangeValue(forKey: relationship.name)
        noteChange(slot)
        didChangeValue(forKey: relationship.name)
    }

    /// Removes `id` from a relationship slot (or clears a to-one slot holding it), without
    /// inverse maintenance. A to-many relationship that is still a fault records the removal
    /// instead of loading (``keepsEdits(of:slot:)``).
    func editRelationship(_ slot: Int, removing id: ManagedObjectID) throws {
        let relationship = runtime.properties[slot] as! RelationshipDescription
        if relationship.isToMany, keepsEdits(of: relationship, slot: slot) {
            editFault(slot) { $0.remove(id) }
        } else if relationship.isToMany {
            try loadToMany(slot)
            var ids = SlotValueCast.cast(values[slot], to: OrderedSet<ManagedObjectID>.self) ?? []
            values[slot] = nil
            let removed = ids.remove(id) != nil
            values[slot] = ids
            guard removed else { return }
        } else {
            guard SlotValueCast.cast(values[slot], to: ManagedObjectID.self) == id else { return }
            values[slot] = nil
        }
        willChangeValue(forKey: relationship.name)
        noteChange(slot)
        didChangeValue(forKey: relationship.name)
    }
}

/// A live, mutable view of a to-many relationship: changes made through it maintain inverse
/// relationships and are recorded for the next save (what Core Data's `mutableSetValue(forKey:)`
/// and `mutableOrderedSetValue(forKey:)` return, with `NSMutableSet`'s and
/// `NSMutableOrderedSet`'s names).
///
/// Use it on the owner's context queue only. Adding an object of another entity or context
/// stops the program, as Core Data raises an exception.
public final class MutableRelationshipSet: Sequence {
    let owner: ManagedObject
    let key: String

    init(owner: ManagedObject, key: String) {
        self.owner = owner
        self.key = key
    }

    /// The related objects, in order for an ordered relationship.
    public var allObjects: [ManagedObject] {
        switch owner.value(forKey: key) {
        case let ordered as [ManagedObject]: return ordered
        case let set as Set<ManagedObject>: return Array(set)
        default: return []
        }
    }

    /// The number of related objects.
    public var count: Int {
        owner.objectIDs(forRelationshipNamed: key).count
    }

    /// Whether `object` is related.
    public func contains(_ object: ManagedObject) -> Bool {
        owner.objectIDs(forRelationshipNamed: key).contains(object.objectID)
    }

    /// Relates `object` (at the end, for an ordered relationship).
    public func add(_ object: ManagedObject) {
        addObjects(from: [object])
    }

    /// Relates each of `objects` not related yet (at the end, in order, for an ordered relationship).
    public func addObjects(from objects: [ManagedObject]) {
        var related = allObjects
        for object in objects where !related.contains(object) { related.append(object) }
        owner.setValue(related, forKey: key)
    }

    /// Relates `object` at `index` of an ordered relationship.
    public func insert(_ object: ManagedObject, at index: Int) {
        var objects = allObjects.filter { $0 != object }
        objects.insert(object, at: Swift.min(index, objects.count))
        owner.setValue(objects, forKey: key)
    }

    /// Stops relating `object`.
    public func remove(_ object: ManagedObject) {
        owner.setValue(allObjects.filter { $0 != object }, forKey: key)
    }

    /// Stops relating every object.
    public func removeAllObjects() {
        owner.setValue([ManagedObject](), forKey: key)
    }

    /// Iterates the related objects.
    public func makeIterator() -> IndexingIterator<[ManagedObject]> {
        allObjects.makeIterator()
    }
}
