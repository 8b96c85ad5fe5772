import Foundation
import OrderedCollections

extension ManagedObject {
    /// The value of the property `key`, firing the fault if needed (Core Data's
    /// `value(forKey:)`).
    ///
    /// Attributes come back as their Swift types (`Int16`, `Int32`, `Int64`, `Decimal`,
    /// `Double`, `Float`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`, or the transformed
    /// value); a to-one relationship as the related `ManagedObject`; a to-many relationship as
    /// `Set<ManagedObject>`, or `[ManagedObject]` when it is ordered.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for a key the entity does not have;
    ///   another ``CoreDataError`` when the fault cannot be fulfilled (the store fails, the row is
    ///   gone and ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` is off, or the object
    ///   has no context any more).
    public func value(forKey key: String) throws -> Any? {
        try accessValue(try runtime.slot(key))
    }

    /// The value of `key` (read-only; set with ``setValue(_:forKey:)``).
    public subscript(key: String) -> Any? {
        get throws { try value(forKey: key) }
    }

    /// Sets the property `key`, maintaining the inverse relationship and recording the change
    /// (Core Data's `setValue(_:forKey:)`).
    ///
    /// Numbers are converted to the attribute's type when they fit exactly.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for an unknown key, or a value that does
    ///   not fit the property (wrong type, out of range, an object of the wrong entity or of
    ///   another context). Nothing changes then.
    public func setValue(_ value: Any?, forKey key: String) throws {
        let slot = try runtime.slot(key)
        let property = runtime.properties[slot]
        if let relationship = property as? RelationshipDescription {
            try setRelationship(value, relationship, slot: slot)
        } else {
            let normalized = try ValueConversion.normalize(value, for: property as! AttributeDescription, entity: entity)
            try fireFault()
            willChangeValue(forKey: key)
            values[slot] = normalized
            noteChange(slot)
            didChangeValue(forKey: key)
        }
    }

    /// The value of `key` without access notifications (Core Data's `primitiveValue(forKey:)`).
    ///
    /// - Throws: as ``value(forKey:)``.
    public func primitiveValue(forKey key: String) throws -> Any? {
        try publicValue(try runtime.slot(key))
    }

    /// Sets `key` without change notifications or inverse maintenance (Core Data's
    /// `setPrimitiveValue(_:forKey:)`), still recording the change for the next save.
    ///
    /// - Throws: as ``setValue(_:forKey:)``.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) throws {
        let slot = try runtime.slot(key)
        try fireFault()
        if let relationship = runtime.properties[slot] as? RelationshipDescription {
            values[slot] = try relationshipStorage(value, relationship)
        } else {
            values[slot] = try ValueConversion.normalize(value, for: runtime.properties[slot] as! AttributeDescription, entity: entity)
        }
        noteChange(slot)
    }

    /// A mutable set proxy for the to-many relationship `key`: adding and removing objects
    /// through it maintains inverses and records changes (Core Data's `mutableSetValue(forKey:)`).
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a to-many relationship.
    public func mutableSetValue(forKey key: String) throws -> MutableRelationshipSet {
        let slot = try runtime.slot(key)
        guard let relationship = runtime.properties[slot] as? RelationshipDescription, relationship.isToMany else {
            throw CoreDataError(.keyValueValidation, "\(entity.name).\(key) is not a to-many relationship", key: key)
        }
        return MutableRelationshipSet(owner: self, key: key)
    }

    /// A mutable ordered-set proxy for the ordered to-many relationship `key` (Core Data's
    /// `mutableOrderedSetValue(forKey:)`).
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not an ordered to-many relationship.
    public func mutableOrderedSetValue(forKey key: String) throws -> MutableRelationshipSet {
        let set = try mutableSetValue(forKey: key)
        guard (runtime.properties[try runtime.slot(key)] as! RelationshipDescription).isOrdered else {
            throw CoreDataError(.keyValueValidation, "\(entity.name).\(key) is not ordered", key: key)
        }
        return set
    }

    /// The persistent properties changed since the last save, with their new values.
    public func changedValues() -> [String: Any] {
        values(for: changedSlots)
    }

    /// The properties changed since the last `processPendingChanges()`, with their new values.
    public func changedValuesForCurrentEvent() -> [String: Any] {
        values(for: eventChangedSlots)
    }

    /// The last saved (or fetched) values of `keys` (all properties when `nil`). Relationships
    /// come back as object IDs; a new object has none.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let committed else { return [:] }
        var result: [String: Any] = [:]
        for (slot, property) in runtime.properties.enumerated() where keys?.contains(property.name) ?? true {
            if let value = committed[slot] { result[property.name] = exportIDs(value) }
        }
        return result
    }

    /// The IDs of the objects a relationship holds, without firing their faults.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a relationship.
    public func objectIDs(forRelationshipNamed key: String) throws -> [ManagedObjectID] {
        let slot = try runtime.slot(key)
        guard runtime.properties[slot] is RelationshipDescription else {
            throw CoreDataError(.keyValueValidation, "\(entity.name).\(key) is not a relationship", key: key)
        }
        try fireFault()
        try loadToMany(slot)
        switch values[slot] {
        case let id as ManagedObjectID: return [id]
        case let ids as OrderedSet<ManagedObjectID>: return Array(ids)
        default: return []
        }
    }

    /// Whether the relationship `key` is still a fault (not loaded).
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a relationship.
    public func hasFault(forRelationshipNamed key: String) throws -> Bool {
        let slot = try runtime.slot(key)
        guard let relationship = runtime.properties[slot] as? RelationshipDescription else {
            throw CoreDataError(.keyValueValidation, "\(entity.name).\(key) is not a relationship", key: key)
        }
        guard isLoaded else { return true }
        return relationship.isToMany && values[slot] == nil
    }

    // MARK: Internals

    /// Loads the object's values if it is a fault.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the fault has no context any more (it was
    ///   reset, released or merged away), or what fulfilling it throws.
    func fireFault() throws {
        guard !isLoaded else { return }
        guard let context = managedObjectContext else {
            throw CoreDataError(.coreData, "cannot fulfill the fault for \(objectID): it is no longer registered with a context", objectID: objectID)
        }
        try context.fulfillFault(self)
    }

    /// Loads a to-many relationship that is still a fault.
    func loadToMany(_ slot: Int) throws {
        guard case .toMany(let relationship) = runtime.kinds[slot], values[slot] == nil, let context = managedObjectContext
        else { return }
        values[slot] = try context.relatedIDs(of: self, relationship)
        if var committed, committed[slot] == nil {
            committed[slot] = values[slot]
            self.committed = committed
        }
    }

    /// The value of a slot as `value(forKey:)` returns it, between `willAccessValue(forKey:)`
    /// and `didAccessValue(forKey:)`.
    func accessValue(_ slot: Int) throws -> Any? {
        let key = runtime.names[slot]
        willAccessValue(forKey: key)
        defer { didAccessValue(forKey: key) }
        if case .other = runtime.kinds[slot] { return try fetchedPropertyValue(slot) }
        return try publicValue(slot)
    }

    /// The value of a slot as `value(forKey:)` returns it.
    func publicValue(_ slot: Int) throws -> Any? {
        try fireFault()
        switch runtime.loads[slot] {
        case .plain, .integer16, .integer32, .converted: return values[slot]
        case .toOne, .toOneOfHierarchy, .none: break
        }
        switch runtime.kinds[slot] {
        case .attribute, .other:
            return values[slot]
        case .toOne:
            guard let stored = values[slot], let context = managedObjectContext else { return nil }
            return context.object(with: stored as! ManagedObjectID)
        case .toMany(let relationship):
            try loadToMany(slot)
            guard let stored = values[slot], let context = managedObjectContext else { return nil }
            let objects = (stored as! OrderedSet<ManagedObjectID>).map { context.object(with: $0) }
            return relationship.isOrdered ? objects as Any : Set(objects) as Any
        }
    }

    /// Records that `slot` changed, telling the context.
    func noteChange(_ slot: Int) {
        changedSlots.insert(slot)
        eventChangedSlots.insert(slot)
        managedObjectContext?.objectDidChange(self)
    }

    private func values(for slots: Set<Int>) -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in slots.sorted() {
            result[runtime.properties[slot].name] = values[slot].map(exportIDs) ?? Optional<Any>.none as Any
        }
        return result
    }

    /// Relationship storage as the public API shows IDs: arrays instead of ordered sets.
    private func exportIDs(_ value: Any) -> Any {
        if let ids = value as? OrderedSet<ManagedObjectID> { return Array(ids) }
        return value
    }

    /// The stored form of a relationship value, checking entity and context.
    func relationshipStorage(_ value: Any?, _ relationship: RelationshipDescription) throws -> Any? {
        func check(_ object: ManagedObject) throws -> ManagedObjectID {
            guard let destination = relationship.destinationEntity, object.entity.isKindOf(entity: destination) else {
                throw CoreDataError(.keyValueValidation, "\(entity.name).\(relationship.name) takes \(relationship.destinationEntity?.name ?? "?") objects, not \(object.entity.name)", objectID: objectID, key: relationship.name)
            }
            guard object.managedObjectContext === managedObjectContext else {
                throw CoreDataError(.managedObjectReferentialIntegrity, "\(entity.name).\(relationship.name): the object is in another context", objectID: objectID, key: relationship.name)
            }
            return object.objectID
        }
        guard let value else {
            return relationship.isToMany ? OrderedSet<ManagedObjectID>() : nil
        }
        if !relationship.isToMany {
            guard let object = value as? ManagedObject else {
                throw CoreDataError(.keyValueValidation, "\(entity.name).\(relationship.name) takes a managed object, not \(type(of: value))", objectID: objectID, key: relationship.name)
            }
            return try check(object)
        }
        let objects: [ManagedObject]
        if let array = value as? [ManagedObject] {
            objects = array
        } else if let set = value as? Set<ManagedObject> {
            objects = Array(set)
        } else {
            throw CoreDataError(.keyValueValidation, "\(entity.name).\(relationship.name) takes a set or array of managed objects, not \(type(of: value))", objectID: objectID, key: relationship.name)
        }
        return OrderedSet(try objects.map(check))
    }
}
