import Foundation
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

extension PersistentStore {
    /// The replicator every save to this store goes through (`nil`: saves commit locally only).
    /// Set it before the first save; a coordinator sharing the engine store without it saves
    /// locally only.
    package var replicator: (any PersistentStoreReplicator)? {
        get { replicatorSlot.withLock { $0 } }
        set { replicatorSlot.withLock { $0 = newValue } }
    }

    /// Runs `body` (a save's checks and commit) between the replicators' begin and end calls.
    static func replicating(_ stores: [PersistentStore], _ body: () throws -> Void) throws {
        var begun: [(PersistentStore, any PersistentStoreReplicator)] = []
        defer { for (store, replicator) in begun { replicator.storeDidEndSave(store) } }
        for store in stores {
            guard let replicator = store.replicator else { continue }
            begun.append((store, replicator))
            try replicator.storeWillSave(store)
        }
        try body()
    }

    /// Runs `body` holding the store's save lock without involving the replicator: a replicator
    /// applying changes from elsewhere holds it so that no save checks conflicts meanwhile.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    package func withReplicationLock<T>(_ body: () throws -> T) throws -> T {
        var result: T?
        try StoreSaveLock.withLocks([saveLock]) { result = try body() }
        return result!
    }
}

extension PersistentStoreCoordinator {
    /// The engine layout of the entity named `name`.
    ///
    /// - Throws: ``CoreDataError`` when the model has no such entity or no store is added.
    package func replicationLayout(forEntityNamed name: String) throws -> ReplicationLayout {
        let mapping = try mapping.get()
        guard let layout = mapping.layouts[name] else {
            throw CoreDataError(.coreData, "the model has no entity \(name)")
        }
        return ReplicationLayout(
            storeEntity: layout.storeEntity, tag: layout.tag, columns: layout.columns,
            columnCount: mapping.schema.entities[layout.storeEntity].columns.count)
    }

    /// Commits `transaction`, made elsewhere, to `store` without its replicator (call it holding
    /// ``PersistentStore/withReplicationLock(_:)``), then posts the remote change notification
    /// to the coordinators that asked for it.
    ///
    /// - Returns: the local sequence and the objects the transaction changed.
    /// - Throws: ``CoreDataError`` `persistentStoreSave` when the store refuses it (nothing is written).
    package func applyReplicatedTransaction(
        _ transaction: Transaction, to store: PersistentStore
    ) throws -> ReplicatedChanges {
        var inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [], deleted: Set<ManagedObjectID> = []
        for operation in transaction.operations {
            switch operation {
            case .insert(let entity, let key, let row):
                if let id = try objectID(entity, key, row, store) { inserted.insert(id) }
            case .update(let entity, let key, let row, _):
                if let id = try objectID(entity, key, row, store) { updated.insert(id) }
            case .delete(let entity, let key):
                if let row = try storeCall({ try store.rows.read(entity, key: key) }),
                    let id = try objectID(entity, key, row, store)
                {
                    deleted.insert(id)
                }
            }
        }
        let sequence: UInt64
        do {
            sequence = try store.commitLocally(transaction)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreSave, "the replicated transaction could not be applied: \(error.message)",
                underlyingError: error)
        }
        RemoteChangeCenter.postChanges([store.identifier: sequence])
        return ReplicatedChanges(
            sequence: sequence, inserted: inserted, updated: updated.subtracting(inserted), deleted: deleted)
    }

    private func objectID(
        _ entity: Int, _ key: PrimaryKey, _ row: Row, _ store: PersistentStore
    ) throws -> ManagedObjectID? {
        try concreteEntity(of: row, storeEntity: entity).map {
            ManagedObjectID(entity: $0, storeIdentifier: store.identifier, primaryKey: key)
        }
    }
}
