internal import StrataStore

extension PersistentStoreCoordinator {
    /// The stored row of an object, or `nil` when it does not exist.
    func row(for id: ManagedObjectID) throws -> Row? {
        guard !id.isTemporaryID, let identifier = id.storeIdentifier, let store = store(identifier: identifier) else {
            return nil
        }
        let layout = try layout(id.entity)
        return try storeCall { try store.rows.read(layout.storeEntity, key: id.primaryKey) }
    }

    /// The concrete entity of a stored row of the engine entity `storeEntity`, from its tag.
    func concreteEntity(of row: Row, storeEntity: Int) throws -> EntityDescription? {
        guard case .int(let tag) = row[0] else { return nil }
        return try mapping.get().entitiesByTag[storeEntity]?[tag]
    }

    /// The concrete entity of the stored object `id` names, read from its row; `nil` when the
    /// object is not stored.
    func concreteEntity(of id: ManagedObjectID) throws -> EntityDescription? {
        guard let row = try row(for: id) else { return nil }
        return try concreteEntity(of: row, storeEntity: try layout(id.entity).storeEntity)
    }

    /// Runs a store call, turning a `StoreError` into a ``CoreDataError``.
    func storeCall<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw CoreDataError(.persistentStoreOperation, error.message, underlyingError: error)
        }
    }
}
