import Foundation

/// The consumer cursors a ``ManagedObjectContext/save(advancing:to:)`` commits with its changes,
/// by store identifier, then by consumer name.
enum HistoryConsumerStaging {
    @TaskLocal static var cursors: [String: [String: UInt64]] = [:]
}

extension ManagedObjectContext {
    /// Saves, and moves `consumer`'s cursor to `token` in the same store commit as the changes:
    /// after a crash both are there or neither, so a consumer that applies history into this
    /// store and saves this way applies each transaction exactly once. Without changes for the
    /// consumer's store, only the cursor moves. Not in Core Data.
    ///
    /// - Throws: what ``save()`` throws; ``CoreDataError`` `persistentHistoryTokenExpired` when
    ///   `token` is of another store or the consumer was evicted (nothing is saved);
    ///   `coreData` for a child context, whose save does not reach the store.
    public func save(advancing consumer: PersistentHistoryConsumer, to token: PersistentHistoryToken) throws {
        guard nesting.parent == nil else {
            throw CoreDataError(
                .coreData, "a child context's save does not reach the store; advance the consumer when its parent saves"
            )
        }
        try consumer.checkStore(of: token)
        _ = try consumer.sequence()
        try HistoryConsumerStaging.$cursors.withValue([consumer.storeIdentifier: [consumer.name: token.sequence]]) {
            try save()
        }
        if try consumer.sequence() < token.sequence { try consumer.advance(to: token) }
    }
}
