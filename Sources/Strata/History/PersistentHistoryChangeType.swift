/// What a persistent history change did to its object (Core Data's `NSPersistentHistoryChangeType`).
/// Its raw values are Core Data's, so predicates such as `changeType == 2` read the same.
public enum PersistentHistoryChangeType: Int, Sendable, Hashable {
    /// The object was inserted.
    case insert = 0
    /// The object was updated.
    case update = 1
    /// The object was deleted.
    case delete = 2
}
