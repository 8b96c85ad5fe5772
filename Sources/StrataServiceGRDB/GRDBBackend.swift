import Foundation
import GRDB
import Logging
import StrataService

/// The service's routes on SQLite through GRDB, as a GRDB user builds them: a `DatabasePool`
/// in WAL mode with `synchronous=FULL` (each write durable when it returns, as Strata's
/// `.durable`), one `read` or `write` access per request (a consistent snapshot), prepared
/// statements for the bulk import, and a trigger-fed change table (``GRDBSchema``) observed with
/// a `ValueObservation` for the change feed. `Sendable`.
public final class GRDBBackend: Backend {
    /// The database every request reads and writes.
    let pool: DatabasePool
    /// Where the backend logs.
    let logger: Logger

    /// The columns of `employee` a predicate may name.
    static let predicateColumns = EmployeeRecord.attributeNames

    /// Opens (or creates) the database `Company.sqlite` in `directory` and migrates it, with a
    /// page cache of `cacheSize` bytes a connection (`nil`: SQLite's default).
    ///
    /// - Throws: `DatabaseError` when the database cannot be opened or migrated; what creating
    ///   the directory throws.
    public init(directory: URL, logger: Logger, cacheSize: Int? = nil) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // A negative size is in KiB.
            if let cacheSize { try db.execute(sql: "PRAGMA cache_size = -\(max(1, cacheSize >> 10))") }
        }
        let path = directory.appendingPathComponent("Company.sqlite").path
        pool = try DatabasePool(path: path, configuration: configuration)
        try GRDBSchema.migrator.migrate(pool)
        self.logger = logger
        logger.info("opened the SQLite database", metadata: ["path": "\(path)"])
    }

    /// Runs `block` in a write transaction that first records a `feed_transaction`, so the
    /// triggers file its changes under it.
    func write<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write { db in
                try db.execute(sql: "INSERT INTO feed_transaction (timestamp) VALUES (?)", arguments: [Date()])
                return try block(db)
            }
        } catch {
            throw Self.translate(error)
        }
    }

    /// Runs `block` with a snapshot of the database.
    func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(block)
        } catch {
            throw Self.translate(error)
        }
    }

    /// `error` as the API answers it: a full disk is insufficient storage.
    static func translate(_ error: any Error) -> any Error {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
            return ServiceError(.insufficientStorage, error.description)
        }
        return error
    }

    /// Throws unless the department `id` exists (when the input names one).
    ///
    /// - Throws: ``ServiceError`` `badRequest` when no department has the ID.
    static func checkDepartment(_ id: Int64?, in db: Database) throws {
        guard let id else { return }
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM department WHERE id = ?", arguments: [id]) == true else {
            throw ServiceError(.badRequest, "no department has the ID \(id)")
        }
    }

    /// The employee `id` as the API shows it, or `nil`.
    static func employee(id: Int64, in db: Database) throws -> EmployeeRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM employee WHERE id = ?", arguments: [id]).map(EmployeeRecord.init(row:))
    }

    public func createDepartment(_ input: DepartmentInput) async throws -> DepartmentRecord {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO department (name, budget) VALUES (?, ?)", arguments: [input.name, input.budget])
            return DepartmentRecord(id: db.lastInsertedRowID, name: input.name, budget: input.budget)
        }
    }

    public func department(id: Int64) async throws -> DepartmentRecord? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM department WHERE id = ?", arguments: [id]).map {
                DepartmentRecord(id: $0["id"], name: $0["name"], budget: $0["budget"])
            }
        }
    }

    public func deleteDepartment(id: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM department WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func createEmployee(_ input: EmployeeInput) async throws -> EmployeeRecord {
        try await write { db in
            try Self.checkDepartment(input.department, in: db)
            try db.execute(
                sql: """
                    INSERT INTO employee (name, salary, hired, active, notes, photo, department)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    input.name, input.salary, input.hired, input.active, input.notes, input.photo, input.department,
                ])
            return EmployeeRecord(id: db.lastInsertedRowID, input)
        }
    }

    public func employee(id: Int64) async throws -> EmployeeRecord? {
        try await read { db in try Self.employee(id: id, in: db) }
    }

    public func updateEmployee(id: Int64, with patch: EmployeePatch) async throws -> EmployeeRecord? {
        try await write { db in
            guard let current = try Self.employee(id: id, in: db) else { return nil }
            try Self.checkDepartment(patch.department, in: db)
            let updated = patch.applied(to: current)
            try db.execute(
                sql: """
                    UPDATE employee SET name = ?, salary = ?, hired = ?, active = ?, notes = ?, photo = ?,
                    department = ? WHERE id = ?
                    """,
                arguments: [
                    updated.name, updated.salary, updated.hired, updated.active, updated.notes, updated.photo,
                    updated.department, id,
                ])
            return updated
        }
    }

    public func deleteEmployee(id: Int64) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM employee WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func employees(matching query: ListQuery) async throws -> [EmployeeRecord] {
        let condition = try query.predicateFormat.map { try SQLPredicate(format: $0, columns: Self.predicateColumns) }
        var sql = "SELECT * FROM employee"
        if let condition { sql += " WHERE \(condition.sql)" }
        let order = query.sort.map { "\($0.key) \($0.ascending ? "ASC" : "DESC")" } + ["id"]
        sql += " ORDER BY " + order.joined(separator: ", ") + " LIMIT ? OFFSET ?"
        var arguments = condition?.arguments ?? StatementArguments()
        arguments += [query.limit, query.offset]
        let statement = sql
        let bound = arguments
        return try await read { db in
            try Row.fetchAll(db, sql: statement, arguments: bound).map(EmployeeRecord.init(row:))
        }
    }

    public func importEmployees(_ employees: [EmployeeInput]) async throws -> Int {
        try EmployeeInput.checkImportable(employees)
        guard !employees.isEmpty else { return 0 }
        return try await write { db in
            let statement = try db.makeStatement(
                sql: "INSERT INTO employee (name, salary, hired, active, notes, photo) VALUES (?, ?, ?, ?, ?, ?)")
            for employee in employees {
                try statement.execute(arguments: [
                    employee.name, employee.salary, employee.hired, employee.active, employee.notes, employee.photo,
                ])
            }
            return employees.count
        }
    }

    public func close() async throws {
        try pool.close()
    }
}

extension EmployeeRecord {
    /// The employee in an `employee` row.
    init(row: Row) {
        self.init(
            id: row["id"],
            EmployeeInput(
                name: row["name"], salary: row["salary"], hired: row["hired"], active: row["active"],
                notes: row["notes"], photo: row["photo"], department: row["department"]))
    }
}
