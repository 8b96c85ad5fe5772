internal import StrataStore

extension PersistentHistoryReader {
    /// The committed values of the object `objectID` as they were at `token` (see
    /// ``PersistentStoreCoordinator/committedValues(forObjectWith:asOf:)``): the prior row of its
    /// first change after `token` in the history of `coordinator`'s store, else its stored row.
    ///
    /// - Throws: ``CoreDataError`` as ``PersistentStoreCoordinator/committedValues(forObjectWith:asOf:)``.
    static func committedValues(
        of objectID: ManagedObjectID, asOf token: PersistentHistoryToken, coordinator: PersistentStoreCoordinator
    ) throws -> [String: Any]? {
        guard let store = coordinator.store(identifier: token.storeIdentifier) else {
            throw CoreDataError(
                .persistentHistoryTokenExpired,
                "the history token is from store \(token.storeIdentifier), which this coordinator does not have")
        }
        guard let engine = store.engineStore, engine.configuration.historyTracking else {
            throw CoreDataError(
                .persistentStoreOperation,
                "the store \(store.identifier) keeps no persistent history; add it with PersistentHistoryTrackingKey set to true"
            )
        }
        guard !objectID.isTemporaryID, objectID.storeIdentifier == store.identifier else {
            throw CoreDataError(
                .persistentStoreOperation, "\(objectID) is not an object of the token's store \(store.identifier)")
        }
        let layout = try coordinator.layout(objectID.entity)
        var found: HistoryChange?
        try PersistentHistoryReader.storeCall {
            try engine.forEachHistoryTransaction(after: token.sequence) { transaction in
                found = transaction.changes.first { $0.entity == layout.storeEntity && $0.key == objectID.primaryKey }
                return found == nil
            }
        }
        let row: Row?
        if let found {
            guard found.kind != .insert else { return nil }
            guard let previous = found.previousRow else {
                throw CoreDataError(
                    .persistentStoreOperation,
                    "the change of \(objectID) after the token was saved before the store kept prior rows")
            }
            row = previous
        } else {
            row = try coordinator.row(for: objectID)
        }
        guard let row else { return nil }
        let entity = try coordinator.concreteEntity(of: row, storeEntity: layout.storeEntity) ?? objectID.entity
        return try HistoryRowValues(
            entity: entity, layout: try coordinator.layout(entity), storeIdentifier: store.identifier,
            coordinator: coordinator
        )
        .values(of: row)
    }
}
