import Foundation
import Logging
import PostgresNIO
import Strata
import StrataStore

/// One row of the shared log.
struct MirrorLogEntry: Sendable {
    var position: Int64
    /// The instance that saved the transaction, and its sequence there.
    var origin: String
    var originSequence: Int64
    var author: String?
    var contextName: String?
    var timestamp: Date
    var payload: Data

    /// The entries after `cursor`, in log order, at most `limit`.
    static func read(
        after cursor: Int64, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [MirrorLogEntry] {
        let rows = try await connection.send(
            """
            SELECT pos, origin, origin_seq, author, context, ts, payload FROM strata_txn
            WHERE pos > \(cursor) ORDER BY pos LIMIT \(limit)
            """, logger: logger)
        var entries: [MirrorLogEntry] = []
        for try await (position, origin, sequence, author, context, timestamp, payload) in rows.decode(
            (Int64, String, Int64, String?, String?, Date, Data).self)
        {
            entries.append(
                MirrorLogEntry(
                    position: position, origin: origin, originSequence: sequence, author: author, contextName: context,
                    timestamp: timestamp, payload: payload))
        }
        return entries
    }

    /// The log's head: the last position handed out.
    static func head(on connection: PostgresConnection, forUpdate: Bool, logger: Logger) async throws -> Int64 {
        let query: PostgresQuery =
            forUpdate
            ? "SELECT pos FROM strata_head WHERE id = 1 FOR UPDATE" : "SELECT pos FROM strata_head WHERE id = 1"
        for try await position in try await connection.send(query, logger: logger).decode(Int64.self) {
            return position
        }
        throw MirrorError.malformedPayload("strata_head has no row")
    }
}

/// The row images of every object in PostgreSQL at one log position.
struct MirrorSnapshot: Sendable {
    var position: Int64
    var rows: [Int: [Int64: Row]]

    /// Reads the snapshot; `consistent` when the caller already holds the head lock in an open
    /// transaction, else in a REPEATABLE READ transaction of its own.
    static func read(
        on connection: PostgresConnection, holdingHead head: Int64?, logger: Logger
    ) async throws -> MirrorSnapshot {
        if head == nil { try await connection.send("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger) }
        do {
            var snapshot = MirrorSnapshot(position: 0, rows: [:])
            if let head {
                snapshot.position = head
            } else {
                snapshot.position = try await MirrorLogEntry.head(on: connection, forUpdate: false, logger: logger)
            }
            let rows = try await connection.send("SELECT entity, pk, row FROM strata_object", logger: logger)
            for try await (entity, key, data) in rows.decode((Int32, Int64, Data).self) {
                let values = try JSONDecoder().decode([TaggedValue].self, from: data)
                snapshot.rows[Int(entity), default: [:]][key] = Row(values.map(\.value))
            }
            if head == nil { try await connection.send("COMMIT", logger: logger) }
            return snapshot
        } catch {
            if head == nil { _ = try? await connection.send("ROLLBACK", logger: logger) }
            throw error
        }
    }
}
