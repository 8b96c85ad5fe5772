import Foundation
internal import StrataStore

extension PersistentStoreCoordinator {
    /// The committed values of the object `objectID` as they were at `token`: its attributes and
    /// to-one relationships by name (`NSNull` for `nil`, related objects as ``ManagedObjectID``s),
    /// or `nil` when the object did not exist then.
    ///
    /// Reads the history after `token` up to the object's first later change, whose prior row
    /// holds the values at `token`; when it has no later change, its stored row. Costs a read of
    /// that history. Not in Core Data.
    ///
    /// - Parameters:
    ///   - objectID: a permanent ID of an object of the token's store.
    ///   - token: a token of a store of this coordinator that keeps persistent history.
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the history after `token`
    ///   was deleted, or when `token` is from a store of another coordinator;
    ///   `persistentStoreOperation` for a store without history, an ID of another store, or a
    ///   change saved before the store kept prior rows.
    public func committedValues(
        forObjectWith objectID: ManagedObjectID, asOf token: PersistentHistoryToken
    ) throws -> [String: Any]? {
        guard let store = store(identifier: token.storeIdentifier) else {
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
        let layout = try layout(objectID.entity)
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
            row = try self.row(for: objectID)
        }
        guard let row else { return nil }
        let entity = try concreteEntity(of: row, storeEntity: layout.storeEntity) ?? objectID.entity
        return try HistoryRowValues(
            entity: entity, layout: try self.layout(entity), storeIdentifier: store.identifier, coordinator: self
        )
        .values(of: row)
    }
}
