import Foundation
import OrderedCollections

/// The object IDs of a save (or of a remote change) to merge into a context. `Sendable`.
struct MergedChanges: Sendable {
    var inserted = Set<ManagedObjectID>()
    var updated = Set<ManagedObjectID>()
    var deleted = Set<ManagedObjectID>()
    var refreshed = Set<ManagedObjectID>()
    /// The permanent IDs the save gave to inserted objects that the receiver may know by the
    /// temporary IDs it saved them with (into the sender, its parent), by temporary ID.
    var renamed: [ManagedObjectID: ManagedObjectID] = [:]

    init(
        inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>, deleted: Set<ManagedObjectID>,
        refreshed: Set<ManagedObjectID>
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
    }

    /// The changes a did-save notification's `userInfo` (or a dictionary given to
    /// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``) names, under Core
    /// Data's keys: sets or arrays of object IDs, managed objects or URI representations.
    ///
    /// - Parameters:
    ///   - coordinator: resolves URI representations.
    ///   - renamed: the sender's permanent IDs of objects it got from children, by temporary ID.
    init(
        _ info: [AnyHashable: Any], coordinator: PersistentStoreCoordinator?,
        renamed: [ManagedObjectID: ManagedObjectID] = [:]
    ) {
        typealias Key = ManagedObjectContext.NotificationKey
        inserted = Self.ids(
            in: info, Key.insertedObjectIDs.rawValue, Key.insertedObjects.rawValue, coordinator: coordinator)
        updated = Self.ids(
            in: info, Key.updatedObjectIDs.rawValue, Key.updatedObjects.rawValue, coordinator: coordinator)
        deleted = Self.ids(
            in: info, Key.deletedObjectIDs.rawValue, Key.deletedObjects.rawValue, coordinator: coordinator)
        refreshed = Self.ids(
            in: info, Key.refreshedObjectIDs.rawValue, Key.refreshedObjects.rawValue, coordinator: coordinator)
        if !renamed.isEmpty { self.renamed = renamed.filter { inserted.contains($0.value) } }
    }

    /// The IDs under `idKey`, or else under `objectKey`.
    private static func ids(
        in info: [AnyHashable: Any], _ idKey: String, _ objectKey: String, coordinator: PersistentStoreCoordinator?
    ) -> Set<ManagedObjectID> {
        guard let value = info[idKey] ?? info[objectKey] else { return [] }
        let elements: [Any]
        if let set = value as? Set<AnyHashable> {
            elements = set.map(\.base)
        } else if let array = value as? [Any] {
            elements = array
        } else {
            elements = [value]
        }
        var ids = Set<ManagedObjectID>()
        for element in elements {
            switch element {
            case let id as ManagedObjectID: ids.insert(id)
            case let object as ManagedObject: ids.insert(object.objectID)
            case let url as URL: if let id = coordinator?.managedObjectID(forURIRepresentation: url) { ids.insert(id) }
            default: continue
            }
        }
        return ids
    }
}

extension ManagedObjectContext {
    /// Brings in the changes another context saved (Core Data's
    /// `mergeChanges(fromContextDidSave:)`): registered objects that were updated are refreshed,
    /// keeping this context's own changes; registered objects that were deleted are deleted here
    /// and leave the context; inserted objects are faulted in. The context then posts its
    /// objects-did-change notification (merged updates under `refreshed`, deletions under
    /// `deleted`, insertions under `inserted`) and ``didMergeChangesObjectIDsNotification``.
    ///
    /// Call it on the context's queue with a ``didSaveObjectsNotification`` of another context.
    /// Costs one read per refreshed object that is not a fault.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        merge(MergedChanges(notification.userInfo ?? [:], coordinator: persistentStoreCoordinator))
    }

    /// Merges the changes of a `ContextChange` from another context's ``changes`` stream, as
    /// ``mergeChanges(fromContextDidSave:)`` does.
    public func mergeChanges(from change: ContextChange) {
        merge(
            MergedChanges(
                inserted: change.inserted, updated: change.updated, deleted: change.deleted, refreshed: change.refreshed
            ))
    }

    /// Merges changes saved elsewhere (another process, another coordinator, a serialized
    /// did-save) into `contexts`, each on its own queue (Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`). Parents are merged before their children,
    /// so that a child refreshes from its parent's merged state.
    ///
    /// - Parameters:
    ///   - changeNotificationData: object IDs, managed objects or URI representations (sets or
    ///     arrays) under `InsertedObjectsKey`-style keys (`inserted`, `updated`, `deleted`,
    ///     `refreshed`) or their `…_objectIDs` forms (`inserted_objectIDs`, …).
    ///   - contexts: the contexts to merge into.
    public static func mergeChanges(
        fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [ManagedObjectContext]
    ) {
        func depth(_ context: ManagedObjectContext) -> Int {
            var depth = 0
            var ancestor = context.nesting.parent
            while let next = ancestor {
                depth += 1
                ancestor = next.nesting.parent
            }
            return depth
        }
        let ordered = contexts.enumerated().sorted { (depth($0.element), $0.offset) < (depth($1.element), $1.offset) }
            .map(\.element)
        for context in ordered {
            let changes = MergedChanges(changeNotificationData, coordinator: context.persistentStoreCoordinator)
            context.performAndWait { context.merge(changes) }
        }
    }

    /// Merges `changes` into the context and posts the notifications of the merge.
    ///
    /// - Parameter committedValues: the saved values of updated objects, by ID, taken from the
    ///   parent context when it saved; an object without them is reloaded from the parent or
    ///   the stores.
    func merge(_ changes: MergedChanges, committedValues: [ManagedObjectID: [Any?]] = [:]) {
        advanceQueryGeneration()
        let adopted = changes.renamed.filter { registered[$0.key] != nil }
        if !adopted.isEmpty { adoptPermanentIDs(TemporaryIDRenames(adopted)) }
        let known = Set(adopted.values)
        // A temporary ID names an object only up a chain of contexts (a parent's save into its own parent).
        for id in changes.inserted where (!id.isTemporaryID || nesting.parent != nil) && !known.contains(id) {
            let object = object(with: id)
            if !pendingEvent.inserted.contains(object) { pendingEvent.inserted.append(object) }
        }
        for id in changes.updated.union(changes.refreshed) {
            guard let object = registered[id], object.isLoaded, !object.isInserted else { continue }
            // Reloading leaves unchanged to-many relationships faults, reloaded when next read.
            refresh(object, mergeChanges: true, committedValues: committedValues[id])
        }
        for id in changes.deleted {
            guard let object = registered[id] else { continue }
            deletesToPropagate.removeAll { $0 === object }
            pendingEvent.inserted.remove(object)
            pendingEvent.updated.remove(object)
            pendingEvent.refreshed.remove(object)
            // Deleted here as by delete(_:), as Core Data's merge does: registered and in
            // deletedObjects until the next save, which has nothing left to write for it.
            markGone(object)
            if !pendingEvent.deleted.contains(object) { pendingEvent.deleted.append(object) }
        }
        processPendingChanges()
        NotificationCenter.default.post(
            name: Self.didMergeChangesObjectIDsNotification, object: self,
            userInfo: [
                NotificationKey.insertedObjectIDs.rawValue: changes.inserted,
                NotificationKey.updatedObjectIDs.rawValue: changes.updated,
                NotificationKey.deletedObjectIDs.rawValue: changes.deleted,
                NotificationKey.refreshedObjectIDs.rawValue: changes.refreshed,
            ])
    }
}
