import Foundation
import GRDB
import Workloads

/// A department row as a GRDB record.
struct DepartmentRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "department"
    var id: Int64
    var name: String
    var budget: Double

    /// Decodes `SELECT *` by position, the fastest way GRDB offers.
    init(row: GRDB.Row) throws {
        id = row[0]
        name = row[1]
        budget = row[2]
    }

    init(id: Int64, name: String, budget: Double) {
        self.id = id
        self.name = name
        self.budget = budget
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
        container["budget"] = budget
    }
}

/// An employee row as a GRDB record (dates as seconds since 1970, as strata-bench stores them).
struct EmployeeRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "employee"
    var id: Int64
    var name: String
    var salary: Int64
    var hired: Date
    var active: Bool
    var notes: String
    var photo: Data?
    var departmentId: Int64?

    /// Decodes `SELECT *` by position, the fastest way GRDB offers.
    init(row: GRDB.Row) throws {
        id = row[0]
        name = row[1]
        salary = row[2]
        hired = Date(timeIntervalSince1970: row[3])
        active = row[4]
        notes = row[5]
        photo = row[6]
        departmentId = row[7]
    }

    init(id: Int64, _ employee: Employee) {
        self.id = id
        name = employee.name
        salary = employee.salary
        hired = employee.hired
        active = employee.active
        notes = employee.notes
        photo = employee.photo
        departmentId = Dataset.departmentKey(employee.department)
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
        container["salary"] = salary
        container["hired"] = hired.timeIntervalSince1970
        container["active"] = active
        container["notes"] = notes
        container["photo"] = photo
        container["departmentId"] = departmentId
    }
}

/// The SQLite baseline of the object-graph workloads: GRDB record types over a `DatabaseQueue`
/// in WAL mode, the same schema and indexes as strata-bench's SQLite engine. Reads by key go
/// through one cached `SELECT * … WHERE id = ?` statement; inserts and updates through the
/// records' own `insert` and `update(_:columns:)`, in one transaction each.
///
/// `synchronous` is set after opening (GRDB sets `NORMAL` when it enables WAL) and read back:
/// `FULL` for durable, `OFF` for relaxed.
final class SQLiteRecordEngine: GraphEngine {
    typealias Reference = Int64
    static let name = "SQLite"

    private let directory: URL
    private let durability: GraphDurability
    private var queue: DatabaseQueue?

    private var databaseURL: URL { directory.appendingPathComponent("bench.sqlite") }

    init(directory: URL, durability: GraphDurability, access _: GraphAccess) {
        self.directory = directory
        self.durability = durability
    }

    private static let schemaSQL = """
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
    private static let selectEmployeeSQL = "SELECT * FROM employee WHERE id = ?"

    /// The version of the SQLite library GRDB is linked with.
    static func version() throws -> String {
        try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?" }
    }

    func open() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(60)
        let queue = try DatabaseQueue(path: databaseURL.path, configuration: configuration)
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
                    try db.execute(sql: Self.schemaSQL)
                    return .commit
                }
            }
        }
        self.queue = queue
    }

    func close() throws {
        try queue?.close()
        queue = nil
    }

    private var db: DatabaseQueue {
        get throws { try queue.orThrow("SQLite: the database is not open") }
    }

    func insertAll(_ dataset: Dataset) throws {
        try db.write { db in
            for (index, department) in dataset.departments.enumerated() {
                try DepartmentRecord(id: Dataset.departmentKey(index), name: department.name, budget: department.budget).insert(db)
            }
            for (index, employee) in dataset.employees.enumerated() {
                try EmployeeRecord(id: Dataset.employeeKey(index), employee).insert(db)
            }
        }
    }

    func didInsertAll() throws {}

    func employeeCount() throws -> Int {
        try db.read { db in try EmployeeRecord.fetchCount(db) }
    }

    func census() throws -> (firstDepartmentEmployees: Int, salarySum: Int64) {
        try db.read { db in
            let members = try EmployeeRecord.filter(Column("departmentId") == Dataset.departmentKey(0)).fetchCount(db)
            let sum = try Int64.fetchOne(db, sql: "SELECT SUM(salary) FROM employee").orThrow("SQLite: no sum")
            return (members, sum)
        }
    }

    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)? {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.selectEmployeeSQL)
            return try EmployeeRecord.fetchOne(statement, arguments: [key]).map { ($0.name, $0.salary) }
        }
    }

    func references(for keys: [Int64]) throws -> [Int64] { keys }

    func lookUp(_ references: [Int64]) throws -> Int64 {
        try db.read { db in
            let statement = try db.cachedStatement(sql: Self.selectEmployeeSQL)
            var checksum: Int64 = 0
            for key in references {
                let employee = try EmployeeRecord.fetchOne(statement, arguments: [key])
                    .orThrow("SQLite: employee \(key) is missing")
                checksum &+= employee.salary &+ Int64(employee.name.utf8.count)
            }
            return checksum
        }
    }

    func scanNotes() throws -> (count: Int, notesBytes: Int64) {
        try db.read { db in
            let employees = try EmployeeRecord.fetchAll(db)
            var bytes: Int64 = 0
            for employee in employees {
                bytes += Int64(employee.notes.utf8.count)
            }
            return (employees.count, bytes)
        }
    }

    func updateSalaries(_ references: [Int64], salaries: [Int64]) throws {
        try db.write { db in
            let statement = try db.cachedStatement(sql: Self.selectEmployeeSQL)
            for (key, salary) in zip(references, salaries) {
                var employee = try EmployeeRecord.fetchOne(statement, arguments: [key])
                    .orThrow("SQLite: employee \(key) is missing")
                employee.salary = salary
                try employee.update(db, columns: ["salary"])
            }
        }
    }
}
