import Foundation
import Logging
import StrataStore

private let logger = Logger(label: "strata.batch")

/// Commits the transactions of a batch request and announces them as a save does: to the
/// stores' remote-change observers. Call it holding the coordinator's save lock.
struct BatchWriter {
    let coordinator: PersistentStoreCoordinator

    /// Commits `transactions` (by store identifier), skipping empty ones, as a save does: with
    /// each store's durability, keeping the rows they replace for pinned query generations.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when a store fails.
    func commit(_ transactions: [String: Transaction]) throws {
        var sequences: [String: UInt64] = [:]
        for (identifier, transaction) in transactions where !transaction.operations.isEmpty {
            guard let store = coordinator.store(identifier: identifier) else { continue }
            sequences[identifier] = try coordinator.storeCall { try store.commit(transaction) }
            logger.debug("committed a batch request", metadata: ["store": "\(identifier)", "operations": "\(transaction.operations.count)"])
        }
        if !sequences.isEmpty { RemoteChangeCenter.postChanges(sequences) }
    }
}
