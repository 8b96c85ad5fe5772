import ArgumentParser
import BenchSupport
import Foundation
import Workloads

/// Runs the engine-level reference workloads against Strata and its baselines (SQLite through
/// GRDB, RocksDB and LMDB through their C APIs), in one process, on the same generated data, and
/// prints the figures side by side.
@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Runs the reference workloads against Strata, SQLite, RocksDB and LMDB side by side.",
        discussion: """
            Workloads: W1 bulk insert, W2 small saves (durable and relaxed), W3 cold open, \
            W4 random faults, W5 predicate fetch and count, W6 full scan, W7 update, W8 delete + compact, W10 size. \
            Each workload runs --rounds rounds for each engine, the engines alternating round by round; each \
            figure is the median of its rounds, shown with their min and max. W5 runs on Strata and SQLite only \
            (RocksDB and LMDB have no secondary index). \
            Progress goes to standard error; the table and then one JSON object go to standard output.
            """
    )

    @Option(help: "N, the number of employees (departments = max(1, N/1000)).")
    var rows: Int = 100_000

    @Option(help: "Comma-separated workloads to run, e.g. W1,W4. The default is all of them.")
    var workloads: String?

    @Option(
        help: """
            Comma-separated baselines to run beside Strata: sqlite, rocksdb, lmdb. The default is all three.
            """)
    var baselines: String = StoreEngineID.baselines.map(\.slug).joined(separator: ",")

    @OptionGroup var rounds: RoundOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try BenchCommand.validate(rows: rows)
        try rounds.validate()
        _ = try selectedWorkloads()
        _ = try selectedEngines()
    }

    /// Strata and the baselines `--baselines` names, in the order each round runs them.
    private func selectedEngines() throws -> [StoreEngineID] {
        let named = try baselines.split(separator: ",").map { name in
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let engine = StoreEngineID.baselines.first(where: { $0.slug == trimmed }) else {
                throw ValidationError(
                    "unknown baseline \(name); known: \(StoreEngineID.baselines.map(\.slug).joined(separator: ","))")
            }
            return engine
        }
        return [.strata] + named
    }

    private func selectedWorkloads() throws -> Set<Workload> {
        try BenchCommand.workloads(workloads)
    }

    func run() throws {
        BenchCommand.warnIfDebugBuild()
        let selected = try selectedWorkloads()
        let root = try BenchCommand.makeRunDirectory(tool: "strata-bench", under: output.dir)
        defer { try? FileManager.default.removeItem(at: root) }

        progress("generating \(rows) employees (seed \(SplitMix64.referenceSeed))")
        let dataset = Dataset(employeeCount: rows)
        let runner = WorkloadRunner(
            dataset: dataset, plan: WorkloadPlan(employeeCount: rows), workloads: selected, root: root)

        let engines = try selectedEngines()
        progress("engines: \(engines.map(\.rawValue).joined(separator: ", "))")
        var results = BenchRounds(rounds: rounds.rounds, engines: engines)
        if !selected.isDisjoint(with: WorkloadRunner.writeGroup) {
            progress("W1, W10, W7, W8 (durable): \(rounds.rounds) rounds, each on fresh stores")
            try runner.runWrites(into: &results)
        }
        if !selected.isDisjoint(with: WorkloadRunner.readGroup) {
            progress("W3, W4, W5, W6 (durable): \(rounds.rounds) rounds on one store per engine, loaded once")
            try runner.runReads(into: &results)
        }
        if selected.contains(.w2) {
            progress("W2: \(rounds.rounds) rounds, each on fresh stores")
            try runner.runSmallSaves(into: &results)
        }

        var labels = ["baselines": engines.dropFirst().map(\.slug).joined(separator: ",")]
        if engines.contains(.rocksdb) {
            labels["rocksdbVersion"] = try RocksDBEngine.version(scratch: root.appendingPathComponent("rocksdb-version"))
            labels["rocksdbSettings"] = RocksDBEngine.settings
        }
        if engines.contains(.lmdb) {
            labels["lmdbVersion"] = LMDBEngine.version
            labels["lmdbSettings"] = LMDBEngine.settings
        }
        let report = ComparedReport(
            benchmark: "strata-bench", labels: labels, rows: rows, departments: dataset.departments.count,
            seed: SplitMix64.referenceSeed, sqliteVersion: try SQLiteSetup.version(),
            sqliteSettings: "GRDB DatabaseQueue, journal_mode=WAL, synchronous=FULL (durable) / OFF (relaxed)",
            results: results)
        try report.print(
            headline: "strata-bench: N = \(rows) employees, \(dataset.departments.count) departments; "
                + "durable unless noted; \(rounds.rounds) rounds per engine, alternating; ratio = Strata/SQLite"
                + (engines.contains { $0 == .rocksdb || $0 == .lmdb } ? "; Strata vs RocksDB, LMDB: above 1 = Strata ahead" : ""),
            notes: Self.notes, jsonPath: output.json)
    }

    static let notes = """
        Notes: W1, W10, W7 and W8 run in that order, each round on a fresh store (W1 fills it); W3, W4, W5 and W6
        run on one store per engine, loaded once, untimed, and kept open while their rounds repeat; W2 runs each
        round on a fresh store. W3 is close + open + first read by key. W4 runs on a freshly opened store.
        W5 is `salary > 150000 AND active`: the top 100 by salary and the count, 50 times each;
        Strata walks the salary fetch index (descending for the top 100) and reads each row to test `active`,
        SQLite runs SELECT * ... ORDER BY salary DESC LIMIT 100 and SELECT COUNT(*) with the same WHERE.
        W7 in Strata reads each row before updating it (an update takes the whole row).
        W8 MB/s = bytes on disk before compaction / compaction time (SQLite: VACUUM + wal_checkpoint(TRUNCATE));
        the concurrent reads use the same Store (Strata) or a second, read-only connection (SQLite).
        Bytes on disk: every file under the store directory (Strata); db + -wal + -shm after a checkpoint (SQLite).
        RocksDB and LMDB store each row under a 9-byte key (entity byte + big-endian primary key) as one compact
        binary value (fixed fields, then length-prefixed strings and photo), one save = one WriteBatch / write
        transaction; they have no secondary index, so W5 does not run on them. RocksDB (C API): IncreaseParallelism,
        OptimizeLevelStyleCompaction, then the wiki's "Setup Options and Basic Tuning" (bloom filter 10 bits, 256 MiB
        block cache, LZ4 with ZSTD bottommost, dynamic level bytes); durable = sync writes, relaxed = unsynced WAL;
        bytes on disk after a flush of the memtable; W8 = CompactRange over every key, reads on the same handle.
        LMDB (C API): default flags, 64 GiB map, MDB_APPEND for in-order inserts; durable = sync on commit, relaxed =
        MDB_NOSYNC; W8 = mdb_env_copy2(MDB_CP_COMPACT) while a reader with its own read transaction reads, then the
        copy replaces the file once the reader stops (timed with it). W8 idle p99 (details W8.idleReadP99Ms): the
        same reads for 0.25 s before compaction; W8.readP99OverIdle is the p99 during compaction over it.

        """

    private func progress(_ message: String) {
        BenchCommand.progress("strata-bench", message)
    }
}
