import BenchSupport
import Foundation
import Workloads

/// W9, persistent history: on a fresh store that tracks history, W1, a history position, W2
/// (2,000 saves of 10 new employees from one writer, with the run's durability) and W7; then
/// every transaction after the position is fetched (`W9`, `W9.fetchChanges`) and replayed into
/// a replica of the same model (`W9.replay`, `W9.replayChanges`). The same W1, W2 and W7 on
/// other fresh stores that do not track history give what tracking costs
/// (`W9.trackingCost.W1`, `.W2`, `.W7`: the time with tracking over the time without, so 1.15
/// means tracking adds 15%). Each round runs a store without tracking and one with it, in
/// alternating order from round to round, and fetches and replays the tracked one.
///
/// The replica starts empty; the history through the position (W1) is applied to it first,
/// untimed, because W7 updates employees W1 inserted; the timed replay applies the transactions
/// after the position, the ones the fetch returned.
protocol HistoryEngine: SmallSavesEngine {
    /// A position in the store's history: a `PersistentHistoryToken` for Strata, the id of the
    /// last change row for SQLite.
    associatedtype HistoryPosition

    /// Untimed, on the open, empty store: starts tracking history (Strata recreates the store with
    /// `PersistentHistoryTrackingKey` set; SQLite creates the change table and its triggers).
    func startTrackingHistory() throws
    /// Untimed: the position after the last committed transaction.
    func currentHistoryPosition() throws -> HistoryPosition
    /// Fetches every transaction committed after `position`, with its changes and their values;
    /// returns how many transactions and changes it fetched.
    func fetchHistory(after position: HistoryPosition) throws -> (transactions: Int, changes: Int)
    /// Untimed: applies to `replica` (open, empty, tracking history) the history through
    /// `position`, so that it holds what the history after `position` builds on.
    func seedReplica(_ replica: Self, through position: HistoryPosition) throws
    /// Applies to `replica` the history it has not applied yet, one transaction per source
    /// transaction; returns how many transactions it applied.
    func replayHistory(into replica: Self) throws -> Int
    /// Untimed: the sum of every employee's salary (to compare a replica with its source).
    func salarySum() throws -> Int64
}

extension GraphRunner {
    /// W9's timings of W1, W2 and W7 on one store, in seconds.
    private struct WriteTimes {
        var w1 = 0.0, w2 = 0.0, w7 = 0.0
    }

    /// Runs W9 (when selected): each round, for each engine, a store without history tracking,
    /// one with it (in alternating order), and a replica.
    func runHistory(into results: inout SideBySideRounds<GraphMetric>) throws {
        guard workloads.contains(.w9) else { return }
        let n = dataset.employees.count
        // W2's employees, keyed after W1's.
        let employees = dataset.additionalEmployees(count: Self.smallSaveCount * Self.smallSaveSize)
        let saves = stride(from: 0, to: employees.count, by: Self.smallSaveSize).map { first in
            (first..<first + Self.smallSaveSize).map { (key: Dataset.employeeKey(n + $0), employee: employees[$0]) }
        }
        let changes = plan.salaryChanges()
        try results.alternate("W9") { engine, round, measured in
            try runHistory(Self.engineType(engine), round: round, saves: saves, changes: changes, into: &measured)
        }
    }

    /// One round of W9 against `E`: the stores without and with tracking, in an order that
    /// alternates from round to round (without, with; with, without; …) so that a drift of the
    /// machine over the round (the page cache, writeback, the disk's own state) falls on both
    /// sides; then the tracked store's history fetched and replayed.
    private func runHistory<E: HistoryEngine>(
        _: E.Type, round: Int, saves: [[(key: Int64, employee: Employee)]], changes: [WorkloadPlan.SalaryChange],
        into results: inout EngineResults<GraphMetric>
    ) throws {
        var untracked = WriteTimes()
        var tracked = WriteTimes()
        var fetched = (transactions: 0, changes: 0)
        var fetchSeconds = 0.0
        var replaySeconds = 0.0
        for tracks in round % 2 == 0 ? [false, true] : [true, false] {
            try withFreshEngine(E.self, store: "w9-\(tracks ? "tracked" : "untracked")") { engine in
                guard tracks else {
                    untracked = try writeWorkloads(engine, saves: saves, changes: changes) {}
                    return
                }
                try engine.startTrackingHistory()
                var position: E.HistoryPosition?
                tracked = try writeWorkloads(engine, saves: saves, changes: changes) {
                    position = try engine.currentHistoryPosition()
                }
                let after = try position.orThrow("\(E.name) W9: no history position after W1")
                (fetched, fetchSeconds, replaySeconds) = try fetchAndReplay(
                    engine, after: after, saves: saves.count, into: &results)
            }
        }

        results.figures[.historyFetch] = Double(fetched.transactions) / fetchSeconds
        results.figures[.historyFetchChanges] = Double(fetched.changes) / fetchSeconds
        results.figures[.historyReplay] = Double(fetched.transactions) / replaySeconds
        results.figures[.historyReplayChanges] = Double(fetched.changes) / replaySeconds
        var costs: [String: Double] = [:]
        for (metric, step, time) in [
            (GraphMetric.historyTrackingCostW1, "W1", \WriteTimes.w1), (.historyTrackingCostW2, "W2", \WriteTimes.w2),
            (.historyTrackingCostW7, "W7", \WriteTimes.w7),
        ] {
            costs[step] = tracked[keyPath: time] / untracked[keyPath: time]
            results.figures[metric] = costs[step]
            results.details["W9.\(step).trackedSeconds"] = tracked[keyPath: time]
            results.details["W9.\(step).untrackedSeconds"] = untracked[keyPath: time]
        }
        results.details["W9.fetchSeconds"] = fetchSeconds
        results.details["W9.replaySeconds"] = replaySeconds
        results.checksums["W9.transactions"] = Int64(fetched.transactions)
        results.checksums["W9.changes"] = Int64(fetched.changes)
        WorkloadSteps.log(
            "\(E.name) W9 time with tracking / without: "
                + ["W1", "W2", "W7"].map { "\($0) \(formatFigure(costs[$0] ?? 0))" }.joined(separator: ", "))
    }

    /// Fetches the history of `source` after `after` (W9) and replays it into a fresh replica
    /// seeded through `after`, checking both; returns what was fetched and the two times.
    private func fetchAndReplay<E: HistoryEngine>(
        _ source: E, after: E.HistoryPosition, saves: Int, into results: inout EngineResults<GraphMetric>
    ) throws -> (fetched: (transactions: Int, changes: Int), fetchSeconds: Double, replaySeconds: Double) {
        let fetch = try measure { try source.fetchHistory(after: after) }
        let fetched = fetch.result
        try Self.check(E.name, "W9 fetched transactions of", fetched.transactions, expected: saves + 1)
        WorkloadSteps.log(
            "\(E.name) W9 fetched \(fetched.transactions) transactions, \(fetched.changes) changes in \(formatFigure(fetch.seconds)) s"
        )
        var replaySeconds = 0.0
        try withFreshEngine(E.self, store: "w9-replica") { replica in
            try replica.startTrackingHistory()
            try source.seedReplica(replica, through: after)
            let replay = try measure { try source.replayHistory(into: replica) }
            replaySeconds = replay.seconds
            try Self.check(E.name, "W9 replayed transactions of", replay.result, expected: fetched.transactions)
            try Self.check(
                E.name, "W9 replica holds", try replica.employeeCount(), expected: try source.employeeCount())
            let sum = try source.salarySum()
            guard try replica.salarySum() == sum else {
                throw BenchError("\(E.name) W9: the replica's salaries differ from its source's")
            }
            results.checksums["W9.replicaSalarySum"] = sum
            WorkloadSteps.log(
                "\(E.name) W9 replayed \(replay.result) transactions in \(formatFigure(replay.seconds)) s")
        }
        return (fetched, fetch.seconds, replaySeconds)
    }

    /// Times W1, W2 (`saves` from one writer) and W7 (`changes`) on `engine`, checking the
    /// employees after each; `afterW1` runs untimed between W1 and W2.
    private func writeWorkloads<E: HistoryEngine>(
        _ engine: E, saves: [[(key: Int64, employee: Employee)]], changes: [WorkloadPlan.SalaryChange],
        afterW1: () throws -> Void
    ) throws -> WriteTimes {
        let n = dataset.employees.count
        var times = WriteTimes()
        times.w1 = try measure { try engine.insertAll(dataset) }.seconds
        try engine.didInsertAll()
        try Self.check(E.name, "W9 W1 inserted", try engine.employeeCount(), expected: n)
        try afterW1()
        times.w2 = try measure { _ = try engine.save(saves, writers: 1) }.seconds
        try Self.check(E.name, "W9 W2 left", try engine.employeeCount(), expected: n + saves.count * Self.smallSaveSize)
        let references = try engine.references(for: changes.map(\.key))
        times.w7 = try measure { try engine.updateSalaries(references, salaries: changes.map(\.salary)) }.seconds
        return times
    }
}
