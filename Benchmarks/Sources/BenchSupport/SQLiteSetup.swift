import Foundation
import GRDB

/// The SQLite database of one engine's store directory, `bench.sqlite`: a `DatabaseQueue` in WAL
/// mode whose `synchronous` setting is checked, with the reference schema. Not `Sendable`: the
/// engine that holds it drives it from one thread.
public final class SQLiteDatabase {
    /// The store directory, created on the first open.
    public let directory: URL
    public let durability: BenchDurability
    /// The open queue; `nil` when closed.
    public private(set) var queue: DatabaseQueue?

    /// The database file.
    public var url: URL { directory.appendingPathComponent("bench.sqlite") }

    public init(directory: URL, durability: BenchDurability) {
        self.directory = directory
        self.durability = durability
    }

    /// The open queue, or a ``BenchError`` when closed.
    public var opened: DatabaseQueue {
        get throws { try queue.orThrow("SQLite: the database is not open") }
    }

    /// Opens the database (see ``SQLiteSetup/open(_:in:durability:)``).
    public func open() throws {
        queue = try SQLiteSetup.open(url, in: directory, durability: durability)
    }

    public func close() throws {
        try queue?.close()
        queue = nil
    }
}

/// The SQLite side both benchmarks share: the reference schema, and a `DatabaseQueue` in WAL
/// mode whose `synchronous` setting is checked.
public enum SQLiteSetup {
    /// The reference model: `department` (indexed name) and `employee` (indexed salary and
    /// department). Dates are stored as seconds since 1970 (REAL).
    public static let schemaSQL = """
        CREATE TABLE department (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            budget REAL NOT NULL
        );
        CREATE INDEX department_on_name ON department(name);
        CREATE TABLE employee (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            salary INTEGER NOT NULL,
            hired REAL NOT NULL,
            active INTEGER NOT NULL,
            notes TEXT NOT NULL,
            photo BLOB,
            departmentId INTEGER REFERENCES department(id) ON DELETE SET NULL
        );
        CREATE INDEX employee_on_salary ON employee(salary);
        CREATE INDEX employee_on_departmentId ON employee(departmentId);
        """

    /// Opens the database at `url`, creating `directory` and the schema when missing.
    ///
    /// `synchronous` is set after opening (GRDB sets `NORMAL` when it enables WAL) and read back:
    /// `FULL` for durable, `OFF` for relaxed; the journal mode must be WAL.
    public static func open(_ url: URL, in directory: URL, durability: BenchDurability) throws -> DatabaseQueue {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(60)
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        let expected = durability == .durable ? 2 : 0  // FULL : OFF
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .durable ? "FULL" : "OFF")")
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode")
            let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            guard mode == "wal", synchronous == expected else {
                throw BenchError(
                    "SQLite: journal_mode=\(mode ?? "nil") synchronous=\(synchronous.map(String.init) ?? "nil"), "
                        + "expected wal and \(expected) for \(durability)")
            }
            if try !db.tableExists("employee") {
                try db.inTransaction {
                    try db.execute(sql: schemaSQL)
                    return .commit
                }
            }
        }
        return queue
    }

    /// The version of the SQLite library GRDB is linked with.
    public static func version() throws -> String {
        try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?" }
    }
}

/// An engine over one ``SQLiteDatabase``: opening and closing it are the database's.
public protocol SQLiteBackedEngine: WorkloadEngine {
    var database: SQLiteDatabase { get }
}

extension SQLiteBackedEngine {
    public func open() throws { try database.open() }

    public func close() throws { try database.close() }

    /// The open queue, or a ``BenchError`` when closed.
    public var db: DatabaseQueue {
        get throws { try database.opened }
    }
}
