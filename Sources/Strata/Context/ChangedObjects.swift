/// One of a context's change sets (its inserted, updated or deleted objects): the objects in
/// the order they were added, held strongly, each knowing its position
/// (``ManagedObject/changePosition``), so that adding, finding and removing an object hash
/// nothing.
///
/// An object is in at most one change set of its context at a time (inserted, updated and
/// deleted exclude each other), so the three share the object's one position: a set holds an
/// object when the entry at the object's position is that object. A removal leaves a hole,
/// skipped by iteration; the holes are squeezed out when they outnumber the objects.
struct ChangedObjects: Sequence, ExpressibleByArrayLiteral {
    /// The objects by position, `nil` where one was removed.
    private var entries: [ManagedObject?] = []
    /// The number of objects (entries that are not holes).
    private(set) var count = 0
    /// The number of entries when the current event began (``beginEvent()``): the objects at
    /// or past it were added in the event.
    private var eventStart = 0

    /// A set of `elements`, in their order; each must be in no other change set of its
    /// context, and appear once.
    init(arrayLiteral elements: ManagedObject...) {
        for object in elements { append(object) }
    }

    /// Whether the set holds no object.
    var isEmpty: Bool { count == 0 }

    /// The objects, in the order they were added.
    var elements: [ManagedObject] { entries.compactMap { $0 } }

    /// Whether `object` is in the set.
    func contains(_ object: ManagedObject) -> Bool {
        let position = Int(object.changePosition)
        return position < entries.count && entries[position] === object
    }

    /// Whether `object` is in the set and was added in the current event.
    func isAddedInEvent(_ object: ManagedObject) -> Bool {
        contains(object) && Int(object.changePosition) >= eventStart
    }

    /// The objects added in the current event and still in the set, in the order they were added.
    ///
    /// An array made at once, in room reserved for all of them: appending a lazy sequence of
    /// them to another array took ~440 instructions an object (callgrind, W2's saves of 10).
    var addedInEvent: [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(entries.count - eventStart)
        for case let object? in entries[eventStart...] { objects.append(object) }
        return objects
    }

    /// Whether an object added in the current event is still in the set.
    var hasAddedInEvent: Bool { entries[eventStart...].contains { $0 != nil } }

    /// Begins a new event: the objects in the set now were added before it.
    mutating func beginEvent() { eventStart = entries.count }

    /// Adds `object` at the end, unless it is in the set; it must be in no other change set of
    /// its context (it takes that set's position). Returns whether it was added.
    @discardableResult
    mutating func append(_ object: ManagedObject) -> Bool {
        if contains(object) { return false }
        precondition(entries.count < Int(UInt32.max), "a change set holds at most \(UInt32.max) objects")
        object.changePosition = UInt32(entries.count)
        entries.append(object)
        count += 1
        return true
    }

    /// Removes `object` when the set holds it; returns it then, else `nil`.
    @discardableResult
    mutating func remove(_ object: ManagedObject) -> ManagedObject? {
        guard contains(object) else { return nil }
        entries[Int(object.changePosition)] = nil
        count -= 1
        let holes = entries.count - count
        if holes > 16 && holes > count { squeeze() }
        return object
    }

    /// Drops the holes, giving each object its new position (the event's start moves with
    /// the objects before it).
    private mutating func squeeze() {
        eventStart = entries[..<eventStart].count { $0 != nil }
        let objects = elements
        entries = objects
        for (position, object) in objects.enumerated() { object.changePosition = UInt32(position) }
    }

    /// The objects, in the order they were added.
    func makeIterator() -> some IteratorProtocol<ManagedObject> {
        entries.lazy.compactMap { $0 }.makeIterator()
    }

    /// The number of objects, for `Array(_:)` and the like.
    var underestimatedCount: Int { count }
}
