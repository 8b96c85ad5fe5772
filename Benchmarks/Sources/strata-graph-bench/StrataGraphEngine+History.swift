import BenchSupport
import Foundation
import Strata
import StrataStore

/// W9 through Strata's persistent history: the token of
/// `currentPersistentHistoryToken(fromStores:)`, `PersistentHistoryChangeRequest.fetchHistory(after:)`
/// executed by a background context, and the engine's `Store.replayHistory(from:after:progress:)`
/// into the replica's store.
extension StrataGraphEngine: HistoryEngine {
    /// Stops the replay that seeds a replica once it has applied the history through the position.
    private struct ReplicaSeeded: Error {}

    /// Recreates the empty store with `PersistentHistoryTrackingKey` set: an engine store keeps
    /// the history setting it was created with.
    func startTrackingHistory() throws {
        let url = try (opened.persistentStoreCoordinator.persistentStores.first?.url).orThrow("Strata: no store URL")
        try close()
        try FileManager.default.removeItem(at: url)
        historyTracking = true
        try open()
    }

    /// The engine store under the container's one persistent store.
    private var engineStore: Store {
        get throws {
            try (opened.persistentStoreCoordinator.persistentStores.first?.engineStore).orThrow(
                "Strata: no engine store")
        }
    }

    func currentHistoryPosition() throws -> PersistentHistoryToken {
        try opened.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: nil)
            .orThrow("Strata: the store keeps no persistent history")
    }

    func fetchHistory(after position: PersistentHistoryToken) throws -> (transactions: Int, changes: Int) {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: position))
            let transactions = try ((result as? PersistentHistoryResult)?.result as? [PersistentHistoryTransaction])
                .orThrow("Strata: the history fetch returned no transactions")
            return (transactions.count, transactions.reduce(0) { $0 + ($1.changes?.count ?? 0) })
        }
    }

    func seedReplica(_ replica: StrataGraphEngine, through position: PersistentHistoryToken) throws {
        let source = try engineStore
        var count = 0
        try source.forEachHistoryTransaction(after: 0) { transaction in
            guard transaction.sequence <= position.sequence else { return false }
            count += 1
            return true
        }
        guard count > 0 else { return }
        let seedCount = count
        do {
            try replica.engineStore.replayHistory(from: source) { applied, _ in
                if applied == seedCount { throw ReplicaSeeded() }
            }
        } catch is ReplicaSeeded {}
    }

    func replayHistory(into replica: StrataGraphEngine) throws -> Int {
        try replica.engineStore.replayHistory(from: try engineStore)
    }

    func salarySum() throws -> Int64 {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity)).reduce(0) {
                $0 &+ $1.salary
            }
        }
    }
}
