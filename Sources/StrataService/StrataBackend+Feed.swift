import Foundation
import Strata

/// The change feed on Strata's persistent history: the tokens are history sequence numbers,
/// the live tail is `historyTransactions(after:)`, and named consumers are history consumers.
extension StrataBackend {
    /// The history token of the store at `sequence`, through the token's `Codable` form, which
    /// is how a client hands a token back.
    func token(_ sequence: Int64) throws -> PersistentHistoryToken {
        let json = try JSONSerialization.data(withJSONObject: ["store": store.identifier, "sequence": sequence])
        return try JSONDecoder().decode(PersistentHistoryToken.self, from: json)
    }

    public func currentToken() async throws -> Int64 {
        Int64(container.persistentStoreCoordinator.currentPersistentHistoryToken(fromStores: [store])?.sequence ?? 0)
    }

    public func consumerToken(named name: String) async throws -> Int64 {
        do {
            let consumer = try container.persistentStoreCoordinator.historyConsumer(named: name, in: store)
            return Int64(try consumer.token.sequence)
        } catch {
            throw Self.translate(error)
        }
    }

    public func advanceConsumer(named name: String, to token: Int64) async throws {
        do {
            let consumer = try container.persistentStoreCoordinator.historyConsumer(named: name, in: store)
            guard try consumer.token.sequence < token else { return }
            try consumer.advance(to: self.token(token))
        } catch {
            throw Self.translate(error)
        }
    }

    public func oldestToken() async throws -> Int64 {
        Int64(store.engineStore?.historyFloor ?? 0)
    }

    /// Runs Core Data's `deleteHistory(before:)` with that date on a background context: the
    /// store keeps the history its named consumers have not read. The request asks for its
    /// status only: with the default result type (transactions and changes, as in Core Data) it
    /// would read every deleted transaction into memory to return them, and the service uses
    /// none of them.
    public func deleteHistory(before date: Date) async throws {
        try await perform { context in
            let request = PersistentHistoryChangeRequest.deleteHistory(before: date)
            request.resultType = .statusOnly
            _ = try context.execute(request)
        }
    }

    public func forEachTransaction(
        after token: Int64, _ body: (FeedTransaction) async throws -> Void
    ) async throws {
        do {
            try await forEachHistoryTransaction(after: token, body)
        } catch let error as CoreDataError where error.code == .persistentHistoryTokenExpired {
            throw ServiceError(.tokenExpired, "the history after the feed token \(token) was deleted: \(error.message)")
        }
    }

    /// ``forEachTransaction(after:_:)`` with Core Data's errors.
    private func forEachHistoryTransaction(
        after token: Int64, _ body: (FeedTransaction) async throws -> Void
    ) async throws {
        let tail = container.persistentStoreCoordinator.historyTransactions(after: try self.token(token))
        for try await transaction in tail {
            let changes = (transaction.changes ?? []).map { change in
                FeedTransaction.Change(
                    entity: change.changedObjectID.entity.name ?? "",
                    id: change.changedObjectID.key,
                    type: change.changeType.feedName)
            }
            guard !changes.isEmpty else { continue }
            try await body(
                FeedTransaction(
                    token: transaction.transactionNumber, timestamp: transaction.timestamp, changes: changes))
        }
    }
}

extension PersistentHistoryChangeType {
    /// `insert`, `update` or `delete`, as the feed names changes.
    var feedName: String {
        switch self {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }
}
