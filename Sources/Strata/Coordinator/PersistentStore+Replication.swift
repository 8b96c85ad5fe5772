import StrataSynchronization
import Synchronization

extension PersistentStore {
    /// The replicator every save to this store goes through (`nil`: saves commit locally only).
    /// Set it before the first save; a coordinator sharing the engine store without it saves
    /// locally only.
    package var replicator: (any PersistentStoreReplicator)? {
        get { replicatorSlot.withLock { $0 } }
        set { replicatorSlot.withLock { $0 = newValue } }
    }

    /// Runs `body` (a save's checks and commit) between the replicators' begin and end calls.
    static func replicating(_ stores: [PersistentStore], _ body: () throws -> Void) throws {
        var begun: [(PersistentStore, any PersistentStoreReplicator)] = []
        defer { for (store, replicator) in begun { replicator.storeDidEndSave(store) } }
        for store in stores {
            guard let replicator = store.replicator else { continue }
            begun.append((store, replicator))
            try replicator.storeWillSave(store)
        }
        try body()
    }

    /// Runs `body` holding the store's save lock without involving the replicator: a replicator
    /// applying changes from elsewhere holds it so that no save checks conflicts meanwhile.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    package func withReplicationLock<T>(_ body: () throws -> T) throws -> T {
        var result: T?
        try StoreSaveLock.withLocks([saveLock]) { result = try body() }
        return result!
    }
}
