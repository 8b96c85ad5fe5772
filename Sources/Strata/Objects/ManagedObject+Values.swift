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
    /// - Important: a key the entity does not have is a programmer error that stops the program
    ///   with a message naming the entity and key, as Core Data's `NSUnknownKeyException`; so is
    ///   a fault that cannot be fulfilled (Core Data's `NSObjectInaccessibleException`). For keys
    ///   that come from outside the program, use ``value(forCheckedKey:)``.
    public func value(forKey key: String) -> Any? {
        trapping(key) { try accessValue(uncheckedSlot(key)) }
    }

    /// The value of the property `key`, as ``value(forKey:)``, throwing instead of stopping
    /// the program on an unknown key.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for a key the entity does not have;
    ///   another ``CoreDataError`` when the fault cannot be fulfilled (the store fails, the row is
    ///   gone and ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` is off, or the object
    ///   has no context any more).
    public func value(forCheckedKey key: String) throws -> Any? {
        try accessValue(try runtime.slot(key))
    }

    /// The value of `key`, as ``value(forKey:)``; setting it is ``setValue(_:forKey:)``.
    /// (Core Data has no subscript; this is a shorthand.)
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// Sets the property `key`, maintaining the inverse relationship and recording the change
    /// (Core Data's `setValue(_:forKey:)`).
    ///
    /// Numbers are converted to the attribute's type when they fit exactly. A value that does
    /// not fit the attribute (a `String` for an integer, a number out of `Int16` range) is kept
    /// as it is, and makes validation and `save()` fail with a ``CoreDataError``
    /// `managedObjectValidation` naming the object and key, as in Core Data; nothing is stored
    /// and the context keeps its changes, so the value can be fixed and saved again.
    ///
    /// - Important: an unknown key, or a relationship value of the wrong kind (not a managed
    ///   object of the destination entity in the same context), stops the program with a message
    ///   naming the entity and key, as Core Data raises an exception. For keys and values that
    ///   come from outside the program, use ``setValue(_:forCheckedKey:)``.
    public func setValue(_ value: Any?, forKey key: String) {
        trapping(key) { try setValue(value, slot: uncheckedSlot(key), strict: false) }
    }

    /// Sets the property `key`, as ``setValue(_:forKey:)``, throwing instead of keeping a value
    /// of the wrong type or stopping the program.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for an unknown key, or a value that does
    ///   not fit the property (wrong type, out of range, an object of the wrong entity);
    ///   `managedObjectReferentialIntegrity` for an object of another context. Nothing changes then.
    public func setValue(_ value: Any?, forCheckedKey key: String) throws {
        try setValue(value, slot: try runtime.slot(key), strict: true)
    }

    /// The value of `key` without access notifications (Core Data's `primitiveValue(forKey:)`).
    ///
    /// - Important: stops the program on an unknown key, as ``value(forKey:)``; see
    ///   ``primitiveValue(forCheckedKey:)``.
    public func primitiveValue(forKey key: String) -> Any? {
        trapping(key) { try publicValue(uncheckedSlot(key)) }
    }

    /// The value of `key` without access notifications, throwing on an unknown key.
    ///
    /// - Throws: as ``value(forCheckedKey:)``.
    public func primitiveValue(forCheckedKey key: String) throws -> Any? {
        try publicValue(try runtime.slot(key))
    }

    /// Sets `key` without change notifications or inverse maintenance (Core Data's
    /// `setPrimitiveValue(_:forKey:)`), still recording the change for the next save.
    ///
    /// - Important: keeps an attribute value of the wrong type for validation to report and
    ///   stops the program on an unknown key, as ``setValue(_:forKey:)``; see
    ///   ``setPrimitiveValue(_:forCheckedKey:)``.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        trapping(key) { try setPrimitiveValue(value, slot: uncheckedSlot(key), strict: false) }
    }

    /// Sets `key` without change notifications or inverse maintenance, throwing instead of
    /// keeping a value of the wrong type or stopping the program.
    ///
    /// - Throws: as ``setValue(_:forCheckedKey:)``.
    public func setPrimitiveValue(_ value: Any?, forCheckedKey key: String) throws {
        try setPrimitiveValue(value, slot: try runtime.slot(key), strict: true)
    }

    /// A mutable set proxy for the to-many relationship `key`: adding and removing objects
    /// through it maintains inverses and records changes (Core Data's `mutableSetValue(forKey:)`).
    ///
    /// - Important: stops the program when `key` is not a to-many relationship of the entity;
    ///   see ``mutableSetValue(forCheckedKey:)``.
    public func mutableSetValue(forKey key: String) -> MutableRelationshipSet {
        trapping(key) { try mutableSetValue(forCheckedKey: key) }
    }

    /// A mutable set proxy for the to-many relationship `key`, as ``mutableSetValue(forKey:)``.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a to-many relationship.
    public func mutableSetValue(forCheckedKey key: String) throws -> MutableRelationshipSet {
        guard let relationship = runtime.properties[try runtime.slot(key)] as? RelationshipDescription,
            relationship.isToMany
        else {
            throw CoreDataError(
                .keyValueValidation, "\(entity.entityName).\(key) is not a to-many relationship", key: key)
        }
        return MutableRelationshipSet(owner: self, key: key)
    }

    /// A mutable ordered-set proxy for the ordered to-many relationship `key` (Core Data's
    /// `mutableOrderedSetValue(forKey:)`).
    ///
    /// - Important: stops the program when `key` is not an ordered to-many relationship of the
    ///   entity; see ``mutableOrderedSetValue(forCheckedKey:)``.
    public func mutableOrderedSetValue(forKey key: String) -> MutableRelationshipSet {
        trapping(key) { try mutableOrderedSetValue(forCheckedKey: key) }
    }

    /// A mutable ordered-set proxy for the ordered to-many relationship `key`, as
    /// ``mutableOrderedSetValue(forKey:)``.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not an ordered to-many relationship.
    public func mutableOrderedSetValue(forCheckedKey key: String) throws -> MutableRelationshipSet {
        let set = try mutableSetValue(forCheckedKey: key)
        guard (runtime.properties[try runtime.slot(key)] as! RelationshipDescription).isOrdered else {
            throw CoreDataError(.keyValueValidation, "\(entity.entityName).\(key) is not ordered", key: key)
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

    /// The IDs of the objects a relationship holds, without firing their faults (Core Data's
    /// `objectIDs(forRelationshipNamed:)`).
    ///
    /// - Important: stops the program when `key` is not a relationship of the entity, or the
    ///   object's own fault cannot be fulfilled.
    public func objectIDs(forRelationshipNamed key: String) -> [ManagedObjectID] {
        trapping(key) { try relatedIDs(key) }
    }

    /// Whether the relationship `key` is still a fault (not loaded) (Core Data's
    /// `hasFault(forRelationshipNamed:)`).
    ///
    /// - Important: stops the program when `key` is not a relationship of the entity.
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        let slot = trapping(key) { try relationshipSlot(key) }
        guard isLoaded else { return true }
        guard (runtime.properties[slot] as! RelationshipDescription).isToMany else { return false }
        return values[slot] == nil || holdsEdits(slot)
    }

    // MARK: Internals

    /// The slot of `key`; a key the entity does not have stops the program, as Core Data's
    /// `NSUnknownKeyException` does.
    func uncheckedSlot(_ key: String) -> Int {
        guard let slot = runtime.slotIndex(key) else {
            preconditionFailure(
                "[<\(entity.entityName) \(objectID)> valueForUndefinedKey:]: the entity \(entity.entityName) is not key value coding-compliant for the key \"\(key)\""
            )
        }
        return slot
    }

    /// The slot of the relationship `key`.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a relationship.
    private func relationshipSlot(_ key: String) throws -> Int {
        let slot = try runtime.slot(key)
        guard runtime.properties[slot] is RelationshipDescription else {
            throw CoreDataError(.keyValueValidation, "\(entity.entityName).\(key) is not a relationship", key: key)
        }
        return slot
    }

    /// The IDs of the objects the relationship `key` holds.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` is not a relationship, or
    ///   what fulfilling the fault throws.
    func relatedIDs(_ key: String) throws -> [ManagedObjectID] {
        let slot = try relationshipSlot(key)
        try fireFault()
        try loadToMany(slot)
        switch values[slot] {
        case let id as ManagedObjectID: return [id]
        case let ids as OrderedSet<ManagedObjectID>: return Array(ids)
        default: return []
        }
    }

    /// Runs `body`, stopping the program with a message naming the entity and key when it
    /// throws: the non-throwing key-value calls treat failures as Core Data's exceptions.
    func trapping<T>(_ key: String, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            preconditionFailure("\(entity.entityName).\(key): \(error)")
        }
    }

    /// Sets the property in `slot`. With `strict`, an attribute value that does not fit throws;
    /// otherwise it is kept for validation to report.
    func setValue(_ value: Any?, slot: Int, strict: Bool) throws {
        let property = runtime.properties[slot]
        if let relationship = property as? RelationshipDescription {
            try setRelationship(value, relationship, slot: slot)
        } else {
            try setAttributeValue(try attributeStorage(value, property, strict: strict), slot: slot)
        }
    }

    /// Sets the attribute in `slot` to `value`, already converted to the attribute's type, with
    /// change notifications. The value is taken, not copied: a typed setter's `Any` is moved into
    /// the slot instead of copied and then destroyed (~110 instructions a set, callgrind, W1).
    func setAttributeValue(_ value: consuming Any?, slot: Int) throws {
        let key = runtime.names[slot]
        try fireFault()
        willChangeValue(forKey: key)
        values[slot] = consume value
        noteChange(slot)
        didChangeValue(forKey: key)
    }

    /// Sets the property in `slot` without notifications or inverse maintenance.
    private func setPrimitiveValue(_ value: Any?, slot: Int, strict: Bool) throws {
        let property = runtime.properties[slot]
        let stored =
            try (property as? RelationshipDescription).map { try relationshipStorage(value, $0) }
            ?? attributeStorage(value, property, strict: strict)
        try fireFault()
        values[slot] = stored
        noteChange(slot)
    }

    /// What an attribute slot holds for `value`: the value converted to the attribute's type;
    /// when it does not fit, an error with `strict`, else the value as it is.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `property` is not an attribute (a
    ///   fetched property, which is read-only), or with `strict` for a value that does not fit.
    private func attributeStorage(_ value: Any?, _ property: PropertyDescription, strict: Bool) throws -> Any? {
        guard let attribute = property as? AttributeDescription else {
            throw CoreDataError(
                .keyValueValidation, "\(entity.entityName).\(property.name) is a fetched property, which cannot be set",
                objectID: objectID, key: property.name)
        }
        do {
            return try ValueConversion.normalize(value, for: attribute, entity: entity)
        } catch  where !strict {
            return value
        }
    }

    /// Loads the object's values if it is a fault.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the fault has no context any more (it was
    ///   reset, released or merged away), or what fulfilling it throws.
    func fireFault() throws {
        guard !isLoaded else { return }
        guard let context = managedObjectContext else {
            throw CoreDataError(
                .coreData, "cannot fulfill the fault for \(objectID): it is no longer registered with a context",
                objectID: objectID)
        }
        try context.fulfillFault(self)
    }

    /// Loads a to-many relationship that is still a fault, with the edits made to it meanwhile
    /// (``ToManyEdits``) applied to what the store holds.
    func loadToMany(_ slot: Int) throws {
        guard case .toMany(let relationship) = runtime.kinds[slot] else { return }
        if lazyRow != nil { decodeLazyRow() }
        // The slot's value looked at in place (a copy of it, to compare with nil, retained it).
        let edits = holdsEdits(slot) ? SlotValueCast.cast(values[slot], to: ToManyEdits.self) : nil
        guard edits != nil || storedType(slot) == nil, let context = managedObjectContext else { return }
        let stored = try context.relatedIDs(of: self, relationship)
        values[slot] = edits?.applied(to: stored) ?? stored
        if var committed, committed[slot] == nil {
            committed[slot] = stored
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
        case .plain, .integer16, .integer32, .converted: return try slotValue(slot)
        case .toOne, .toOneOfHierarchy, .none: break
        }
        switch runtime.kinds[slot] {
        case .attribute, .other:
            return values[slot]
        case .toOne:
            guard let stored = try slotValue(slot), let context = managedObjectContext else { return nil }
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
        liveContext?._withUnsafeGuaranteedRef { $0.objectDidChange(self) }
    }

    private func values(for slots: SlotSet) -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in slots.sorted() {
            // A relationship changed while a fault is loaded; one that cannot be read is left out
            // rather than shown as its internal edits.
            if holdsEdits(slot) {
                try? loadToMany(slot)
                if holdsEdits(slot) { continue }
            }
            result[runtime.properties[slot].name] = values[slot].map(exportIDs) ?? Optional<Any>.none as Any
        }
        return result
    }

    /// Relationship storage as the public API shows IDs: arrays instead of ordered sets.
    private func exportIDs(_ value: Any) -> Any {
        if let ids = value as? OrderedSet<ManagedObjectID> { return Array(ids) }
        return value
    }

    /// The ID of `object` as `relationship` stores it, checking its entity and context.
    func checkedID(of object: ManagedObject, for relationship: RelationshipDescription) throws -> ManagedObjectID {
        guard let destination = relationship.destinationEntity, object.entity.isKindOf(entity: destination) else {
            throw CoreDataError(
                .keyValueValidation,
                "\(entity.entityName).\(relationship.name) takes \(relationship.destinationEntity?.entityName ?? "?") objects, not \(object.entity.entityName)",
                objectID: objectID, key: relationship.name)
        }
        guard object.liveContext?.toOpaque() == liveContext?.toOpaque() else {
            throw CoreDataError(
                .managedObjectReferentialIntegrity,
                "\(entity.entityName).\(relationship.name): the object is in another context", objectID: objectID,
                key: relationship.name)
        }
        return object.objectID
    }

    /// The stored form of a relationship value, checking entity and context.
    func relationshipStorage(_ value: Any?, _ relationship: RelationshipDescription) throws -> Any? {
        guard let value else {
            return relationship.isToMany ? OrderedSet<ManagedObjectID>() : nil
        }
        if !relationship.isToMany {
            guard let object = value as? ManagedObject else {
                throw CoreDataError(
                    .keyValueValidation,
                    "\(entity.entityName).\(relationship.name) takes a managed object, not \(type(of: value))",
                    objectID: objectID, key: relationship.name)
            }
            return try checkedID(of: object, for: relationship)
        }
        let objects: [ManagedObject]
        if let array = value as? [ManagedObject] {
            objects = array
        } else if let set = value as? Set<ManagedObject> {
            objects = Array(set)
        } else if let set = value as? NSSet, let members = FoundationValueBridging.managedObjects(set.allObjects) {
            objects = members
        } else if let ordered = value as? NSOrderedSet,
            let members = FoundationValueBridging.managedObjects(ordered.array)
        {
            objects = members
        } else {
            throw CoreDataError(
                .keyValueValidation,
                "\(entity.entityName).\(relationship.name) takes a set, array, NSSet or NSOrderedSet of managed objects, not \(type(of: value))",
                objectID: objectID, key: relationship.name)
        }
        return OrderedSet(try objects.map { try checkedID(of: $0, for: relationship) })
    }
}
