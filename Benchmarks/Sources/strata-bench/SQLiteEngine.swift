import BenchSupport
import Foundation
import GRDB
import Workloads

/// The SQLite baseline: GRDB's `DatabaseQueue` in WAL mode, with prepared cached statements
/// inside transactions, an index on department name, employee salary and employee department
/// (``SQLiteSetup``, shared with strata-graph-bench: `synchronous` is set and read back, `FULL` for
/// durable, `OFF` for relaxed). Dates are stored as seconds since 1970 (REAL).
final class SQLiteEngine: BenchEngine, SQLiteBackedEngine {
    static let name = "SQLite"

    let database: SQLiteDatabase

    private var databaseURL: URL { database.url }
    var filesURL: URL { database.directory }

    init(directory: URL, durability: BenchDurability) {
        database = SQLiteDatabase(directory: directory, durability: durability)
    }

    private static let insertDepartmentSQL = "INSERT INTO department (id, name, budget) VALUES (?, ?, ?)"
    private static let insertEmployeeSQL = """
        INSERT INTO employee (id, name, salary, hired, active, notes, photo, departmentId)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let selectNameSalarySQL = "SELECT name, salary FROM employee WHERE id = ?"

    func insertAll(_ dataset: Dataset) throws {
        for part in dataset.saveParts {
            try db.write { db in
                if part.lowerBound == 0 { try Self.insert(dataset.departments, in: db) }
                let statement = try db.cachedStatement(sql: Self.insertEmployeeSQL)
                for index in part {
                    try Self.insert(dataset.employees[index], key: Dataset.employeeKey(index), with: statement)
                }
            }
        }
    }

    func insertDepartments(_ departments: [Department]) throws {
        try db.write { db in try Self.insert(departments, in: db) }
    }

    func insert(_ employees: ArraySlice<Employee>, firstKey: Int64) throws {
        try db.write { db in
            let statement = try db.cachedStatement(sql: Self.insertEmployeeSQL)
            var key = firstKey
            for employee in employees {
                try Self.insert(employee, key: key, with: statement)
                key += 1
            }
        }
    }

    private static func insert(_ departments: [Department], in db: Database) throws {
        let statement = try db.cachedStatement(sql: insertDepartmentSQL)
        for (index, department) in departments.enumerated() {
            statement.setUncheckedArguments([Dataset.departmentKey(index), department.name, department.budget])
            try statement.execute()
        }
    }

    private static func insert(_ employee: Employee, key: Int64, with statement: Statement) throws {
        statement.setUncheckedArguments([
            key,
            employee.name,
            employee.salary,
            employee.hired.timeIntervalSince1970,
            employee.active,
            employee.notes,
            employee.photo,
            Dataset.departmentKey(employee.department),
        ])
        try statement.execute()
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.selectNameSalarySQL)
            guard let row = try Row.fetchOne(statement, arguments: [key]) else { return nil }
            return (row[0], row[1])
        }
    }

    func lookUp(_ keys: [Int64]) throws -> Int64 {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.selectNameSalarySQL)
            var checksum: Int64 = 0
            for key in keys {
                statement.setUncheckedArguments([key])
                guard let row = try Row.fetchOne(statement) else {
                    throw BenchError("SQLite: employee \(key) is missing")
                }
                let name: String = row[0]
                let salary: Int64 = row[1]
                checksum &+= salary &+ Int64(name.utf8.count)
            }
            return checksum
        }
    }

    func scanNotes() throws -> (count: Int, notesBytes: Int64) {
        try db.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM employee")
            let notesColumn = try statement.columnNames.firstIndex(of: "notes").orThrow("no notes column")
            var count = 0
            var bytes: Int64 = 0
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() {
                let notes: String = row[notesColumn]
                bytes += Int64(notes.utf8.count)
                count += 1
            }
            return (count, bytes)
        }
    }

    private static let topEarnersSQL =
        "SELECT * FROM employee WHERE salary > ? AND active = 1 ORDER BY salary DESC LIMIT ?"
    private static let countEarnersSQL = "SELECT COUNT(*) FROM employee WHERE salary > ? AND active = 1"

    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner] {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.topEarnersSQL)
            let salaryColumn = try statement.columnNames.firstIndex(of: "salary").orThrow("no salary column")
            let activeColumn = try statement.columnNames.firstIndex(of: "active").orThrow("no active column")
            var earners: [TopEarner] = []
            for _ in 0..<repetitions {
                earners.removeAll(keepingCapacity: true)
                statement.setUncheckedArguments([minimumSalary, limit])
                let rows = try Row.fetchCursor(statement)
                while let row = try rows.next() {
                    earners.append(TopEarner(salary: row[salaryColumn], active: row[activeColumn]))
                }
            }
            return earners
        }
    }

    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.countEarnersSQL)
            var count = 0
            for _ in 0..<repetitions {
                statement.setUncheckedArguments([minimumSalary])
                count = try Int.fetchOne(statement).orThrow("SQLite: no count")
            }
            return count
        }
    }

    func updateSalaries(_ changes: [WorkloadPlan.SalaryChange]) throws {
        try db.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE employee SET salary = ? WHERE id = ?")
            for change in changes {
                statement.setUncheckedArguments([change.salary, change.key])
                try statement.execute()
            }
        }
    }

    func delete(_ keys: [Int64]) throws {
        try db.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM employee WHERE id = ?")
            for key in keys {
                statement.setUncheckedArguments([key])
                try statement.execute()
            }
        }
    }

    func compact() throws -> [String: Double] {
        try db.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            // The vacuumed pages sit in the WAL until a checkpoint moves them and truncates it.
            _ = try db.checkpoint(.truncate)
            return [:]
        }
    }

    func employeeCount() throws -> Int {
        try db.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM employee") ?? 0 }
    }

    func settledBytesOnDisk() throws -> Int64 {
        if let queue = database.queue {
            _ = try queue.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
        return try ["", "-wal", "-shm"].reduce(0) { total, suffix in
            total + (try DiskUsage.bytes(at: URL(fileURLWithPath: databaseURL.path + suffix)))
        }
    }

    /// SQLite has no such figures.
    func storageDetails(readKey key: Int64) throws -> [String: Double] { [:] }

    func makeConcurrentReader() throws -> any ConcurrentReader {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(60)
        return Reader(queue: try DatabaseQueue(path: databaseURL.path, configuration: configuration))
    }

    /// A second connection, read-only, so that reads run beside the writer as WAL allows.
    private struct Reader: ConcurrentReader {
        let queue: DatabaseQueue

        func read(_ key: Int64) throws -> Bool {
            try queue.read { db in
                let statement = try db.cachedStatement(sql: SQLiteEngine.selectNameSalarySQL)
                guard let row = try Row.fetchOne(statement, arguments: [key]) else { return false }
                let name: String = row[0]
                let salary: Int64 = row[1]
                return !name.isEmpty && salary > 0
            }
        }

        func close() throws { try queue.close() }
    }
}
