import Foundation
import OrderedCollections

/// What a context keeps for nested contexts: its parent, the automatic merging of saves, and
/// the permanent IDs of the objects its children saved into it.
struct ContextNesting {
    /// The parent context, retained (a child keeps its parent alive, as in Core Data).
    var parent: ManagedObjectContext?
    /// Whether saves are merged automatically (``ManagedObjectContext/automaticallyMergesChangesFromParent``).
    var automaticallyMerges = false
    /// The observer of the saves merged automatically, removed when released.
    var mergeObserver: SaveObserver?
    /// The temporary IDs of objects that child contexts inserted into this context and that have
    /// no permanent ID yet.
    var insertedByChildren = Set<ManagedObjectID>()
    /// The permanent IDs given to objects that child contexts inserted, by the temporary IDs the
    /// children still know them by.
    var permanentIDs: [ManagedObjectID: ManagedObjectID] = [:]
}

/// The net unsaved changes of a context's ancestors.
struct AncestorChanges {
    /// Objects inserted or updated in an ancestor and not deleted in a nearer one.
    var pending = Set<ManagedObjectID>()
    /// Objects deleted in an ancestor and not inserted again in a nearer one.
    var deleted = Set<ManagedObjectID>()
}

/// The changes of one child save, as values the parent applies on its own queue.
struct ChildSave {
    /// An object's values by slot (all of them for an insert, the changed ones for an update).
    struct Values {
        var id: ManagedObjectID
        var slots: [(slot: Int, value: Any?)]
    }

    var inserted: [Values]
    var updated: [Values]
    var deleted: [ManagedObjectID]
}

extension ManagedObjectContext {
    /// The parent context (Core Data's `parent`): a child context's saves go into its parent, not
    /// the stores, and its fetches and faults see the parent's unsaved state. `nil` (the default)
    /// for a context on a persistent store coordinator.
    ///
    /// A context with a parent has no coordinator of its own: ``persistentStoreCoordinator``
    /// answers the root context's. Set the parent before using the context; the parent may run
    /// on another queue.
    ///
    /// - Important: setting a parent on a context that has its own coordinator, or making a
    ///   context its own ancestor, stops with a message, as Core Data raises an exception.
    public var parent: ManagedObjectContext? {
        get { nesting.parent }
        set {
            precondition(
                newValue == nil || ownCoordinator == nil,
                "a context with a persistent store coordinator cannot have a parent context")
            var ancestor = newValue
            while let context = ancestor {
                precondition(context !== self, "a context cannot be its own ancestor")
                ancestor = context.nesting.parent
            }
            nesting.parent = newValue
            if nesting.automaticallyMerges { observeSaves() }
        }
    }

    /// Whether the context merges the saves it depends on as they happen (Core Data's
    /// `automaticallyMergesChangesFromParent`): for a child context, the saves of its parent; for
    /// a context on a coordinator, the saves of the other contexts on the same coordinator that
    /// reach the stores. The default is `false`.
    ///
    /// Each save is merged on the context's queue after it happens, as
    /// ``mergeChanges(fromContextDidSave:)`` does: updated objects are refreshed (keeping this
    /// context's own changes), deleted ones removed, inserted ones faulted in. Objects this
    /// context saved into its parent take the permanent IDs the parent's save gives them.
    public var automaticallyMergesChangesFromParent: Bool {
        get { nesting.automaticallyMerges }
        set {
            nesting.automaticallyMerges = newValue
            observeSaves()
        }
    }

    /// Installs (or removes) the observer of the saves merged automatically.
    private func observeSaves() {
        nesting.mergeObserver = nil
        guard nesting.automaticallyMerges else { return }
        let parent = nesting.parent
        let token = NotificationCenter.default.addObserver(
            forName: Self.didSaveObjectsNotification, object: parent, queue: nil
        ) {
            [weak self] notification in
            guard let self, let sender = notification.object as? ManagedObjectContext, sender !== self else { return }
            // The observer runs on the sender's queue, in its save: its state is safe to read here.
            let coordinator = sender.persistentStoreCoordinator
            // A context on a coordinator merges only the saves that reach its stores.
            if parent == nil,
                sender.nesting.parent != nil || coordinator == nil || coordinator !== self.persistentStoreCoordinator
            {
                return
            }
            let changes = MergedChanges(
                notification.userInfo ?? [:], coordinator: coordinator, renamed: sender.nesting.permanentIDs)
            // A child's merge reads its parent's values: they are taken here, on the parent's
            // queue, so that the merge never waits for that queue, whose thread may be waiting in
            // this child's performAndWait (the main thread, for a child of the view context).
            let committed = parent == nil ? [:] : sender.savedValues(of: changes.updated.union(changes.refreshed))
            self.perform { self.merge(changes, committedValues: committed) }
        }
        nesting.mergeObserver = SaveObserver(token)
    }

    // MARK: Saving into the parent

    /// Pushes a save into `parent`: the parent gets the inserts, updates and deletes as its own
    /// unsaved changes (and posts its objects-did-change notification). Nothing is applied when
    /// an object cannot be found in the parent.
    ///
    /// - Throws: ``CoreDataError`` when an updated or deleted object no longer exists in the
    ///   parent or its stores.
    func push(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], into parent: ManagedObjectContext
    ) throws {
        let save = ChildSave(
            inserted: inserted.map { object in
                ChildSave.Values(id: object.objectID, slots: object.values.enumerated().map { ($0.offset, $0.element) })
            },
            updated: updated.map { object in
                ChildSave.Values(
                    id: object.objectID, slots: object.changedSlots.sorted().map { ($0, object.values[$0]) })
            },
            deleted: deleted.map(\.objectID))
        try parent.performAndWait { try parent.absorb(save) }
    }

    /// Applies a child's save as this context's own unsaved changes.
    private func absorb(_ save: ChildSave) throws {
        let renamed = nesting.permanentIDs
        // Find every object first, so that a missing one leaves this context unchanged.
        let updated = try save.updated.map { change -> (ManagedObject, ChildSave.Values) in
            let object = self.object(with: renamed[change.id] ?? change.id)
            try object.fireFault()
            guard !object.isDeleted else {
                throw CoreDataError(
                    .managedObjectMerge, "\(object.objectID) was deleted in the parent context",
                    objectID: object.objectID)
            }
            for (slot, _) in change.slots { try object.loadToMany(slot) }
            return (object, change)
        }
        // An object only the child knew (this context forgot its insert) has nothing to delete.
        let deleted = save.deleted.map { renamed[$0] ?? $0 }.filter(knowsObject).map { self.object(with: $0) }
        for change in save.inserted {
            let id = renamed[change.id] ?? change.id
            let object = registered[id] ?? ManagedObject.makeFault(id, context: self)
            object.values = change.slots.map { rename($0.value) { renamed[$0] } }
            object.isLoaded = true
            // The child's object awoke from its insertion; this is the same object.
            object.hasAwokenFromInsert = true
            insert(object)
            if id.isTemporaryID { nesting.insertedByChildren.insert(id) }
        }
        for (object, change) in updated {
            for (slot, value) in change.slots {
                object.values[slot] = rename(value) { renamed[$0] }
                object.noteChange(slot)
            }
        }
        for object in deleted {
            delete(object)
            // The child applied the delete rules already; the changes they made are in the save.
            deletesToPropagate.removeAll { $0 === object }
        }
        processPendingChanges()
    }

    /// Records the permanent IDs of objects a child inserted, for the children that still know
    /// them by their temporary IDs.
    func rememberRenames(_ renamed: TemporaryIDRenames) {
        guard !nesting.insertedByChildren.isEmpty else { return }
        for (temporary, permanent) in renamed.pairs where nesting.insertedByChildren.remove(temporary) != nil {
            nesting.permanentIDs[temporary] = permanent
        }
    }

    /// Gives the ancestors' objects the permanent IDs this context obtained for them, so that
    /// the parent uses them.
    func shareWithAncestors(_ renamed: TemporaryIDRenames) {
        guard !renamed.isEmpty else { return }
        var ancestor = nesting.parent
        while let context = ancestor {
            context.performAndWait { context.adoptPermanentIDs(renamed) }
            ancestor = context.nesting.parent
        }
    }

    // MARK: Reading through the parent

    /// The current values of the object `id` in this context, unsaved changes included, for a
    /// child's fault; `nil` when the object is deleted here or gone from the stores.
    private func valuesForChild(_ id: ManagedObjectID) throws -> [Any?]? {
        try performAndWait {
            guard let object = try objectForChild(id), !object.isDeleted else { return nil }
            return object.values
        }
    }

    /// The values of the registered, loaded and not deleted objects among `ids`, as
    /// ``valuesForChild(_:)`` gives them; read on this context's queue.
    func savedValues(of ids: Set<ManagedObjectID>) -> [ManagedObjectID: [Any?]] {
        var result: [ManagedObjectID: [Any?]] = [:]
        for id in ids {
            guard let object = registered[id], object.isLoaded, !object.isDeleted else { continue }
            result[id] = object.values
        }
        return result
    }

    /// The IDs the to-many relationship `name` of the object `id` holds in this context.
    private func relatedIDsForChild(_ id: ManagedObjectID, _ name: String) throws -> OrderedSet<ManagedObjectID> {
        try performAndWait {
            guard let object = try objectForChild(id) else { return [] }
            let slot = try object.runtime.slot(name)
            try object.loadToMany(slot)
            return object.values[slot] as? OrderedSet<ManagedObjectID> ?? []
        }
    }

    /// This context's object for an ID a child names it by (a temporary ID this context's save
    /// replaced is mapped to the permanent one), realized; `nil` for a temporary ID no context
    /// up the chain has.
    private func objectForChild(_ id: ManagedObjectID) throws -> ManagedObject? {
        let id = nesting.permanentIDs[id] ?? id
        guard knowsObject(id) else { return nil }
        let object = self.object(with: id)
        try object.fireFault()
        return object
    }

    /// Whether `id` may name an object of this context: a permanent ID, or a temporary one that
    /// is registered here or may be up the chain.
    private func knowsObject(_ id: ManagedObjectID) -> Bool {
        !id.isTemporaryID || registered[id] != nil || nesting.parent != nil
    }

    /// Fulfills a child's fault from the parent's current state of the object.
    func fulfillFault(_ object: ManagedObject, from parent: ManagedObjectContext) throws {
        guard let values = try parent.valuesForChild(object.objectID) else {
            return try markInaccessible(object)
        }
        load(object, fromParent: values)
    }

    /// Gives a child's object the values its parent holds.
    private func load(_ object: ManagedObject, fromParent values: [Any?]) {
        object.values = values
        object.committed = values
        object.isLoaded = true
        object.awakeFromFetch()
    }

    /// Reads `object`'s committed values again: from the parent for a child context, else from
    /// the store. Returns `false` when the object is gone.
    func reloadCommittedValues(of object: ManagedObject) throws -> Bool {
        if let parent = nesting.parent {
            guard let values = try parent.valuesForChild(object.objectID) else { return false }
            object.values = values
            object.committed = values
            return true
        }
        guard let coordinator = persistentStoreCoordinator else { return false }
        let layout = try coordinator.layout(object.entity)
        let (row, sequence) = try storedSnapshot(for: object.objectID, layout: layout)
        guard let row else { return false }
        try load(object, from: row, layout: layout, sequence: sequence)
        return true
    }

    /// A child's ``existingObject(with:)``: the object realized from the parent's state.
    func existingObject(
        _ id: ManagedObjectID, from parent: ManagedObjectContext, missing: CoreDataError
    ) throws -> ManagedObject {
        let object = self.object(with: id)
        if !object.isLoaded {
            guard let values = try parent.valuesForChild(object.objectID) else {
                if !object.hasChanges { unregister(object) }
                throw missing
            }
            load(object, fromParent: values)
        }
        guard !object.isInaccessible else { throw missing }
        return object
    }

    /// A child's to-many relationship as its parent holds it.
    func relatedIDs(
        of object: ManagedObject, _ relationship: RelationshipDescription, from parent: ManagedObjectContext
    ) throws -> OrderedSet<ManagedObjectID> {
        try parent.relatedIDsForChild(object.objectID, relationship.name)
    }

    /// A child's ``realizeObjects(_:)``: each object from the parent's state; an object the
    /// parent does not have stays a fault, which reports it when it fires.
    func realizeObjects(_ ids: [ManagedObjectID], from parent: ManagedObjectContext) throws -> [ManagedObject] {
        try ids.map { id in
            let object = self.object(with: id)
            if !object.isLoaded, let values = try parent.valuesForChild(object.objectID) {
                load(object, fromParent: values)
            }
            return object
        }
    }

    // MARK: Fetching through the parent

    /// The net unsaved changes of this context's ancestors, read on their queues; `nil` for a
    /// context without a parent.
    func ancestorChanges() -> AncestorChanges? {
        guard let parent = nesting.parent else { return nil }
        return parent.performAndWait {
            var changes = parent.ancestorChanges() ?? AncestorChanges()
            for object in parent.deletedSet {
                changes.pending.remove(object.objectID)
                changes.deleted.insert(object.objectID)
            }
            for object in parent.insertedSet.elements + parent.updatedSet.elements {
                changes.pending.insert(object.objectID)
                changes.deleted.remove(object.objectID)
            }
            return changes
        }
    }

    /// Adds to `keys` the stored objects of the hierarchy named `root` that an ancestor changed
    /// or deleted, so that a child's fetch evaluates their unsaved state instead of their rows.
    func addAncestorChangedKeys(to keys: inout [String: Set<Int64>], root: String) {
        guard let changes = ancestorChanges() else { return }
        for id in changes.pending.union(changes.deleted) where !id.isTemporaryID {
            guard let store = id.storeIdentifier, IndexLookup.rootName(id.entity) == root else { continue }
            keys[store, default: []].insert(id.primaryKey)
        }
    }

    /// Adds to `matches` this context's objects for the objects of `entities` that an ancestor
    /// inserted or changed and that meet `predicate` in their current state.
    func addAncestorPendingMatches(
        to matches: inout [ManagedObject], entities: Set<ObjectIdentifier>, predicate: FetchPredicate?
    ) throws {
        guard let changes = ancestorChanges() else { return }
        for id in changes.pending where entities.contains(ObjectIdentifier(id.entity)) {
            let object = self.object(with: id)
            guard !object.isDeleted, !insertedSet.contains(object), !updatedSet.contains(object) else { continue }
            try object.fireFault()
            guard !object.isDeleted else { continue }
            if predicate?.evaluate(with: object) ?? true { matches.append(object) }
        }
    }
}

/// A notification observer, removed from the default center when released.
final class SaveObserver {
    private let token: any NSObjectProtocol

    init(_ token: any NSObjectProtocol) { self.token = token }

    deinit { NotificationCenter.default.removeObserver(token) }
}
