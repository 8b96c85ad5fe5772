package import StrataStore

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
