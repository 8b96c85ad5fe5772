package import StrataStore

/// Takes part in every save to a store, so that the store stays a replica of a shared dataset:
/// StrataMirror's PostgreSQL mirror implements it. Package API, in the engine's terms
/// (transactions, rows): applications use StrataMirror, as Core Data's CloudKit mirroring is
/// built in and has no public hook.
///
/// Each save and batch request that writes to the store calls, holding the store's save lock:
/// ``storeWillSave(_:)`` before it checks for conflicts and assigns keys,
/// ``store(_:commit:locally:)`` for the transaction it commits (if any), and
/// ``storeDidEndSave(_:)`` once it is over, whether it committed, failed or had nothing to write.
package protocol PersistentStoreReplicator: AnyObject, Sendable {
    /// Called before a save checks for conflicts: bring the store up to date with the shared
    /// dataset here, so the merge policy sees what others saved.
    ///
    /// - Throws: a ``CoreDataError`` that fails the save (the context keeps its changes).
    func storeWillSave(_ store: PersistentStore) throws

    /// Commits `transaction`: publish it, then call `locally` exactly once with the transaction
    /// to commit to the store (extra operations may be added) and return its sequence number.
    ///
    /// - Throws: a ``CoreDataError`` that fails the save (the context keeps its changes).
    func store(
        _ store: PersistentStore, commit transaction: Transaction, locally: (Transaction) throws -> UInt64
    ) throws -> UInt64

    /// Called when the save is over: end whatever ``storeWillSave(_:)`` began and the save did
    /// not commit.
    func storeDidEndSave(_ store: PersistentStore)
}

/// The object IDs a replicated transaction changed in a store, and the sequence it committed at.
package struct ReplicatedChanges: Sendable {
    /// The sequence number of the local commit.
    package var sequence: UInt64
    /// The objects the transaction inserted.
    package var inserted: Set<ManagedObjectID> = []
    /// The objects the transaction updated.
    package var updated: Set<ManagedObjectID> = []
    /// The objects the transaction deleted.
    package var deleted: Set<ManagedObjectID> = []

    /// The changes in the form ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)`` takes.
    package var remoteContextSaveData: [AnyHashable: Any] {
        ["inserted_objectIDs": inserted, "updated_objectIDs": updated, "deleted_objectIDs": deleted]
    }
}

/// Where the rows of an entity live in the engine store, for a replicator writing its own rows.
package struct ReplicationLayout: Sendable {
    /// The engine entity of the entity's hierarchy.
    package var storeEntity: Int
    /// The value of column 0 (the entity tag) in rows of exactly this entity.
    package var tag: Int64
    /// The column of each persistent attribute and to-one relationship, by name.
    package var columns: [String: Int]
    /// The number of columns of the engine entity.
    package var columnCount: Int
}
