import Foundation

/// One committed save in a store's persistent history (Core Data's `NSPersistentHistoryTransaction`):
/// when, by whom and from which context, with its changes.
///
/// Returned by executing a ``PersistentHistoryChangeRequest``.
public final class PersistentHistoryTransaction: FetchRequestResult, CustomStringConvertible {
    /// When the transaction was committed.
    public let timestamp: Date
    /// The transaction's changes, oldest first; `nil` when the request fetched transactions only.
    public internal(set) var changes: [PersistentHistoryChange]?
    /// The transaction's number: its position in the store's history, increasing by commit.
    public let transactionNumber: Int64
    /// The identifier of the store the transaction was committed to.
    public let storeID: String
    /// The name of the context that saved (``ManagedObjectContext/name``).
    public let contextName: String?
    /// The author of the save (``ManagedObjectContext/transactionAuthor``).
    public let author: String?
    /// The bundle identifier of the process that saved: its main bundle's identifier, else its
    /// executable's name; empty for transactions saved before stores recorded it.
    public let bundleID: String
    /// The id of the process that saved, in decimal; empty for transactions saved before stores
    /// recorded it.
    public let processID: String
    /// The token of the state after this transaction: fetch after it for what came next.
    public let token: PersistentHistoryToken

    init(
        timestamp: Date, transactionNumber: Int64, storeID: String, contextName: String?, author: String?,
        bundleID: String,
        processID: String
    ) {
        self.bundleID = bundleID
        self.processID = processID
        self.timestamp = timestamp
        self.transactionNumber = transactionNumber
        self.storeID = storeID
        self.contextName = contextName
        self.author = author
        token = PersistentHistoryToken(storeIdentifier: storeID, sequence: UInt64(transactionNumber))
    }

    /// A did-save notification naming the object IDs the transaction inserted, updated and
    /// deleted, to pass to ``ManagedObjectContext/mergeChanges(fromContextDidSave:)`` (Core Data's
    /// `objectIDNotification()`). Empty sets when the transaction was fetched without its changes.
    public func objectIDNotification() -> Notification {
        var inserted = Set<ManagedObjectID>(), updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.insert(change.changedObjectID)
            case .update: updated.insert(change.changedObjectID)
            case .delete: deleted.insert(change.changedObjectID)
            }
        }
        typealias Key = ManagedObjectContext.NotificationKey
        return Notification(
            name: ManagedObjectContext.didSaveObjectsNotification, object: nil,
            userInfo: [
                Key.insertedObjectIDs.rawValue: inserted, Key.updatedObjectIDs.rawValue: updated,
                Key.deletedObjectIDs.rawValue: deleted,
            ])
    }

    /// The entity that describes history transactions, for fetch requests on them.
    public class var entityDescription: EntityDescription? {
        PersistentHistoryEntities.transaction()
    }

    /// The entity that describes history transactions in `context` (Core Data's
    /// `entityDescription(with:)`); the same for every context.
    public class func entityDescription(with context: ManagedObjectContext) -> EntityDescription? {
        entityDescription
    }

    /// A fetch request on history transactions: give it a predicate on `author`, `contextName`,
    /// `timestamp`, `transactionNumber` or `storeID` and set it as a change request's
    /// ``PersistentHistoryChangeRequest/fetchRequest`` to filter the transactions returned. Untyped,
    /// as Core Data's (`NSFetchRequest<NSFetchRequestResult>`).
    public class var fetchRequest: FetchRequest<FetchRequestResult>? {
        let request = FetchRequest<FetchRequestResult>(entityName: PersistentHistoryEntities.transactionName)
        request.entity = entityDescription
        return request
    }

    /// The number, author and context, for logs.
    public var description: String {
        "PersistentHistoryTransaction(\(transactionNumber), author: \(author ?? "nil"), contextName: \(contextName ?? "nil"), changes: \(changes?.count ?? 0))"
    }
}
