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
        case .coldOpen: "W3 cold open to first object"
        case .randomFaults: "W4 random faults"
        case .predicateFetch: "W5 fetch salary > 150k AND active, top 100 (x50)"
        case .predicateCount: "W5 count salary > 150k AND active (x50)"
        case .fullScan: "W6 fetch all, read notes"
        case .update: "W7 update 10% by ID, one save"
        case .fullScanPeakMemory: "W6 peak memory growth during the fetch (max)"
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
        [
            .coldOpen, .fullScanPeakMemory, .changeTracking, .historyTrackingCostW1, .historyTrackingCostW2,
            .historyTrackingCostW7,
        ]
        .contains(self) ? .lower : .higher
    }

    /// Peak memory is the largest round: what a user must provision for. Every other figure is the
    /// median of its rounds.
    var summary: RoundSummary { self == .fullScanPeakMemory ? .maximum : .median }
}

/// What the workloads on fresh stores need of an engine: every engine of strata-graph-bench.
typealias FullGraphEngine = HistoryEngine & BatchRequestEngine & ChangeTrackingEngine

/// Runs the workloads, each for a number of rounds with the engines alternating
/// (``SideBySideRounds``), and records the figures.
///
/// Every store gets a fresh directory under `root`, removed when its workloads end.
struct GraphRunner {
    let dataset: Dataset
    let plan: WorkloadPlan
    let workloads: Set<GraphWorkload>
    let durability: BenchDurability
    let access: GraphAccess
    let predicateStyle: PredicateStyle
    let root: URL

    /// The workloads that write: each round on a fresh store, in this order.
    static let writeGroup: [GraphWorkload] = [.w1, .w7]
    /// The workloads that only read: on one store per engine, loaded once.
    static let readGroup: [GraphWorkload] = [.w3, .w4, .w5, .w6]

    private func log(_ message: String) {
        WorkloadSteps.log(message)
    }

    /// The engine type under test for `engine`.
    static func engineType(_ engine: EngineID) -> any FullGraphEngine.Type {
        switch engine {
        case .strata: StrataGraphEngine.self
        case .sqlite: SQLiteRecordEngine.self
        }
    }

    /// Makes an engine of type `E` on a fresh directory named after `store`, opens it, runs `body`
    /// and closes it. Saves are durable as `durability` says, unless `durability` is given.
    func withFreshEngine<E: GraphEngine>(
        _: E.Type, store: String, durability: BenchDurability? = nil, _ body: (E) throws -> Void
    ) throws {
        try WorkloadSteps.withFreshEngine(
            at: root.appendingPathComponent("\(E.name.lowercased())-\(store)"),
            {
                E(
                    directory: $0, durability: durability ?? self.durability, access: access,
                    predicateStyle: predicateStyle)
            }, body)
    }

    /// Runs `body` with one store for each of `engines`, each loaded with the data set once,
    /// untimed, and all open: the setup of workloads whose rounds repeat on the same store.
    func withLoadedEngines(
        _ engines: [EngineID], store: String, _ body: ([EngineID: any FullGraphEngine]) throws -> Void
    ) throws {
        let open = { (engine: EngineID, body: (any FullGraphEngine) throws -> Void) throws in
            try self.withLoadedEngine(Self.engineType(engine), store: store, body)
        }
        try WorkloadSteps.withEngines(engines, open, body)
    }

    private func withLoadedEngine<E: FullGraphEngine>(
        _ type: E.Type, store: String, _ body: (any FullGraphEngine) throws -> Void
    ) throws {
        try withFreshEngine(type, store: store) { engine in
            try WorkloadSteps.load(engine, dataset)
            try body(engine)
        }
    }

    /// W1 and W7 (those selected): each round on a fresh store of each engine, since W1 needs an
    /// empty store and W7 changes what it finds.
    func runWrites(into results: inout SideBySideRounds<GraphMetric>) throws {
        let selected = Self.writeGroup.filter(workloads.contains)
        guard !selected.isEmpty else { return }
        try results.alternate(selected.map(\.rawValue).joined(separator: ", ")) { engine, _, measured in
            try runWriteRound(Self.engineType(engine), into: &measured)
        }
    }

    /// One round of W1 (with its checks) and W7 (when selected) on a fresh store.
    private func runWriteRound<E: GraphEngine>(_ type: E.Type, into results: inout EngineResults<GraphMetric>) throws {
        try withFreshEngine(type, store: "writes") { engine in
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
            log(
                "\(E.name) W1 checked: count request \(formatFigure(count.seconds * 1000)) ms; "
                    + "relationship and salary sum \(formatFigure(census.seconds)) s")

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

    /// W3, W4, W5 and W6 (those selected), in that order, each for every round before the next.
    ///
    /// They change nothing, and loading the data set is their expensive setup: each engine's
    /// store is loaded once (untimed) and stays open while the timed parts repeat on it.
    func runReads(into results: inout SideBySideRounds<GraphMetric>) throws {
        guard !workloads.isDisjoint(with: Self.readGroup) else { return }
        try withLoadedEngines(results.engines, store: "reads") { engines in
            if workloads.contains(.w3) {
                let key = plan.coldOpenKey()
                try results.alternate("W3") { engine, _, measured in
                    try WorkloadSteps.coldOpen(engines[engine]!, key: key, into: &measured)
                }
            }
            if workloads.contains(.w4) {
                let keys = plan.lookupKeys(count: WorkloadSteps.lookupCount)
                try results.alternate("W4") { engine, _, measured in
                    try WorkloadSteps.randomFaults(engines[engine]!, keys: keys, into: &measured)
                }
            }
            if workloads.contains(.w5) {
                try results.alternate("W5") { engine, _, measured in
                    try WorkloadSteps.predicateQueries(engines[engine]!, dataset, into: &measured)
                }
            }
            if workloads.contains(.w6) {
                let n = dataset.employees.count
                try results.alternate("W6") { engine, _, measured in
                    let scanned = engines[engine]!
                    let memory = try PeakMemory.measure {
                        try WorkloadSteps.scanNotes(scanned, employeeCount: n, verb: "fetched", into: &measured)
                    }
                    memory.record(as: .fullScanPeakMemory, detail: "W6", into: &measured)
                    log(
                        "\(engine.rawValue) W6 peak memory growth \(formatFigure(memory.growthMB)) MB "
                            + "(peak RSS \(formatFigure(memory.peakMB)) MB)")
                }
            }
        }
    }
}
