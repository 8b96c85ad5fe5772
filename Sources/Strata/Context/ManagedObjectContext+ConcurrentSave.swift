import Logging

private let logger = Logger(label: "strata.save")

/// A store refused a save's commit because a commit since the save's checks wrote what they read.
struct SaveConflict: Error {
    /// The identifier of the store that refused the commit.
    var store: String
}

extension ManagedObjectContext {
    /// Checks the save's uniqueness constraints and optimistic-locking conflicts against the
    /// stores, applies the merge policy and commits, without holding a lock across the commit:
    /// each store's transaction carries a condition (nothing it read changed since the checks),
    /// which the engine checks inside its commit critical section. When another save
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
            do {
                try commit(
                    inserted: inserted, updated: resolved.updated, deleted: resolved.deleted,
                    checked: (updated, deleted), since: since, into: &sequences, coordinator: coordinator)
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
}
