import BenchSupport
import Foundation
import GRDB
import Strata
import Workloads

/// B1-B3: rows written straight to the store, without objects. On a fresh store: B1 inserts the
/// N employees of the data set (without departments), B2 sets `active` to false where it is
/// true (about 90% of them), B3 deletes every inactive employee (all of them then).
///
/// Strata: `BatchInsertRequest` (one dictionary per row), `BatchUpdateRequest` and
/// `BatchDeleteRequest` executed by a background context, count results. SQLite: GRDB's fastest
/// equivalent, one prepared `INSERT` in one transaction, then one `UPDATE … WHERE` and one
/// `DELETE … WHERE` statement.
///
/// B1 times the insert from ready input on both sides: the rows are put in each engine's own
/// input form (Strata's dictionaries, GRDB's statement arguments) before the clock starts.
protocol BatchRequestEngine: GraphEngine {
    /// The rows of B1 in the form the engine's batch insert takes.
    associatedtype BatchInput
    /// B1's input: `employees` in the engine's own form, made outside the timed section.
    func batchInput(_ employees: [Employee]) -> BatchInput
    /// B1: inserts `input` (employee `i` with key `i + 1`, without department); returns how
    /// many rows were inserted.
    func batchInsert(_ input: BatchInput) throws -> Int
    /// B2: sets `active` to false on every active employee; returns how many were updated.
    func batchDeactivate() throws -> Int
    /// B3: deletes every inactive employee; returns how many were deleted.
    func batchDeleteInactive() throws -> Int
}

extension GraphRunner {
    /// Runs B1, B2 and B3 (when one of them is selected): each round on a fresh store.
    func runBatchRequests(into results: inout SideBySideRounds<GraphMetric>) throws {
        guard !workloads.isDisjoint(with: [.b1, .b2, .b3]) else { return }
        try results.alternate("B1, B2, B3") { engine, _, measured in
            try runBatchRequests(Self.engineType(engine), into: &measured)
        }
    }

    /// One round of B1, B2 and B3 on a fresh store of `E`.
    private func runBatchRequests<E: BatchRequestEngine>(
        _ type: E.Type, into results: inout EngineResults<GraphMetric>
    ) throws {
        try withFreshEngine(type, store: "batch") { engine in
            let n = dataset.employees.count
            let active = dataset.employees.filter(\.active).count
            let input = engine.batchInput(dataset.employees)
            let insert = try measure { try engine.batchInsert(input) }
            try Self.check(E.name, "B1 inserted", insert.result, expected: n)
            try Self.check(E.name, "B1 counted", try engine.employeeCount(), expected: n)
            let update = try measure { try engine.batchDeactivate() }
            try Self.check(E.name, "B2 updated", update.result, expected: active)
            let delete = try measure { try engine.batchDeleteInactive() }
            try Self.check(E.name, "B3 deleted", delete.result, expected: n)
            try Self.check(E.name, "B3 left", try engine.employeeCount(), expected: 0)
            for (metric, step, rows, seconds) in [
                (GraphMetric.batchInsert, "B1", insert.result, insert.seconds),
                (.batchUpdate, "B2", update.result, update.seconds),
                (.batchDelete, "B3", delete.result, delete.seconds),
            ] {
                results.figures[metric] = Double(rows) / seconds
                results.details["\(step).seconds"] = seconds
                results.checksums["\(step).rows"] = Int64(rows)
                let input = step == "B1" ? " (input made before the clock)" : ""
                WorkloadSteps.log("\(E.name) \(step) \(rows) rows in \(formatFigure(seconds)) s\(input)")
            }
        }
    }

    /// Throws unless `value` is `expected`.
    static func check(_ engine: String, _ what: String, _ value: Int, expected: Int) throws {
        guard value == expected else { throw BenchError("\(engine) \(what) \(value) employees, expected \(expected)") }
    }
}

extension StrataGraphEngine: BatchRequestEngine {
    /// Executes `request` in a new background context.
    private func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult {
        let context = try opened.newBackgroundContext()
        return try context.performAndWait { try context.execute(request) }
    }

    func batchInput(_ employees: [Employee]) -> [[String: Any]] {
        employees.map { employee -> [String: Any] in
            var values: [String: Any] = [
                "name": employee.name, "salary": employee.salary, "hired": employee.hired,
                "active": employee.active, "notes": employee.notes,
            ]
            if let photo = employee.photo { values["photo"] = photo }
            return values
        }
    }

    func batchInsert(_ objects: [[String: Any]]) throws -> Int {
        let request = BatchInsertRequest(entityName: GraphModel.employeeEntity, objects: objects)
        request.resultType = .count
        return try (execute(request) as? BatchInsertResult)?.result as? Int ?? -1
    }

    func batchDeactivate() throws -> Int {
        let request = BatchUpdateRequest(entityName: GraphModel.employeeEntity)
        request.predicate = FetchPredicate(key: "active", .equalTo, true)
        request.propertiesToUpdate = ["active": false]
        request.resultType = .updatedObjectsCountResultType
        return try (execute(request) as? BatchUpdateResult)?.result as? Int ?? -1
    }

    func batchDeleteInactive() throws -> Int {
        let fetch = FetchRequest<FetchRequestResult>(entityName: GraphModel.employeeEntity)
        fetch.predicate = FetchPredicate(key: "active", .equalTo, false)
        let request = BatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .resultTypeCount
        return try (execute(request) as? BatchDeleteResult)?.result as? Int ?? -1
    }
}

extension SQLiteRecordEngine: BatchRequestEngine {
    func batchInput(_ employees: [Employee]) -> [StatementArguments] {
        employees.enumerated().map { index, employee in
            [
                Dataset.employeeKey(index), employee.name, employee.salary, employee.hired.timeIntervalSince1970,
                employee.active, employee.notes, employee.photo,
            ]
        }
    }

    func batchInsert(_ rows: [StatementArguments]) throws -> Int {
        try db.write { db in
            let statement = try db.makeStatement(
                sql:
                    "INSERT INTO employee (id, name, salary, hired, active, notes, photo, departmentId) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)"
            )
            // Unchecked arguments: the statement's argument count is known, as GRDB's fastest path.
            for arguments in rows {
                statement.setUncheckedArguments(arguments)
                try statement.execute()
            }
            return rows.count
        }
    }

    func batchDeactivate() throws -> Int {
        try db.write { db in
            try db.execute(sql: "UPDATE employee SET active = 0 WHERE active = 1")
            return db.changesCount
        }
    }

    func batchDeleteInactive() throws -> Int {
        try db.write { db in
            try db.execute(sql: "DELETE FROM employee WHERE active = 0")
            return db.changesCount
        }
    }
}
