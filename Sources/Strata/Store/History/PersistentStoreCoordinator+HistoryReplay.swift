import Foundation
import Logging
public import StrataStore

private let logger = Logger(label: "strata.history")

extension PersistentStoreCoordinator {
    /// Applies the persistent history of `source` (an engine store of the same model, for
    /// example another coordinator's ``PersistentStore/engineStore`` or a store opened
    /// read-only) to `store`, one of this coordinator's stores, as `strata replay` does: each
    /// source transaction becomes a commit of `store` with the same object IDs, author, context
    /// name and timestamp; the replay resumes after the last source transaction `store` applied
    /// and applies none twice (see `Store.replayHistory(from:after:progress:aroundEachBatch:)`).
    ///
    /// After each batch of transactions is committed, every coordinator of the process that has
    /// `store` with ``PersistentStoreRemoteChangeNotificationPostOptionKey`` set (this one
    /// included) gets ``Foundation/Notification/Name/PersistentStoreRemoteChange`` with the
    /// store's newest ``PersistentHistoryToken``, as after another coordinator's save, so that
    /// their contexts can fetch the history after their last token and merge it. Query
    /// generations pinned on `store` keep reading the rows as they were. Not in Core Data.
    ///
    /// When `store` has a ``PersistentStore/replicator``, each source transaction goes through it
    /// as a save does (``PersistentStoreReplicator/storeWillSave(_:)``, then
    /// ``PersistentStoreReplicator/store(_:commit:locally:)`` with the transaction, which also
    /// moves the replay cursor, then ``PersistentStoreReplicator/storeDidEndSave(_:)``), one
    /// transaction per save, so that the replicated dataset receives what was replayed.
    ///
    /// - Parameters:
    ///   - token: start after this source transaction (a token of `source`) instead of after
    ///     the last one applied; never before it.
    ///   - progress: called with the transactions applied and the number to apply; what it
    ///     throws stops the replay once the transactions counted are committed.
    /// - Returns: the number of transactions applied.
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the source's history
    ///   after the resume point was deleted or `token` is from another store;
    ///   `persistentStoreOperation` when `store` is not an engine store keeping history, is
    ///   read-only, the stores' models differ, or a commit fails; what `progress` throws.
    @discardableResult
    public func replayHistory(
        from source: Store, into store: PersistentStore, after token: PersistentHistoryToken? = nil,
        progress: ((_ applied: Int, _ total: Int) throws -> Void)? = nil
    ) throws -> Int {
        guard let engine = store.engineStore else {
            throw CoreDataError(
                .persistentStoreOperation, "the store \(store.identifier) has no engine store to replay history into")
        }
        if let token, token.storeIdentifier != source.storeID.uuidString {
            throw CoreDataError(
                .persistentHistoryTokenExpired,
                "the history token is from store \(token.storeIdentifier), not from the replay's source \(source.storeID.uuidString)"
            )
        }
        var applied = 0
        try PersistentHistoryReader.storeCall {
            try store.refuseWritesIfMarkedReadOnly()
            if store.replicator != nil {
                applied = try replayThroughReplicator(
                    from: source, into: store, engine: engine, after: token?.sequence, progress: progress)
                return
            }
            applied = try engine.replayHistory(from: source, after: token?.sequence, progress: progress) {
                batch, commit in
                try StoreSaveLock.withLocks([store.saveLock]) {
                    try store.queryGenerations.committing(batch, to: store.rows, commit)
                }
                RemoteChangeCenter.postChanges([store.identifier: engine.lastSequence])
            }
        }
        logger.debug(
            "replayed persistent history", metadata: ["store": "\(store.identifier)", "transactions": "\(applied)"])
        return applied
    }
}
