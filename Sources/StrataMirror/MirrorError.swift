import Strata

/// Failures inside the mirror, turned into ``CoreDataError``s where they reach a save.
enum MirrorError: Error, Sendable, CustomStringConvertible {
    /// A log entry that does not decode.
    case malformedPayload(String)
    /// An object's version in PostgreSQL is newer than the local store's: someone wrote it
    /// without this instance having applied it first.
    case versionConflict(entity: Int, key: Int64)
    /// The shared log no longer holds the entries after this instance's cursor.
    case cursorBelowLog(cursor: Int64, oldest: Int64)
    /// PostgreSQL did not answer in time.
    case timedOut(Double)
    /// The connection to PostgreSQL closed during an exchange (the server stopped or went away).
    case connectionLost
    /// The shared log's head is behind this instance's cursor: the database is not the one the
    /// store replicates (restored from an older backup, or another database).
    case logBehindCursor(head: Int64, cursor: Int64)

    var description: String {
        switch self {
        case .malformedPayload(let detail): "malformed log entry: \(detail)"
        case .versionConflict(let entity, let key):
            "the object \(key) of engine entity \(entity) changed in PostgreSQL since this instance read it"
        case .cursorBelowLog(let cursor, let oldest):
            "the shared log starts at \(oldest), after this instance's cursor \(cursor)"
        case .timedOut(let seconds): "PostgreSQL did not answer within \(seconds) s"
        case .connectionLost: "the connection to PostgreSQL closed during the exchange"
        case .logBehindCursor(let head, let cursor):
            "the shared log ends at \(head), before this instance's cursor \(cursor)"
        }
    }
}
