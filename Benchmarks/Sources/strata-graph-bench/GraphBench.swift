import ArgumentParser
import BenchSupport
import Foundation
import Logging
import Workloads

/// Runs the object-graph reference workloads against Strata's Core Data API and against GRDB
/// records over SQLite, in one process, on the same generated data, side by side.
@main
struct GraphBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-graph-bench",
        abstract:
            "Runs the object-graph workloads against Strata (Core Data API) and SQLite (GRDB records) side by side.",
        discussion: """
            Workloads: W1 bulk insert through managed objects (one context, one save), W3 cold open to \
            the first existingObject(with:), W4 100,000 faults by object ID, W5 fetch (top 100 by salary) \
            and count of salary > 150000 AND active, 50 times each, W6 fetch every employee \
            and read notes (with the peak memory growth), W7 update 10% of employees fetched by ID (one save); \
            on fresh stores: W2 2,000 saves of 10 new objects (durable, relaxed, and from 16 concurrent \
            writers), B1-B3 batch insert, update and delete, F1 change tracking per save over N objects, \
            W9 persistent history (fetch and replay after W1 + W2 + W7, and what tracking costs them). \
            Each workload runs --rounds rounds for each engine, the engines alternating round by round; each \
            figure is the median of its rounds (W6's peak memory: the largest), shown with their min and max. \
            Progress goes to standard error; the table and then one JSON object go to standard output.
            """
    )

    @Option(help: "N, the number of employees (departments = max(1, N/1000)).")
    var rows: Int = 100_000

    @Option(
        help: "When a save returns: durable (fsync; SQLite synchronous=FULL) or relaxed (no fsync; synchronous=OFF).")
    var durability: String = BenchDurability.durable.rawValue

    @Option(
        help:
            "How Strata reads and writes properties: typed (@Managed, the default) or kvc (value(forKey:)/setValue(_:forKey:))."
    )
    var access: String = GraphAccess.typed.rawValue

    @Option(
        help:
            "How Strata builds W5's predicate: code (FetchPredicate(key:_:_:) and FetchPredicate(andPredicateWithSubpredicates:), the default) or format (FetchPredicate(format:argumentArray:))."
    )
    var predicate: String = PredicateStyle.code.rawValue

    @Option(help: "Comma-separated workloads to run, e.g. W1,W4. The default is all.")
    var workloads: String?

    @Option(help: "Run only this engine (strata or sqlite), e.g. under a profiler; no ratios then.")
    var only: String?

    @Option(
        help:
            "Measure W6's peak memory of each engine in a process of its own (true, the default, when both engines run) or only in this process (false)."
    )
    var isolatedMemory = true

    @OptionGroup var rounds: RoundOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try BenchCommand.validate(rows: rows)
        try rounds.validate()
        guard BenchDurability(rawValue: durability) != nil else {
            throw ValidationError("--durability must be durable or relaxed")
        }
        guard GraphAccess(rawValue: access) != nil else {
            throw ValidationError("--access must be typed or kvc")
        }
        guard PredicateStyle(rawValue: predicate) != nil else {
            throw ValidationError("--predicate must be code or format")
        }
        if let only, !["strata", "sqlite"].contains(only.lowercased()) {
            throw ValidationError("--only must be strata or sqlite")
        }
        let minimum = GraphRunner.changeTrackingMinimumEmployees(rounds: rounds.rounds)
        if try selectedWorkloads().contains(.f1), rows < minimum {
            throw ValidationError("F1 needs --rows of at least \(minimum) for \(rounds.rounds) rounds")
        }
    }

    private func selectedWorkloads() throws -> Set<GraphWorkload> {
        try BenchCommand.workloads(workloads)
    }

    func run() throws {
        BenchCommand.warnIfDebugBuild()
        // The store logs every open and close at info level; keep them out of the progress (and
        // the cold-open timings), as strata-bench does through its StoreConfiguration.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let durability = BenchDurability(rawValue: durability)!
        let access = GraphAccess(rawValue: access)!
        let predicateStyle = PredicateStyle(rawValue: predicate)!
        let root = try BenchCommand.makeRunDirectory(tool: "strata-graph-bench", under: output.dir)
        defer { try? FileManager.default.removeItem(at: root) }

        progress("generating \(rows) employees (seed \(SplitMix64.referenceSeed))")
        let dataset = Dataset(employeeCount: rows)
        let runner = GraphRunner(
            dataset: dataset, plan: WorkloadPlan(employeeCount: rows), workloads: try selectedWorkloads(),
            durability: durability, access: access, predicateStyle: predicateStyle, root: root)

        let only = only.flatMap { only in EngineID.allCases.first { $0.rawValue.lowercased() == only.lowercased() } }
        var results = SideBySideRounds<GraphMetric>(
            rounds: rounds.rounds, engines: only.map { [$0] } ?? EngineID.allCases)
        let engines = results.engines.map(\.rawValue).joined(separator: " and ")
        progress(
            "\(engines): \(rounds.rounds) rounds of each workload (\(durability), Strata \(access) property access)")
        try runner.runWrites(into: &results)
        try runner.runReads(into: &results)
        try runner.runSeparateStores(into: &results)
        if only == nil && isolatedMemory && runner.workloads.contains(.w6) {
            try isolateW6Memory(into: &results)
        }
        if only == nil {
            let checksums = results.strata.checksums.keys.sorted().joined(separator: ", ")
            progress("checksums agree in every round: \(checksums)")
        }

        let report = SideBySideReport(
            benchmark: "strata-graph-bench",
            labels: [
                "api":
                    "object graph: PersistentContainer, background contexts, ManagedObject subclasses vs GRDB records",
                "durability": durability.rawValue,
                "strataPropertyAccess": access.rawValue,
                "strataPredicate": predicateStyle.rawValue,
            ],
            rows: rows, departments: dataset.departments.count, seed: SplitMix64.referenceSeed,
            sqliteVersion: try SQLiteSetup.version(),
            sqliteSettings: "GRDB 7.10 records on a DatabaseQueue, journal_mode=WAL, synchronous="
                + (durability == .durable ? "FULL" : "OFF"),
            results: results)
        try report.print(
            headline: "strata-graph-bench: N = \(rows) employees, \(dataset.departments.count) departments; "
                + "\(durability) saves; Strata properties \(access == .typed ? "typed (@Managed)" : "by key-value coding"); "
                + "W5 predicate \(predicateStyle == .code ? "built in code" : "parsed from a format string"); "
                + "\(rounds.rounds) rounds per engine, alternating; ratio = Strata/SQLite",
            notes: Self.notes, jsonPath: output.json)
    }

    static let notes = """
        Notes: Strata = PersistentContainer + newBackgroundContext().performAndWait + @Managed subclasses;
        SQLite = GRDB 7.10 FetchableRecord/PersistableRecord structs (SELECT * by key through one cached statement).
        W1 and W7 run each round on a fresh store (W1 fills it); W3, W4, W5, W6 and F1 run on one store per engine,
        loaded once, untimed, and kept open while their rounds repeat; W2, B1-B3 and W9 run each round on fresh stores.
        W1 times object creation, relating each employee to its department, and the one save.
        W3 is a new container (or DatabaseQueue) on the closed store + the first existingObject(with:) by an ID
        rebuilt from its archived URI (SQLite: fetchOne by key). W4 runs on a freshly opened store:
        context.object(with:) then reading name and salary fires each fault; IDs come from the archived URIs,
        resolved before the clock starts. W5 is a FetchRequest with the predicate salary > 150000 AND active == true
        (built in code: FetchPredicate(key:_:_:) + FetchPredicate(andPredicateWithSubpredicates:); with --predicate format,
        FetchPredicate(format: "salary > %@ AND active == YES", argumentArray: [150000]), parsed each time), sorted by salary
        descending, fetchLimit 100, reading salary and active of each result, then count(for:) of the same predicate,
        50 times each in one context (SQLite: EmployeeRecord.fetchAll of SELECT * ... WHERE salary > ? AND active = 1
        ORDER BY salary DESC LIMIT 100, and SELECT COUNT(*) with the same WHERE, through cached statements).
        W6 is one fetch of every employee (SQLite: fetchAll), reading notes.
        W7 is existingObject(with:) + set salary for 10% of employees, one save (SQLite: fetchOne + update(columns:)).
        W6.peakMemory is the growth of the resident size during W6's fetch, the largest of the rounds:
        malloc_trim(0), the kernel's peak reset (5 > /proc/self/clear_refs), then VmHWM - VmRSS before (details:
        W6.peakRSSMB). When both engines run, it is measured again for each in a process of its own (--only,
        --workloads W6, the same --rounds), and that figure is reported: in one process one engine reuses heap the
        other left resident (detail W6.inProcessGrowthMB).
        W2 is 2,000 saves of 10 new employees from one background context, durable and relaxed, then the same saves
        from 16 background contexts on 16 threads, durable (SQLite: one write transaction of records per save, on a
        DatabaseQueue, and from 16 threads on one DatabasePool). Each on a fresh store, whatever --durability says.
        Details: each run's save latency (saveP50Ms, saveP99Ms), commits per log write (commitsPerGroup), and the process's
        CPU time during it (cpuUserSeconds, cpuSystemSeconds) over its wall time (coresBusy: how many cores it kept busy).
        B1-B3 on a fresh store: BatchInsertRequest of N dictionaries, BatchUpdateRequest active = NO where active == YES,
        BatchDeleteRequest of active == NO (SQLite: one prepared INSERT in one transaction, one UPDATE ... WHERE, one
        DELETE ... WHERE). B1 times the insert from ready input on both sides: the dictionaries (Strata) and the statement
        arguments (SQLite) are made before the clock starts.
        F1 times saves of 1 insert + 2 salary changes + 1 delete from a context holding every employee,
        without and then with a FetchedResultsController (salary descending) and its delegate; the figure is the median
        ms per save with it (SQLite: record writes, then a ValueObservation of the same ORDER BY delivering its new value).
        W9 on fresh stores: W1, W2 (the 2,000 saves from one context, with --durability) and W7 on a store that tracks history
        (PersistentHistoryTrackingKey), then PersistentHistoryChangeRequest.fetchHistory(after:) the token of
        currentPersistentHistoryToken(fromStores:) taken after W1, executed by a background context (W9, W9.fetchChanges), and
        Store.replayHistory(from:after:progress:) of those transactions into a replica, an empty store of the model to which the
        history through the token (W1) is first replayed untimed, since W7 updates W1's employees (W9.replay, W9.replayChanges).
        SQLite: AFTER INSERT/UPDATE/DELETE triggers logging the transaction, table, rowid, kind, and old and new row as JSON to a
        change table; the fetch reads the rows after a change id, decodes the JSON and groups them by transaction; the replay
        applies each transaction in one write transaction of the replica (set up the same way), moving its cursor in it.
        W9.trackingCost.W1/W2/W7 = time with tracking / time without (1.15: tracking adds 15%), the same workloads
        run on other fresh stores without tracking (Strata: no PersistentHistoryTrackingKey; SQLite: no triggers):
        each round runs both stores, without then with in even rounds, with then without in odd ones, so that a
        drift of the machine over a round falls on both sides, and fetches and replays the tracked one.
        --access kvc (a diagnostic) reads and writes through value(forKey:)/setValue(_:forKey:) instead of @Managed.

        """

    private func progress(_ message: String) {
        BenchCommand.progress("strata-graph-bench", message)
    }
}
