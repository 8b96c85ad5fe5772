import Foundation
import Workloads

/// When a save counts as done, as WORKLOADS.md defines it.
public enum BenchDurability: String, Sendable, CaseIterable {
    /// Every save is on stable storage when it returns (Strata `.durable`, SQLite `synchronous=FULL`).
    case durable
    /// No fsync on save (Strata `.relaxed`, SQLite `synchronous=OFF`).
    case relaxed
}

/// What every engine under test does, whatever the benchmark: open and close its store, load the
/// data set, and read employees back. The shared steps of ``WorkloadSteps`` drive it.
///
/// Each call is one unit a runner times, except those documented as untimed. Not `Sendable`: a
/// runner drives an engine from one thread.
public protocol WorkloadEngine: AnyObject {
    /// How the engine names one employee for ``lookUp(_:)``: the primary key, or an object ID.
    associatedtype Reference

    /// The engine's name in the report.
    static var name: String { get }

    /// Opens the store, creating it (with its schema and indexes) when missing.
    func open() throws
    /// Closes the store.
    func close() throws

    /// W1: inserts every department and employee of `dataset` in one save.
    func insertAll(_ dataset: Dataset) throws
    /// Untimed, after W1: what the engine keeps to find employees again after a reopen. Nothing
    /// by default.
    func didInsertAll() throws
    /// The number of live employees (a check, not timed).
    func employeeCount() throws -> Int

    /// Reads one employee's name and salary by key (W3's first read; W7's read-back).
    func readNameAndSalary(_ key: Int64) throws -> (name: String, salary: Int64)?
    /// Untimed: the references of `keys` on the open store. The keys themselves by default.
    func references(for keys: [Int64]) throws -> [Reference]
    /// W4: reads name and salary of each employee; returns the sum of salaries and name lengths.
    func lookUp(_ references: [Reference]) throws -> Int64
    /// W6: reads every employee and its notes; returns the count and the sum of notes lengths.
    func scanNotes() throws -> (count: Int, notesBytes: Int64)

    /// W5: `repetitions` times, fetches the active employees whose salary is above
    /// `minimumSalary`, highest salary first, at most `limit` of them, reading each one's salary
    /// and `active`; returns what the last run read, in order.
    func fetchTopEarners(above minimumSalary: Int64, limit: Int, repetitions: Int) throws -> [TopEarner]
    /// W5: `repetitions` times, counts the active employees whose salary is above
    /// `minimumSalary`; returns the last count.
    func countActiveEarners(above minimumSalary: Int64, repetitions: Int) throws -> Int
}

/// What W5 reads of one employee it fetched.
public struct TopEarner: Sendable, Hashable {
    /// The employee's salary.
    public var salary: Int64
    /// Whether the employee is active.
    public var active: Bool

    /// Creates what W5 read of one employee.
    public init(salary: Int64, active: Bool) {
        self.salary = salary
        self.active = active
    }
}

extension WorkloadEngine {
    public func didInsertAll() throws {}
}

extension WorkloadEngine where Reference == Int64 {
    public func references(for keys: [Int64]) throws -> [Int64] { keys }
}

/// The workload steps both benchmarks run the same way, and their settings.
///
/// Each step measures one round of one engine; ``SideBySideRounds/alternate(_:_:)`` repeats it.
public enum WorkloadSteps {
    /// W4's number of lookups.
    public static let lookupCount = 100_000
    /// W5's predicate: `salary > predicateMinimumSalary AND active == true`.
    public static let predicateMinimumSalary: Int64 = 150_000
    /// W5's fetch limit.
    public static let predicateFetchLimit = 100
    /// W5 runs the fetch, and then the count, this many times each.
    public static let predicateRepetitions = 50

    /// Writes one step's progress, indented, to standard error.
    public static func log(_ message: String) {
        FileHandle.standardError.write(Data("  \(message)\n".utf8))
    }

    /// Makes an engine for `directory` (removed before and after), opens it, runs `body` and
    /// closes it.
    public static func withFreshEngine<E: WorkloadEngine>(
        at directory: URL, _ make: (URL) -> E, _ body: (E) throws -> Void
    ) throws {
        try? FileManager.default.removeItem(at: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Write back what earlier runs left dirty, so that no engine's fsyncs pay for another's.
        sync()
        let engine = make(directory)
        try engine.open()
        defer { try? engine.close() }
        try body(engine)
    }

    /// Runs `body` with one engine open for each of `engines`, each opened by `withEngine` (which
    /// calls what it is given with the engine, then closes it), and all closed after `body`.
    ///
    /// For workloads that read one store loaded once per engine: both engines' stores stay open
    /// so that their rounds can alternate.
    public static func withEngines<Engine, ID: Hashable>(
        _ engines: [ID],
        _ withEngine: (ID, (Engine) throws -> Void) throws -> Void,
        _ body: ([ID: Engine]) throws -> Void
    ) throws {
        // Each engine opens inside the previous one's `withEngine`; the closures do not escape.
        try withoutActuallyEscaping(withEngine) { withEngine in
            func open(_ remaining: ArraySlice<ID>, _ opened: [ID: Engine]) throws {
                guard let engine = remaining.first else { return try body(opened) }
                try withEngine(engine) { try open(remaining.dropFirst(), opened.merging([engine: $0]) { $1 }) }
            }
            try open(engines[...], [:])
        }
    }

    /// Untimed: loads `dataset` into the open `engine` (W1's insert), then checks it holds every
    /// employee. The setup of the workloads that read a loaded store.
    public static func load<E: WorkloadEngine>(_ engine: E, _ dataset: Dataset) throws {
        let insert = try measure {
            try engine.insertAll(dataset)
            try engine.didInsertAll()
        }
        let count = try engine.employeeCount()
        guard count == dataset.employees.count else {
            throw BenchError("\(E.name): \(count) employees after the load, expected \(dataset.employees.count)")
        }
        log("\(E.name) loaded \(count) employees in \(formatFigure(insert.seconds)) s (untimed)")
        // Write back what the load left dirty (gigabytes at 10M rows), so that the kernel's
        // writeback does not run beside the rounds that follow, which read the loaded store.
        sync()
    }

    /// W1: every department and employee, one save, then the engine's untimed
    /// ``WorkloadEngine/didInsertAll()``, on an open, empty store. The figures are recorded when
    /// `record` (the insert may be the setup of the workloads after it).
    public static func bulkInsert<E: WorkloadEngine, Metric: BenchMetric>(
        _ engine: E, _ dataset: Dataset, record: Bool, into results: inout EngineResults<Metric>
    ) throws {
        let objectCount = dataset.departments.count + dataset.employees.count
        let insert = try measure { try engine.insertAll(dataset) }
        try engine.didInsertAll()
        if record {
            results.figures[.bulkInsert] = Double(objectCount) / insert.seconds
            results.details["W1.seconds"] = insert.seconds
        }
        log("\(E.name) W1 \(objectCount) objects in \(formatFigure(insert.seconds)) s")
    }

    /// W3: closes the store, then opens it and reads the employee `key`, timed together; the
    /// open and the first read go to the details too (`W3.openMs`, `W3.firstReadMs`).
    public static func coldOpen<E: WorkloadEngine, Metric: BenchMetric>(
        _ engine: E, key: Int64, into results: inout EngineResults<Metric>
    ) throws {
        try engine.close()
        let start = monotonicNanoseconds()
        try engine.open()
        let opened = monotonicNanoseconds()
        let first = try engine.readNameAndSalary(key)
        let end = monotonicNanoseconds()
        guard let first else { throw BenchError("\(E.name) W3: employee \(key) is missing") }
        results.checksums["W3"] = first.salary &+ Int64(first.name.utf8.count)
        let total = Double(end - start) / 1e6
        let open = Double(opened - start) / 1e6
        let read = Double(end - opened) / 1e6
        results.figures[.coldOpen] = total
        results.details["W3.openMs"] = open
        results.details["W3.firstReadMs"] = read
        log(
            "\(E.name) W3 cold open \(formatFigure(total)) ms = open \(formatFigure(open)) "
                + "+ first read \(formatFigure(read))")
    }

    /// W4: random lookups of `keys` on a freshly opened store, references resolved before the
    /// clock starts.
    public static func randomFaults<E: WorkloadEngine, Metric: BenchMetric>(
        _ engine: E, keys: [Int64], into results: inout EngineResults<Metric>
    ) throws {
        try engine.close()
        try engine.open()
        let references = try engine.references(for: keys)
        let lookups = try measure { try engine.lookUp(references) }
        results.figures[.randomFaults] = Double(keys.count) / lookups.seconds
        results.checksums["W4"] = lookups.result
        log("\(E.name) W4 \(keys.count) lookups in \(formatFigure(lookups.seconds)) s")
    }

    /// W6: every one of the `employeeCount` employees, reading notes; `verb` says how in the
    /// progress ("scanned", "fetched").
    public static func scanNotes<E: WorkloadEngine, Metric: BenchMetric>(
        _ engine: E, employeeCount n: Int, verb: String, into results: inout EngineResults<Metric>
    ) throws {
        let scan = try measure { try engine.scanNotes() }
        guard scan.result.count == n else {
            throw BenchError("\(E.name) W6: \(verb) \(scan.result.count) employees, expected \(n)")
        }
        results.figures[.fullScan] = Double(scan.result.count) / scan.seconds
        results.checksums["W6"] = scan.result.notesBytes
        log("\(E.name) W6 \(verb) \(n) in \(formatFigure(scan.seconds)) s")
    }

    /// W5: the predicate fetch (`salary > 150_000 AND active == true`, salary descending, limit
    /// 100) and then the same predicate counted, ``predicateRepetitions`` times each; both are
    /// checked against `dataset`, which the store must hold unchanged.
    public static func predicateQueries<E: WorkloadEngine, Metric: BenchMetric>(
        _ engine: E, _ dataset: Dataset, into results: inout EngineResults<Metric>
    ) throws {
        let minimum = predicateMinimumSalary
        let matching = dataset.employees.filter { $0.active && $0.salary > minimum }.map(\.salary)
        let expectedTop = Array(matching.sorted(by: >).prefix(predicateFetchLimit))

        let fetch = try measure {
            try engine.fetchTopEarners(above: minimum, limit: predicateFetchLimit, repetitions: predicateRepetitions)
        }
        let fetched = fetch.result
        guard fetched.allSatisfy({ $0.active && $0.salary > minimum }), fetched.map(\.salary) == expectedTop else {
            throw BenchError(
                "\(E.name) W5: fetched \(fetched.count) employees \(fetched.prefix(5).map(\.salary))…, expected "
                    + "\(expectedTop.count) active ones from \(expectedTop.prefix(5))… down")
        }
        let count = try measure { try engine.countActiveEarners(above: minimum, repetitions: predicateRepetitions) }
        guard count.result == matching.count else {
            throw BenchError("\(E.name) W5: counted \(count.result) employees, expected \(matching.count)")
        }
        results.figures[.predicateFetch] = Double(predicateRepetitions) / fetch.seconds
        results.figures[.predicateCount] = Double(predicateRepetitions) / count.seconds
        results.details["W5.fetchMs"] = fetch.seconds * 1000 / Double(predicateRepetitions)
        results.details["W5.countMs"] = count.seconds * 1000 / Double(predicateRepetitions)
        results.checksums["W5.fetchSalarySum"] = fetched.reduce(0) { $0 &+ $1.salary }
        results.checksums["W5.count"] = Int64(count.result)
        log(
            "\(E.name) W5 \(predicateRepetitions) fetches of the top \(fetched.count) in \(formatFigure(fetch.seconds)) s, "
                + "\(predicateRepetitions) counts (\(count.result) of \(dataset.employees.count) match, "
                + "\(formatFigure(100 * Double(count.result) / Double(max(1, dataset.employees.count))))%) "
                + "in \(formatFigure(count.seconds)) s")
    }
}
