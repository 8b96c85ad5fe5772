import BenchSupport
import Foundation
import GRDB
import Strata
import Workloads

/// W2 through the object graph: 2,000 saves of 10 new employees (without department), on a fresh
/// store each time: from one writer with durable saves (`W2.durable`), from one writer with
/// relaxed saves (`W2.relaxed`), and spread over 16 concurrent writers with durable saves
/// (`W2.concurrent16`, 125 saves each), whatever `--durability` says.
///
/// Strata: one background context per writer, each save in `performAndWait`, each writer on its
/// own thread. SQLite: GRDB records inserted in one write transaction per save, on a
/// `DatabaseQueue` for one writer and on one `DatabasePool` for the 16 (which serialises their
/// transactions).
protocol SmallSavesEngine: GraphEngine {
    /// Saves each batch of `saves` in one save, the batches spread round-robin over `writers`
    /// concurrent writers, each on its own thread; returns the duration of each save, in
    /// nanoseconds.
    func save(_ saves: [[(key: Int64, employee: Employee)]], writers: Int) throws -> [UInt64]
    /// The commits and commit groups (one log write each) since the store was opened, when the
    /// engine counts them.
    func commitGroups() throws -> (commits: Int, groups: Int)?
}

extension SmallSavesEngine {
    func commitGroups() throws -> (commits: Int, groups: Int)? { nil }
}

extension GraphRunner {
    /// W2: the number of saves.
    static let smallSaveCount = 2_000
    /// W2: the new employees of each save.
    static let smallSaveSize = 10
    /// W2.concurrent16: the number of concurrent writers.
    static let concurrentWriters = 16

    /// W2's three runs: which figure, its id, the saves' durability and the number of writers.
    private static let smallSaveRuns: [(metric: GraphMetric, id: String, durability: BenchDurability, writers: Int)] = [
        (.smallSavesDurable, "W2.durable", .durable, 1),
        (.smallSavesRelaxed, "W2.relaxed", .relaxed, 1),
        (.smallSavesConcurrent, "W2.concurrent16", .durable, concurrentWriters),
    ]

    /// Runs W2 (when selected): each of its three runs, each round on a fresh store.
    func runSmallSaves(into results: inout SideBySideRounds<GraphMetric>) throws {
        guard workloads.contains(.w2) else { return }
        let employees = dataset.additionalEmployees(count: Self.smallSaveCount * Self.smallSaveSize)
        let saves = stride(from: 0, to: employees.count, by: Self.smallSaveSize).map { first in
            (first..<first + Self.smallSaveSize).map { (key: Dataset.employeeKey($0), employee: employees[$0]) }
        }
        for run in Self.smallSaveRuns {
            try results.alternate(run.id) { engine, _, measured in
                try runSmallSaves(
                    Self.engineType(engine), saves, metric: run.metric, id: run.id, durability: run.durability,
                    writers: run.writers, into: &measured)
            }
        }
    }

    /// One round of one W2 run: `saves` from `writers` writers on a fresh store.
    private func runSmallSaves<E: SmallSavesEngine>(
        _ type: E.Type, _ saves: [[(key: Int64, employee: Employee)]], metric: GraphMetric, id: String,
        durability: BenchDurability, writers: Int, into results: inout EngineResults<GraphMetric>
    ) throws {
        let employeeCount = saves.count * Self.smallSaveSize
        try withFreshEngine(type, store: id.lowercased(), durability: durability) { engine in
            let cpuBefore = ProcessCPU.now()
            let timed = try measure { try engine.save(saves, writers: writers) }
            let cpu = ProcessCPU.now().since(cpuBefore)
            let coresBusy = cpu.totalSeconds / timed.seconds
            try Self.check(E.name, "\(id) saved", try engine.employeeCount(), expected: employeeCount)
            results.figures[metric] = Double(saves.count) / timed.seconds
            results.details["\(id).seconds"] = timed.seconds
            results.details["\(id).cpuUserSeconds"] = cpu.userSeconds
            results.details["\(id).cpuSystemSeconds"] = cpu.systemSeconds
            results.details["\(id).coresBusy"] = coresBusy
            results.details["\(id).saveP50Ms"] = timed.result.percentile(0.5).map { Double($0) / 1e6 }
            results.details["\(id).saveP99Ms"] = timed.result.percentile(0.99).map { Double($0) / 1e6 }
            results.checksums["\(id).employees"] = Int64(employeeCount)
            WorkloadSteps.log(
                "\(E.name) \(id): \(saves.count) saves from \(writers) writer(s) in \(formatFigure(timed.seconds)) s, "
                    + "CPU \(formatFigure(cpu.userSeconds)) s user + \(formatFigure(cpu.systemSeconds)) s system "
                    + "(\(formatFigure(coresBusy)) cores busy)")
            if let counts = try engine.commitGroups(), counts.groups > 0 {
                results.details["\(id).commitsPerGroup"] = Double(counts.commits) / Double(counts.groups)
                WorkloadSteps.log("\(E.name) \(id): \(counts.commits) commits in \(counts.groups) log writes")
            }
        }
    }
}

/// Runs `body(writer)` for each of `writers` writers, each on its own thread (not a pool thread:
/// the machine may have fewer cores than writers), and waits for all; rethrows the first error.
func onThreads(_ writers: Int, _ body: @escaping @Sendable (Int) throws -> [UInt64]) throws -> [UInt64] {
    let group = DispatchGroup()
    let outcomes = LockedValue<[Result<[UInt64], any Error>]>([])
    for writer in 0..<writers {
        group.enter()
        let thread = Thread {
            let outcome = Result { try body(writer) }
            outcomes.withLock { $0.append(outcome) }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    return try outcomes.withLock { $0 }.flatMap { try $0.get() }
}

/// The batches of `saves` that writer `writer` of `writers` makes (round-robin).
func batches<T>(_ saves: [T], of writer: Int, among writers: Int) -> [T] {
    stride(from: writer, to: saves.count, by: writers).map { saves[$0] }
}

extension StrataGraphEngine: SmallSavesEngine {
    func save(_ saves: [[(key: Int64, employee: Employee)]], writers: Int) throws -> [UInt64] {
        let container = try opened
        let entity = try container.managedObjectModel.entitiesByName[GraphModel.employeeEntity].orThrow(
            "Strata: no Employee entity")
        let work = UncheckedSendable((saves, entity))
        return try onThreads(writers) { writer in
            let (saves, entity) = work.value
            let context = container.newBackgroundContext()
            var latencies: [UInt64] = []
            for batch in batches(saves, of: writer, among: writers) {
                let start = monotonicNanoseconds()
                try context.performAndWait {
                    for (_, employee) in batch {
                        EmployeeMO(entity: entity, insertInto: context).assign(employee)
                    }
                    try context.save()
                }
                latencies.append(monotonicNanoseconds() - start)
            }
            return latencies
        }
    }

    func commitGroups() throws -> (commits: Int, groups: Int)? {
        let statistics = try opened.persistentStoreCoordinator.persistentStores.compactMap {
            $0.engineStore?.statistics
        }
        return statistics.isEmpty
            ? nil : (statistics.reduce(0) { $0 + $1.commits }, statistics.reduce(0) { $0 + $1.commitGroups })
    }
}

extension SQLiteRecordEngine: SmallSavesEngine {
    func save(_ saves: [[(key: Int64, employee: Employee)]], writers: Int) throws -> [UInt64] {
        let work = UncheckedSendable(saves)
        guard writers > 1 else {
            let queue = try db
            return try batches(saves, of: 0, among: 1).map { batch in
                try Self.measureSave { try queue.write { db in try Self.insert(batch, in: db) } }
            }
        }
        // 16 writers share one DatabasePool on the same file, as an app's background tasks would.
        try database.close()
        defer { try? database.open() }
        let pool = try Self.openPool(database.url, durability: database.durability)
        defer { try? pool.close() }
        return try onThreads(writers) { writer in
            try batches(work.value, of: writer, among: writers).map { batch in
                try Self.measureSave { try pool.write { db in try Self.insert(batch, in: db) } }
            }
        }
    }

    /// A `DatabasePool` on the database at `url` (whose schema exists), WAL, its writer
    /// connection's `synchronous` set for `durability` and read back, as ``SQLiteSetup`` does for
    /// a queue.
    private static func openPool(_ url: URL, durability: BenchDurability) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        let expected = durability == .durable ? 2 : 0  // FULL : OFF
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .durable ? "FULL" : "OFF")")
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode")
            let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            guard mode == "wal", synchronous == expected else {
                throw BenchError(
                    "SQLite pool: journal_mode=\(mode ?? "nil") synchronous=\(synchronous.map(String.init) ?? "nil")")
            }
        }
        return pool
    }

    /// Inserts one save's employees as records.
    private static func insert(_ batch: [(key: Int64, employee: Employee)], in db: Database) throws {
        for (key, employee) in batch { try EmployeeRecord.withoutDepartment(key, employee).insert(db) }
    }

    /// The duration of `save`, in nanoseconds.
    private static func measureSave(_ save: () throws -> Void) throws -> UInt64 {
        let start = monotonicNanoseconds()
        try save()
        return monotonicNanoseconds() - start
    }
}

extension EmployeeRecord {
    /// The record of `employee` with key `key` and no department, as the workloads on fresh
    /// stores insert them through Strata.
    static func withoutDepartment(_ key: Int64, _ employee: Employee) -> EmployeeRecord {
        var record = EmployeeRecord(id: key, employee)
        record.departmentId = nil
        return record
    }
}

/// A value handed to the writer threads, each of which only reads it.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
