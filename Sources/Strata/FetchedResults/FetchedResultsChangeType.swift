/// The kind of change a fetched results controller reports (Core Data's
/// `NSFetchedResultsChangeType`).
public enum FetchedResultsChangeType: UInt, Sendable, Hashable {
    /// An object or section was inserted.
    case insert = 1
    /// An object or section was deleted.
    case delete = 2
    /// An object changed position.
    case move = 3
    /// An object changed in place.
    case update = 4
}
