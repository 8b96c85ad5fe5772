import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Sends ``UndoManager/undo()`` to the context's undo manager: reverts the changes of the
    /// newest undo group (Core Data's `undo()`). Does nothing without an undo manager.
    public func undo() {
        undoManager?.undo()
    }

    /// Sends ``UndoManager/redo()`` to the context's undo manager: applies again the changes
    /// the newest undo reverted (Core Data's `redo()`). Does nothing without an undo manager.
    public func redo() {
        undoManager?.redo()
    }

    // MARK: Recording

    /// Follows a new undo manager: the manager's checkpoints end the context's event, so that
    /// changes made before `undo()`, `beginUndoGrouping()` or `endUndoGrouping()` are recorded first.
    func undoManagerDidChange(from old: UndoManager?) {
        old?.checkpointObservers.removeAll { $0.owner == ObjectIdentifier(self) }
        undoTracking = UndoTracking()
        undoManager?.checkpointObservers.append((ObjectIdentifier(self), { [weak self] in self?.undoCheckpoint() }))
    }

    private func undoCheckpoint() {
        guard !undoTracking.isRegistering, !undoTracking.isRestoring else { return }
        processPendingChanges()
    }

    /// Notes that `object`'s values changed in the current event.
    func noteUndoableChange(_ object: ManagedObject) {
        guard undoManager != nil, !undoTracking.isRestoring else { return }
        undoTracking.touched.append(object)
    }

    /// Registers the current event's changes with the undo manager as one action, in the open
    /// group or in a group of their own (called by `processPendingChanges()`).
    func registerUndoForEvent() {
        guard let manager = undoManager, !undoTracking.isRestoring, !undoTracking.isRegistering else { return }
        var objects = undoTracking.touched
        objects.append(contentsOf: eventInserted)
        objects.append(contentsOf: pendingEvent.updated)
        objects.append(contentsOf: pendingEvent.deleted)
        undoTracking.touched = []
        guard !objects.isEmpty else { return }
        var changes: [UndoChange] = []
        for object in objects {
            let after = undoSnapshot(of: object)
            var before =
                undoTracking.snapshots[object]
                ?? UndoSnapshot(
                    exists: !isInsertedInEvent(object), values: object.committed.map { undoValues($0, of: object) })
            undoTracking.snapshots[object] = after
            let slots = object.eventChangedSlots.sorted()
            object.eventChangedSlots = []
            guard before.exists != after.exists || !slots.isEmpty else { continue }
            // A to-many relationship that was a fault before the event holds its committed value.
            if var values = before.values, let committed = object.committed {
                for slot in slots where values[slot] == nil && committed[slot] != nil {
                    values[slot] = undoValue(committed[slot], of: object)
                }
                before.values = values
            }
            changes.append(UndoChange(object: object, slots: slots, before: before, after: after))
        }
        guard !changes.isEmpty, manager.isUndoRegistrationEnabled else { return }
        undoTracking.isRegistering = true
        defer { undoTracking.isRegistering = false }
        let ownGroup = manager.groupingLevel == 0 && !manager.groupsByEvent
        if ownGroup { manager.beginUndoGrouping() }
        registerUndo(of: changes, restoringBefore: true, with: manager)
        if ownGroup { manager.endUndoGrouping() } else { manager.endEventGroup() }
    }

    /// Forgets the undo manager's actions and the recorded states, as `rollback()` and `reset()` do.
    func clearUndo() {
        undoManager?.removeAllActions()
        undoTracking.touched = []
        undoTracking.snapshots = [:]
    }

    /// Records a refreshed object's new state as the one its next change starts from (a fault
    /// starts from the values it will load).
    func undoStateDidReload(_ object: ManagedObject) {
        guard undoManager != nil else { return }
        undoTracking.snapshots[object] = object.isLoaded ? undoSnapshot(of: object) : nil
    }

    /// After a save, every recorded state equals the saved one, which objects hold as committed values.
    func forgetUndoSnapshotsAfterSave() {
        undoTracking.snapshots = [:]
    }

    private func registerUndo(of changes: [UndoChange], restoringBefore: Bool, with manager: UndoManager) {
        manager.registerUndo(withTarget: self) { context in context.restore(changes, toBefore: restoringBefore) }
    }

    // MARK: Restoring

    /// Brings the objects of `changes` back to their state before (or after) the change, and
    /// registers the opposite restoration: the redo of an undo, or the undo of a redo.
    private func restore(_ changes: [UndoChange], toBefore: Bool) {
        undoTracking.isRestoring = true
        for change in changes {
            let target = toBefore ? change.before : change.after
            let object = change.object
            let existed = object.managedObjectContext === self && !object.isDeleted
            if existed != target.exists { setExistence(of: object, target.exists) }
            if let values = target.values, object.managedObjectContext === self {
                if !object.isLoaded { try? object.fireFault() }
                if object.isLoaded {
                    for slot in change.slots { object.values[slot] = storedValue(values[slot]) }
                    updateChangeState(of: object, slots: change.slots)
                }
            }
            undoTracking.snapshots[object] = undoSnapshot(of: object)
            if existed == target.exists {
                object.awake(fromSnapshotEvents: .undoUpdate)
            } else {
                object.awake(fromSnapshotEvents: target.exists ? .undoDeletion : .undoInsertion)
            }
        }
        undoTracking.isRestoring = false
        if let manager = undoManager { registerUndo(of: changes, restoringBefore: !toBefore, with: manager) }
        processPendingChanges()
    }

    /// Inserts `object` back (undeleting it, or inserting it again) or takes it out (forgetting an
    /// insertion, or deleting a saved object), without applying delete rules: the related
    /// objects' own changes are restored with it.
    private func setExistence(of object: ManagedObject, _ exists: Bool) {
        if exists {
            if object.managedObjectContext === self, deletedSet.remove(object) != nil {
                object.isDeleted = false
                strongObjects.insert(object)
                pendingEvent.inserted.append(object)
            } else {
                // Inserted then deleted, deleted and saved, or an undone insertion: insert it.
                registerInsertion(object)
            }
        } else {
            if object.isInserted {
                object.isInserted = false
                removeInsertion(object)
                unregister(object)
                object.managedObjectContext = nil
            } else {
                object.isDeleted = true
                updatedSet.remove(object)
                deletedSet.append(object)
                strongObjects.insert(object)
            }
            pendingEvent.deleted.append(object)
        }
    }

    /// Recomputes which slots of a restored object differ from its saved values, moving it in or
    /// out of the updated objects: undoing back to the saved state leaves no change to save, and
    /// undoing a saved change makes the context dirty again.
    private func updateChangeState(of object: ManagedObject, slots: [Int]) {
        guard !object.isInserted, !object.isDeleted, let committed = object.committed else {
            object.changedSlots.formUnion(slots)
            return
        }
        object.changedSlots = SlotSet(
            object.runtime.properties.indices.filter { !sameValue(object.values[$0], committed[$0]) })
        if object.changedSlots.isEmpty {
            updatedSet.remove(object)
            if !retainsRegisteredObjects { strongObjects.remove(object) }
        } else {
            updatedSet.append(object)
            strongObjects.insert(object)
            if !pendingEvent.updated.contains(object) { pendingEvent.updated.append(object) }
        }
    }

    private func sameValue(_ left: Any?, _ right: Any?) -> Bool {
        switch (left, right) {
        case let (a as ManagedObjectID, b as ManagedObjectID): return a == b
        case let (a as OrderedSet<ManagedObjectID>, b as OrderedSet<ManagedObjectID>): return a == b
        default: return FetchValue.equal(left, right)
        }
    }

    // MARK: Snapshots

    private func undoSnapshot(of object: ManagedObject) -> UndoSnapshot {
        UndoSnapshot(
            exists: object.managedObjectContext === self && !object.isDeleted,
            values: object.isLoaded ? undoValues(object.values, of: object) : nil)
    }

    /// Slot values with the temporary IDs of relationships replaced by their objects, whose IDs
    /// change when they are saved.
    private func undoValues(_ values: [Any?], of object: ManagedObject) -> [Any?] {
        object.runtime.relationshipSlots.reduce(into: values) { values, slot in
            values[slot] = undoValue(values[slot], of: object)
        }
    }

    private func undoValue(_ value: Any?, of object: ManagedObject) -> Any? {
        if let id = value as? ManagedObjectID, id.isTemporaryID { return registered[id] ?? id }
        if let ids = value as? OrderedSet<ManagedObjectID>, ids.contains(where: \.isTemporaryID) {
            return ids.map { id -> Any in id.isTemporaryID ? (registered[id] ?? id as Any) : id }
        }
        return value
    }

    /// The slot form of a recorded value: objects back to their current IDs.
    private func storedValue(_ value: Any?) -> Any? {
        if let object = value as? ManagedObject { return object.objectID }
        if let members = value as? [Any] {
            return OrderedSet(members.map { ($0 as? ManagedObject)?.objectID ?? $0 as! ManagedObjectID })
        }
        return value
    }
}

/// A context's undo bookkeeping.
struct UndoTracking {
    /// Objects whose values changed in the current event.
    var touched = OrderedSet<ManagedObject>()
    /// Each object's state at the end of the last event that changed it, since the last save.
    var snapshots: [ManagedObject: UndoSnapshot] = [:]
    /// Whether an undo or redo is restoring objects (what it changes is not recorded again).
    var isRestoring = false
    /// Whether the event's changes are being registered.
    var isRegistering = false
}

/// An object's state, for undo: whether it is in the context (inserted, or saved and not
/// deleted) and its values (`nil` for a fault).
struct UndoSnapshot {
    var exists: Bool
    var values: [Any?]?
}

/// What one event did to one object.
struct UndoChange {
    let object: ManagedObject
    /// The slots the event changed.
    let slots: [Int]
    let before: UndoSnapshot
    let after: UndoSnapshot
}
