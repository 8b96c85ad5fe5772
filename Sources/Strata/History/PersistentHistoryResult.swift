/// What a ``PersistentHistoryChangeRequest`` returns (Core Data's `NSPersistentHistoryResultType`).
/// The raw values are Core Data's.
public enum PersistentHistoryResultType: Int, Sendable, Hashable {
    /// `true` once the request has run.
    case statusOnly = 0
    /// `[ManagedObjectID]`: the objects changed, each once, in the order first changed.
    case objectIDs = 1
    /// `Int`: the number of transactions fetched or deleted.
    case count = 2
    /// `[PersistentHistoryTransaction]` without their changes.
    case transactionsOnly = 3
    /// `[PersistentHistoryChange]`, oldest first, each with its transaction.
    case changesOnly = 4
    /// `[PersistentHistoryTransaction]` with their changes (the default).
    case transactionsAndChanges = 5
}

/// The result of a ``PersistentHistoryChangeRequest`` (Core Data's `NSPersistentHistoryResult`).
public final class PersistentHistoryResult: PersistentStoreResult {
    /// The result, of the type ``resultType`` names.
    public let result: Any?
    /// The kind of result the request asked for.
    public let resultType: PersistentHistoryResultType

    init(result: Any?, resultType: PersistentHistoryResultType) {
        self.result = result
        self.resultType = resultType
    }
}
