import BenchSupport
import Foundation
import Workloads

/// The engine-level workloads of WORKLOADS.md that strata-bench runs.
enum Workload: String, CaseIterable, Sendable {
    case w1 = "W1", w2 = "W2", w3 = "W3", w4 = "W4", w5 = "W5", w6 = "W6", w7 = "W7", w8 = "W8", w10 = "W10"
}

/// Runs the workloads, each for a number of rounds with the engines alternating
/// (``BenchRounds``), and records the figures.
///
/// Every store gets a fresh directory under `root`, removed when its workloads end.
struct WorkloadRunner {
    let dataset: Dataset
    let plan: WorkloadPlan
    let workloads: Set<Workload>
    let root: URL

    /// W2: 2,000 saves of 10 new employees each.
    static let smallSaveCount = 2_000
    static let smallSaveSize = 10
    /// The workloads that write: each round on a fresh store, in this order.
    static let writeGroup: [Workload] = [.w1, .w10, .w7, .w8]
    /// The workloads that only read: on one store per engine, loaded once.
    static let readGroup: [Workload] = [.w3, .w4, .w5, .w6]

    /// W8: how long the reader runs alone before compaction, for the idle p99.
    static let idleReadMicroseconds: UInt32 = 250_000

    private var objectCount: Int { dataset.departments.count + dataset.employees.count }

    private func log(_ message: String) {
        WorkloadSteps.log(message)
    }

    /// The engine type under test for `engine`.
    private static func engineType(_ engine: StoreEngineID) -> any BenchEngine.Type {
        switch engine {
        case .strata: StrataEngine.self
        case .sqlite: SQLiteEngine.self
        case .rocksdb: RocksDBEngine.self
        case .lmdb: LMDBEngine.self
        }
    }

    /// Makes an engine of type `E` on a fresh directory named after `store`, opens it, runs `body`
    /// and closes it.
    private func withFreshEngine<E: BenchEngine>(
        _: E.Type, store: String, durability: BenchDurability, _ body: (E) throws -> Void
    ) throws {
        try WorkloadSteps.withFreshEngine(
            at: root.appendingPathComponent("\(E.name.lowercased())-\(store)"),
            { E(directory: $0, durability: durability) }, body)
    }

    /// W1, W10, W7 and W8, in that order: each round on a fresh durable store of each engine,
    /// since W1 needs an empty store and W7 and W8 change what they find.
    func runWrites(into results: inout BenchRounds) throws {
        let selected = Self.writeGroup.filter(workloads.contains)
        guard !selected.isEmpty else { return }
        try results.alternate(selected.map(\.rawValue).joined(separator: ", ")) { engine, _, measured in
            try runWriteRound(Self.engineType(engine), into: &measured)
        }
    }

    /// One round of W1, W10, W7 and W8 (those selected; W1's insert always runs) on a fresh store.
    private func runWriteRound<E: BenchEngine>(_ type: E.Type, into results: inout EngineResults<Metric>) throws {
        try withFreshEngine(type, store: "writes", durability: .durable) { engine in
            // W1: every department and employee, one save. Always run: the rest needs the data.
            try WorkloadSteps.bulkInsert(engine, dataset, record: workloads.contains(.w1), into: &results)

            // W10: the store's files after W1.
            if workloads.contains(.w10) {
                let bytes = try engine.settledBytesOnDisk()
                results.figures[.size] = Double(bytes) / Double(objectCount)
                results.details["W10.bytes"] = Double(bytes)
                let kinds = try DiskUsage.bytesByKind(at: engine.filesURL)
                for (kind, kindBytes) in kinds {
                    results.details["W10.bytesPerObject.\(kind)"] = Double(kindBytes) / Double(objectCount)
                }
                log(
                    "\(E.name) W10 \(bytes) bytes: "
                        + kinds.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }

            // W7: new salaries for 10% of the employees, one save.
            if workloads.contains(.w7) {
                let changes = plan.salaryChanges()
                let update = try measure { try engine.updateSalaries(changes) }
                let probe = changes[changes.count / 2]
                guard try engine.readNameAndSalary(probe.key)?.salary == probe.salary else {
                    throw BenchError("\(E.name) W7: employee \(probe.key) does not have its new salary")
                }
                results.figures[.update] = Double(changes.count) / update.seconds
                log("\(E.name) W7 \(changes.count) updates in \(formatFigure(update.seconds)) s")
            }

            if workloads.contains(.w8) {
                try runDeleteAndCompact(engine, into: &results)
            }
        }
    }

    /// W3, W4, W5 and W6 (those selected), in that order, each for every round before the next.
    ///
    /// They change nothing, and loading the data set is their expensive setup: each engine's
    /// store is loaded once (untimed) and stays open while the timed parts repeat on it.
    func runReads(into results: inout BenchRounds) throws {
        guard !workloads.isDisjoint(with: Self.readGroup) else { return }
        let open = { (engine: StoreEngineID, body: (any BenchEngine) throws -> Void) throws in
            try self.withLoadedEngine(Self.engineType(engine), body)
        }
        try WorkloadSteps.withEngines(results.engines, open) { engines in
            if workloads.contains(.w3) {
                let key = plan.coldOpenKey()
                try results.alternate("W3") { engine, round, measured in
                    // The engine's own storage figures, and an open that replays the whole log: once.
                    if round == 0 {
                        for (name, value) in try engines[engine]!.storageDetails(readKey: key) {
                            measured.details[name] = value
                            log("\(engine.rawValue) \(name): \(formatFigure(value))")
                        }
                    }
                    try WorkloadSteps.coldOpen(engines[engine]!, key: key, into: &measured)
                }
            }
            if workloads.contains(.w4) {
                let keys = plan.lookupKeys(count: WorkloadSteps.lookupCount)
                try results.alternate("W4") { engine, _, measured in
                    try WorkloadSteps.randomFaults(engines[engine]!, keys: keys, into: &measured)
                }
            }
            // Only the engines with an index on salary: the key-value baselines have none.
            let answering = results.engines.filter { Self.engineType($0).answersPredicateQueries }
            if workloads.contains(.w5), !answering.isEmpty {
                try results.alternate("W5", only: answering) { engine, _, measured in
                    try WorkloadSteps.predicateQueries(engines[engine]!, dataset, into: &measured)
                }
            }
            if workloads.contains(.w6) {
                let n = dataset.employees.count
                try results.alternate("W6") { engine, _, measured in
                    try WorkloadSteps.scanNotes(engines[engine]!, employeeCount: n, verb: "scanned", into: &measured)
                }
            }
        }
    }

    /// Opens a fresh durable store of `E`, loads the data set into it (untimed), and runs `body`.
    private func withLoadedEngine<E: BenchEngine>(_ type: E.Type, _ body: (any BenchEngine) throws -> Void) throws {
        try withFreshEngine(type, store: "reads", durability: .durable) { engine in
            try WorkloadSteps.load(engine, dataset)
            try body(engine)
        }
    }

    /// W8: delete half of the employees in one save, then compact while another thread reads.
    private func runDeleteAndCompact<E: BenchEngine>(_ engine: E, into results: inout EngineResults<Metric>) throws {
        let n = dataset.employees.count
        let deleted = plan.deletedKeys()
        let delete = try measure { try engine.delete(deleted) }
        results.details["W8.deleteSeconds"] = delete.seconds
        let live = try engine.employeeCount()
        guard live == n - deleted.count else {
            throw BenchError("\(E.name) W8: \(live) employees after the delete, expected \(n - deleted.count)")
        }
        let before = try engine.settledBytesOnDisk()

        let reader = try engine.makeConcurrentReader()
        defer { try? reader.close() }
        let readKeys = plan.concurrentReadKeys(count: WorkloadSteps.lookupCount)
        // The same reads with nothing else running, for the p99 the reads during compaction
        // are held against.
        let idleLoop = ConcurrentReadLoop(reader: reader, keys: readKeys)
        idleLoop.start()
        usleep(Self.idleReadMicroseconds)
        let idle = try idleLoop.stop().map(\.latency)

        let readLoop = ConcurrentReadLoop(reader: reader, keys: readKeys)
        readLoop.start()
        let compactionStart = monotonicNanoseconds()
        let compaction: (result: [String: Double], seconds: Double)
        do {
            compaction = try measure { try engine.compact() }
        } catch {
            _ = try? readLoop.stop()
            throw error
        }
        let compactionEnd = monotonicNanoseconds()
        let samples = try readLoop.stop()
        try reader.close()
        // What compaction can only do once no reader is left (LMDB puts its copy in place).
        let finish = try measure { try engine.finishCompaction() }
        let compactionSeconds = compaction.seconds + finish.seconds

        let after = try engine.settledBytesOnDisk()
        let during = samples.filter { $0.start >= compactionStart && $0.start < compactionEnd }.map(\.latency)
        let readP99 = during.percentile(0.99).map { Double($0) / 1e6 } ?? .nan
        let idleP99 = idle.percentile(0.99).map { Double($0) / 1e6 } ?? .nan
        results.figures[.compactionRate] = Double(before) / 1e6 / compactionSeconds
        results.figures[.compactionReadP99] = readP99
        results.figures[.compactionSize] = Double(after) / Double(before)
        results.details["W8.bytesBefore"] = Double(before)
        results.details["W8.bytesAfter"] = Double(after)
        results.details["W8.compactSeconds"] = compactionSeconds
        results.details["W8.finishCompactionSeconds"] = finish.seconds
        results.details["W8.idleReadP99Ms"] = idleP99
        results.details["W8.readP99OverIdle"] = readP99 / idleP99
        results.details["W8.readsDuringCompaction"] = Double(during.count)
        results.details["W8.readP50Ms"] = during.percentile(0.5).map { Double($0) / 1e6 } ?? .nan
        results.details["W8.readMaxMs"] = during.max().map { Double($0) / 1e6 } ?? .nan
        for (name, value) in compaction.result {
            results.details["W8.\(name)"] = value
        }
        log(
            "\(E.name) W8 deleted \(deleted.count) in \(formatFigure(delete.seconds)) s, compacted "
                + "\(before) -> \(after) bytes in \(formatFigure(compactionSeconds)) s, "
                + "\(during.count) reads during compaction, p99 \(formatFigure(readP99)) ms "
                + "(idle \(formatFigure(idleP99)) ms)")
    }

    /// W2, durable and then relaxed: 2,000 saves of 10 new employees each, each round on a fresh
    /// store that holds only the departments.
    func runSmallSaves(into results: inout BenchRounds) throws {
        guard workloads.contains(.w2) else { return }
        let employees = dataset.additionalEmployees(count: Self.smallSaveCount * Self.smallSaveSize)
        for durability in BenchDurability.allCases {
            try results.alternate("W2 \(durability)") { engine, _, measured in
                try runSmallSaves(Self.engineType(engine), employees, durability: durability, into: &measured)
            }
        }
    }

    /// One round of W2 with `durability`: `employees` saved 10 at a time on a fresh store.
    private func runSmallSaves<E: BenchEngine>(
        _ type: E.Type, _ employees: [Employee], durability: BenchDurability, into results: inout EngineResults<Metric>
    ) throws {
        try withFreshEngine(type, store: "w2-\(durability)", durability: durability) { engine in
            try engine.insertDepartments(dataset.departments)
            var latencies: [UInt64] = []
            latencies.reserveCapacity(Self.smallSaveCount)
            let saves = try measure {
                for save in 0..<Self.smallSaveCount {
                    let first = save * Self.smallSaveSize
                    let start = monotonicNanoseconds()
                    try engine.insert(
                        employees[first..<first + Self.smallSaveSize], firstKey: Dataset.employeeKey(first))
                    latencies.append(monotonicNanoseconds() - start)
                }
            }
            let count = try engine.employeeCount()
            guard count == employees.count else {
                throw BenchError("\(E.name) W2: \(count) employees after the saves, expected \(employees.count)")
            }
            let metric: Metric = durability == .durable ? .smallSavesDurable : .smallSavesRelaxed
            results.figures[metric] = Double(Self.smallSaveCount) / saves.seconds
            results.details["W2.\(durability).saveP50Ms"] = latencies.percentile(0.5).map { Double($0) / 1e6 }
            results.details["W2.\(durability).saveP99Ms"] = latencies.percentile(0.99).map { Double($0) / 1e6 }
            log("\(E.name) W2 \(durability): \(Self.smallSaveCount) saves in \(formatFigure(saves.seconds)) s")
        }
    }
}
