import ArgumentParser
import BenchSupport
import Foundation
import Workloads

/// `strata-service-load`: drives `strata-service` on both of its backends and reports what a
/// service team asks first (`make service-bench`, `make service-memory`, `make service-soak`).
@main
struct ServiceLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-service-load",
        abstract: "Load, memory and SIGKILL runs of strata-service on Strata and on GRDB.",
        subcommands: [LoadBench.self, LoadMemory.self, LoadSoak.self])
}

/// The options every run takes: the server's executable, the seed and where stores go.
struct ServerOptions: ParsableArguments {
    @Option(help: "The strata-service executable (default: strata-service-release beside this one).")
    var server: String?

    @Option(help: "The seed of every generator (default 42).")
    var seed: UInt64 = SplitMix64.referenceSeed

    @Option(help: "The directory under which each run's stores are made (default: the temporary directory).")
    var dir: String?

    /// The server's executable.
    var executable: URL {
        if let server { return URL(fileURLWithPath: server) }
        let this = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return this.deletingLastPathComponent().appendingPathComponent("strata-service-release")
    }

    /// `SERVICE_SECONDS` from the environment, else `fallback`.
    static func seconds(default fallback: Double) -> Double {
        ProcessInfo.processInfo.environment["SERVICE_SECONDS"].flatMap(Double.init) ?? fallback
    }

    /// A comma-separated list, each item parsed by `parse`.
    static func list<T>(_ text: String, _ parse: (String) throws -> T) throws -> [T] {
        try text.split(separator: ",").map { try parse($0.trimmingCharacters(in: .whitespaces)) }
    }
}

/// Writes `strata-service-load: <message>` to standard error.
func progress(_ message: String) {
    BenchCommand.progress("strata-service-load", message)
}

/// `strata-service-load bench`: every mix at every number of connections, then the change
/// feed's lag, on each backend, for a number of rounds; prints the table and the JSON object.
struct LoadBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract:
            "Requests/s, latency and memory of each mix and connection count, and the feed's lag, on both backends.")

    @OptionGroup var options: ServerOptions

    @Option(help: "Seconds of each run (default: SERVICE_SECONDS, else 10).")
    var seconds: Double?

    @Option(help: "Rounds; each figure is the median of its rounds (default 3).")
    var rounds = 3

    @Option(help: "Employees imported before the runs (default 10000).")
    var employees = 10_000

    @Option(help: "Concurrent connections of the runs (default 1,16,64,256).")
    var connections = "1,16,64,256"

    @Option(help: "Mixes of reads and writes in percent (default 95-5,50-50,0-100).")
    var mixes = "95-5,50-50,0-100"

    @Option(help: "Writes per second while the feed's lag is measured (default 1000).")
    var feedRate = 1_000

    @Option(help: "The backends: strata, grdb or both (default strata,grdb).")
    var backends = "strata,grdb"

    func run() async throws {
        BenchCommand.warnIfDebugBuild()
        let seconds = seconds ?? ServerOptions.seconds(default: 10)
        let connectionCounts = try ServerOptions.list(connections) { text in
            guard let count = Int(text), count > 0 else {
                throw ValidationError("--connections: \(text) is not a count")
            }
            return count
        }
        let mixes = try ServerOptions.list(mixes, LoadMix.init(parsing:))
        let backends = try ServerOptions.list(backends) { text in
            guard let backend = ServiceBackend(rawValue: text) else { throw ValidationError("--backends: \(text)?") }
            return backend
        }
        let dataset = ServiceDataset(employeeCount: employees, seed: options.seed)
        let root = try BenchCommand.makeRunDirectory(tool: "strata-service-load", under: options.dir)
        defer { try? FileManager.default.removeItem(at: root) }
        var report = ServiceReport(employees: employees, seed: options.seed, rounds: rounds, seconds: seconds)
        for round in 1...rounds {
            for backend in round.isMultiple(of: 2) ? backends.reversed() : backends {
                let server = ServerProcess(
                    executable: options.executable, backend: backend.rawValue,
                    directory: root.appendingPathComponent("\(backend.rawValue)-\(round)"))
                try server.start()
                defer { server.stop() }
                let seeding = ServiceClient(baseURL: server.baseURL, connections: 4)
                try await dataset.seed(through: seeding)
                await seeding.shutdown()
                for mix in mixes {
                    for count in connectionCounts {
                        let run = LoadRun(mix: mix, connections: count, seconds: seconds, seed: options.seed)
                        let result = await run.run(baseURL: server.baseURL, pid: server.pid ?? 0, dataset: dataset)
                        record(result, mix: mix, connections: count, backend: backend, in: &report)
                        progress(
                            "round \(round) \(backend.title) \(mix) c\(count): \(formatFigure(result.requestsPerSecond)) requests/s, "
                                + "p99 \(result.latencyMilliseconds(0.99).map(formatFigure) ?? "-") ms, \(result.errors) errors"
                                + (result.firstError.map { " (the first: \($0))" } ?? ""))
                    }
                }
                let lag = await FeedLagRun(
                    writesPerSecond: feedRate, connections: 16, seconds: seconds, seed: options.seed
                ).run(baseURL: server.baseURL, dataset: dataset)
                recordFeed(lag, backend: backend, in: &report)
                progress(
                    "round \(round) \(backend.title) feed: \(formatFigure(lag.writesPerSecond)) writes/s, "
                        + "lag p99 \(lag.lagMilliseconds(0.99).map(formatFigure) ?? "-") ms, \(lag.missing) missing")
            }
        }
        print(report.table())
        print(try report.json())
    }

    /// Records a run's figures under `S.<mix>.c<connections>.<figure>`.
    private func record(
        _ result: LoadResult, mix: LoadMix, connections: Int, backend: ServiceBackend, in report: inout ServiceReport
    ) {
        let prefix = "S.\(mix).c\(connections)"
        let label = "\(mix) c\(connections)"
        report.record(
            "\(prefix).rps", "\(label) requests", unit: "requests/s", better: .higher, backend: backend,
            value: result.requestsPerSecond)
        for (name, p) in [("p50", 0.5), ("p99", 0.99), ("p999", 0.999)] {
            report.record(
                "\(prefix).\(name)", "\(label) latency \(name)", unit: "ms", better: .lower, backend: backend,
                value: result.latencyMilliseconds(p))
        }
        report.record(
            "\(prefix).errors", "\(label) errors", unit: "requests", better: .lower, backend: backend,
            value: Double(result.errors))
        report.record(
            "\(prefix).rss", "\(label) server memory", unit: "MB", better: .lower, backend: backend,
            value: result.peakResidentBytes.map { Double($0) / 1e6 }, summary: .maximum)
    }

    /// Records the feed's figures under `S.feed.<figure>`.
    private func recordFeed(_ lag: FeedLagResult, backend: ServiceBackend, in report: inout ServiceReport) {
        report.record(
            "S.feed.writes", "feed: writes", unit: "writes/s", better: .higher, backend: backend,
            value: lag.writesPerSecond)
        for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
            report.record(
                "S.feed.lag.\(name)", "feed: lag \(name)", unit: "ms", better: .lower, backend: backend,
                value: lag.lagMilliseconds(p))
        }
        report.record(
            "S.feed.missing", "feed: events missing", unit: "events", better: .lower, backend: backend,
            value: Double(lag.missing))
    }
}

/// `strata-service-load memory`: one long run of a mix, the server's resident memory sampled
/// after a first stretch and at the end.
struct LoadMemory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory", abstract: "The server's resident memory over a long run of one mix.")

    @OptionGroup var options: ServerOptions

    @Option(help: "Seconds of the run (default: SERVICE_SECONDS, else 1800).")
    var seconds: Double?

    @Option(help: "When the first sample is taken, in seconds (default 300, or a sixth of a shorter run).")
    var firstSample: Double?

    @Option(help: "The backend: strata or grdb (default strata).")
    var backend = ServiceBackend.strata.rawValue

    @Option(help: "Concurrent connections (default 64).")
    var connections = 64

    @Option(help: "The mix of reads and writes in percent (default 50-50).")
    var mix = "50-50"

    @Option(help: "Employees imported before the run (default 10000).")
    var employees = 10_000

    @Flag(help: "Keep the data set's size: every other create deletes an employee the run created instead.")
    var steady = false

    func run() async throws {
        BenchCommand.warnIfDebugBuild()
        let seconds = seconds ?? ServerOptions.seconds(default: 1800)
        let firstSample = firstSample ?? min(300, seconds / 6)
        let mix = try LoadMix(parsing: mix)
        let root = try BenchCommand.makeRunDirectory(tool: "strata-service-load", under: options.dir)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = ServerProcess(
            executable: options.executable, backend: backend, directory: root.appendingPathComponent(backend))
        try server.start()
        defer { server.stop() }
        let dataset = ServiceDataset(employeeCount: employees, seed: options.seed)
        let seeding = ServiceClient(baseURL: server.baseURL, connections: 4)
        try await dataset.seed(through: seeding)
        await seeding.shutdown()
        let sampler = MemorySampler(pid: server.pid ?? 0)
        let first = Task {
            try? await Task.sleep(for: .seconds(firstSample))
            return sampler.sample()
        }
        let result = await LoadRun(
            mix: mix, connections: connections, seconds: seconds, seed: options.seed, keepsSize: steady
        ).run(baseURL: server.baseURL, pid: server.pid ?? 0, dataset: dataset)
        let last = sampler.sample()
        let early = await first.value
        func megabytes(_ bytes: Int?) -> String { bytes.map { formatFigure(Double($0) / 1e6) } ?? "-" }
        let change = early.flatMap { early in last.map { (Double($0) / Double(early) - 1) * 100 } }
        print(
            "memory: backend \(backend), \(mix)\(steady ? " steady" : "") c\(connections), "
                + "\(formatFigure(result.requestsPerSecond)) requests/s, "
                + "\(result.errors) errors; resident \(megabytes(early)) MB after \(formatFigure(firstSample)) s, "
                + "\(megabytes(last)) MB after \(formatFigure(result.seconds)) s "
                + "(\(change.map { String(format: "%+.1f", $0) } ?? "-")%), peak \(megabytes(result.peakResidentBytes)) MB"
        )
    }
}

/// `strata-service-load soak`: SIGKILLs of the server under write load, each restart checked.
struct LoadSoak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "SIGKILL the server under load and restart it; no acknowledged write lost, the feed exactly once.")

    @OptionGroup var options: ServerOptions

    @Option(help: "SIGKILLs to send (default 50).")
    var kills = 50

    @Option(help: "The longest run in seconds (default: SERVICE_SECONDS, else 1800).")
    var seconds: Double?

    @Option(help: "The backends: strata, grdb or both (default strata,grdb).")
    var backends = "strata,grdb"

    @Option(help: "Concurrent writers (default 16).")
    var connections = 16

    func run() async throws {
        let root = try BenchCommand.makeRunDirectory(tool: "strata-service-load", under: options.dir)
        defer { try? FileManager.default.removeItem(at: root) }
        var failed = false
        for backend in try ServerOptions.list(backends, { $0 }) {
            let server = ServerProcess(
                executable: options.executable, backend: backend, directory: root.appendingPathComponent(backend))
            let result = try await SoakRun(
                kills: kills, seconds: seconds ?? ServerOptions.seconds(default: 1800), connections: connections,
                seed: options.seed
            ).run(server: server)
            print(
                "soak: backend \(backend): \(result.kills) kills in \(formatFigure(result.seconds)) s, "
                    + "\(result.acknowledged) acknowledged writes, \(result.lost) lost; feed: \(result.delivered) "
                    + "transactions delivered, \(result.duplicated) duplicated, \(result.missing) missing, "
                    + "\(result.phantom) phantom; \(result.unopenable) unopenable")
            failed = failed || result.lost + result.duplicated + result.missing + result.phantom + result.unopenable > 0
        }
        if failed { throw ExitCode.failure }
    }
}
