import Foundation
import Logging
internal import StrataStore

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
            let entities = Set(transaction.operations.lazy.map(\.entity))
            sequences[identifier] = try commit(
                transaction, of: entities, operations: transaction.operations.count, into: store,
                since: since[identifier]
            ) {
                try store.commit($0)
            }
        }
        if !sequences.isEmpty { RemoteChangeCenter.postChanges(sequences) }
    }

    /// Commits `transaction` (without operations) with the inserts of `rows` into `store`, as
    /// ``commit(_:since:)`` commits a transaction; `since` is the store's newest sequence
    /// before the request read it.
    ///
    /// - Throws: what ``commit(_:since:)`` throws, and what making a row throws.
    func commit(
        _ transaction: Transaction, inserting rows: InsertedRows, into store: PersistentStore, since: UInt64?
    ) throws {
        guard rows.count > 0 else { return }
        let sequence = try commit(transaction, of: rows.entities, operations: rows.count, into: store, since: since) {
            try store.commit($0, inserting: rows)
        }
        RemoteChangeCenter.postChanges([store.identifier: sequence])
    }

    /// Commits `transaction`, with `operations` changes to the store entities `entities`,
    /// through `commit`, on the condition that no commit since `since` changed those entities.
    ///
    /// - Returns: the commit's sequence.
    /// - Throws: ``SaveConflict`` when the condition fails, ``CoreDataError`` when the store fails.
    private func commit(
        _ transaction: Transaction, of entities: Set<Int>, operations: Int, into store: PersistentStore, since: UInt64?,
        _ commit: (Transaction) throws -> UInt64
    ) throws -> UInt64 {
        var transaction = transaction
        if let since { transaction.condition = CommitCondition(since: since, entities: entities) }
        let sequence = try coordinator.storeCall {
            do {
                return try commit(transaction)
            } catch let error as StoreError where error.code == .writeConflict {
                logger.debug(
                    "a concurrent commit changed what the batch request read; running it again",
                    metadata: ["store": "\(store.identifier)"])
                throw SaveConflict(store: store.identifier)
            }
        }
        logger.debug(
            "committed a batch request", metadata: ["store": "\(store.identifier)", "operations": "\(operations)"])
        return sequence
    }
}
