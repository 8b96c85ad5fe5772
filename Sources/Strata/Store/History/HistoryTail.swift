internal import StrataStore

/// The end of one store's log as a ``PersistentHistoryStream`` waits on it: whether the store
/// closed, and a wait for its next commit that costs nothing while no commit comes.
struct HistoryTail: Sendable {
    private let engine: Store

    /// The tail of the store `storeIdentifier` of `coordinator`.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store is no longer added
    ///   to the coordinator (or has no log).
    init(storeIdentifier: String, coordinator: PersistentStoreCoordinator) throws {
        guard let store = coordinator.store(identifier: storeIdentifier), let engine = store.engineStore else {
            throw CoreDataError(
                .persistentStoreOperation, "the store \(storeIdentifier) is no longer added to the coordinator")
        }
        self.engine = engine
    }

    /// Whether the store was closed.
    var isClosed: Bool { engine.isClosed }

    /// Returns once a transaction after `sequence` is committed, the store is closed, or the
    /// task is cancelled, without polling the log.
    func waitForCommit(after sequence: UInt64) async {
        await engine.waitForCommit(after: sequence)
    }
}
