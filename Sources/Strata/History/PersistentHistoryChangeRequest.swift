import Foundation

/// A request to fetch or delete a store's persistent history, run with
/// ``ManagedObjectContext/execute(_:)`` (Core Data's `NSPersistentHistoryChangeRequest`).
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try context.execute(request) as? PersistentHistoryResult
/// for transaction in result?.result as? [PersistentHistoryTransaction] ?? [] {
///     viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
///     lastToken = transaction.token
/// }
/// ```
///
/// History exists for stores added with ``PersistentHistoryTrackingKey`` set.
public final class PersistentHistoryChangeRequest: PersistentStoreRequest {
    /// Where a fetch starts or a delete stops.
    enum Bound {
        /// After (fetch) or through (delete) the transaction a token names; everything for `nil`.
        case token(PersistentHistoryToken?)
        /// After (fetch) or before (delete) a moment.
        case date(Date)
        /// After (fetch) or before (delete) a transaction.
        case transaction(PersistentHistoryTransaction?)
    }

    /// Whether the request deletes history (else it fetches).
    let deletes: Bool
    /// Where it starts (fetch) or stops (delete).
    let bound: Bound
    /// What executing the request returns. The default is ``PersistentHistoryResultType/transactionsAndChanges``.
    public var resultType: PersistentHistoryResultType = .transactionsAndChanges
    /// A fetch request on ``PersistentHistoryTransaction/fetchRequest`` or
    /// ``PersistentHistoryChange/fetchRequest`` whose predicate, limit and offset select the
    /// transactions or changes returned. `nil` (the default) returns every one. A delete
    /// request ignores it: it deletes everything before its bound.
    public var fetchRequest: FetchRequest<FetchRequestResult>?

    private init(deletes: Bool, bound: Bound) {
        self.deletes = deletes
        self.bound = bound
    }

    /// The token the request fetches after or deletes before, if it was made with one.
    public var token: PersistentHistoryToken? {
        switch bound {
        case .token(let token): return token
        case .transaction(let transaction): return transaction?.token
        case .date: return nil
        }
    }

    /// A request for the transactions committed after `token`; all of them when `token` is `nil`.
    public class func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(deletes: false, bound: .token(token))
    }

    /// A request for the transactions committed after `date`.
    public class func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(deletes: false, bound: .date(date))
    }

    /// A request for the transactions committed after `transaction`; all of them when it is `nil`.
    public class func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(deletes: false, bound: .transaction(transaction))
    }

    /// A request for the transactions or changes `fetchRequest` selects, from all retained history.
    public class func fetchHistory(
        withFetch fetchRequest: FetchRequest<FetchRequestResult>
    ) -> PersistentHistoryChangeRequest {
        let request = PersistentHistoryChangeRequest(deletes: false, bound: .token(nil))
        request.fetchRequest = fetchRequest
        return request
    }

    /// A request deleting the history up to `token`: every transaction it covers, the one it was
    /// taken after included (fetching after `token` still works). `nil` deletes all history.
    public class func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(deletes: true, bound: .token(token))
    }

    /// A request deleting the transactions committed before `date`.
    public class func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(deletes: true, bound: .date(date))
    }

    /// A request deleting the transactions committed before `transaction` (not `transaction`
    /// itself); all history when it is `nil`.
    public class func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest
    {
        PersistentHistoryChangeRequest(deletes: true, bound: .transaction(transaction))
    }

    /// Fetches or deletes the history of the request's stores.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the history after the
    ///   token was deleted or the token is from a store the coordinator does not have;
    ///   `persistentStoreOperation` when a store keeps no history or cannot be read.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        let reader = try PersistentHistoryReader(request: self, coordinator: coordinator)
        return PersistentHistoryResult(result: try reader.run(), resultType: resultType)
    }
}
