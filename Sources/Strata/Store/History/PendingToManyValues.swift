/// The to-many values of the changes of one history fetch, added the first time any of them
/// reads ``PersistentHistoryChange/previousValues`` or ``PersistentHistoryChange/newValues``:
/// working them out reads each relationship's pairs, which a reader that never looks at them
/// should not pay. Holds the changes weakly (each change holds it) and runs its work once. Not
/// `Sendable`, as the changes are not.
final class PendingToManyValues {
    /// A change, held weakly.
    private struct WeakChange {
        weak var change: PersistentHistoryChange?
    }

    /// The changes whose values are pending, and the work that adds them; `nil` once done.
    private var pending: (changes: [WeakChange], work: ([PersistentHistoryChange]) -> Void)?

    /// Pending values of `changes`, which `work` adds to the changes still alive when called.
    init(changes: [PersistentHistoryChange], work: @escaping ([PersistentHistoryChange]) -> Void) {
        pending = (changes.map { WeakChange(change: $0) }, work)
    }

    /// Adds the values, unless done already.
    func resolve() {
        guard let (changes, work) = pending else { return }
        pending = nil
        let alive = changes.compactMap(\.change)
        for change in alive { change.pendingToManyValues = nil }
        work(alive)
    }
}
