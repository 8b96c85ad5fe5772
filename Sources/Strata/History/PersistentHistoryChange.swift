import Foundation

/// One object's change in a persistent history transaction (Core Data's `NSPersistentHistoryChange`).
public final class PersistentHistoryChange: FetchRequestResult, CustomStringConvertible {
    /// The change's identifier, unique in its store: the transaction number times 2^24 plus the
    /// change's position in the transaction.
    public let changeID: Int64
    /// The object changed.
    public let changedObjectID: ManagedObjectID
    /// Insert, update or delete.
    public let changeType: PersistentHistoryChangeType
    /// For a delete, the values of the attributes marked
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``, by name (absent when `nil`);
    /// `nil` for inserts and updates.
    public let tombstone: [AnyHashable: Any]?
    /// For an update, the properties it changed; `nil` for inserts and deletes.
    public let updatedProperties: Set<PropertyDescription>?
    /// The committed values before the change, by property name (`NSNull` for `nil`; to-one
    /// relationships as ``ManagedObjectID``s): for an update, those of the changed attributes and
    /// to-one relationships; for a delete, every attribute and to-one relationship of the last
    /// stored state. `nil` for inserts, and for changes saved before the store kept prior rows.
    ///
    /// To-many relationships the update changed: the related objects' IDs, a set, or an array in
    /// order for an ordered relationship. They are worked out the first time this or
    /// ``newValues`` of any change of the same fetch is read, from the store's history as it
    /// then is (a read of each such relationship's pairs, which readers that never look at them
    /// do not pay); they are left out when the store was closed or that history deleted by then.
    ///
    /// Not in Core Data, whose history keeps no old values.
    public var previousValues: [String: Any]? {
        pendingToManyValues?.resolve()
        return storedPreviousValues
    }
    /// The committed values the change wrote, as ``previousValues``: for an insert, every
    /// attribute and to-one relationship; for an update, the changed ones. `nil` for deletes.
    ///
    /// Not in Core Data.
    public var newValues: [String: Any]? {
        pendingToManyValues?.resolve()
        return storedNewValues
    }
    /// ``previousValues`` as stored, without resolving the to-many values.
    var storedPreviousValues: [String: Any]?
    /// ``newValues`` as stored, without resolving the to-many values.
    var storedNewValues: [String: Any]?
    /// The work that adds the to-many values of this change and the others of its fetch, until
    /// it is done.
    var pendingToManyValues: PendingToManyValues?
    /// Kept strongly only when the transaction does not hold its changes (changes-only results),
    /// so that the two never form a cycle.
    private let owningTransaction: PersistentHistoryTransaction?
    private weak var listingTransaction: PersistentHistoryTransaction?

    init(
        changeID: Int64, changedObjectID: ManagedObjectID, changeType: PersistentHistoryChangeType,
        tombstone: [AnyHashable: Any]?,
        updatedProperties: Set<PropertyDescription>?, previousValues: [String: Any]?, newValues: [String: Any]?,
        transaction: PersistentHistoryTransaction, transactionListsChanges: Bool
    ) {
        storedPreviousValues = previousValues
        storedNewValues = newValues
        self.changeID = changeID
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.tombstone = tombstone
        self.updatedProperties = updatedProperties
        owningTransaction = transactionListsChanges ? nil : transaction
        listingTransaction = transaction
    }

    /// The transaction the change belongs to.
    public var transaction: PersistentHistoryTransaction? {
        owningTransaction ?? listingTransaction
    }

    /// The entity that describes history changes, for fetch requests on them.
    public class var entityDescription: EntityDescription? {
        PersistentHistoryEntities.change()
    }

    /// The entity that describes history changes in `context` (Core Data's
    /// `entityDescription(with:)`); the same for every context.
    public class func entityDescription(with context: ManagedObjectContext) -> EntityDescription? {
        entityDescription
    }

    /// A fetch request on history changes: give it a predicate on `changeType`,
    /// `changedObjectID`, `changedEntity` (an entity or its name), `changeID` or a
    /// `transaction.` key path and set it as a change request's
    /// ``PersistentHistoryChangeRequest/fetchRequest`` to keep only the changes it matches.
    /// Untyped, as Core Data's (`NSFetchRequest<NSFetchRequestResult>`).
    public class var fetchRequest: FetchRequest<FetchRequestResult>? {
        let request = FetchRequest<FetchRequestResult>(entityName: PersistentHistoryEntities.changeName)
        request.entity = entityDescription
        return request
    }

    /// The type and object, for logs.
    public var description: String {
        "PersistentHistoryChange(\(changeID), \(changeType), \(changedObjectID))"
    }
}
