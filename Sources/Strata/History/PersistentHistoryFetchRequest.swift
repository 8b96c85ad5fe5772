/// A value a history fetch request is about: ``PersistentHistoryTransaction`` or
/// ``PersistentHistoryChange``.
public protocol PersistentHistoryRecord: FetchRequestResult {}

extension PersistentHistoryTransaction: PersistentHistoryRecord {}
extension PersistentHistoryChange: PersistentHistoryRecord {}

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

extension FetchRequest: PersistentHistoryFetchRequest where ResultType: PersistentHistoryRecord {}
