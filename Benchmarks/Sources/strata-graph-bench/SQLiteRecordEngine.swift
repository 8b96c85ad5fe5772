import BenchSupport
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
/// in WAL mode, with the schema, indexes and `synchronous` check of strata-bench's SQLite engine
/// (``SQLiteSetup``). Reads by key go through one cached `SELECT * … WHERE id = ?` statement;
/// inserts and updates through the records' own `insert` and `update(_:columns:)`, in one
/// transaction each.
final class SQLiteRecordEngine: GraphEngine, SQLiteBackedEngine {
    typealias Reference = Int64
    static let name = "SQLite"

    let database: SQLiteDatabase

    init(directory: URL, durability: BenchDurability, access _: GraphAccess, predicateStyle _: PredicateStyle) {
        database = SQLiteDatabase(directory: directory, durability: durability)
    }

    private static let selectEmployeeSQL = "SELECT * FROM employee WHERE id = ?"

    func insertAll(_ dataset: Dataset) throws {
        for part in dataset.saveParts {
            try db.write { db in
                if part.lowerBound == 0 {
                    for (index, department) in dataset.departments.enumerated() {
                        try DepartmentRecord(
                            id: Dataset.departmentKey(index), name: department.name, budget: department.budget
                        ).insert(db)
                    }
                }
                for index in part {
                    try EmployeeRecord(id: Dataset.employeeKey(index), dataset.employees[index]).insert(db)
                }
            }
        }
    }

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

    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner] {
        try db.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT * FROM employee WHERE salary > ? AND active = 1 ORDER BY salary DESC LIMIT ?")
            var earners: [TopEarner] = []
            for _ in 0..<repetitions {
                earners = try EmployeeRecord.fetchAll(statement, arguments: [minimumSalary, limit])
                    .map { TopEarner(salary: $0.salary, active: $0.active) }
            }
            return earners
        }
    }

    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int {
        try db.read { db in
            let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM employee WHERE salary > ? AND active = 1")
            var count = 0
            for _ in 0..<repetitions {
                count = try Int.fetchOne(statement, arguments: [minimumSalary]).orThrow("SQLite: no count")
            }
            return count
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
