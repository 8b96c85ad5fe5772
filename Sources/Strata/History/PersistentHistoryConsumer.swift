import Foundation
import Logging

private let logger = Logger(label: "strata.history")

/// A named reader of one store's persistent history with its own cursor, kept in the store so it
/// survives restarts. Not in Core Data.
///
/// The history a live consumer has not consumed stays through `deleteHistory(before:)` and
/// compaction: the store's retention floor is the lowest of the live consumers' cursors and
/// the floor the application asks for. A consumer that holds back more than the store option
/// ``HistoryConsumerLagLimitKey`` (bytes) or ``HistoryConsumerAgeLimitKey`` (seconds) allows
/// is evicted (checked when history is deleted, when the store opens, when compaction runs and
/// when the consumer reads): ``token`` then throws `persistentHistoryTokenExpired` carrying the
/// token to resync from.
///
/// ```swift
/// let consumer = try coordinator.historyConsumer(named: "search-index")
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: try consumer.token)
/// // apply the transactions, then, in the same save as what they changed:
/// try context.save(advancing: consumer, to: transactions.last!.token)
/// ```
public final class PersistentHistoryConsumer: Sendable, CustomStringConvertible {
    /// The consumer's name, unique in its store.
    public let name: String
    /// The identifier of the store whose history it reads.
    public let storeIdentifier: String
    /// The cursor as the store keeps it.
    private let cursor: HistoryConsumerCursor

    init(cursor: HistoryConsumerCursor) {
        name = cursor.name
        storeIdentifier = cursor.storeIdentifier
        self.cursor = cursor
    }

    /// The token of the last transaction the consumer applied: fetch the history after it.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the consumer was evicted
    ///   or removed; its `underlyingError` is a ``PersistentHistoryConsumerEvicted`` naming the
    ///   token to resync from.
    public var token: PersistentHistoryToken {
        get throws {
            PersistentHistoryToken(storeIdentifier: storeIdentifier, sequence: try sequence())
        }
    }

    /// Moves the cursor to `token` (never back), releasing the history before it. An evicted
    /// consumer becomes live again by advancing to at least its resync token, after it rebuilt
    /// what it keeps from the store's current state.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` for a token of another store,
    ///   or an evicted consumer advanced below its resync token; `persistentStoreOperation` when
    ///   the cursor cannot be written.
    public func advance(to token: PersistentHistoryToken) throws {
        try checkStore(of: token)
        do {
            try cursor.advance(to: token.sequence)
        } catch let error as CoreDataError where error.code == .persistentHistoryTokenExpired {
            _ = try sequence()
            throw error
        }
        logger.debug("advanced history consumer", metadata: ["consumer": "\(name)", "sequence": "\(token.sequence)"])
    }

    /// Unregisters the consumer, releasing the history it held.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store cannot be written.
    public func remove() throws {
        try cursor.remove()
    }

    /// The name and store, for logs.
    public var description: String { "PersistentHistoryConsumer(\(name), store: \(storeIdentifier))" }

    /// The sequence of the last transaction the consumer applied, if it is live, once the
    /// consumers past the store's bounds are evicted.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the consumer was evicted
    ///   or removed, `persistentStoreOperation` when the cursors cannot be written.
    func sequence() throws -> UInt64 {
        guard let state = try cursor.state() else {
            throw CoreDataError(
                .persistentHistoryTokenExpired, "the history consumer \(name) was removed; register it again")
        }
        if let resync = state.evictedAt {
            let token = PersistentHistoryToken(storeIdentifier: storeIdentifier, sequence: resync)
            throw CoreDataError(
                .persistentHistoryTokenExpired,
                "the history consumer \(name) fell too far behind and was evicted; rebuild from the store's current state and advance to \(token)",
                underlyingError: PersistentHistoryConsumerEvicted(consumerName: name, resyncToken: token))
        }
        return state.sequence
    }

    /// Throws unless `token` is of the consumer's store.
    func checkStore(of token: PersistentHistoryToken) throws {
        guard token.storeIdentifier == storeIdentifier else {
            throw CoreDataError(
                .persistentHistoryTokenExpired,
                "the history token is from store \(token.storeIdentifier), not the consumer's store \(storeIdentifier)")
        }
    }
}

/// Why an evicted ``PersistentHistoryConsumer``'s read failed, with the token to resync from:
/// the `underlyingError` of its `persistentHistoryTokenExpired` error.
public struct PersistentHistoryConsumerEvicted: Error, Sendable {
    /// The consumer's name.
    public let consumerName: String
    /// The token to resync from: rebuild from the store's current state, then advance to it.
    public let resyncToken: PersistentHistoryToken
}

/// The store option bounding the bytes of deleted history a ``PersistentHistoryConsumer`` may
/// hold back before it is evicted (an `Int`). The default is no bound.
public let HistoryConsumerLagLimitKey = "StrataHistoryConsumerLagLimit"

/// The store option bounding how long (seconds, a `Double`) a ``PersistentHistoryConsumer`` that
/// holds back deleted history may go without advancing before it is evicted. The default is no bound.
public let HistoryConsumerAgeLimitKey = "StrataHistoryConsumerAgeLimit"

extension PersistentStoreCoordinator {
    /// The history consumer `name` of `store` (the first store keeping history when `nil`),
    /// registered with its cursor at the oldest retained history when it is new.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store keeps no history or
    ///   cannot be written.
    public func historyConsumer(
        named name: String, in store: PersistentStore? = nil
    ) throws -> PersistentHistoryConsumer {
        PersistentHistoryConsumer(
            cursor: try HistoryConsumerCursor(registering: name, in: store, of: persistentStores))
    }
}
