import ArgumentParser
import Foundation
import GRDB
import Workloads

/// Runs the engine-level reference workloads against Strata and SQLite (GRDB), in one process,
/// on the same generated data, and prints the figures side by side.
@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Runs the reference workloads against Strata and SQLite side by side.",
        discussion: """
            Workloads: W1 bulk insert, W2 small saves (durable and relaxed), W3 cold open, \
            W4 random faults, W6 full scan, W7 update, W8 delete + compact, W10 size. \
            Progress goes to standard error; the table and then one JSON object go to standard output.
            """
    )

    @Option(help: "N, the number of employees (departments = max(1, N/1000)).")
    var rows: Int = 100_000

    @Option(help: "Comma-separated workloads to run, e.g. W1,W4. The default is all of them.")
    var workloads: String?

    @Option(help: "Also write the JSON object to this file.")
    var json: String?

    @Option(help: "Where to create the temporary stores. The default is the system's temporary directory.")
    var dir: String?

    func validate() throws {
        guard rows >= 10 else { throw ValidationError("--rows must be at least 10") }
        _ = try selectedWorkloads()
    }

    private func selectedWorkloads() throws -> Set<Workload> {
        guard let workloads else { return Set(Workload.allCases) }
        return try Set(
            workloads.split(separator: ",").map { name in
                let trimmed = name.trimmingCharacters(in: .whitespaces).uppercased()
                guard let workload = Workload(rawValue: trimmed) else {
                    throw ValidationError(
                        "unknown workload \(name); known: \(Workload.allCases.map(\.rawValue).joined(separator: ","))")
                }
                return workload
            })
    }

    func run() throws {
        #if DEBUG
            FileHandle.standardError.write(Data("warning: a debug build; measure with -c release\n".utf8))
        #endif
        let selected = try selectedWorkloads()
        let base = URL(fileURLWithPath: dir ?? NSTemporaryDirectory(), isDirectory: true)
        let root = base.appendingPathComponent("strata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        progress("generating \(rows) employees (seed \(SplitMix64.referenceSeed))")
        let dataset = Dataset(employeeCount: rows)
        let runner = WorkloadRunner(
            dataset: dataset, plan: WorkloadPlan(employeeCount: rows), workloads: selected, root: root)

        var strata = EngineResults()
        var sqlite = EngineResults()
        if runner.runsMainGroup {
            progress("W1, W10, W3, W4, W6, W7, W8 (durable)")
            try runner.runMainGroup(StrataEngine.self, into: &strata)
            try runner.runMainGroup(SQLiteEngine.self, into: &sqlite)
        }
        if selected.contains(.w2) {
            for durability in [BenchDurability.durable, .relaxed] {
                progress("W2 (\(durability))")
                try runner.runSmallSaves(StrataEngine.self, durability: durability, into: &strata)
                try runner.runSmallSaves(SQLiteEngine.self, durability: durability, into: &sqlite)
            }
        }
        for (name, value) in strata.checksums where sqlite.checksums[name] != value {
            throw BenchError(
                "the engines disagree on \(name): Strata \(value), SQLite \(sqlite.checksums[name].map(String.init) ?? "nil")")
        }

        let report = Report(
            rows: rows, departments: dataset.departments.count, seed: SplitMix64.referenceSeed,
            sqliteVersion: try SQLiteEngine.version(), strata: strata, sqlite: sqlite)
        print("strata-bench: N = \(rows) employees, \(dataset.departments.count) departments; "
            + "durable unless noted; ratio = Strata/SQLite")
        print(report.table())
        print(Self.notes)
        if let json {
            try Data((try report.json(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: json))
        }
        print(try report.json(pretty: false))
    }

    static let notes = """
        Notes: W3 is close + open + first read by key. W4 runs on a freshly opened store; W4 and W6 report the
        median of 3 runs. W7 in Strata reads each row before updating it (an update takes the whole row).
        W8 MB/s = bytes on disk before compaction / compaction time (SQLite: VACUUM + wal_checkpoint(TRUNCATE));
        the concurrent reads use the same Store (Strata) or a second, read-only connection (SQLite).
        Bytes on disk: every file under the store directory (Strata); db + -wal + -shm after a checkpoint (SQLite).

        """

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("strata-bench: \(message)\n".utf8))
    }
}

extension SQLiteEngine {
    /// The version of the SQLite library GRDB is linked with.
    static func version() throws -> String {
        try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?" }
    }
}
