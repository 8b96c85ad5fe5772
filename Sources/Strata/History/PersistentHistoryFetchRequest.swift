/// A fetch request on history transactions or changes, as a change request's
/// ``PersistentHistoryChangeRequest/fetchRequest`` takes it (Core Data types it
/// `NSFetchRequest<NSFetchRequestResult>`): ``PersistentHistoryTransaction/fetchRequest`` or
/// ``PersistentHistoryChange/fetchRequest`` with a predicate, a fetch limit and offset.
public protocol PersistentHistoryFetchRequest: AnyObject {
    /// ``PersistentHistoryTransaction`` or ``PersistentHistoryChange`` (their entity names).
    var entityName: String? { get }
    /// Which transactions or changes to keep.
    var predicate: FetchPredicate? { get }
    /// The most transactions or changes to return; 0 for no limit.
    var fetchLimit: Int { get }
    /// How many matching transactions or changes to skip.
    var fetchOffset: Int { get }
}

// Any fetch request, as Core Data's history fetch requests are `NSFetchRequest<NSFetchRequestResult>`:
// one of PersistentHistoryChange's entity selects changes, any other transactions.
extension FetchRequest: PersistentHistoryFetchRequest {}
