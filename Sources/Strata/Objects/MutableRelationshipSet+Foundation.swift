import Foundation

/// `NSMutableSet`'s and `NSMutableOrderedSet`'s members that take Foundation collections and
/// indexes, which the to-many accessor methods Xcode generates call (through `@Managed`).
///
/// Each one sets the relationship once, so inverses are maintained and the change recorded as
/// for any other change of it. An index out of range, or an element that is not a managed
/// object, stops the program, as Core Data raises `NSRangeException` and
/// `NSInvalidArgumentException`.
extension MutableRelationshipSet {
    /// Relates every object of `objects` not related yet (NSMutableSet's `union(_:)`).
    public func union(_ objects: NSSet) {
        addObjects(from: managedObjects(objects.allObjects))
    }

    /// Relates every object of `objects` not related yet (NSMutableSet's `union(_:)` as Swift
    /// spells it, with a `Set<AnyHashable>`).
    public func union(_ objects: Set<AnyHashable>) {
        addObjects(from: managedObjects(objects.map(\.base)))
    }

    /// Relates every object of `objects` not related yet, in order (NSMutableOrderedSet's
    /// `union(_:)`).
    public func union(_ objects: NSOrderedSet) {
        addObjects(from: managedObjects(objects.array))
    }

    /// Relates every object of `objects` not related yet, in order.
    public func union<Objects: Sequence>(_ objects: Objects) where Objects.Element: ManagedObject {
        addObjects(from: objects.map { $0 })
    }

    /// Stops relating every object of `objects` (NSMutableSet's `minus(_:)`).
    public func minus(_ objects: NSSet) {
        removeObjects(in: managedObjects(objects.allObjects))
    }

    /// Stops relating every object of `objects` (NSMutableSet's `minus(_:)` with a
    /// `Set<AnyHashable>`).
    public func minus(_ objects: Set<AnyHashable>) {
        removeObjects(in: managedObjects(objects.map(\.base)))
    }

    /// Stops relating every object of `objects` (NSMutableOrderedSet's `minus(_:)`).
    public func minus(_ objects: NSOrderedSet) {
        removeObjects(in: managedObjects(objects.array))
    }

    /// Stops relating every object of `objects`.
    public func minus<Objects: Sequence>(_ objects: Objects) where Objects.Element: ManagedObject {
        removeObjects(in: objects.map { $0 })
    }

    /// Keeps relating only the objects that are also in `objects` (NSMutableSet's `intersect(_:)`).
    public func intersect(_ objects: NSSet) {
        intersect(managedObjects(objects.allObjects))
    }

    /// Keeps relating only the objects that are also in `objects` (NSMutableSet's `intersect(_:)`
    /// with a `Set<AnyHashable>`).
    public func intersect(_ objects: Set<AnyHashable>) {
        intersect(managedObjects(objects.map(\.base)))
    }

    /// Keeps relating only the objects that are also in `objects`, in their order here
    /// (NSMutableOrderedSet's `intersect(_:)`).
    public func intersect(_ objects: NSOrderedSet) {
        intersect(managedObjects(objects.array))
    }

    /// Keeps relating only the objects that are also in `objects`.
    public func intersect<Objects: Sequence>(_ objects: Objects) where Objects.Element: ManagedObject {
        let kept = Set(objects.map { $0 as ManagedObject })
        owner.setValue(allObjects.filter { kept.contains($0) }, forKey: key)
    }

    /// The index of `object` in an ordered relationship, or `NSNotFound` (NSOrderedSet's
    /// `index(of:)`).
    public func index(of object: ManagedObject) -> Int {
        allObjects.firstIndex(of: object) ?? NSNotFound
    }

    /// The first related object of an ordered relationship (NSOrderedSet's `firstObject`).
    public var firstObject: ManagedObject? { allObjects.first }

    /// The last related object of an ordered relationship (NSOrderedSet's `lastObject`).
    public var lastObject: ManagedObject? { allObjects.last }

    /// Swaps the objects at two indexes of an ordered relationship (NSMutableOrderedSet's
    /// `exchangeObject(at:withObjectAt:)`).
    public func exchangeObject(at index: Int, withObjectAt other: Int) {
        var objects = allObjects
        checkIndex(index, in: objects.count)
        checkIndex(other, in: objects.count)
        objects.swapAt(index, other)
        owner.setValue(objects, forKey: key)
    }

    /// Moves the objects at `indexes` of an ordered relationship so that the first of them is
    /// at `index` of the result, keeping their order (NSMutableOrderedSet's `moveObjects(at:to:)`).
    public func moveObjects(at indexes: IndexSet, to index: Int) {
        var objects = allObjects
        for moved in indexes { checkIndex(moved, in: objects.count) }
        let moving = indexes.map { objects[$0] }
        for moved in indexes.reversed() { objects.remove(at: moved) }
        precondition(
            index >= 0 && index <= objects.count,
            "\(owner.entity.entityName).\(key): index \(index) beyond bounds [0 .. \(objects.count)]")
        objects.insert(contentsOf: moving, at: index)
        owner.setValue(objects, forKey: key)
    }

    /// Stops relating every object of `objects` (NSMutableOrderedSet's `removeObjects(in:)`).
    public func removeObjects(in objects: [ManagedObject]) {
        let removed = Set(objects)
        owner.setValue(allObjects.filter { !removed.contains($0) }, forKey: key)
    }

    /// The object at `index` of an ordered relationship (NSOrderedSet's `object(at:)`).
    public func object(at index: Int) -> ManagedObject {
        let objects = allObjects
        checkIndex(index, in: objects.count)
        return objects[index]
    }

    /// Stops relating the object at `index` of an ordered relationship (NSMutableOrderedSet's
    /// `removeObject(at:)`).
    public func removeObject(at index: Int) {
        var objects = allObjects
        checkIndex(index, in: objects.count)
        objects.remove(at: index)
        owner.setValue(objects, forKey: key)
    }

    /// Stops relating the objects at `indexes` of an ordered relationship (NSMutableOrderedSet's
    /// `removeObjects(at:)`).
    public func removeObjects(at indexes: IndexSet) {
        var objects = allObjects
        for index in indexes.reversed() {
            checkIndex(index, in: objects.count)
            objects.remove(at: index)
        }
        owner.setValue(objects, forKey: key)
    }

    /// Stops relating the objects at `indexes` of an ordered relationship.
    public func removeObjects(at indexes: NSIndexSet) {
        removeObjects(at: Self.indexSet(indexes))
    }

    /// Relates `objects` at `indexes` of an ordered relationship, the first object at the first
    /// index and so on, each index a position in the result (NSMutableOrderedSet's
    /// `insert(_:at:)`). Objects already related stay where they are.
    public func insert(_ objects: [ManagedObject], at indexes: IndexSet) {
        precondition(
            objects.count == indexes.count,
            "\(owner.entity.entityName).\(key): \(objects.count) objects for \(indexes.count) indexes")
        var related = allObjects
        for (object, index) in zip(objects, indexes) where !related.contains(object) {
            checkIndex(index, in: related.count + 1)
            related.insert(object, at: index)
        }
        owner.setValue(related, forKey: key)
    }

    /// Relates `objects` at `indexes` of an ordered relationship.
    public func insert(_ objects: [ManagedObject], at indexes: NSIndexSet) {
        insert(objects, at: Self.indexSet(indexes))
    }

    /// Relates `object` in place of the object at `index` of an ordered relationship
    /// (NSMutableOrderedSet's `replaceObject(at:with:)`); nothing changes when `object` is
    /// related at another index.
    public func replaceObject(at index: Int, with object: ManagedObject) {
        var objects = allObjects
        checkIndex(index, in: objects.count)
        guard !objects.contains(object) else { return }
        objects[index] = object
        owner.setValue(objects, forKey: key)
    }

    /// Relates `objects` in place of the objects at `indexes` of an ordered relationship, the
    /// first object at the first index and so on (NSMutableOrderedSet's
    /// `replaceObjects(at:with:)`).
    public func replaceObjects(at indexes: IndexSet, with objects: [ManagedObject]) {
        precondition(
            objects.count == indexes.count,
            "\(owner.entity.entityName).\(key): \(objects.count) objects for \(indexes.count) indexes")
        var related = allObjects
        for (object, index) in zip(objects, indexes) {
            checkIndex(index, in: related.count)
            guard !related.contains(object) else { continue }
            related[index] = object
        }
        owner.setValue(related, forKey: key)
    }

    /// Relates `objects` in place of the objects at `indexes` of an ordered relationship.
    public func replaceObjects(at indexes: NSIndexSet, with objects: [ManagedObject]) {
        replaceObjects(at: Self.indexSet(indexes), with: objects)
    }

    /// The managed objects of a Foundation collection's elements; one that is not a managed
    /// object stops the program.
    private func managedObjects(_ elements: [Any]) -> [ManagedObject] {
        guard let objects = FoundationValueBridging.managedObjects(elements) else {
            preconditionFailure(
                "\(owner.entity.entityName).\(key) relates managed objects, not \(elements.map { type(of: $0) })")
        }
        return objects
    }

    /// Stops the program unless `index` is below `count`.
    private func checkIndex(_ index: Int, in count: Int) {
        precondition(
            index >= 0 && index < count,
            "\(owner.entity.entityName).\(key): index \(index) beyond bounds [0 .. \(count - 1)]")
    }

    /// `indexes` as an `IndexSet`.
    private static func indexSet(_ indexes: NSIndexSet) -> IndexSet {
        var set = IndexSet()
        indexes.enumerate { index, _ in set.insert(index) }
        return set
    }
}
