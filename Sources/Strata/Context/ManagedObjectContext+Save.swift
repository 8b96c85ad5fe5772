import Foundation
import OrderedCollections
import StrataStore

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
    public func save() throws {
        guard hasChanges || !deletesToPropagate.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        propagateDeletes()
        processPendingChanges()
        guard hasChanges else { return }
        NotificationCenter.default.post(name: Self.willSaveObjectsNotification, object: self)
        yieldChange(ContextChange(kind: .willSave))
        for object in Array(insertedSet) + Array(updatedSet) + Array(deletedSet) { object.willSave() }
        propagateDeletes()
        processPendingChanges()
        try computeDerivedAttributes()
        if !defersValidation { try validatePendingObjects() }

        var inserted = Array(insertedSet), updated = Array(updatedSet)
        var deleted = deletedSet.elements.filter { !$0.isInaccessible }, discarded = deletedSet.elements.filter(\.isInaccessible)
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
        for object in inserted + updated + deleted { object.didSave() }
        let change = ContextChange(
            kind: .didSave, inserted: Set(inserted.map(\.objectID)), updated: Set(updated.map(\.objectID)),
            deleted: Set(deleted.map(\.objectID)))
        let savedIDs: KeyValuePairs<NotificationKey, Set<ManagedObjectID>> = [
            .insertedObjectIDs: change.inserted, .updatedObjectIDs: change.updated, .deletedObjectIDs: change.deleted,
        ]
        NotificationCenter.default.post(name: Self.didSaveObjectsNotification, object: self, userInfo: Self.notificationInfo(
            objects: [.insertedObjects: Set(inserted), .updatedObjects: Set(updated), .deletedObjects: Set(deleted)], objectIDs: savedIDs))
        NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: Self.notificationInfo(objectIDs: savedIDs))
        yieldChange(change)
        RemoteChangeCenter.postChanges(committedSequences)
    }

    /// Gives `objects` permanent IDs now, before they are saved (Core Data's
    /// `obtainPermanentIDs(for:)`). Costs no I/O: keys are reserved in memory.
    ///
    /// - Throws: ``CoreDataError`` when an object is not registered with this context, or no
    ///   store holds one of the objects' entities.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        // Re-keying another context's object here would leave its entry there (and this one)
        // dangling once it is deallocated.
        if let foreign = objects.first(where: { $0.managedObjectContext !== self }) {
            throw CoreDataError(.coreData, "\(foreign.objectID) is not registered with this context", objectID: foreign.objectID)
        }
        var groups: [EntityKey: (store: PersistentStore, objects: [ManagedObject])] = [:]
        // The group of the previous object's entity: objects of one entity usually come in a row.
        var recent: (entity: EntityDescription, group: EntityKey, store: PersistentStore)?
        for object in objects where object.objectID.isTemporaryID {
            if recent?.entity !== object.entity {
                let store = try coordinator.store(for: object.entity)
                let layout = try coordinator.layout(object.entity)
                recent = (object.entity, EntityKey(entity: layout.storeEntity, key: Int64(ObjectIdentifier(store).hashValue)), store)
            }
            groups[recent!.group, default: (recent!.store, [])].objects.append(object)
        }
        guard !groups.isEmpty else { return }
        var renamed: [ManagedObjectID: ManagedObjectID] = [:]
        renamed.reserveCapacity(objects.count)
        for (group, members) in groups {
            let keys = members.store.rows.allocateKeys(for: group.entity, count: members.objects.count)
            for (object, key) in zip(members.objects, keys) {
                renamed[object.objectID] = ManagedObjectID(entity: object.entity, storeIdentifier: members.store.identifier, primaryKey: key)
            }
        }
        adoptPermanentIDs(renamed)
        shareWithAncestors(renamed)
    }

    /// Gives the registered objects named by the temporary IDs of `renamed` their permanent IDs,
    /// and every reference to them in changed objects.
    func adoptPermanentIDs(_ renamed: [ManagedObjectID: ManagedObjectID]) {
        for (temporary, permanent) in renamed {
            guard let object = registered[temporary]?.object else { continue }
            registered[temporary] = nil
            object.objectID = permanent
            register(object)
        }
        rememberRenames(renamed)
        // Only changed objects can point at new ones: setting a relationship changes both sides.
        for object in Array(insertedSet) + Array(updatedSet) + Array(deletedSet) where object.isLoaded {
            for slot in object.runtime.relationshipSlots { object.values[slot] = rename(object.values[slot], renamed) }
        }
    }

    func rename(_ value: Any?, _ renamed: [ManagedObjectID: ManagedObjectID]) -> Any? {
        if let id = value as? ManagedObjectID, id.isTemporaryID { return renamed[id] ?? id }
        if let ids = value as? OrderedSet<ManagedObjectID>, ids.contains(where: \.isTemporaryID) {
            return OrderedSet(ids.map { renamed[$0] ?? $0 })
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
            guard let committed = object.committed, !object.objectID.isTemporaryID else {
                if !object.isDeleted { keptUpdates.append(object) }
                continue
            }
            let store = coordinator.store(identifier: object.objectID.storeIdentifier!)
            if object.snapshotSequence != 0, let store, store.rows.lastSequence == object.snapshotSequence {
                // Nothing was committed since the object was read: there can be no conflict.
                if !object.isDeleted { keptUpdates.append(object) }
                continue
            }
            let stored = try coordinator.row(for: object.objectID).map {
                try RowDecoding.values(of: object.runtime, from: $0, layout: try coordinator.layout(object.entity), storeIdentifier: object.objectID.storeIdentifier, context: self)
            }
            let storeChanged = MergeConflict.persistentSlots(of: object.runtime).filter { !FetchValue.equal(committed[$0], stored?[$0]) }
            guard stored == nil || !storeChanged.isEmpty else {
                if !object.isDeleted { keptUpdates.append(object) }
                continue
            }
            if stored == nil && object.isDeleted { goneDeletes.insert(object) }
            conflicts.append(MergeConflict(object: object, stored: stored, storeChangedSlots: Set(storeChanged), newVersion: store?.rows.lastSequence ?? 0))
            if stored != nil && !object.isDeleted { keptUpdates.append(object) }
        }
        if !conflicts.isEmpty { try mergePolicy.resolve(optimisticLockingConflicts: conflicts) }
        return (keptUpdates, goneDeletes.isEmpty ? deleted : deleted.filter { !goneDeletes.contains($0) })
    }

    /// Builds and commits one transaction per store, each under its store's condition, adding
    /// each store's sequence to `sequences` once committed.
    ///
    /// - Throws: ``SaveConflict`` when a store refuses a commit because its condition failed.
    func commit(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], conditions: [String: CommitCondition],
        into sequences: inout [String: UInt64], coordinator: PersistentStoreCoordinator
    ) throws {
        var transactions: [String: Transaction] = [:]
        func transaction(_ object: ManagedObject) -> String {
            let identifier = object.objectID.storeIdentifier!
            if transactions[identifier] == nil {
                transactions[identifier] = Transaction(author: transactionAuthor, contextName: name)
                transactions[identifier]!.condition = conditions[identifier]
            }
            return identifier
        }
        var deletedJoinRows = Set<EntityKey>()
        for object in inserted {
            let id = transaction(object)
            let layout = try coordinator.layout(object.entity)
            transactions[id]!.insert(layout.storeEntity, key: object.objectID.primaryKey, row: try row(of: object, layout: layout, coordinator: coordinator))
            try writeJoins(of: object, into: &transactions[id]!, deletedJoinRows: &deletedJoinRows, coordinator: coordinator)
        }
        for object in updated {
            let id = transaction(object)
            let layout = try coordinator.layout(object.entity)
            let columns = Set(object.changedSlots.lazy.map { layout.slotColumns[$0] }.filter { $0 >= 0 }).sorted()
            if !columns.isEmpty {
                transactions[id]!.update(layout.storeEntity, key: object.objectID.primaryKey, row: try row(of: object, layout: layout, coordinator: coordinator), changedColumns: columns)
            }
            try writeJoins(of: object, into: &transactions[id]!, deletedJoinRows: &deletedJoinRows, coordinator: coordinator)
        }
        for object in deleted {
            let id = transaction(object)
            let layout = try coordinator.layout(object.entity)
            transactions[id]!.delete(layout.storeEntity, key: object.objectID.primaryKey)
            let store = coordinator.store(identifier: id)!
            for join in layout.joins.values {
                for key in try coordinator.storeCall({ try store.rows.keys(join.storeEntity, column: join.ownerColumn, matching: .equal(.reference(object.objectID.primaryKey)), descending: false, limit: nil) })
                where deletedJoinRows.insert(EntityKey(entity: join.storeEntity, key: key)).inserted {
                    transactions[id]!.delete(join.storeEntity, key: key)
                }
            }
        }
        for (identifier, cursors) in HistoryConsumerStaging.cursors where transactions[identifier] != nil {
            transactions[identifier]!.consumerCursors = cursors
        }
        for (identifier, transaction) in transactions where !transaction.operations.isEmpty {
            guard let store = coordinator.store(identifier: identifier) else {
                throw CoreDataError(.persistentStoreSave, "the store \(identifier) was removed")
            }
            do {
                sequences[identifier] = try store.commit(transaction)
            } catch let error as StoreError where error.code == .writeConflict {
                throw SaveConflict(store: identifier)
            } catch let error as StoreError {
                throw CoreDataError(.persistentStoreSave, "the store could not save: \(error.message)", underlyingError: error)
            }
        }
    }

    /// The stored row of an object: its entity tag, attributes and to-one references.
    private func row(of object: ManagedObject, layout: EntityLayout, coordinator: PersistentStoreCoordinator) throws -> Row {
        let schema = try coordinator.mapping.get().schema
        var values = [Value](repeating: .null, count: schema.entities[layout.storeEntity].columns.count)
        values[0] = .int(layout.tag)
        for (slot, column) in layout.slotColumns.enumerated() where column >= 0 {
            switch object.runtime.kinds[slot] {
            case .attribute(let attribute):
                values[column] = try ValueConversion.storeValue(object.values[slot], for: attribute)
            case .toOne(let relationship):
                guard let id = object.values[slot] as? ManagedObjectID else { continue }
                guard !id.isTemporaryID, id.storeIdentifier == object.objectID.storeIdentifier else {
                    throw CoreDataError(.managedObjectExternalRelationship, "\(object.entity.name).\(relationship.name) points at an object that is not saved in the same store", objectID: object.objectID, key: relationship.name)
                }
                values[column] = .reference(id.primaryKey)
            case .toMany, .other:
                continue
            }
        }
        return Row(values)
    }

    /// Adds the join rows a changed to-many relationship kept in a join entity needs.
    private func writeJoins(
        of object: ManagedObject, into transaction: inout Transaction, deletedJoinRows: inout Set<EntityKey>,
        coordinator: PersistentStoreCoordinator
    ) throws {
        let layout = try coordinator.layout(object.entity)
        let store = coordinator.store(identifier: object.objectID.storeIdentifier!)!
        for (name, join) in layout.joins where join.writesPairs {
            let slot = object.runtime.slots[name]!
            guard object.changedSlots.contains(slot) || object.isInserted, let current = object.values[slot] as? OrderedSet<ManagedObjectID> else { continue }
            if let foreign = current.first(where: { !$0.isTemporaryID && $0.storeIdentifier != object.objectID.storeIdentifier }) {
                throw CoreDataError(.managedObjectExternalRelationship, "\(object.entity.name).\(name) holds \(foreign), which is saved in another store", objectID: object.objectID, key: name)
            }
            let before = object.committed?[slot] as? OrderedSet<ManagedObjectID> ?? []
            let owner = object.objectID.primaryKey
            let existing = try coordinator.storeCall {
                try store.rows.keys(join.storeEntity, column: join.ownerColumn, matching: .equal(.reference(owner)), descending: false, limit: nil)
            }
            var rowsByOther: [Int64: Int64] = [:]
            for key in existing {
                if let row = try coordinator.storeCall({ try store.rows.read(join.storeEntity, key: key) }), case .reference(let other) = row[join.otherColumn] {
                    rowsByOther[other] = key
                }
            }
            let rewriteAll = join.isOrdered && Array(before) != Array(current)
            for (other, key) in rowsByOther where rewriteAll || !current.contains(where: { $0.primaryKey == other }) {
                if deletedJoinRows.insert(EntityKey(entity: join.storeEntity, key: key)).inserted { transaction.delete(join.storeEntity, key: key) }
            }
            for (position, id) in current.enumerated() where rewriteAll || rowsByOther[id.primaryKey] == nil {
                guard !id.isTemporaryID else { continue }
                let key = store.rows.allocateKeys(for: join.storeEntity, count: 1).lowerBound
                var pair: [Value] = [.null, .null, .int(Int64(position))]
                pair[join.ownerColumn] = .reference(owner)
                pair[join.otherColumn] = .reference(id.primaryKey)
                transaction.insert(join.storeEntity, key: key, row: Row(pair))
            }
        }
    }
}

/// An (engine entity, key) pair.
struct EntityKey: Hashable {
    var entity: Int
    var key: Int64
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
