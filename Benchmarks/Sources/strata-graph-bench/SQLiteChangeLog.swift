import BenchSupport
import Foundation
import GRDB
import Synchronization

/// SQLite has no persistent history; this is the closest thing a GRDB user builds: a change table
/// maintained by `AFTER INSERT/UPDATE/DELETE` triggers on every table of the model, each row
/// holding the transaction, the table name, the rowid, the kind of change, and the old and new
/// row as JSON (`json_object`, blobs as hex), with a cursor table that makes a replay resumable
/// and idempotent.
///
/// The transaction id comes from `history_transaction()`, a SQL function of the connection whose
/// value a transaction observer advances after each commit (SQLite has no transaction id of its
/// own); both live as long as the connection.
enum SQLiteChangeLog {
    /// A table of the reference schema and its columns, `id` (the rowid) first.
    struct Table {
        let name: String
        let columns: [String]
        /// The columns holding blobs, written to JSON as hex.
        let blobColumns: Set<String>
    }

    /// The tables of ``SQLiteSetup/schemaSQL`` whose changes are logged.
    static let tables = [
        Table(name: "department", columns: ["id", "name", "budget"], blobColumns: []),
        Table(
            name: "employee", columns: ["id", "name", "salary", "hired", "active", "notes", "photo", "departmentId"],
            blobColumns: ["photo"]),
    ]

    /// The kind of one logged change, as the `kind` column stores it.
    enum Kind: Int64 {
        case insert = 1, update = 2, delete = 3
    }

    /// One logged change, its values decoded.
    struct Change {
        /// The change row's id: the position after this change.
        let id: Int64
        let table: String
        let rowID: Int64
        let kind: Kind
        /// The row before an update or delete, by column.
        let oldValues: [String: DatabaseValue]?
        /// The row after an insert or update, by column.
        let newValues: [String: DatabaseValue]?
    }

    /// One logged transaction: its changes in order.
    struct Transaction {
        let id: Int64
        var changes: [Change]
    }

    /// Advances the id `history_transaction()` returns after each commit.
    private final class TransactionClock: TransactionObserver, Sendable {
        let current: Mutex<Int64>

        init(next: Int64) { current = Mutex(next) }

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { current.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    /// The change table, the replay cursors and the triggers, created once per database.
    private static var schemaSQL: String {
        var sql = """
            CREATE TABLE IF NOT EXISTS history_change (
                id INTEGER PRIMARY KEY,
                tx INTEGER NOT NULL,
                tableName TEXT NOT NULL,
                rowID INTEGER NOT NULL,
                kind INTEGER NOT NULL,
                oldValues TEXT,
                newValues TEXT
            );
            CREATE TABLE IF NOT EXISTS history_replay (source TEXT PRIMARY KEY, position INTEGER NOT NULL);

            """
        for table in tables {
            func json(_ row: String) -> String {
                "json_object("
                    + table.columns.map { column in
                        let value =
                            table.blobColumns.contains(column)
                            ? "CASE WHEN \(row).\(column) IS NULL THEN NULL ELSE hex(\(row).\(column)) END"
                            : "\(row).\(column)"
                        return "'\(column)', \(value)"
                    }.joined(separator: ", ") + ")"
            }
            for (event, kind, rowID, old, new) in [
                ("INSERT", Kind.insert, "NEW.id", "NULL", json("NEW")),
                ("UPDATE", .update, "NEW.id", json("OLD"), json("NEW")),
                ("DELETE", .delete, "OLD.id", json("OLD"), "NULL"),
            ] {
                sql += """
                    CREATE TRIGGER IF NOT EXISTS \(table.name)_history_\(event.lowercased()) AFTER \(event) ON \(table.name) BEGIN
                        INSERT INTO history_change (tx, tableName, rowID, kind, oldValues, newValues)
                        VALUES (history_transaction(), '\(table.name)', \(rowID), \(kind.rawValue), \(old), \(new));
                    END;

                    """
            }
        }
        return sql
    }

    /// Starts logging the changes of `queue`'s database: registers `history_transaction()` and
    /// its clock on the connection, and creates the tables and triggers.
    static func install(on queue: DatabaseQueue) throws {
        try queue.writeWithoutTransaction { db in
            let logged = try db.tableExists("history_change")
            let next =
                logged ? try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(tx), 0) + 1 FROM history_change") ?? 1 : 1
            let clock = TransactionClock(next: next)
            db.add(
                function: DatabaseFunction("history_transaction", argumentCount: 0, pure: false) { _ in
                    clock.current.withLock { $0 }
                })
            db.add(transactionObserver: clock, extent: .databaseLifetime)
            try db.inTransaction {
                try db.execute(sql: schemaSQL)
                return .commit
            }
        }
    }

    /// The position after the last logged change (0 when none is).
    static func lastPosition(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM history_change") ?? 0
    }

    /// The transactions logged after `position` (and through `last`, when given), oldest first,
    /// with their changes' values decoded.
    static func transactions(_ db: Database, after position: Int64, through last: Int64 = .max) throws -> [Transaction]
    {
        var transactions: [Transaction] = []
        let rows = try Row.fetchCursor(
            db,
            sql:
                "SELECT id, tx, tableName, rowID, kind, oldValues, newValues FROM history_change WHERE id > ? AND id <= ? ORDER BY id",
            arguments: [position, last])
        while let row = try rows.next() {
            let table: String = row[2]
            let kindValue: Int64 = row[4]
            let change = Change(
                id: row[0], table: table, rowID: row[3],
                kind: try Kind(rawValue: kindValue).orThrow("SQLite: change kind \(kindValue)"),
                oldValues: try decode(row[5], table: table), newValues: try decode(row[6], table: table))
            let tx: Int64 = row[1]
            if transactions.last?.id == tx {
                transactions[transactions.count - 1].changes.append(change)
            } else {
                transactions.append(Transaction(id: tx, changes: [change]))
            }
        }
        return transactions
    }

    /// The values of a row logged as JSON, blobs decoded from hex.
    private static func decode(_ json: String?, table name: String) throws -> [String: DatabaseValue]? {
        guard let json else { return nil }
        let table = try tables.first { $0.name == name }.orThrow("SQLite: no logged table \(name)")
        let object = try (JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]).orThrow(
            "SQLite: bad logged row \(json)")
        var values: [String: DatabaseValue] = [:]
        for (column, value) in object {
            switch value {
            case let string as String where table.blobColumns.contains(column):
                values[column] = try Data(hex: string).orThrow("SQLite: bad hex in \(name).\(column)").databaseValue
            case let string as String:
                values[column] = string.databaseValue
            case let number as NSNumber:
                let integer = number.int64Value
                values[column] =
                    Double(integer) == number.doubleValue ? integer.databaseValue : number.doubleValue.databaseValue
            default:
                values[column] = .null
            }
        }
        return values
    }

    /// Applies to `destination` the transactions of `source` logged after what it applied last
    /// (and through `last`, when given): one transaction each, which also moves the destination's
    /// cursor for `source` in `history_replay`, so that a replay resumes where it stopped and
    /// applies nothing twice.
    ///
    /// - Returns: the number of transactions applied.
    /// - Throws: ``BenchError`` when an update or delete finds no row.
    static func replay(
        from source: DatabaseQueue, named sourceName: String, into destination: DatabaseQueue,
        through last: Int64 = .max
    ) throws -> Int {
        let start = try destination.read { db in
            try Int64.fetchOne(db, sql: "SELECT position FROM history_replay WHERE source = ?", arguments: [sourceName])
                ?? 0
        }
        let transactions = try source.read { db in try Self.transactions(db, after: start, through: last) }
        for transaction in transactions {
            try destination.write { db in
                for change in transaction.changes {
                    try apply(change, in: db)
                }
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO history_replay (source, position) VALUES (?, ?)")
                    .execute(arguments: [sourceName, transaction.changes.last?.id ?? start])
            }
        }
        return transactions.count
    }

    /// Writes one change to `db` through cached statements.
    private static func apply(_ change: Change, in db: Database) throws {
        let table = try tables.first { $0.name == change.table }.orThrow("SQLite: no logged table \(change.table)")
        switch change.kind {
        case .insert:
            let values = try change.newValues.orThrow("SQLite: an insert without values")
            let sql =
                "INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))"
            try db.cachedStatement(sql: sql).execute(
                arguments: StatementArguments(table.columns.map { values[$0] ?? .null }))
        case .update:
            let values = try change.newValues.orThrow("SQLite: an update without values")
            let columns = table.columns.dropFirst()
            let sql = "UPDATE \(table.name) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"
            try db.cachedStatement(sql: sql).execute(
                arguments: StatementArguments(columns.map { values[$0] ?? .null } + [change.rowID.databaseValue]))
        case .delete:
            try db.cachedStatement(sql: "DELETE FROM \(table.name) WHERE id = ?").execute(arguments: [change.rowID])
        }
        guard db.changesCount == 1 else {
            throw BenchError(
                "SQLite: replaying a change of \(table.name) \(change.rowID) changed \(db.changesCount) rows")
        }
    }
}

extension Data {
    /// The bytes `hex` spells (two hexadecimal digits each), or `nil` when it spells none.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.init(bytes)
    }

    /// The value of one hexadecimal digit.
    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
