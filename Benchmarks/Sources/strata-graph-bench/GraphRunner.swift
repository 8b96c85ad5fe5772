import Foundation
import Workloads

/// The object-graph workloads strata-graph-bench runs.
enum GraphWorkload: String, CaseIterable, Sendable {
    case w1 = "W1", w3 = "W3", w4 = "W4", w6 = "W6", w7 = "W7"
}

/// One figure of the report, measured for each engine.
enum GraphMetric: String, CaseIterable, Codable, Sendable {
    case bulkInsert = "W1"
    case coldOpen = "W3"
    case randomFaults = "W4"
    case fullScan = "W6"
    case update = "W7"

    /// Which way is better.
    enum Better: String, Codable { case higher, lower }

    var title: String {
        switch self {
        case .bulkInsert: "W1 bulk insert, one save"
        case .coldOpen: "W3 cold open to first object (median of 5)"
        case .randomFaults: "W4 random faults (median of 3)"
        case .fullScan: "W6 fetch all, read notes (median of 3)"
        case .update: "W7 update 10% by ID, one save"
        }
    }

    var unit: String {
        switch self {
        case .bulkInsert, .fullScan, .update: "objects/s"
        case .coldOpen: "ms"
        case .randomFaults: "lookups/s"
        }
    }

    var better: Better { self == .coldOpen ? .lower : .higher }
}

/// What one engine measured: the figures, details behind them, and checksums both must share.
struct EngineResults: Sendable {
    var figures: [GraphMetric: Double] = [:]
    var details: [String: Double] = [:]
    var checksums: [String: Int64] = [:]
}

/// Runs the workloads against one engine, on a fresh store under `root`, in the order
/// W1, W3, W4, W6, W7 (W1 always runs: the others need its data).
struct GraphRunner {
    let dataset: Dataset
    let plan: WorkloadPlan
    let workloads: Set<GraphWorkload>
    let durability: GraphDurability
    let access: GraphAccess
    let root: URL

    /// W3 is repeated this many times; the median is reported.
    static let coldOpenRepetitions = 5
    /// W4's number of lookups.
    static let lookupCount = 100_000
    /// W4 and W6 (which change nothing) are repeated this many times; the median is reported.
    static let readRepetitions = 3

    private var objectCount: Int { dataset.departments.count + dataset.employees.count }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("  \(message)\n".utf8))
    }

    func run<E: GraphEngine>(_: E.Type, into results: inout EngineResults) throws {
        let directory = root.appendingPathComponent(E.name.lowercased())
        try? FileManager.default.removeItem(at: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Write back what earlier runs left dirty, so that no engine's fsyncs pay for another's.
        sync()
        let engine = E(directory: directory, durability: durability, access: access)
        try engine.open()
        defer { try? engine.close() }
        try run(engine, into: &results)
    }

    private func run<E: GraphEngine>(_ engine: E, into results: inout EngineResults) throws {
        let n = dataset.employees.count

        // W1: every department and employee as objects, related, one save.
        let insert = try measure { try engine.insertAll(dataset) }
        try engine.didInsertAll()
        if workloads.contains(.w1) {
            results.figures[.bulkInsert] = Double(objectCount) / insert.seconds
            results.details["W1.seconds"] = insert.seconds
        }
        log("\(E.name) W1 \(objectCount) objects in \(GraphReport.format(insert.seconds)) s")
        let count = try measure { try engine.employeeCount() }
        guard count.result == n else {
            throw BenchError("\(E.name) W1: \(count.result) employees after the save, expected \(n)")
        }
        results.checksums["W1.employees"] = Int64(count.result)
        results.details["W1.countRequestMs"] = count.seconds * 1000
        let census = try measure { try engine.census() }
        results.checksums["W1.department1Employees"] = Int64(census.result.firstDepartmentEmployees)
        results.checksums["W1.salarySum"] = census.result.salarySum
        log("\(E.name) W1 checked: count request \(GraphReport.format(count.seconds * 1000)) ms; "
            + "relationship and salary sum \(GraphReport.format(census.seconds)) s")

        // W3: close, then open and read one employee by ID, timed together.
        if workloads.contains(.w3) {
            let key = plan.coldOpenKey()
            var samples: [Double] = []
            var opens: [Double] = []
            var reads: [Double] = []
            for _ in 0..<Self.coldOpenRepetitions {
                try engine.close()
                // Timed as one span; the split (open, then first read) goes to the details.
                let start = monotonicNanoseconds()
                try engine.open()
                let opened = monotonicNanoseconds()
                let first = try engine.readNameAndSalary(key)
                let end = monotonicNanoseconds()
                guard let first else { throw BenchError("\(E.name) W3: employee \(key) is missing") }
                results.checksums["W3"] = first.salary &+ Int64(first.name.utf8.count)
                samples.append(Double(end - start) / 1e6)
                opens.append(Double(opened - start) / 1e6)
                reads.append(Double(end - opened) / 1e6)
            }
            results.figures[.coldOpen] = samples.median
            results.details["W3.minMs"] = samples.min()
            results.details["W3.maxMs"] = samples.max()
            results.details["W3.openMedianMs"] = opens.median
            results.details["W3.firstReadMedianMs"] = reads.median
            log("\(E.name) W3 cold opens (ms): \(samples.map(GraphReport.format).joined(separator: ", ")) "
                + "= open \(opens.map(GraphReport.format).joined(separator: ", ")) "
                + "+ first read \(reads.map(GraphReport.format).joined(separator: ", "))")
        }

        // W4: random faults on a freshly opened store, references resolved before the clock starts.
        if workloads.contains(.w4) {
            let keys = plan.lookupKeys(count: Self.lookupCount)
            var rates: [Double] = []
            for _ in 0..<Self.readRepetitions {
                try engine.close()
                try engine.open()
                let references = try engine.references(for: keys)
                let lookups = try measure { try engine.lookUp(references) }
                rates.append(Double(keys.count) / lookups.seconds)
                results.checksums["W4"] = lookups.result
            }
            results.figures[.randomFaults] = rates.median
            log("\(E.name) W4 \(keys.count) lookups (/s): \(rates.map(GraphReport.format).joined(separator: ", "))")
        }

        // W6: every employee, reading notes.
        if workloads.contains(.w6) {
            var rates: [Double] = []
            for _ in 0..<Self.readRepetitions {
                let scan = try measure { try engine.scanNotes() }
                guard scan.result.count == n else {
                    throw BenchError("\(E.name) W6: fetched \(scan.result.count) employees, expected \(n)")
                }
                rates.append(Double(scan.result.count) / scan.seconds)
                results.checksums["W6"] = scan.result.notesBytes
            }
            results.figures[.fullScan] = rates.median
            log("\(E.name) W6 fetched \(n) (/s): \(rates.map(GraphReport.format).joined(separator: ", "))")
        }

        // W7: new salaries for 10% of the employees, fetched by ID, one save.
        if workloads.contains(.w7) {
            let changes = plan.salaryChanges()
            let references = try engine.references(for: changes.map(\.key))
            let update = try measure { try engine.updateSalaries(references, salaries: changes.map(\.salary)) }
            let probe = changes[changes.count / 2]
            guard try engine.readNameAndSalary(probe.key)?.salary == probe.salary else {
                throw BenchError("\(E.name) W7: employee \(probe.key) does not have its new salary")
            }
            let after = try engine.census()
            results.checksums["W7.salarySum"] = after.salarySum
            results.figures[.update] = Double(changes.count) / update.seconds
            results.details["W7.seconds"] = update.seconds
            log("\(E.name) W7 \(changes.count) updates in \(GraphReport.format(update.seconds)) s")
        }
    }
}
