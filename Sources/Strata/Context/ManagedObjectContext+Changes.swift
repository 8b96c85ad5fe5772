import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Ends the current event: applies pending delete rules and posts the objects-did-change
    /// notification for what changed since the last call (Core Data's `processPendingChanges()`).
    ///
    /// `perform` and `performAndWait` call it after each block, and `save()` before saving.
    public func processPendingChanges() {
        if propagatesDeletesAtEndOfEvent { propagateDeletes() }
        registerUndoForEvent()
        guard !pendingEvent.isEmpty || insertedSet.hasAddedInEvent else { return }
        let inserted = Set(eventInserted)
        let event = pendingEvent
        pendingEvent = ChangeEvent()
        insertedSet.beginEvent()
        // Each set on its own: their union would hash every object again (a bulk insert's 100,000).
        for object in event.updated { object.eventChangedSlots = [] }
        for object in inserted { object.eventChangedSlots = [] }
        NotificationCenter.default.post(
            name: Self.didChangeObjectsNotification, object: self,
            userInfo: Self.notificationInfo(objects: [
                .insertedObjects: inserted, .updatedObjects: Set(event.updated), .deletedObjects: Set(event.deleted),
                .refreshedObjects: Set(event.refreshed), .invalidatedObjects: Set(event.invalidated),
            ]))
        yieldChange(
            ContextChange(
                kind: .objectsDidChange, inserted: Set(inserted.map(\.objectID)),
                updated: Set(event.updated.map(\.objectID)),
                deleted: Set(event.deleted.map(\.objectID)), refreshed: Set(event.refreshed.map(\.objectID)),
                invalidated: Set(event.invalidated.map(\.objectID))))
    }

    /// Applies the delete rules of every object deleted since the last call: nullify removes the
    /// object from the other side, cascade deletes the related objects; deny is checked when
    /// saving.
    func propagateDeletes() {
        while let object = deletesToPropagate.popLast() {
            // Inserted again since it was deleted: nothing to propagate.
            guard object.isDeleted else { continue }
            object.prepareForDeletion()
            do {
                try object.fireFault()
                for (slot, property) in object.runtime.properties.enumerated() {
                    guard let relationship = property as? RelationshipDescription else { continue }
                    try object.loadToMany(slot)
                    let related: [ManagedObjectID]
                    switch object.values[slot] {
                    case let id as ManagedObjectID: related = [id]
                    case let ids as OrderedSet<ManagedObjectID>: related = Array(ids)
                    default: related = []
                    }
                    switch relationship.deleteRule {
                    case .cascadeDeleteRule:
                        for id in related { delete(self.object(with: id)) }
                    case .nullifyDeleteRule:
                        guard let inverse = relationship.inverseRelationship else { continue }
                        for id in related {
                            let other = self.object(with: id)
                            guard !other.isDeleted else { continue }
                            try other.fireFault()
                            try other.editRelationship(
                                try other.runtime.slot(of: inverse, hint: object.runtime.inverseSlots[slot]),
                                removing: object.objectID)
                        }
                    default:
                        continue
                    }
                }
            } catch {
                // An object whose row is gone has nothing left to propagate.
                continue
            }
        }
    }

    /// Discards every unsaved change: inserted objects are forgotten, updated and deleted ones
    /// get their last saved values back (Core Data's `rollback()`).
    public func rollback() {
        deletesToPropagate = []
        clearUndo()
        for object in insertedSet {
            unregister(object)
            object.isInserted = false
            object.managedObjectContext = nil
        }
        for object in Array(updatedSet) + Array(deletedSet) {
            object.isDeleted = false
            if let committed = object.committed {
                object.values = committed
            }
            object.changedSlots = []
            object.eventChangedSlots = []
            object.awake(fromSnapshotEvents: .rollback)
        }
        forgetInsertedThenDeleted()
        insertedSet = []
        updatedSet = []
        deletedSet = []
        pendingEvent = ChangeEvent()
        strongObjects = retainsRegisteredObjects ? Set(registeredObjects) : []
    }

    /// Forgets the objects inserted and then deleted since the last save, as the save or
    /// rollback that ends them forgets inserted and deleted objects. They are in no change set,
    /// only held strongly since their insertion.
    func forgetInsertedThenDeleted() {
        for object in strongObjects where object.isDeleted && !deletedSet.contains(object) {
            unregister(object)
            object.isDeleted = false
            object.managedObjectContext = nil
        }
    }

    /// Forgets every registered object and unsaved change (Core Data's `reset()`). Objects
    /// fetched before are turned into faults that belong to no context: firing one throws, so
    /// fetch again instead.
    public func reset() {
        clearUndo()
        advanceQueryGeneration()
        let invalidated = registeredObjects.union(strongObjects)
        for object in invalidated {
            if object.isLoaded { Self.turnIntoFault(object) }
            object.managedObjectContext = nil
        }
        registered.removeAll()
        recentIDs.removeAll()
        strongObjects = []
        insertedSet = []
        updatedSet = []
        deletedSet = []
        deletesToPropagate = []
        pendingEvent = ChangeEvent()
        postInvalidatedAll(invalidated.map(\.objectID))
    }

    /// Updates `object` from the store (Core Data's `refresh(_:mergeChanges:)`).
    ///
    /// - Parameters:
    ///   - object: a registered object.
    ///   - flag: `true` reloads the stored values and keeps the object's unsaved changes (and
    ///     transient values) on top of them; `false` discards its changes and transient values
    ///     and turns it into a fault.
    public func refresh(_ object: ManagedObject, mergeChanges flag: Bool) {
        refresh(object, mergeChanges: flag, committedValues: nil)
    }

    /// ``refresh(_:mergeChanges:)``, taking the stored values from `committedValues` when given
    /// instead of reading them.
    func refresh(_ object: ManagedObject, mergeChanges flag: Bool, committedValues: [Any?]?) {
        guard object.managedObjectContext === self, !object.isInserted else { return }
        if flag, object.isLoaded, persistentStoreCoordinator != nil {
            let changed = object.changedSlots
            let current = object.values
            let reloaded: Bool
            if let committedValues {
                object.values = committedValues
                object.committed = committedValues
                reloaded = true
            } else {
                reloaded = (try? reloadCommittedValues(of: object)) == true
            }
            if reloaded {
                let transient = object.runtime.properties.indices.filter { object.runtime.properties[$0].isTransient }
                for slot in changed.union(transient) { object.values[slot] = current[slot] }
                object.changedSlots = changed
                object.awake(fromSnapshotEvents: .refresh)
            }
        } else {
            if !object.isDeleted {
                updatedSet.remove(object)
                if !retainsRegisteredObjects { strongObjects.remove(object) }
            }
            Self.turnIntoFault(object)
        }
        if !pendingEvent.refreshed.contains(object) { pendingEvent.refreshed.append(object) }
        undoStateDidReload(object)
    }

    /// Discards `object`'s values and changes, making it a fault, with its
    /// ``ManagedObject/willTurnIntoFault()`` and ``ManagedObject/didTurnIntoFault()`` calls.
    private static func turnIntoFault(_ object: ManagedObject) {
        object.willTurnIntoFault()
        object.values = []
        object.committed = nil
        object.isLoaded = false
        object.changedSlots = []
        object.eventChangedSlots = []
        object.didTurnIntoFault()
    }

    /// Refreshes every registered object (Core Data's `refreshAllObjects()`): objects with
    /// unsaved changes keep them over the newly read stored values, the others are turned into
    /// faults. A context pinned to a query generation moves to the current one first.
    public func refreshAllObjects() {
        advanceQueryGeneration()
        for object in registeredObjects { refresh(object, mergeChanges: object.hasChanges) }
    }
}
