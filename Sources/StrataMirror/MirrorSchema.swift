import Logging
import PostgresNIO

/// The PostgreSQL tables the instances share.
///
/// - `strata_head`: one row holding the last log position. A save takes its row lock
///   (`FOR UPDATE`) and holds it to commit, so positions are gap-free and become visible in
///   commit order (a `BIGSERIAL` would not be).
/// - `strata_txn`: the log, one row per saved transaction, unique by (origin, origin_seq).
/// - `strata_object`: each live object's row image and the position that last wrote it, for the
///   optimistic-locking check and for snapshots.
/// - `strata_instance`: each instance's cursor and when it was last seen, for pruning.
/// - `strata_keys`: per engine entity, the first primary key no instance has used or leased.
enum MirrorSchema {
    /// The channel a save notifies after it commits (a wake-up hint for tails, never relied on).
    static let channel = "strata_log"

    /// Creates the tables if they do not exist (once per database, under an advisory lock so
    /// that instances starting together do not race).
    static func create(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.send("BEGIN", logger: logger)
        do {
            try await connection.send("SELECT pg_advisory_xact_lock(7220150001)", logger: logger)
            try await connection.send(
                "CREATE TABLE IF NOT EXISTS strata_head (id int PRIMARY KEY CHECK (id = 1), pos bigint NOT NULL)",
                logger: logger)
            try await connection.send("INSERT INTO strata_head VALUES (1, 0) ON CONFLICT DO NOTHING", logger: logger)
            try await connection.send(
                """
                CREATE TABLE IF NOT EXISTS strata_txn (
                    pos bigint PRIMARY KEY, origin text NOT NULL, origin_seq bigint NOT NULL,
                    author text, context text, ts timestamptz NOT NULL, payload bytea NOT NULL,
                    UNIQUE (origin, origin_seq))
                """, logger: logger)
            try await connection.send(
                """
                CREATE TABLE IF NOT EXISTS strata_object (
                    entity int NOT NULL, pk bigint NOT NULL, pos bigint NOT NULL, row bytea NOT NULL,
                    PRIMARY KEY (entity, pk))
                """, logger: logger)
            try await connection.send(
                "CREATE TABLE IF NOT EXISTS strata_instance (origin text PRIMARY KEY, pos bigint NOT NULL, seen timestamptz NOT NULL)",
                logger: logger)
            try await connection.send(
                "CREATE TABLE IF NOT EXISTS strata_keys (entity int PRIMARY KEY, next bigint NOT NULL)", logger: logger)
            try await connection.send("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.send("ROLLBACK", logger: logger)
            throw error
        }
    }
}
