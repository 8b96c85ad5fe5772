import Foundation

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
        try PersistentHistoryReader.committedValues(of: objectID, asOf: token, coordinator: self)
    }
}
