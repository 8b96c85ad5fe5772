import Foundation
import OrderedCollections

/// An object of the object graph: a record of an entity, with change tracking, faulting and
/// relationship maintenance, as Core Data's `NSManagedObject`.
///
/// A managed object belongs to one context and is used only on that context's queue (inside
/// `perform`); pass its ``objectID`` to other contexts. Subclass it for typed properties with
/// ``Managed``.
///
/// Reading these never fires a fault: ``objectID``, ``entity``, ``managedObjectContext``,
/// ``isInserted``, ``isUpdated``, ``isDeleted``, ``isFault``, ``faultingState``, equality,
/// hashing and ``description``.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The object's entity.
    // Read from the runtime, so that making and freeing an object count no reference to the
    // entity.
    public var entity: EntityDescription { runtime.entity }
    // The object's stored state is `@exclusivity(unchecked)`: an object is used only on its
    // context's queue, and no access to it overlaps another (the suite passes with the checks
    // on), so the runtime's dynamic checks guard nothing. They cost a call and a thread-local
    // lookup per access (about 80 instructions): ~10% of a fetch, 12% of a bulk insert and 15%
    // of a small save (callgrind, strata-graph-bench W6, W1 and W2).
    /// The object's ID: temporary until the object is saved (or a permanent ID is obtained).
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context the object is registered with, if any.
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        get { contextLink?.isAlive == true ? context?.takeUnretainedValue() : nil }
        set {
            context = newValue.map(Unmanaged.passUnretained)
            contextLink = newValue?.link
        }
    }
    /// The context while it is alive, borrowed: unlike ``managedObjectContext``, which returns
    /// it retained (two atomic operations a read), for the paths every change takes.
    var liveContext: Unmanaged<ManagedObjectContext>? {
        contextLink?.isAlive == true ? context : nil
    }
    /// The context, not retained: read only while ``contextLink`` says it is alive.
    @exclusivity(unchecked) private var context: Unmanaged<ManagedObjectContext>?
    /// What tells whether ``context`` is alive (``ContextLink``: not a weak reference, which
    /// would make every retain and release of the context slow).
    @exclusivity(unchecked) private var contextLink: ContextLink?
    // The flags, the validation slot and the change-set position share one 8-byte word (stored
    // properties are laid out in order): the object then takes at most 152 bytes, one heap
    // block of 160 (not 176).
    /// The object's flags (``isInserted``, ``isDeleted``, ``isLoaded``, ``isInaccessible``,
    /// ``hasAwokenFromInsert``), one bit each.
    @exclusivity(unchecked) private var flags = ObjectFlags()
    /// The slot ``validateProperties()`` is passing to `validateValue(_:forKey:)` (-1: none,
    /// or a slot past `Int16`'s range), so that the model's checks find the property without
    /// looking its name up.
    @exclusivity(unchecked) var validatingSlot: Int16 = -1
    /// The object's position in the change set of its context that holds it, if one does
    /// (``ChangedObjects``): an object is in at most one of the inserted, updated and deleted
    /// sets, so one position serves all three.
    @exclusivity(unchecked) var changePosition: UInt32 = 0
    /// Whether the object is inserted in its context and not saved yet.
    public internal(set) var isInserted: Bool {
        get { flags.contains(.inserted) }
        set { flags.set(.inserted, newValue) }
    }
    /// Whether the object will be deleted from the store by the next save.
    public internal(set) var isDeleted: Bool {
        get { flags.contains(.deleted) }
        set { flags.set(.deleted, newValue) }
    }
    /// Whether the values are loaded.
    var isLoaded: Bool {
        get { flags.contains(.loaded) }
        set { flags.set(.loaded, newValue) }
    }
    /// Whether the object was a fault whose row was gone when it fired: the context marked it
    /// deleted (``ManagedObjectContext/shouldDeleteInaccessibleFaults``) and the next save
    /// discards it without writing anything.
    var isInaccessible: Bool {
        get { flags.contains(.inaccessible) }
        set { flags.set(.inaccessible, newValue) }
    }
    /// Whether `awakeFromInsert()` was called (it is called once, at the first insert).
    var hasAwokenFromInsert: Bool {
        get { flags.contains(.awokenFromInsert) }
        set { flags.set(.awokenFromInsert, newValue) }
    }

    let runtime: EntityRuntime
    /// Property values by slot; empty while the object is a fault. To-one slots hold a
    /// `ManagedObjectID`, to-many slots an `OrderedSet<ManagedObjectID>`, or while the
    /// relationship is itself a fault `nil` or the edits made to it since (``ToManyEdits``).
    /// Reading or changing them first decodes what is left of a row the object was loaded from
    /// lazily (``lazyRow``).
    var values: [Any?] {
        get {
            if lazyRow != nil { decodeLazyRow() }
            return slots
        }
        _modify {
            if lazyRow != nil { decodeLazyRow() }
            yield &slots
        }
    }
    /// The values last read from or saved to the store (`nil` for a new object); as ``values``,
    /// reading or changing them first decodes a lazily loaded row.
    var committed: [Any?]? {
        get {
            if lazyRow != nil { decodeLazyRow() }
            return committedSlots
        }
        _modify {
            if lazyRow != nil { decodeLazyRow() }
            yield &committedSlots
        }
    }
    /// The storage of ``values``: while ``lazyRow`` is set, only its decoded slots hold their
    /// value (and the array is empty until the first is decoded).
    @exclusivity(unchecked) var slots: [Any?] = []
    /// The storage of ``committed``; not meaningful while ``lazyRow`` is set.
    @exclusivity(unchecked) var committedSlots: [Any?]?
    /// The row the object was loaded from, while some of its slots are not decoded yet: the
    /// object has no change since (a change decodes the rest first), so its values and
    /// committed values are the row's.
    @exclusivity(unchecked) var lazyRow: LazyRow?
    /// Slots changed since the last save.
    @exclusivity(unchecked) var changedSlots = SlotSet()
    /// Slots changed since the last `processPendingChanges()`.
    @exclusivity(unchecked) var eventChangedSlots = SlotSet()
    /// The store's sequence number read before the committed values were read (0: unknown).
    @exclusivity(unchecked) var snapshotSequence: UInt64 = 0

    /// Creates an object of `entity` and inserts it into `context` (when given), as Core Data's
    /// designated initializer. The object gets a temporary ID and `awakeFromInsert()` is called.
    ///
    /// - Parameters:
    ///   - entity: the object's entity; not abstract.
    ///   - context: the context to insert it into, or `nil` to insert it later with
    ///     ``ManagedObjectContext/insert(_:)``.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        precondition(!entity.isAbstract, "cannot create an object of the abstract entity \(entity.entityName)")
        // The context keeps the runtime it used last: no lock for objects of one entity in a row.
        self.runtime = context?.runtime(of: entity) ?? EntityRuntime.of(entity)
        self.objectID = ManagedObjectID(temporaryFor: entity)
        self.slots = runtime.newObjectValues()
        self.isLoaded = true
        if type(of: self) != ManagedObject.self {
            ManagedObjectClassRegistry.register(type(of: self), for: entity, runtime: runtime)
        }
        if let context { context.insert(self) }
    }

    /// Creates an object of the entity whose class is this subclass and inserts it into
    /// `context` (Core Data's `init(context:)`).
    ///
    /// The entity is the one whose `managedObjectClassName` (or name) is this class's name.
    /// Required, so generic code creates objects of a type it is given (`T(context: context)`
    /// for a `T: ManagedObject`), as with Core Data's classes.
    public required convenience init(context: ManagedObjectContext) {
        guard let entity = context.entity(for: Self.self) else {
            preconditionFailure("no entity of the context's model has the class \(Self.self)")
        }
        self.init(entity: entity, insertInto: context)
    }

    deinit {
        // The context borrowed, not retained and released: two atomic operations fewer for each
        // object freed.
        liveContext?._withUnsafeGuaranteedRef { $0.objectWillDeallocate(self) }
    }

    /// Creates a fault for the object `objectID` names, registered with `context`. The framework
    /// calls it when fetching or resolving IDs; subclasses inherit it.
    public required init(faultFor objectID: ManagedObjectID, in context: ManagedObjectContext) {
        self.runtime = context.runtime(of: objectID.entity)
        self.objectID = objectID
        self.context = Unmanaged.passUnretained(context)
        self.contextLink = context.link
    }

    /// Creates the instance of the entity's class for a fault of `objectID`.
    static func makeFault(_ objectID: ManagedObjectID, context: ManagedObjectContext) -> ManagedObject {
        context.objectClass(of: objectID.entity).init(faultFor: objectID, in: context)
    }

    // MARK: State

    /// Whether the object is a fault: its values are not loaded yet.
    public var isFault: Bool { !isLoaded }

    /// 0 when the object is fully realized, 1 when it is a fault (Core Data's `faultingState`).
    public var faultingState: Int { isLoaded ? 0 : 1 }

    /// Whether the object has unsaved changes to its persistent properties (and is not inserted
    /// or deleted).
    public var isUpdated: Bool { !isInserted && !isDeleted && !changedSlots.isEmpty }

    /// Whether the object is inserted, updated or deleted and not saved yet.
    public var hasChanges: Bool { isInserted || isDeleted || !changedSlots.isEmpty }

    /// Whether a persistent property differs from its committed value.
    public var hasPersistentChangedValues: Bool {
        changedSlots.contains { !runtime.properties[$0].isTransient }
    }

    // MARK: Lifecycle hooks

    /// Called once, when the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called when the object's values are loaded from the store.
    open func awakeFromFetch() {}
    /// Called when the object is re-initialized from a snapshot, after undo or a refresh.
    open func awake(fromSnapshotEvents flags: SnapshotEventType) {}
    /// Called before the object's changes are saved.
    open func willSave() {}
    /// Called after the object's changes are saved.
    open func didSave() {}
    /// Called when the object is about to be deleted, before delete rules are applied.
    open func prepareForDeletion() {}
    /// Called before the object is turned into a fault.
    open func willTurnIntoFault() {}
    /// Called after the object is turned into a fault.
    open func didTurnIntoFault() {}
    /// Called before a property is read; with a `nil` key it fires the fault, as Core Data's
    /// does (`willAccessValue(forKey: nil)` makes sure an object's values are loaded). With a key
    /// it does nothing: the read fires the fault after it.
    ///
    /// - Important: a fault that cannot be fulfilled stops the program, as reading a value does.
    open func willAccessValue(forKey key: String?) {
        guard key == nil, isFault, managedObjectContext != nil else { return }
        do {
            try fireFault()
        } catch {
            preconditionFailure("firing the fault of \(objectID): \(error)")
        }
    }
    /// Called after a property is read.
    open func didAccessValue(forKey key: String?) {}
    /// Called before a property changes.
    open func willChangeValue(forKey key: String) {}
    /// Called after a property changed.
    open func didChangeValue(forKey key: String) {}

    // MARK: Validation

    /// Checks a value for `key` against the model: optionality, minimum and maximum (numbers,
    /// dates, string lengths), the regular expression, and relationship counts (Core Data's
    /// `validateValue(_:forKey:)`). Override it in a subclass for per-key validation, calling
    /// `super`.
    ///
    /// - Throws: a ``CoreDataError`` with the validation code naming the object and key.
    open func validateValue(_ value: inout Any?, forKey key: String) throws {
        try validateAgainstModel(value, forKey: key)
    }

    /// Validates every property before the object is first saved (Core Data's
    /// `validateForInsert()`). Override to add checks across properties, calling `super`.
    ///
    /// - Throws: one ``CoreDataError``, or `validationMultipleErrors` listing several.
    open func validateForInsert() throws {
        try validateProperties()
    }

    /// Validates every property before changes are saved (Core Data's `validateForUpdate()`).
    ///
    /// - Throws: as ``validateForInsert()``.
    open func validateForUpdate() throws {
        try validateProperties()
    }

    /// Checks that deny delete rules allow the deletion (Core Data's `validateForDelete()`).
    ///
    /// - Throws: ``CoreDataError`` `validationRelationshipDeniedDelete` per relationship that denies it.
    open func validateForDelete() throws {
        try validateDenyRules()
    }

    // MARK: Identity

    /// Managed objects are equal only to themselves.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The entity, ID and values, or `<fault>`; never fires the fault.
    public var description: String {
        let address = String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
        guard isLoaded else {
            return "<\(entity.entityName): 0x\(address)> (entity: \(entity.entityName); id: \(objectID); data: <fault>)"
        }
        let data = runtime.properties.indices.map { slot -> String in
            let property = runtime.properties[slot]
            return "\(property.name) = \(describe(values[slot], property))"
        }
        return
            "<\(entity.entityName): 0x\(address)> (entity: \(entity.entityName); id: \(objectID); data: {\(data.joined(separator: "; "))})"
    }

    private func describe(_ value: Any?, _ property: PropertyDescription) -> String {
        guard let value, !(value is ToManyEdits) else {
            return (property as? RelationshipDescription)?.isToMany == true ? "<relationship fault>" : "nil"
        }
        if let ids = value as? OrderedSet<ManagedObjectID> {
            return "(\(ids.map(\.description).joined(separator: ", ")))"
        }
        return "\(value)"
    }
}

/// What happened to an object's snapshot, for ``ManagedObject/awake(fromSnapshotEvents:)``.
public struct SnapshotEventType: OptionSet, Sendable {
    /// The raw bits.
    public let rawValue: UInt
    /// Creates the event set.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Undo of an insertion.
    public static let undoInsertion = SnapshotEventType(rawValue: 1 << 1)
    /// Undo of a deletion.
    public static let undoDeletion = SnapshotEventType(rawValue: 1 << 2)
    /// Undo of an update.
    public static let undoUpdate = SnapshotEventType(rawValue: 1 << 3)
    /// A rollback.
    public static let rollback = SnapshotEventType(rawValue: 1 << 4)
    /// A refresh.
    public static let refresh = SnapshotEventType(rawValue: 1 << 5)
    /// A merge of changes from another context.
    public static let mergePolicy = SnapshotEventType(rawValue: 1 << 6)
}
