import Foundation
import GRDB
import StrataService

/// The change feed on the trigger-fed change table: tokens are `feed_transaction` IDs, the live
/// tail wakes on a `ValueObservation` of the latest one, and named consumers are rows of
/// `feed_consumer`.
extension GRDBBackend {
    /// The most transactions read from the change table at a time.
    static let feedBatch = 256

    public func currentToken() async throws -> Int64 {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM feed_transaction") ?? 0 }
    }

    public func consumerToken(named name: String) async throws -> Int64 {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO feed_consumer (name, token) SELECT ?, token FROM feed_floor",
                arguments: [name])
            return try Int64.fetchOne(db, sql: "SELECT token FROM feed_consumer WHERE name = ?", arguments: [name]) ?? 0
        }
    }

    public func advanceConsumer(named name: String, to token: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO feed_consumer (name, token) VALUES (?, ?)
                    ON CONFLICT (name) DO UPDATE SET token = MAX(token, excluded.token)
                    """,
                arguments: [name, token])
        }
    }

    public func oldestToken() async throws -> Int64 {
        try await read { db in try Self.floor(db) }
    }

    /// Deletes the change table's transactions committed before `date`, up to the lowest named
    /// consumer's cursor, and keeps the newest transaction, whose ID is the current token.
    public func deleteHistory(before date: Date) async throws {
        do {
            try await pool.write { db in
                let expired = try Int64.fetchOne(
                    db, sql: "SELECT MAX(id) FROM feed_transaction WHERE timestamp < ?", arguments: [date])
                let newest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM feed_transaction")
                let held = try Int64.fetchOne(db, sql: "SELECT MIN(token) FROM feed_consumer")
                guard let expired, let newest else { return }
                let cut = min(expired, newest - 1, held ?? .max)
                guard cut > (try Self.floor(db)) else { return }
                try db.execute(sql: "DELETE FROM feed_change WHERE tx <= ?", arguments: [cut])
                try db.execute(sql: "DELETE FROM feed_transaction WHERE id <= ?", arguments: [cut])
                try db.execute(sql: "UPDATE feed_floor SET token = ?", arguments: [cut])
            }
        } catch {
            throw Self.translate(error)
        }
    }

    /// The token up to which the history was deleted.
    static func floor(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT token FROM feed_floor") ?? 0
    }

    public func forEachTransaction(
        after token: Int64, _ body: (FeedTransaction) async throws -> Void
    ) async throws {
        let latest = ValueObservation.tracking { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM feed_transaction") ?? 0
        }
        var cursor = token
        for try await last in latest.values(in: pool) {
            while cursor < last {
                let (transactions, end) = try await transactions(after: cursor, through: last)
                for transaction in transactions { try await body(transaction) }
                cursor = end
            }
        }
    }

    /// Up to ``feedBatch`` transactions after `token` and no later than `last`, with their
    /// changes, and the ID of the last one read (a transaction without changes is skipped).
    ///
    /// - Throws: ``ServiceError`` `tokenExpired` when the history after `token` was deleted.
    func transactions(after token: Int64, through last: Int64) async throws -> ([FeedTransaction], Int64) {
        try await read { db in
            let floor = try Self.floor(db)
            guard token >= floor else {
                throw ServiceError(
                    .tokenExpired, "the history up to \(floor) was deleted; the feed token is \(token)")
            }
            let heads = try Row.fetchAll(
                db, sql: "SELECT id, timestamp FROM feed_transaction WHERE id > ? AND id <= ? ORDER BY id LIMIT ?",
                arguments: [token, last, Self.feedBatch])
            guard let end: Int64 = heads.last?["id"] else { return ([], last) }
            var changes: [Int64: [FeedTransaction.Change]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT tx, entity, row, type FROM feed_change WHERE tx > ? AND tx <= ? ORDER BY id",
                arguments: [token, end])
            {
                changes[row["tx"], default: []].append(
                    FeedTransaction.Change(entity: row["entity"], id: row["row"], type: row["type"]))
            }
            let transactions = heads.compactMap { head -> FeedTransaction? in
                guard let changed = changes[head["id"]] else { return nil }
                return FeedTransaction(token: head["id"], timestamp: head["timestamp"], changes: changed)
            }
            return (transactions, end)
        }
    }
}
