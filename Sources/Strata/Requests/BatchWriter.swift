import Foundation
import Logging
import StrataStore

private let logger = Logger(label: "strata.batch")

/// Commits the transactions of a batch request and announces them as a save does: to the
/// stores' remote-change observers. Call it in the coordinator's `withSaveLock`.
struct BatchWriter {
    let coordinator: PersistentStoreCoordinator

    /// Commits `transactions` (by store identifier), skipping empty ones, as a save does: with
    /// each store's durability, keeping the rows they replace for pinned query generations, and
    /// on the condition that no commit after `since` (each store's newest sequence before the
    /// request read it) wrote an entity the transaction writes.
    ///
    /// - Throws: ``SaveConflict`` when a commit since changed such an entity (nothing is
    ///   written to that store), ``CoreDataError`` `persistentStoreOperation` when a store fails.
    func commit(_ transactions: [String: Transaction], since: [String: UInt64]) throws {
        var sequences: [String: UInt64] = [:]
        for (identifier, transaction) in transactions where !transaction.operations.isEmpty {
            guard let store = coordinator.store(identifier: identifier) else { continue }
            var transaction = transaction
            if let since = since[identifier] {
                transaction.condition = CommitCondition(since: since, entities: Set(transaction.operations.lazy.map(\.entity)))
            }
            sequences[identifier] = try coordinator.storeCall {
                do {
                    return try store.commit(transaction)
                } catch let error as StoreError where error.code == .writeConflict {
                    logger.debug("a concurrent commit changed what the batch request read; running it again", metadata: ["store": "\(identifier)"])
                    throw SaveConflict(store: identifier)
                }
            }
            logger.debug("committed a batch request", metadata: ["store": "\(identifier)", "operations": "\(transaction.operations.count)"])
        }
        if !sequences.isEmpty { RemoteChangeCenter.postChanges(sequences) }
    }
}
