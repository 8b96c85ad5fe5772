import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Saves the context's changes to the stores as one transaction per store (Core Data's
    /// `save()`): applies delete rules, calls `willSave`, validates every changed object,
    /// assigns permanent IDs, resolves conflicts with the merge policy and commits.
    ///
    /// - Throws: ``CoreDataError``: validation errors (several are collected under
    ///   `validationMultipleErrors` with ``CoreDataError/detailedErrors``), `managedObjectMerge`
    ///   for conflicts and `managedObjectConstraintMerge` for uniqueness-constraint conflicts under
    ///   the `.error` policy, `managedObjectExternalRelationship` for a
    ///   relationship to an object saved in another store, `persistentStoreSave` when the store
    ///   fails. After a failed save the context keeps its changes, so they can be fixed and saved again.
    ///
    /// A save with nothing to save writes nothing and, as in Core Data, still posts the will-save
    /// and did-save notifications (with no objects).
    public func save() throws {
        guard hasChanges || !deletesToPropagate.isEmpty else { return postEmptySave() }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        propagateDeletes()
        processPendingChanges()
        guard hasChanges else { return postEmptySave() }
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        yieldChange(ContextChange(kind: .willSave))
        for object in Array(insertedSet) + Array(updatedSet) + Array(deletedSet) { object.willSave() }
        propagateDeletes()
        processPendingChanges()
        try computeDerivedAttributes()
        if !defersValidation { try validatePendingObjects() }

        var inserted = Array(insertedSet), updated = Array(updatedSet)
        var deleted = deletedSet.elements.filter { !$0.isInaccessible },
            discarded = deletedSet.elements.filter(\.isInaccessible)
        var committedSequences: [String: UInt64] = [:]
        if let parent = nesting.parent {
            // A child context saves into its parent; constraints are checked when the root saves.
            try push(inserted: inserted, updated: updated, deleted: deleted, into: parent)
        } else {
            committedSequences = try coordinator.withReplicatedSave { try commitConcurrently(coordinator: coordinator) }
            // The merge policy may merge objects of the save into others: read the changes after it.
            inserted = Array(insertedSet)
            updated = Array(updatedSet)
            deleted = deletedSet.elements.filter { !$0.isInaccessible }
            discarded = deletedSet.elements.filter(\.isInaccessible)
        }

        // Only a saved object's relationships take edits (``ToManyEdits``): none of an inserted one.
        for object in updated { object.faultEditedRelationships() }
        for object in inserted + updated {
            object.isInserted = false
            object.committed = object.values
            object.changedSlots = []
            object.eventChangedSlots = []
        }
        for object in deleted + discarded {
            unregister(object)
            object.managedObjectContext = nil
        }
        forgetInsertedThenDeleted()
        insertedSet = []
        updatedSet = []
        deletedSet = []
        strongObjects = retainsRegisteredObjects ? Set(registeredObjects) : []
        forgetUndoSnapshotsAfterSave()
        advanceQueryGeneration()
        keepUntilEventEnds(inserted)
        keepUntilEventEnds(updated)
        for object in inserted + updated + deleted { object.didSave() }
        let change = ContextChange(
            kind: .didSave, inserted: Set(inserted.map(\.objectID)), updated: Set(updated.map(\.objectID)),
            deleted: Set(deleted.map(\.objectID)))
        let savedIDs: KeyValuePairs<NotificationKey, Set<ManagedObjectID>> = [
            .insertedObjectIDs: change.inserted, .updatedObjectIDs: change.updated, .deletedObjectIDs: change.deleted,
        ]
        var info = Self.notificationInfo(
            objects: [.insertedObjects: Set(inserted), .updatedObjects: Set(updated), .deletedObjects: Set(deleted)],
            objectIDs: savedIDs)
        if let token = newChangeToken(committedSequences, coordinator: coordinator) {
            info[NotificationKey.newChangeToken.rawValue] = token
        }
        NotificationCenter.default.post(name: Self.didSaveObjectsNotification, object: self, userInfo: info)
        NotificationCenter.default.post(
            name: Self.didSaveObjectIDsNotification, object: self, userInfo: Self.notificationInfo(objectIDs: savedIDs))
        yieldChange(change)
        RemoteChangeCenter.postChanges(committedSequences)
    }

    /// Posts the notifications of a save that had nothing to save, as Core Data does, when the
    /// context has somewhere to save to.
    private func postEmptySave() {
        guard persistentStoreCoordinator != nil || nesting.parent != nil else { return }
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        NotificationCenter.default.post(name: Self.didSaveObjectsNotification, object: self, userInfo: [:])
        NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: [:])
    }

    /// The history token after a save's transaction (`committedSequences` by store), when it
    /// went to one store that keeps persistent history (with several, the one whose identifier
    /// sorts first: a token names one store).
    private func newChangeToken(
        _ committedSequences: [String: UInt64], coordinator: PersistentStoreCoordinator
    ) -> PersistentHistoryToken? {
        let tracked = committedSequences.filter { coordinator.store(identifier: $0.key)?.keepsHistory == true }
        guard let (store, sequence) = tracked.min(by: { $0.key < $1.key }) else { return nil }
        return PersistentHistoryToken(storeIdentifier: store, sequence: sequence)
    }

    /// Gives `objects` permanent IDs now, before they are saved (Core Data's
    /// `obtainPermanentIDs(for:)`). Costs no I/O: keys are reserved in memory.
    ///
    /// - Throws: ``CoreDataError`` when an object is not registered with this context, or no
    ///   store holds one of the objects' entities.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        try obtainPermanentIDs(for: objects, in: nil)
    }

    /// Makes the store that `object`, inserted into this context and not yet saved, is saved to
    /// `store` (Core Data's `assign(_:to:)`), instead of the first store whose configuration holds
    /// its entity. The object takes its permanent ID in that store now.
    ///
    /// - Important: an object that is not a managed object inserted into this context and
    ///   unsaved, a store that is not one of the context's coordinator, or a store whose
    ///   configuration does not hold the object's entity stops the program, as Core Data raises.
    public func assign(_ object: Any, to store: PersistentStore) {
        guard let object = object as? ManagedObject, object.managedObjectContext === self, object.objectID.isTemporaryID
        else {
            preconditionFailure(
                "assign(_:to:) takes an object inserted into this context and not yet saved, not \(object)")
        }
        guard let coordinator = persistentStoreCoordinator,
            coordinator.persistentStores.contains(where: { $0 === store })
        else {
            preconditionFailure("assign(_:to:): the store \(store.identifier) is not one of the context's coordinator")
        }
        let model = coordinator.managedObjectModel
        if let name = store.configurationName, model.configurations.contains(name),
            model.entities(forConfigurationName: name)?.contains(where: { $0 === object.entity }) != true
        {
            preconditionFailure(
                "assign(_:to:): the store's configuration \(name) does not hold \(object.entity.entityName)")
        }
        do {
            try obtainPermanentIDs(for: [object], in: store)
        } catch {
            preconditionFailure("assign(_:to:): \(error)")
        }
    }

    /// Gives `objects` permanent IDs in `store`, or each in the store that holds its entity.
    private func obtainPermanentIDs(for objects: [ManagedObject], in store: PersistentStore?) throws {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        // Re-keying another context's object here would leave its entry there (and this one)
        // dangling once it is deallocated.
        if let foreign = objects.first(where: { $0.managedObjectContext !== self }) {
            throw CoreDataError(
                .coreData, "\(foreign.objectID) is not registered with this context", objectID: foreign.objectID)
        }
        // The objects by store, in the order of the stores' first objects (a save has one store,
        // most often).
        var groups: [(store: PersistentStore, objects: [ManagedObject])] = []
        // The previous object's entity and the index of its store's group: objects of one
        // entity usually come in a row.
        var recentEntity: EntityDescription?
        var recentGroup = 0
        for object in objects where object.objectID.isTemporaryID {
            let entity = object.entity
            if entity !== recentEntity {
                recentEntity = entity
                let store = try store ?? coordinator.store(for: entity)
                if let index = groups.firstIndex(where: { $0.store === store }) {
                    recentGroup = index
                } else {
                    recentGroup = groups.count
                    groups.append((store, []))
                }
            }
            groups[recentGroup].objects.append(object)
        }
        guard !groups.isEmpty else { return }
        var pairs: [(temporary: ManagedObjectID, permanent: ManagedObjectID)] = []
        pairs.reserveCapacity(objects.count)
        let obtained = try groups.map { group in
            (
                group.objects,
                try StoreWriter(store: group.store, coordinator: coordinator).obtainPermanentIDs(for: group.objects)
            )
        }
        for (objects, ids) in obtained {
            // In the order the objects were made, whose temporary IDs take neighbouring slots of
            // the registry (``UniquingTable``), as their permanent IDs do.
            for (object, id) in zip(objects, ids) {
                pairs.append((object.objectID, id))
                rekey(object, to: id)
            }
        }
        let renamed = TemporaryIDRenames(pairs)
        renameReferences(renamed)
        shareWithAncestors(renamed)
    }

    /// Gives the registered objects named by the temporary IDs of `renamed` their permanent IDs,
    /// and every reference to them in changed objects.
    func adoptPermanentIDs(_ renamed: TemporaryIDRenames) {
        for (temporary, permanent) in renamed.pairs {
            guard let object = registered[temporary] else { continue }
            rekey(object, to: permanent)
        }
        renameReferences(renamed)
    }

    /// Registers `object` under `permanent` instead of its temporary ID.
    private func rekey(_ object: ManagedObject, to permanent: ManagedObjectID) {
        registered.remove(object)
        object.objectID = permanent
        register(object)
    }

    /// Replaces the temporary IDs of `renamed` by their permanent IDs in every changed object's
    /// relationships, and in what the context remembers of its children's inserts.
    private func renameReferences(_ renamed: TemporaryIDRenames) {
        rememberRenames(renamed)
        // Only changed objects can point at new ones: setting a relationship changes both sides.
        for objects in [insertedSet, updatedSet, deletedSet] {
            for object in objects where object.isLoaded {
                for slot in object.runtime.relationshipSlots {
                    switch object.runtime.loads[slot] {
                    case .toOne, .toOneOfHierarchy:
                        // A to-one slot holds an ID or nil: one cast, and a write only for a new ID.
                        guard let id = SlotValueCast.cast(object.values[slot], to: ManagedObjectID.self),
                            id.isTemporaryID, let permanent = renamed[id]
                        else { continue }
                        object.values[slot] = permanent
                    default:
                        object.values[slot] = rename(object.values[slot]) { renamed[$0] }
                    }
                }
            }
        }
    }

    /// `value` (a relationship slot's: an ID, a set of IDs, ``ToManyEdits`` or `nil`) with each temporary ID
    /// that `permanent` gives a permanent ID for replaced by it.
    func rename(_ value: Any?, _ permanent: (ManagedObjectID) -> ManagedObjectID?) -> Any? {
        if let ids = SlotValueCast.cast(value, to: OrderedSet<ManagedObjectID>.self) {
            guard ids.contains(where: \.isTemporaryID) else { return value }
            return OrderedSet(ids.map { $0.isTemporaryID ? permanent($0) ?? $0 : $0 })
        }
        if let id = SlotValueCast.cast(value, to: ManagedObjectID.self), id.isTemporaryID { return permanent(id) ?? id }
        if let edits = SlotValueCast.cast(value, to: ToManyEdits.self), edits.hasTemporaryIDs {
            return edits.renamed(permanent)
        }
        return value
    }

    /// Validates every inserted, updated and deleted object, collecting all failures.
    private func validatePendingObjects() throws {
        var errors: [CoreDataError] = []
        func collect(_ body: () throws -> Void) {
            do {
                try body()
            } catch let error as CoreDataError where error.code == .validationMultipleErrors {
                errors += error.detailedErrors
            } catch let error as CoreDataError {
                errors.append(error)
            } catch {
                errors.append(CoreDataError(.managedObjectValidation, "\(error)"))
            }
        }
        for object in insertedSet { collect(object.validateForInsert) }
        for object in updatedSet { collect(object.validateForUpdate) }
        for object in deletedSet where !object.isInaccessible { collect(object.validateForDelete) }
        try CoreDataError.throwing(errors)
    }

    /// Applies the merge policy to objects whose stored row changed since they were read.
    /// Returns the objects to update and delete.
    func resolveConflicts(
        updated: [ManagedObject], deleted: [ManagedObject], coordinator: PersistentStoreCoordinator
    ) throws -> (updated: [ManagedObject], deleted: [ManagedObject]) {
        var conflicts: [MergeConflict] = []
        var keptUpdates: [ManagedObject] = []
        // Deleted objects whose row someone else deleted already: the store has nothing to delete.
        var goneDeletes = Set<ManagedObject>()
        for object in updated + deleted {
            // A permanent ID has a store identifier; a temporary one has none.
            guard let committed = object.committed, let identifier = object.objectID.storeIdentifier else {
                if !object.isDeleted { keptUpdates.append(object) }
                continue
            }
            guard let store = coordinator.store(identifier: identifier) else {
                throw CoreDataError(
                    .persistentStoreSave, "the store \(identifier) was removed", objectID: object.objectID)
            }
            guard
                let conflict = try StoreWriter(store: store, coordinator: coordinator).conflict(
                    for: object, committed: committed, context: self)
            else {
                if !object.isDeleted { keptUpdates.append(object) }
                continue
            }
            let stored = conflict.persistedSnapshot
            if stored == nil && object.isDeleted { goneDeletes.insert(object) }
            conflicts.append(conflict)
            if stored != nil && !object.isDeleted { keptUpdates.append(object) }
        }
        if !conflicts.isEmpty { try mergePolicy.resolve(optimisticLockingConflicts: conflicts) }
        return (keptUpdates, goneDeletes.isEmpty ? deleted : deleted.filter { !goneDeletes.contains($0) })
    }
}

extension CoreDataError {
    /// Throws nothing for no errors, the error for one, and a `validationMultipleErrors` error
    /// listing them for several.
    static func throwing(_ errors: [CoreDataError]) throws {
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw CoreDataError(.validationMultipleErrors, "\(errors.count) validation errors", detailedErrors: errors)
        }
    }
}
