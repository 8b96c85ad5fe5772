import BenchSupport
import Foundation
import Workloads

/// The object-graph workloads strata-graph-bench runs.
enum GraphWorkload: String, CaseIterable, Sendable {
    case w1 = "W1", w3 = "W3", w4 = "W4", w5 = "W5", w6 = "W6", w7 = "W7"
    case w2 = "W2", b1 = "B1", b2 = "B2", b3 = "B3", f1 = "F1", w9 = "W9"
}

/// One figure of strata-graph-bench's report, measured for each engine.
enum GraphMetric: String, CaseIterable, BenchMetric {
    case bulkInsert = "W1"
    case coldOpen = "W3"
    case randomFaults = "W4"
    case predicateFetch = "W5.fetch"
    case predicateCount = "W5.count"
    case fullScan = "W6"
    case update = "W7"
    case fullScanPeakMemory = "W6.peakMemory"
    case smallSavesDurable = "W2.durable"
    case smallSavesRelaxed = "W2.relaxed"
    case smallSavesConcurrent = "W2.concurrent16"
    case batchInsert = "B1.insert"
    case batchUpdate = "B2.update"
    case batchDelete = "B3.delete"
    case changeTracking = "F1.frc"
    case historyFetch = "W9"
    case historyFetchChanges = "W9.fetchChanges"
    case historyReplay = "W9.replay"
    case historyReplayChanges = "W9.replayChanges"
    case historyTrackingCostW1 = "W9.trackingCost.W1"
    case historyTrackingCostW2 = "W9.trackingCost.W2"
    case historyTrackingCostW7 = "W9.trackingCost.W7"

    var title: String {
        switch self {
        case .bulkInsert: "W1 bulk insert, one save"
        case .coldOpen: "W3 cold open to first object (median of 5)"
        case .randomFaults: "W4 random faults (median of 3)"
        case .predicateFetch: "W5 fetch salary > 150k AND active, top 100 (x50)"
        case .predicateCount: "W5 count salary > 150k AND active (x50)"
        case .fullScan: "W6 fetch all, read notes (median of 3)"
        case .update: "W7 update 10% by ID, one save"
        case .fullScanPeakMemory: "W6 peak memory growth during the fetches"
        case .smallSavesDurable: "W2 2,000 saves of 10 new objects, durable"
        case .smallSavesRelaxed: "W2 2,000 saves of 10 new objects, relaxed"
        case .smallSavesConcurrent: "W2 the 2,000 saves from 16 writers, durable"
        case .batchInsert: "B1 batch insert of N rows from ready input"
        case .batchUpdate: "B2 batch update of 90% of N rows"
        case .batchDelete: "B3 batch delete of N rows"
        case .changeTracking: "F1 save with change tracking over N"
        case .historyFetch: "W9 fetch history after W1 (transactions)"
        case .historyFetchChanges: "W9 fetch history after W1 (changes)"
        case .historyReplay: "W9 replay into a replica (transactions)"
        case .historyReplayChanges: "W9 replay into a replica (changes)"
        case .historyTrackingCostW1: "W9 W1 time with / without history tracking"
        case .historyTrackingCostW2: "W9 W2 time with / without history tracking"
        case .historyTrackingCostW7: "W9 W7 time with / without history tracking"
        }
    }

    var unit: String {
        switch self {
        case .bulkInsert, .fullScan, .update: "objects/s"
        case .batchInsert, .batchUpdate, .batchDelete: "rows/s"
        case .smallSavesDurable, .smallSavesRelaxed, .smallSavesConcurrent: "saves/s"
        case .fullScanPeakMemory: "MB"
        case .coldOpen, .changeTracking: "ms"
        case .randomFaults: "lookups/s"
        case .predicateFetch, .predicateCount: "queries/s"
        case .historyFetch, .historyReplay: "transactions/s"
        case .historyFetchChanges, .historyReplayChanges: "changes/s"
        case .historyTrackingCostW1, .historyTrackingCostW2, .historyTrackingCostW7: "x time"
        }
    }

    var better: Better {
        [.coldOpen, .fullScanPeakMemory, .changeTracking, .historyTrackingCostW1, .historyTrackingCostW2, .historyTrackingCostW7]
            .contains(self) ? .lower : .higher
    }
}

/// Runs the workloads against one engine, on a fresh store under `root`, in the order
/// W1, W3, W4, W5, W6, W7 (W1 always runs: the others need its data).
struct GraphRunner {
    let dataset: Dataset
    let plan: WorkloadPlan
    let workloads: Set<GraphWorkload>
    let durability: BenchDurability
    let access: GraphAccess
    let predicateStyle: PredicateStyle
    let root: URL

    private func log(_ message: String) {
        WorkloadSteps.log(message)
    }

    func run<E: GraphEngine>(_: E.Type, into results: inout EngineResults<GraphMetric>) throws {
        try WorkloadSteps.withFreshEngine(
            at: root.appendingPathComponent(E.name.lowercased()),
            { E(directory: $0, durability: durability, access: access, predicateStyle: predicateStyle) }
        ) { engine in
            try run(engine, into: &results)
        }
    }

    private func run<E: GraphEngine>(_ engine: E, into results: inout EngineResults<GraphMetric>) throws {
        let n = dataset.employees.count

        // W1: every department and employee as objects, related, one save.
        try WorkloadSteps.bulkInsert(engine, dataset, record: workloads.contains(.w1), into: &results)
        let count = try measure { try engine.employeeCount() }
        guard count.result == n else {
            throw BenchError("\(E.name) W1: \(count.result) employees after the save, expected \(n)")
        }
        results.checksums["W1.employees"] = Int64(count.result)
        results.details["W1.countRequestMs"] = count.seconds * 1000
        let census = try measure { try engine.census() }
        results.checksums["W1.department1Employees"] = Int64(census.result.firstDepartmentEmployees)
        results.checksums["W1.salarySum"] = census.result.salarySum
        log("\(E.name) W1 checked: count request \(formatFigure(count.seconds * 1000)) ms; "
            + "relationship and salary sum \(formatFigure(census.seconds)) s")

        // W3: close, then open and read one employee by ID, timed together.
        if workloads.contains(.w3) {
            let key = plan.coldOpenKey()
            var samples: [Double] = []
            var opens: [Double] = []
            var reads: [Double] = []
            for _ in 0..<WorkloadSteps.coldOpenRepetitions {
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
            log("\(E.name) W3 cold opens (ms): \(samples.map(formatFigure).joined(separator: ", ")) "
                + "= open \(opens.map(formatFigure).joined(separator: ", ")) "
                + "+ first read \(reads.map(formatFigure).joined(separator: ", "))")
        }

        // W4: random faults on a freshly opened store, references resolved before the clock starts.
        if workloads.contains(.w4) {
            let keys = plan.lookupKeys(count: WorkloadSteps.lookupCount)
            try WorkloadSteps.randomFaults(engine, keys: keys, into: &results)
        }

        // W5: the predicate fetch and count, before W7 changes salaries.
        if workloads.contains(.w5) {
            try WorkloadSteps.predicateQueries(engine, dataset, into: &results)
        }

        // W6: every employee, reading notes.
        if workloads.contains(.w6) {
            let memory = try PeakMemory.measure {
                try WorkloadSteps.scanNotes(engine, employeeCount: n, verb: "fetched", into: &results)
            }
            memory.record(as: .fullScanPeakMemory, detail: "W6", into: &results)
            log("\(E.name) W6 peak memory growth \(formatFigure(memory.growthMB)) MB (peak RSS \(formatFigure(memory.peakMB)) MB)")
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
            log("\(E.name) W7 \(changes.count) updates in \(formatFigure(update.seconds)) s")
        }
    }
}
