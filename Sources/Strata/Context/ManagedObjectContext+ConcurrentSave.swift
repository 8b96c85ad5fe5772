import Logging
internal import StrataStore

private let logger = Logger(label: "strata.save")

/// A store refused a save's commit because a commit since the save's checks wrote what they read.
struct SaveConflict: Error {
    /// The identifier of the store that refused the commit.
    var store: String
}

extension ManagedObjectContext {
    /// Checks the save's uniqueness constraints and optimistic-locking conflicts against the
    /// stores, applies the merge policy and commits, without holding a lock across the commit:
    /// each store's transaction carries a ``CommitCondition`` (nothing it read changed since the
    /// checks), which the engine checks inside its commit critical section. When another save
    /// committed in between, the checks run again against the newer state and the commit is
    /// retried, so the result is the one a serial execution of the saves gives, and concurrent
    /// saves share the engine's group commit (one write and one `fdatasync`).
    ///
    /// - Returns: the sequence each store committed the save at.
    /// - Throws: what the merge policy and the stores throw (see ``save()``).
    func commitConcurrently(coordinator: PersistentStoreCoordinator) throws -> [String: UInt64] {
        var sequences: [String: UInt64] = [:]
        // After a conflict in a later store, the stores that committed already keep their commit.
        func pending(_ object: ManagedObject) -> Bool {
            object.objectID.storeIdentifier.map { sequences[$0] == nil } ?? true
        }
        while true {
            var since: [String: UInt64] = [:]
            for store in coordinator.persistentStores { since[store.identifier] = store.rows.lastSequence }
            try resolveUniquenessConstraints(coordinator: coordinator)
            try obtainPermanentIDs(for: Array(insertedSet))
            // Before any store committed, every object is pending.
            let inserted = sequences.isEmpty ? Array(insertedSet) : Array(insertedSet).filter(pending)
            let updated = sequences.isEmpty ? Array(updatedSet) : Array(updatedSet).filter(pending)
            let deleted = deletedSet.elements.filter { !$0.isInaccessible && pending($0) }
            let resolved = try resolveConflicts(updated: updated, deleted: deleted, coordinator: coordinator)
            let conditions = try commitConditions(
                inserted: inserted, updated: updated, deleted: deleted, since: since, coordinator: coordinator)
            do {
                try commit(
                    inserted: inserted, updated: resolved.updated, deleted: resolved.deleted, conditions: conditions,
                    into: &sequences, coordinator: coordinator)
            } catch let conflict as SaveConflict {
                logger.debug(
                    "a concurrent commit changed what the save checked; checking again",
                    metadata: ["store": "\(conflict.store)"])
                continue
            }
            // The conditions held, so the objects saved hold exactly the store's state at their
            // commit. Objects of one store come in a row: its sequence is looked up once a run,
            // not hashed from its identifier for each object (~470 instructions, callgrind, W1).
            var recent: (store: String, sequence: UInt64)?
            for object in inserted + resolved.updated {
                let store = object.objectID.storeIdentifier!
                if recent?.store != store { recent = (store, sequences[store] ?? 0) }
                object.snapshotSequence = recent!.sequence
            }
            return sequences
        }
    }

    /// What each store's commit of the save requires of the commits after `since` (by store):
    /// the rows of the updated and deleted objects (checked for optimistic-locking conflicts),
    /// the join entities of the relationships whose join rows the save reads, and the entities
    /// of the inserted and updated objects with uniqueness constraints (checked against them).
    private func commitConditions(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], since: [String: UInt64],
        coordinator: PersistentStoreCoordinator
    ) throws -> [String: CommitCondition] {
        var conditions: [String: CommitCondition] = [:]
        func condition(_ object: ManagedObject, _ change: (inout CommitCondition) -> Void) {
            guard let identifier = object.objectID.storeIdentifier, let sequence = since[identifier] else { return }
            change(&conditions[identifier, default: CommitCondition(since: sequence)])
        }
        // Objects of one entity usually come in a row: look their layout and constraints up once.
        var recent: (entity: EntityDescription, layout: EntityLayout, isConstrained: Bool)?
        for object in inserted + updated + deleted {
            if recent?.entity !== object.entity {
                recent = (
                    object.entity, try coordinator.layout(object.entity), !object.runtime.uniquenessConstraints.isEmpty
                )
            }
            let layout = recent!.layout
            if !object.isInserted && !object.objectID.isTemporaryID {
                condition(object) { $0.rows[layout.storeEntity, default: []].insert(object.objectID.primaryKey) }
            }
            if !object.isDeleted && recent!.isConstrained {
                condition(object) { $0.entities.insert(layout.storeEntity) }
            }
            for (name, join) in layout.joins {
                let read =
                    object.isDeleted
                    || (!object.isInserted && join.writesPairs
                        && object.changedSlots.contains(object.runtime.slots[name]!))
                if read { condition(object) { $0.entities.insert(join.storeEntity) } }
            }
        }
        return conditions
    }
}
