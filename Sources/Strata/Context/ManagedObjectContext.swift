import Dispatch
import Foundation
import OrderedCollections

/// A scratch pad of managed objects: fetches them, tracks their changes and saves them
/// (Core Data's `NSManagedObjectContext`).
///
/// A context and its objects belong to the context's queue: use them inside ``perform(_:)``,
/// ``performAndWait(_:)`` or `await perform { … }`. The context itself is `Sendable` so that any
/// thread may call `perform`; pass object IDs, not objects, between contexts.
// @unchecked: all mutable state is touched only on the context's queue (Core Data's rule).
public final class ManagedObjectContext: @unchecked Sendable {
    /// How a context runs the blocks given to it (Core Data's `NSManagedObjectContextConcurrencyType`).
    public enum ConcurrencyType: Sendable, Hashable {
        /// The context owns a private serial queue.
        case privateQueueConcurrencyType
        /// The context runs on the main queue.
        case mainQueueConcurrencyType

        /// The newer spelling of ``privateQueueConcurrencyType``.
        public static let privateQueue = ConcurrencyType.privateQueueConcurrencyType
        /// The newer spelling of ``mainQueueConcurrencyType``.
        public static let mainQueue = ConcurrencyType.mainQueueConcurrencyType
    }

    /// The context's concurrency type.
    public let concurrencyType: ConcurrencyType
    /// The coordinator whose stores the context fetches from and saves to; for a context with a
    /// ``parent``, the root context's coordinator (a child context has none of its own).
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { nesting.parent?.persistentStoreCoordinator ?? ownCoordinator }
        set {
            precondition(
                newValue == nil || nesting.parent == nil,
                "a context with a parent context has no persistent store coordinator of its own")
            ownCoordinator = newValue
        }
    }
    /// The context's name, kept in the history of its saves.
    public var name: String?
    /// The author of the context's saves, kept in the persistent history.
    public var transactionAuthor: String?
    /// Anything the application wants to keep with the context.
    public var userInfo: [AnyHashable: Any] = [:]
    /// How a save resolves conflicts with changes saved meanwhile by others and uniqueness
    /// constraint conflicts. The default is ``MergePolicy/error``, as in Core Data.
    public var mergePolicy: MergePolicy = .error
    /// Whether the context keeps strong references to every registered object. The default is
    /// `false`: objects without changes are held weakly and go away when unused.
    @exclusivity(unchecked) public var retainsRegisteredObjects = false {
        didSet {
            strongObjects =
                retainsRegisteredObjects ? Set(registeredObjects) : Set(insertedSet).union(updatedSet).union(deletedSet)
        }
    }
    /// Whether a fault whose row was deleted by someone else becomes a deleted object whose
    /// attributes are `nil` (typed scalar properties read 0) and relationships empty, listed in
    /// ``deletedObjects`` and discarded without validation by the next save or ``reset()``
    /// (rather than a thrown ``CoreDataError`` when it fires). The default is `true`.
    public var shouldDeleteInaccessibleFaults = true
    /// The longest time that may have passed since an object's data was read from the store
    /// before fulfilling its fault (or refreshing it) must read the store again (Core Data's
    /// `stalenessInterval`); negative, the default, means no limit, and 0 means always.
    ///
    /// Strata has no row cache that could hold older data: a fault is fulfilled, and an object
    /// refreshed, from the store's current row (or the row as of the context's query
    /// generation), so the data is never older than any interval and every value is honoured
    /// as if it were 0. The property is kept for code written for Core Data.
    public var stalenessInterval: TimeInterval = -1
    /// Whether deletes are propagated (delete rules applied) at the end of each event. The
    /// default is `true`; otherwise they are propagated at save.
    public var propagatesDeletesAtEndOfEvent = true
    /// The undo manager that records the context's changes, one group per event (Core Data's
    /// `undoManager`). `nil` by default, as for the contexts Core Data creates on iOS and for
    /// background contexts: set one to make changes undoable.
    // Read on every change: `@exclusivity(unchecked)` as the state below.
    @exclusivity(unchecked) public var undoManager: UndoManager? {
        didSet { undoManagerDidChange(from: oldValue) }
    }
    // The state touched per object (pending changes, registered objects, what a fault reads)
    // is `@exclusivity(unchecked)`, as a managed object's is (see `ManagedObject`): it is used
    // on the context's queue only.

    /// The undo bookkeeping: states recorded for the undo manager.
    @exclusivity(unchecked) var undoTracking = UndoTracking()
    /// The pinned query generation, or `nil` to read the stores' newest state.
    @exclusivity(unchecked) var queryGeneration: QueryGenerationToken?
    /// Whether saves skip validation (a migration's intermediate saves; it validates at the end).
    var defersValidation = false

    /// The store the last fault read, with the coordinator's store generation it was looked up
    /// at, for ``currentStore(identifier:coordinator:)``.
    @exclusivity(unchecked) var recentStore: (generation: UInt64, store: PersistentStore)?
    /// The layout of the entity of the last fault's object, with the coordinator's store
    /// generation it was looked up at, for ``faultLayout(_:coordinator:)``.
    @exclusivity(unchecked) var recentLayout: (generation: UInt64, entity: EntityDescription, layout: EntityLayout)?
    /// The coordinator set on this context itself.
    @exclusivity(unchecked) var ownCoordinator: PersistentStoreCoordinator?
    /// The parent context and what nested contexts need (ManagedObjectContext+Parent.swift).
    @exclusivity(unchecked) var nesting = ContextNesting()

    let queue: DispatchQueue

    /// Registered objects by ID, not retained.
    let registered = UniquingTable()
    /// The IDs of objects freed most recently, for fetches to make their objects again with.
    @exclusivity(unchecked) var recentIDs = RecentObjectIDs()
    /// The runtime of the entity of the last fault made, for ``runtime(of:)``.
    @exclusivity(unchecked) private var recentRuntime: EntityRuntime?
    /// The class of the entity of the last fault made by ID, with the class registry's
    /// generation it was looked up at, for ``objectClass(of:)``.
    @exclusivity(unchecked) private var recentClass:
        (entity: ObjectIdentifier, generation: UInt64, type: ManagedObject.Type)?
    /// Objects held strongly besides the inserted ones, which ``insertedSet`` holds: those
    /// updated or deleted (inserted then deleted too, until the save or rollback that forgets
    /// them), or all registered objects with `retainsRegisteredObjects`.
    @exclusivity(unchecked) var strongObjects = Set<ManagedObject>()
    /// The objects inserted since the last save, held strongly.
    @exclusivity(unchecked) var insertedSet = ChangedObjects()
    /// The saved objects changed since the last save.
    @exclusivity(unchecked) var updatedSet = ChangedObjects()
    /// The saved objects deleted since the last save.
    @exclusivity(unchecked) var deletedSet = ChangedObjects()
    /// Changes since the last `processPendingChanges()`, for the objects-did-change notification.
    @exclusivity(unchecked) var pendingEvent = ChangeEvent()
    /// Objects whose delete rules are still to be applied.
    @exclusivity(unchecked) var deletesToPropagate: [ManagedObject] = []
    /// Continuations of `changes` streams.
    var changeObservers: [UUID: AsyncStream<ContextChange>.Continuation] = [:]
    /// How many `perform`/`performAndWait` blocks are running, nested, on the queue.
    @exclusivity(unchecked) var eventDepth = 0
    /// The objects kept alive until the event ends (``keepUntilEventEnds(_:)``), a batch each.
    var eventObjects: [[ManagedObject]] = []
    /// Whether the end of a main-queue event is scheduled after the current work item.
    var eventEndScheduled = false
    /// What the context's objects keep of it: marked dead when the context is deallocated.
    let link = ContextLink()

    /// Creates a context (Core Data's `init(concurrencyType:)`).
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        switch concurrencyType {
        case .privateQueueConcurrencyType:
            queue = DispatchQueue(label: "strata.context")
        case .mainQueueConcurrencyType:
            queue = DispatchQueue.main
        }
        markQueue()
    }

    /// Creates a context with the newer spelling, `ManagedObjectContext(.privateQueue)`.
    public convenience init(_ type: ConcurrencyType) {
        self.init(concurrencyType: type)
    }

    deinit {
        link.detach()
        for continuation in changeObservers.values { continuation.finish() }
    }

    // MARK: Running on the queue

    /// Whether the caller runs on the context's queue.
    var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueueConcurrencyType:
            // The main queue's blocks run on another thread once the main thread has left it to
            // dispatchMain(): the queue's own mark tells.
            if HeldContextQueues.isMainThread || DispatchQueue.getSpecific(key: HeldContextQueues.mainKey) == true {
                return true
            }
        case .privateQueueConcurrencyType:
            if DispatchQueue.getSpecific(key: HeldContextQueues.contextKey) == ObjectIdentifier(self) { return true }
        }
        return isHeldByCurrentThread
    }

    /// Runs `block` on the context's queue, asynchronously, then ends the event
    /// (``processPendingChanges()``).
    ///
    /// As in Core Data, `block` is not `@Sendable`: it may capture the context's managed objects,
    /// and runs on the context's queue, which is where they may be touched.
    public func perform(_ block: @escaping () -> Void) {
        let bound = QueueBound(value: block)
        queue.async { self.runEvent(bound.value) }
    }

    /// Runs `block` on the context's queue and waits for it; runs it at once when already on
    /// the queue (reentrant: the view context from the main thread). The outermost block ends
    /// the event (``processPendingChanges()``).
    ///
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try runEvent(block) }
        let caller = HeldContextQueues.heldByCaller()
        return try withoutActuallyEscaping(block) { escapable in
            try queue.sync { try runEvent { try holdingQueues(caller, escapable) } }
        }
    }

    // MARK: Registered objects

    /// The objects registered with the context (Core Data's `registeredObjects`).
    public var registeredObjects: Set<ManagedObject> {
        Set(registered.objects)
    }

    /// The objects inserted and not yet saved.
    public var insertedObjects: Set<ManagedObject> { Set(insertedSet) }
    /// The registered objects with unsaved changes.
    public var updatedObjects: Set<ManagedObject> { Set(updatedSet) }
    /// The objects that the next save will delete.
    public var deletedObjects: Set<ManagedObject> { Set(deletedSet) }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool { !insertedSet.isEmpty || !updatedSet.isEmpty || !deletedSet.isEmpty }

    /// The object registered under `objectID`, if any; never fetches.
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? {
        registered[objectID]
    }

    /// The object with `objectID`: the registered one, or a new fault for it (Core Data's
    /// `object(with:)`). Does not check that the object exists; firing the fault does.
    public func object(with objectID: ManagedObjectID) -> ManagedObject {
        if let existing = registered[objectID] { return existing }
        var id = objectID
        if !id.isTemporaryID, !id.entity.subentities.isEmpty, let concrete = try? concreteID(for: id) { id = concrete }
        let object = ManagedObject.makeFault(id, context: self)
        register(object)
        return object
    }

    /// The object with `objectID`, realized: the registered object (its fault fulfilled), or one
    /// loaded from the store (Core Data's `existingObject(with:)`). Never returns a fault.
    ///
    /// - Throws: ``CoreDataError`` `managedObjectReferentialIntegrity` when no such object exists.
    public func existingObject(with objectID: ManagedObjectID) throws -> ManagedObject {
        if let existing = registered[objectID], existing.isLoaded, !existing.isInaccessible { return existing }
        let missing = CoreDataError(
            .managedObjectReferentialIntegrity, "no object with ID \(objectID)", objectID: objectID)
        if let parent = nesting.parent { return try existingObject(objectID, from: parent, missing: missing) }
        guard !objectID.isTemporaryID, let coordinator = persistentStoreCoordinator else { throw missing }
        let object = self.object(with: objectID)
        if !object.isLoaded {
            let layout = try coordinator.layout(object.entity)
            let (row, sequence) = try storedSnapshot(for: object.objectID, layout: layout)
            guard let row else {
                if !object.hasChanges { unregister(object) }
                throw missing
            }
            try load(object, from: row, layout: layout, sequence: sequence)
            object.awakeFromFetch()
        }
        guard !object.isInaccessible else { throw missing }
        return object
    }

    /// Inserts a new object into the context; the next save stores it.
    public func insert(_ object: ManagedObject) {
        // The object's context compared borrowed: `managedObjectContext` returns it retained.
        let current = object.liveContext?.toOpaque()
        guard current == nil || current == Unmanaged.passUnretained(self).toOpaque(), !object.isInserted else { return }
        // A deleted object of this context is already this context's; any other object is
        // given the context by `registerInsertion(_:)`.
        if object.isDeleted, deletedSet.contains(object) {
            object.isDeleted = false
            deletedSet.remove(object)
            return
        }
        registerInsertion(object)
        if !object.hasAwokenFromInsert {
            object.hasAwokenFromInsert = true
            object.awakeFromInsert()
        }
    }

    /// Makes `object` one of the context's inserted objects in the current event (``insert(_:)``
    /// and undo's re-insertion).
    func registerInsertion(_ object: ManagedObject) {
        noteChangeOutsideEvent()
        object.managedObjectContext = self
        object.isDeleted = false
        object.isInserted = true
        register(object)
        // An object is in one change set at most; `insertedSet` holds it strongly, and tells
        // the event it was inserted in it (``eventInserted``).
        updatedSet.remove(object)
        insertedSet.append(object)
    }

    /// Takes `object` out of ``insertedSet``; an object inserted in the current event stays
    /// reported inserted by it (and deleted, as it is taken out to be deleted).
    func removeInsertion(_ object: ManagedObject) {
        if insertedSet.isAddedInEvent(object) { pendingEvent.inserted.append(object) }
        insertedSet.remove(object)
    }

    /// The objects inserted in the current event (an object inserted, deleted and inserted
    /// again in it is listed twice).
    var eventInserted: [ManagedObject] { pendingEvent.inserted.elements + insertedSet.addedInEvent }

    /// Whether `object` was inserted in the current event.
    func isInsertedInEvent(_ object: ManagedObject) -> Bool {
        insertedSet.isAddedInEvent(object) || pendingEvent.inserted.contains(object)
    }

    /// Marks `object` deleted: the next save removes it from the store, applying the delete
    /// rules of its relationships. Deleting an unsaved object just forgets it.
    public func delete(_ object: ManagedObject) {
        guard object.managedObjectContext === self, !object.isDeleted else { return }
        noteChangeOutsideEvent()
        if object.isInserted {
            object.isInserted = false
            removeInsertion(object)
            // Held until the save or rollback that forgets it (``forgetInsertedThenDeleted()``).
            strongObjects.insert(object)
            object.isDeleted = true
            deletesToPropagate.append(object)
            pendingEvent.deleted.append(object)
            return
        }
        object.isDeleted = true
        updatedSet.remove(object)
        deletedSet.append(object)
        strongObjects.insert(object)
        deletesToPropagate.append(object)
        pendingEvent.deleted.append(object)
    }

    /// The entity of the context's model whose class is `type`.
    func entity(for type: ManagedObject.Type) -> EntityDescription? {
        persistentStoreCoordinator?.managedObjectModel.entity(for: type)
    }

    /// The runtime of `entity`: the one of the last fault made when the entity is the same (as
    /// it is for every object of a fetch), without the process-wide lookup.
    func runtime(of entity: EntityDescription) -> EntityRuntime {
        if let recent = recentRuntime, recent.entity === entity { return recent }
        let runtime = EntityRuntime.of(entity)
        recentRuntime = runtime
        return runtime
    }

    /// The class of `entity`'s objects (``ManagedObjectClassRegistry/type(for:)``): the one of the
    /// last fault made when the entity is the same and no class was registered since, without
    /// the registry's lock.
    func objectClass(of entity: EntityDescription) -> ManagedObject.Type {
        let generation = ManagedObjectClassRegistry.generation
        if let recent = recentClass, recent.entity == ObjectIdentifier(entity), recent.generation == generation {
            return recent.type
        }
        let type = ManagedObjectClassRegistry.type(for: entity)
        recentClass = (ObjectIdentifier(entity), generation, type)
        return type
    }

    /// Registers `object` under its ID.
    func register(_ object: ManagedObject) {
        registered.insert(object)
        if retainsRegisteredObjects { strongObjects.insert(object) }
    }

    /// Removes a deallocating object's entry from the registry (one lookup), and keeps its ID
    /// for fetches to make its object again with (``RecentObjectIDs``).
    func objectWillDeallocate(_ object: ManagedObject) {
        registered.remove(object)
        // Only an ID nothing else holds is freed with its object: one a caller holds (faults made
        // by `object(with:)`) is left alone, and with it the slot's earlier ID, which is cold.
        if isKnownUniquelyReferenced(&object.objectID) { recentIDs.keep(object.objectID) }
    }

    /// Forgets `object`.
    func unregister(_ object: ManagedObject) {
        registered.remove(object)
        strongObjects.remove(object)
        insertedSet.remove(object)
        updatedSet.remove(object)
        deletedSet.remove(object)
    }

    /// Called by an object whose value changed.
    func objectDidChange(_ object: ManagedObject) {
        noteUndoableChange(object)
        noteChangeOutsideEvent()
        guard !object.isDeleted else { return }
        // A change of an object inserted in an earlier event is an update of this event (as
        // Core Data's objects-did-change notification reports it), not one to save.
        if object.isInserted {
            if !insertedSet.isAddedInEvent(object), !pendingEvent.updated.contains(object) {
                pendingEvent.updated.append(object)
            }
            return
        }
        if updatedSet.append(object) {
            strongObjects.insert(object)
        }
        if !pendingEvent.updated.contains(object) { pendingEvent.updated.append(object) }
    }

    /// The ID of the object a stored reference names, with the object's concrete entity: a
    /// reference names only the relationship's destination entity, which may be a superentity.
    /// Costs nothing unless the destination has sub-entities and the object is not registered;
    /// then one row read.
    func resolvedID(_ id: ManagedObjectID) -> ManagedObjectID {
        guard !id.entity.subentities.isEmpty else { return id }
        if let known = registered[id] { return known.objectID }
        return (try? concreteID(for: id)) ?? id
    }

    /// The ID of `id`'s object with its concrete entity, read from the store.
    private func concreteID(for id: ManagedObjectID) throws -> ManagedObjectID? {
        guard let coordinator = persistentStoreCoordinator, let storeIdentifier = id.storeIdentifier,
            let entity = try coordinator.concreteEntity(of: id), entity !== id.entity
        else { return nil }
        return ManagedObjectID(entity: entity, storeIdentifier: storeIdentifier, primaryKey: id.primaryKey)
    }
}

/// The changes of one event (between two `processPendingChanges()` calls).
struct ChangeEvent {
    /// The objects reported inserted besides those the context's ``ManagedObjectContext/insertedSet``
    /// gained in the event and still holds (``ManagedObjectContext/eventInserted``): objects
    /// inserted by a merge or undeleted by undo, and objects inserted and then deleted in the event.
    var inserted = OrderedSet<ManagedObject>()
    var updated = OrderedSet<ManagedObject>()
    var deleted = OrderedSet<ManagedObject>()
    var refreshed = OrderedSet<ManagedObject>()
    var invalidated = OrderedSet<ManagedObject>()

    var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && invalidated.isEmpty
    }
}

@available(*, unavailable, message: "managed objects belong to their context's queue; pass objectID instead")
extension ManagedObject: @unchecked Sendable {}
