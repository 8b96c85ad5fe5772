import OrderedCollections

/// What was added to and removed from a to-many relationship while it was still a fault: the
/// inverse side of to-one relationships set or cleared on other objects (an employee moved to a
/// department adds itself to the department's employees). The relationship's slot holds the
/// edits in place of its IDs, so that a change of the to-one side does not read every object the
/// to-many side holds; the first read of the relationship loads the stored IDs and applies the
/// edits to them (``ManagedObject/loadToMany(_:)``).
///
/// Only a relationship the store answers from its inverse's column takes edits (an unordered
/// to-many whose inverse is a to-one): saving it writes nothing of its own, so after a save the
/// relationship is a fault again and the store answers it with the edits included.
struct ToManyEdits {
    /// The objects added, in the order they were added.
    private(set) var added: OrderedSet<ManagedObjectID> = []
    /// The objects removed (and not added again since).
    private(set) var removed: Set<ManagedObjectID> = []

    /// Records that the relationship now holds `id`.
    mutating func add(_ id: ManagedObjectID) {
        removed.remove(id)
        added.append(id)
    }

    /// Records that the relationship no longer holds `id`.
    mutating func remove(_ id: ManagedObjectID) {
        added.remove(id)
        removed.insert(id)
    }

    /// The IDs the relationship holds: `stored` less the objects removed, then the objects added.
    func applied(to stored: OrderedSet<ManagedObjectID>) -> OrderedSet<ManagedObjectID> {
        var ids = stored
        if !removed.isEmpty { ids.removeAll(where: removed.contains) }
        ids.append(contentsOf: added)
        return ids
    }

    /// The edits with each temporary ID that `permanent` gives a permanent ID for replaced by it.
    func renamed(_ permanent: (ManagedObjectID) -> ManagedObjectID?) -> ToManyEdits {
        func rename(_ id: ManagedObjectID) -> ManagedObjectID { id.isTemporaryID ? permanent(id) ?? id : id }
        var edits = ToManyEdits()
        edits.added = OrderedSet(added.map(rename))
        edits.removed = Set(removed.map(rename))
        return edits
    }

    /// Whether any ID is temporary.
    var hasTemporaryIDs: Bool { added.contains(where: \.isTemporaryID) || removed.contains(where: \.isTemporaryID) }
}

extension ManagedObject {
    /// Whether `slot` holds ``ToManyEdits``; the object has no lazily decoded row left.
    func holdsEdits(_ slot: Int) -> Bool {
        storedType(slot) == ObjectIdentifier(ToManyEdits.self)
    }

    /// Whether a change to the to-many `relationship` (in `slot`) is recorded as ``ToManyEdits``
    /// instead of loading the relationship first: it is still a fault (or holds edits already);
    /// the store answers it from its inverse's column (unordered, with a to-one inverse, neither
    /// transient); the object is saved; and its context saves to the store (a child context's
    /// save carries whole relationships to its parent) and keeps no undo snapshots (which hold
    /// whole relationships too).
    func keepsEdits(of relationship: RelationshipDescription, slot: Int) -> Bool {
        guard !relationship.isOrdered, !relationship.isTransient, let inverse = relationship.inverseRelationship,
            !inverse.isToMany, !inverse.isTransient, !objectID.isTemporaryID, isLoaded,
            let context = managedObjectContext, context.nesting.parent == nil, context.undoManager == nil
        else { return false }
        if lazyRow != nil { decodeLazyRow() }
        return storedType(slot) == nil || holdsEdits(slot)
    }

    /// Changes the edits `slot` holds (none yet when it is a fault) with `change`.
    func editFault(_ slot: Int, _ change: (inout ToManyEdits) -> Void) {
        var edits = SlotValueCast.cast(values[slot], to: ToManyEdits.self) ?? ToManyEdits()
        values[slot] = nil
        change(&edits)
        values[slot] = edits
    }

    /// Turns every to-many relationship that holds edits back into a fault: what a save does
    /// once the store holds the changes they recorded.
    func faultEditedRelationships() {
        guard isLoaded, lazyRow == nil else { return }
        for slot in runtime.relationshipSlots where holdsEdits(slot) { slots[slot] = nil }
    }
}
