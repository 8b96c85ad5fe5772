import BenchSupport
import Foundation
import Workloads

/// The engine-level workloads of WORKLOADS.md that strata-bench runs.
enum Workload: String, CaseIterable, Sendable {
    case w1 = "W1", w2 = "W2", w3 = "W3", w4 = "W4", w5 = "W5", w6 = "W6", w7 = "W7", w8 = "W8", w10 = "W10"
}

/// Runs the workloads against one engine and records its figures.
///
/// Every group of workloads gets a fresh directory under `root`, removed when the group ends.
struct WorkloadRunner {
    let dataset: Dataset
    let plan: WorkloadPlan
    let workloads: Set<Workload>
    let root: URL

    /// W2: 2,000 saves of 10 new employees each.
    static let smallSaveCount = 2_000
    static let smallSaveSize = 10
    /// The workloads that run on the store W1 filled, in this order.
    private static let mainGroup: [Workload] = [.w1, .w10, .w3, .w4, .w5, .w6, .w7, .w8]

    var runsMainGroup: Bool { !workloads.isDisjoint(with: Self.mainGroup) }

    private var objectCount: Int { dataset.departments.count + dataset.employees.count }

    private func log(_ message: String) {
        WorkloadSteps.log(message)
    }

    private func withFreshEngine<E: BenchEngine>(
        _: E.Type, group: String, durability: BenchDurability, _ body: (E) throws -> Void
    ) throws {
        try WorkloadSteps.withFreshEngine(
            at: root.appendingPathComponent("\(E.name.lowercased())-\(group)"),
            { E(directory: $0, durability: durability) }, body)
    }

    /// W1, W10, W3, W4, W5, W6, W7 and W8, in that order, on one durable store.
    func runMainGroup<E: BenchEngine>(_ type: E.Type, into results: inout EngineResults<Metric>) throws {
        try withFreshEngine(type, group: "main", durability: .durable) { engine in
            try runMainGroup(engine, into: &results)
        }
    }

    private func runMainGroup<E: BenchEngine>(_ engine: E, into results: inout EngineResults<Metric>) throws {
        // W1: every department and employee, one save. Always run: the rest needs the data.
        try WorkloadSteps.bulkInsert(engine, dataset, record: workloads.contains(.w1), into: &results)

        // W10: the store's files after W1.
        if workloads.contains(.w10) {
            let bytes = try engine.settledBytesOnDisk()
            results.figures[.size] = Double(bytes) / Double(objectCount)
            results.details["W10.bytes"] = Double(bytes)
        }

        // The engine's own storage figures, and an open that replays the whole log.
        if workloads.contains(.w3) {
            for (name, value) in try engine.storageDetails(readKey: plan.coldOpenKey()) {
                results.details[name] = value
                log("\(E.name) \(name): \(formatFigure(value))")
            }
        }

        // W3: close, then open and read one key, timed together.
        if workloads.contains(.w3) {
            let key = plan.coldOpenKey()
            var samples: [Double] = []
            for _ in 0..<WorkloadSteps.coldOpenRepetitions {
                try engine.close()
                let open = try measure {
                    try engine.open()
                    return try engine.readNameAndSalary(key)
                }
                guard let first = open.result else { throw BenchError("\(E.name) W3: employee \(key) is missing") }
                results.checksums["W3"] = first.salary
                samples.append(open.seconds * 1000)
            }
            results.figures[.coldOpen] = samples.median
            results.details["W3.minMs"] = samples.min()
            results.details["W3.maxMs"] = samples.max()
            log("\(E.name) W3 cold opens (ms): \(samples.map(formatFigure).joined(separator: ", "))")
        }

        // W4: random lookups on a freshly opened store.
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
            try WorkloadSteps.scanNotes(engine, employeeCount: dataset.employees.count, verb: "scanned", into: &results)
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
        let readLoop = ConcurrentReadLoop(
            reader: reader, keys: plan.concurrentReadKeys(count: WorkloadSteps.lookupCount))
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

        let after = try engine.settledBytesOnDisk()
        let during = samples.filter { $0.start >= compactionStart && $0.start < compactionEnd }.map(\.latency)
        results.figures[.compactionRate] = Double(before) / 1e6 / compaction.seconds
        results.figures[.compactionReadP99] = during.percentile(0.99).map { Double($0) / 1e6 } ?? .nan
        results.figures[.compactionSize] = Double(after) / Double(before)
        results.details["W8.bytesBefore"] = Double(before)
        results.details["W8.bytesAfter"] = Double(after)
        results.details["W8.compactSeconds"] = compaction.seconds
        results.details["W8.readsDuringCompaction"] = Double(during.count)
        results.details["W8.readP50Ms"] = during.percentile(0.5).map { Double($0) / 1e6 } ?? .nan
        results.details["W8.readMaxMs"] = during.max().map { Double($0) / 1e6 } ?? .nan
        for (name, value) in compaction.result {
            results.details["W8.\(name)"] = value
        }
        log(
            "\(E.name) W8 deleted \(deleted.count) in \(formatFigure(delete.seconds)) s, compacted "
                + "\(before) -> \(after) bytes in \(formatFigure(compaction.seconds)) s, "
                + "\(during.count) reads during compaction")
    }

    /// W2: 2,000 saves of 10 new employees each, on a store that holds only the departments.
    func runSmallSaves<E: BenchEngine>(
        _ type: E.Type, durability: BenchDurability, into results: inout EngineResults<Metric>
    ) throws {
        let employees = dataset.additionalEmployees(count: Self.smallSaveCount * Self.smallSaveSize)
        try withFreshEngine(type, group: "w2-\(durability)", durability: durability) { engine in
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
