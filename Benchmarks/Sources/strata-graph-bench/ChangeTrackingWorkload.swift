import BenchSupport
import Foundation
import GRDB
import Strata
import Workloads

/// One save of F1: a new employee (without department), new salaries (the sort key) for two, one employee deleted.
struct TrackedChange: Sendable {
    /// The new employee and its key.
    var inserted: (key: Int64, employee: Employee)
    /// The employees that get a new salary, by key.
    var raises: [(key: Int64, salary: Int64)]
    /// The employee deleted.
    var deletedKey: Int64
}

/// What one F1 phase measured.
struct ChangeTrackingRun {
    /// The duration of each save, in nanoseconds, until the tracking (if any) has seen it.
    var saves: [UInt64]
    /// The time of the first fetch of the tracked results (0 without tracking), in seconds.
    var fetchSeconds: Double
    /// The number of results tracked after the last save (the employees counted without tracking).
    var trackedCount: Int
    /// How many times the tracking reported a change.
    var notifications: Int
}

/// F1: the cost of change tracking per save. On a store loaded with the data set (W1's insert,
/// untimed, once per engine: the rounds repeat on it), saves of a few changes each
/// (``TrackedChange``) are timed without tracking, then with every employee tracked, sorted by
/// salary descending; each round makes changes of its own.
///
/// Strata: the saves come from one background context holding every employee (fetched before the
/// clock starts, in both phases); tracking is a `FetchedResultsController` on that context with a
/// delegate, which reports each save before `save()` returns. SQLite: GRDB record writes in one
/// transaction per save; tracking is a `ValueObservation` of the same request
/// (`ORDER BY salary DESC`), and a save is timed until the observation delivers the new results,
/// which it fetches again after each commit: the closest thing a GRDB user has.
protocol ChangeTrackingEngine: GraphEngine {
    /// Makes `changes`, one save each, timed, with the employees tracked when `tracking`.
    func runChangeTracking(_ changes: [TrackedChange], tracking: Bool) throws -> ChangeTrackingRun
}

extension GraphRunner {
    /// The employees each F1 save touches that no other save touches: 2 raised, 1 deleted.
    static let employeesPerTrackedChange = 3

    /// F1's number of saves of each phase of each of `rounds` rounds: 50, fewer when N is small,
    /// since every save of every round touches employees of its own.
    static func changeTrackingSaves(employees n: Int, rounds: Int) -> Int {
        max(1, min(50, n / (2 * employeesPerTrackedChange * rounds)))
    }

    /// The fewest employees F1 needs for `rounds` rounds.
    static func changeTrackingMinimumEmployees(rounds: Int) -> Int { 2 * employeesPerTrackedChange * rounds }

    /// The saves of both F1 phases of each of `rounds` rounds, round after round, drawn from their
    /// own seeded stream: distinct existing employees, new ones keyed after the data set.
    func trackedChanges(rounds: Int) -> [TrackedChange] {
        let n = dataset.employees.count
        let count = 2 * Self.changeTrackingSaves(employees: n, rounds: rounds) * rounds
        precondition(count * Self.employeesPerTrackedChange <= n, "F1 needs more employees for \(rounds) rounds")
        var random = SplitMix64(seed: SplitMix64.referenceSeed &+ 0xF1)
        var keys = (0..<n).map(Dataset.employeeKey)
        random.shuffle(&keys)
        let newEmployees = dataset.additionalEmployees(count: count)
        return (0..<count).map { save in
            TrackedChange(
                inserted: (Dataset.employeeKey(n + save), newEmployees[save]),
                raises: [keys[3 * save], keys[3 * save + 1]].map { ($0, random.int64(in: 30_000...200_000)) },
                deletedKey: keys[3 * save + 2])
        }
    }

    /// Runs F1 (when selected): one store per engine, loaded once; each round saves changes of its
    /// own on it.
    func runChangeTracking(into results: inout SideBySideRounds<GraphMetric>) throws {
        guard workloads.contains(.f1) else { return }
        let rounds = results.rounds
        let changes = trackedChanges(rounds: rounds)
        let perRound = changes.count / rounds
        try withLoadedEngines(results.engines, store: "frc") { engines in
            try results.alternate("F1") { engine, round, measured in
                let mine = Array(changes[round * perRound..<(round + 1) * perRound])
                try runChangeTracking(engines[engine]!, mine, into: &measured)
            }
        }
    }

    /// One round of F1 on `engine`: the first half of `changes` without tracking, the second with.
    private func runChangeTracking<E: ChangeTrackingEngine>(
        _ engine: E, _ changes: [TrackedChange], into results: inout EngineResults<GraphMetric>
    ) throws {
        let half = changes.count / 2
        let without = try engine.runChangeTracking(Array(changes[..<half]), tracking: false)
        let with = try engine.runChangeTracking(Array(changes[half...]), tracking: true)
        let n = dataset.employees.count
        try Self.check(E.name, "F1 counted", without.trackedCount, expected: n)
        try Self.check(E.name, "F1 tracked", with.trackedCount, expected: n)
        try Self.check(E.name, "F1 reported changes of", with.notifications, expected: half)
        let census = try engine.census()
        results.checksums["F1.salarySum"] = census.salarySum
        results.checksums["F1.department1Employees"] = Int64(census.firstDepartmentEmployees)
        results.checksums["F1.trackedObjects"] = Int64(with.trackedCount)

        func medianMs(_ run: ChangeTrackingRun) -> Double { run.saves.map { Double($0) / 1e6 }.median ?? .nan }
        results.figures[.changeTracking] = medianMs(with)
        results.details["F1.saves"] = Double(half)
        results.details["F1.withoutTrackingMedianMs"] = medianMs(without)
        results.details["F1.withTrackingMedianMs"] = medianMs(with)
        results.details["F1.trackingOverheadMs"] = medianMs(with) - medianMs(without)
        results.details["F1.firstFetchMs"] = with.fetchSeconds * 1000
        WorkloadSteps.log(
            "\(E.name) F1 \(half) saves over \(n): \(formatFigure(medianMs(without))) ms without tracking, "
                + "\(formatFigure(medianMs(with))) ms with (first fetch \(formatFigure(with.fetchSeconds * 1000)) ms)")
    }
}

/// Counts the changes a fetched results controller reports.
private final class CountingDelegate: FetchedResultsControllerDelegate {
    var contentChanges = 0
    var objectChanges = 0

    func controller(
        _ controller: FetchedResultsController<FetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        objectChanges += 1
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<FetchRequestResult>) {
        contentChanges += 1
    }
}

extension StrataGraphEngine: ChangeTrackingEngine {
    func runChangeTracking(_ changes: [TrackedChange], tracking: Bool) throws -> ChangeTrackingRun {
        let container = try opened
        let entity = try container.managedObjectModel.entitiesByName[GraphModel.employeeEntity].orThrow(
            "Strata: no Employee entity")
        let raised = try references(for: changes.flatMap { $0.raises.map(\.key) })
        let deleted = try references(for: changes.map(\.deletedKey))
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let request = FetchRequest<EmployeeMO>(entityName: GraphModel.employeeEntity)
            request.sortDescriptors = [FetchSortDescriptor(key: "salary", ascending: false)]
            let delegate = CountingDelegate()
            var controller: FetchedResultsController<EmployeeMO>?
            var held: [EmployeeMO] = []
            let fetch = try measure {
                if tracking {
                    let made = FetchedResultsController(
                        fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
                    made.delegate = delegate
                    try made.performFetch()
                    controller = made
                } else {
                    held = try context.fetch(request)
                }
            }
            var latencies: [UInt64] = []
            for (index, change) in changes.enumerated() {
                let start = monotonicNanoseconds()
                let object = EmployeeMO(entity: entity, insertInto: context)
                object.name = change.inserted.employee.name
                object.salary = change.inserted.employee.salary
                object.hired = change.inserted.employee.hired
                object.active = change.inserted.employee.active
                object.notes = change.inserted.employee.notes
                if let photo = change.inserted.employee.photo { object.photo = photo }
                for (offset, raise) in change.raises.enumerated() {
                    let employee =
                        try context.existingObject(with: raised[index * change.raises.count + offset]) as! EmployeeMO
                    employee.salary = raise.salary
                }
                context.delete(try context.existingObject(with: deleted[index]))
                try context.save()
                latencies.append(monotonicNanoseconds() - start)
            }
            held.removeAll()
            let tracked = try controller?.fetchedObjects?.count ?? context.count(for: request)
            return ChangeTrackingRun(
                saves: latencies, fetchSeconds: tracking ? fetch.seconds : 0, trackedCount: tracked,
                notifications: delegate.contentChanges)
        }
    }
}

extension SQLiteRecordEngine: ChangeTrackingEngine {
    func runChangeTracking(_ changes: [TrackedChange], tracking: Bool) throws -> ChangeTrackingRun {
        let queue = try db
        let delivered = DispatchSemaphore(value: 0)
        let state = LockedValue<(count: Int, notifications: Int, error: (any Error)?)>((0, 0, nil))
        var observation: AnyDatabaseCancellable?
        defer { observation?.cancel() }
        /// Waits for the observation's next value (or error).
        func awaitDelivery() throws {
            guard delivered.wait(timeout: .now() + 600) == .success else {
                throw BenchError("SQLite F1: no observation value in 600 s")
            }
            if let error = state.withLock({ $0.error }) { throw error }
        }
        let fetch = try measure {
            guard tracking else { return }
            observation =
                ValueObservation
                .tracking { db in try EmployeeRecord.order(Column("salary").desc).fetchAll(db) }
                .start(
                    in: queue, scheduling: .async(onQueue: DispatchQueue(label: "strata-graph-bench.f1")),
                    onError: { error in
                        state.withLock { $0.error = error }
                        delivered.signal()
                    },
                    onChange: { employees in
                        state.withLock {
                            $0.count = employees.count
                            $0.notifications += 1
                        }
                        delivered.signal()
                    })
            try awaitDelivery()
        }
        var latencies: [UInt64] = []
        for change in changes {
            let start = monotonicNanoseconds()
            try queue.write { db in
                try EmployeeRecord.withoutDepartment(change.inserted.key, change.inserted.employee).insert(db)
                let raise = try db.cachedStatement(sql: "UPDATE employee SET salary = ? WHERE id = ?")
                for (key, salary) in change.raises { try raise.execute(arguments: [salary, key]) }
                _ = try EmployeeRecord.deleteOne(db, key: change.deletedKey)
            }
            if tracking { try awaitDelivery() }
            latencies.append(monotonicNanoseconds() - start)
        }
        let tracked = tracking ? state.withLock { $0.count } : try employeeCount()
        return ChangeTrackingRun(
            saves: latencies, fetchSeconds: tracking ? fetch.seconds : 0, trackedCount: tracked,
            // The first value is the initial fetch, not a change.
            notifications: max(0, state.withLock { $0.notifications } - 1))
    }
}
