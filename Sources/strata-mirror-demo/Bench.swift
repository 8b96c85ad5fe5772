// strata-mirror-demo bench: the mirror's figures on a private PostgreSQL server.
//
//   strata-mirror-demo bench [SAVES] [CHANGES] [RATE] [PARTS]
//
// Prints save latency p50/p99 with the mirror off, synchronous and asynchronous; replication
// lag p50/p99/p99.9 (synchronous and asynchronous) with the writer saving at RATE saves/s
// (default 1,000; 0: as fast as it can); saves/s with 1, 2 and 4 writing instances
// (each a process, until the shared log holds every save);
// catch-up changes/s from scratch and from a cursor CHANGES behind; and pgbench's tps on the
// same server. SAVES (default 2,000) sizes the latency, lag and throughput runs, CHANGES (default
// 100,000) the catch-up. PARTS (default all) picks some of latency,lag,throughput,catchup,pgbench,
// comma-separated. Run it in release (`make mirror-bench`); in debug only to check it works.
import Foundation
import Logging
import Metrics
import PostgresNIO
import Strata
import StrataMirror

/// One benchmark instance: a container on its own store directory.
struct BenchInstance {
    let container: PersistentContainer
    let services: Task<Void, any Error>?

    /// Opens instance `name` in `work`: unmirrored when `mode` is nil.
    init(_ name: String, work: String, socket: String, mode: MirrorConfiguration.Mode?) {
        var logger = Logger(label: "strata.mirror.bench")
        logger.logLevel = .error
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: "\(work)/\(name).strata"))
        if let mode {
            var configuration = MirrorConfiguration(
                postgres: postgresConfiguration(socket: socket), instanceName: name, logger: logger)
            configuration.pollInterval = .milliseconds(20)
            configuration.mode = mode
            let mirrored = MirroredPersistentContainer(
                name: name, managedObjectModel: demoModel(), mirror: configuration)
            container = mirrored
            container.persistentStoreDescriptions = [description]
            container.loadPersistentStores { _, error in if let error { fatalError("\(name): \(error)") } }
            let group = mirrored.services
            services = Task {
                try await withThrowingDiscardingTaskGroup { tasks in
                    for service in group { tasks.addTask { try await service.run() } }
                }
            }
        } else {
            container = PersistentContainer(name: name, managedObjectModel: demoModel())
            container.persistentStoreDescriptions = [description]
            container.loadPersistentStores { _, error in if let error { fatalError("\(name): \(error)") } }
            services = nil
        }
    }

    /// Saves `inserts` new items in one save; returns how long the save took, in nanoseconds.
    @discardableResult
    func save(_ prefix: String, inserts: Int = 1) throws -> Int64 {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            for index in 0..<inserts {
                EntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(
                    "\(prefix)-\(index)", forKey: "name")
            }
            let start = DispatchTime.now().uptimeNanoseconds
            try context.save()
            return Int64(DispatchTime.now().uptimeNanoseconds - start)
        }
    }

    /// The mirror's cursor (0 unmirrored).
    func cursor() throws -> Int64 {
        try (container as? MirroredPersistentContainer)?.mirrorCursors().values.first ?? 0
    }

    /// Stops the services and closes the store.
    func close() async throws {
        services?.cancel()
        _ = try? await services?.value
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
    }
}

/// The `p` quantile of `samples` (nanoseconds) in milliseconds.
func milliseconds(_ samples: [Int64], _ p: Double) -> String {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return "n/a" }
    return String(format: "%.2f", Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6)
}

/// Runs `body` on a thread of its own (saves block their thread while PostgreSQL answers) and
/// waits for it.
func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Waits until `instance` holds the log up to `head` (at most `seconds`).
func waitForCursor(_ instance: BenchInstance, _ head: Int64, seconds: Double = 600) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try instance.cursor() < head {
        guard ContinuousClock.now < deadline else {
            throw CoreDataError(.coreData, "catch-up did not reach \(head) within \(seconds) s")
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The log's head.
func logHead(socket: String, database: String) async throws -> Int64 {
    let logger = Logger(label: "strata.mirror.bench")
    var configuration = postgresConfiguration(socket: socket)
    configuration.database = database
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 9, logger: logger)
    var head: Int64 = 0
    do {
        for try await position in try await connection.query("SELECT pos FROM strata_head", logger: logger).decode(
            Int64.self)
        { head = position }
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
    return head
}

/// Creates database `name` on the server at `socket`.
func createDatabase(_ name: String, socket: String) async throws {
    let logger = Logger(label: "strata.mirror.bench")
    let admin = try await PostgresConnection.connect(
        configuration: PostgresConnection.Configuration(
            unixSocketPath: socket, username: "postgres", password: nil, database: "postgres"),
        id: 0, logger: logger)
    try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
    try await admin.close()
}

/// The parts of the bench.
enum BenchPart {
    static let all: Set<String> = ["latency", "lag", "throughput", "catchup", "pgbench"]
}

func runBench(saves: Int, changes: Int, rate: Double, parts: Set<String>) async throws {
    let script = privatePostgresScript()
    let pgDirectory = "/tmp/strata-bench-pg-\(UUID().uuidString.prefix(8))"
    let port = Int.random(in: 40_000..<60_000)
    say(
        "mirror-bench: a private PostgreSQL server in \(pgDirectory) (port \(port)); \(saves) saves, \(changes) changes"
    )
    try shell([script, "start", pgDirectory, String(port)])
    defer {
        try? shell([script, "stop", pgDirectory])
        try? FileManager.default.removeItem(atPath: pgDirectory)
    }
    let socket = "\(pgDirectory)/.s.PGSQL.\(port)"
    let collector = LagCollector()
    MetricsSystem.bootstrap(collector)
    var round = 0
    /// A fresh database (named `demo`, which postgresConfiguration uses) and work directory for each run.
    func fresh() async throws -> String {
        round += 1
        let admin = try await PostgresConnection.connect(
            configuration: PostgresConnection.Configuration(
                unixSocketPath: socket, username: "postgres", password: nil, database: "postgres"),
            id: 0, logger: Logger(label: "strata.mirror.bench"))
        try await admin.query("DROP DATABASE IF EXISTS demo WITH (FORCE)", logger: Logger(label: "strata.mirror.bench"))
        try await admin.close()
        try await createDatabase("demo", socket: socket)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-mirror-bench-\(round)-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        return work
    }

    // Save latency, one instance saving one insert at a time.
    for (label, mode) in [
        ("off", nil), ("synchronous", MirrorConfiguration.Mode.synchronous), ("asynchronous", .asynchronous),
    ]
    where parts.contains("latency") {
        let work = try await fresh()
        let instance = BenchInstance("writer", work: work, socket: socket, mode: mode)
        var samples: [Int64] = []
        for index in 0..<saves { samples.append(try instance.save("latency\(index)")) }
        say("save latency, mirror \(label): p50 \(milliseconds(samples, 0.5)) ms p99 \(milliseconds(samples, 0.99)) ms")
        try await instance.close()
        try? FileManager.default.removeItem(atPath: work)
    }

    // Replication lag: one instance writes, another tails.
    for mode in [MirrorConfiguration.Mode.synchronous, .asynchronous] where parts.contains("lag") {
        let work = try await fresh()
        let writer = BenchInstance("writer", work: work, socket: socket, mode: mode)
        let reader = BenchInstance("reader", work: work, socket: socket, mode: mode)
        try writer.save("warm-up")
        try await waitForCursor(reader, try await logHead(socket: socket, database: "demo"))
        collector.samples.withLock { $0 = [] }
        let started = ContinuousClock.now
        for index in 0..<saves {
            if rate > 0 {
                // Paced: save `index` is due `index / rate` seconds after the start (at once when late).
                let due = started + .seconds(Double(index) / rate)
                if due > ContinuousClock.now { try await Task.sleep(until: due, clock: .continuous) }
            }
            try writer.save("lag\(index)")
        }
        let achieved = Double(saves) / (ContinuousClock.now - started).seconds
        try await waitForCursor(reader, try await logHead(socket: socket, database: "demo"))
        let lags = collector.samples.withLock { $0 }  // the writer applies nothing: every sample is the reader's
        say(
            "replication lag, \(mode) (\(Int(achieved)) saves/s): p50 \(milliseconds(lags, 0.5)) ms p99 \(milliseconds(lags, 0.99)) ms "
                + "p99.9 \(milliseconds(lags, 0.999)) ms")
        try await writer.close()
        try await reader.close()
        try? FileManager.default.removeItem(atPath: work)
    }

    // Sustained saves/s with 1, 2 and 4 writing instances, each a process of its own (BenchWriter.swift).
    for mode in [MirrorConfiguration.Mode.synchronous, .asynchronous] where parts.contains("throughput") {
        for writers in [1, 2, 4] {
            let work = try await fresh()
            let rate = try await throughput(
                writers: writers, perWriter: max(1, saves / writers), mode: mode, work: work, socket: socket)
            say(
                "throughput, \(mode), \(writers) writing instance\(writers == 1 ? "" : "s") (processes): \(Int(rate)) saves/s"
            )
            try? FileManager.default.removeItem(atPath: work)
        }
    }

    // Catch-up: from scratch, and from a cursor `changes` behind.
    if parts.contains("catchup") {
        let work = try await fresh()
        let writer = BenchInstance("writer", work: work, socket: socket, mode: .synchronous)
        let perSave = 100
        for index in 0..<max(1, changes / perSave) { try writer.save("c\(index)", inserts: perSave) }
        let head = try await logHead(socket: socket, database: "demo")
        var started = ContinuousClock.now
        let fromScratch = BenchInstance("scratch", work: work, socket: socket, mode: .synchronous)
        try await waitForCursor(fromScratch, head)
        say(
            "catch-up from scratch: \(Int(Double(changes) / (ContinuousClock.now - started).seconds)) changes/s (\(changes) changes)"
        )
        try await fromScratch.close()
        for index in 0..<max(1, changes / perSave) { try writer.save("d\(index)", inserts: perSave) }
        let newHead = try await logHead(socket: socket, database: "demo")
        started = ContinuousClock.now
        let behind = BenchInstance("scratch", work: work, socket: socket, mode: .synchronous)
        try await waitForCursor(behind, newHead)
        say(
            "catch-up from a cursor \(changes) changes behind: \(Int(Double(changes) / (ContinuousClock.now - started).seconds)) changes/s"
        )
        try await behind.close()
        try await writer.close()
        try? FileManager.default.removeItem(atPath: work)
    }

    // pgbench on the same server: the simple-update mix (-N) with 1 and 4 clients.
    let pgbench = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().last
        .map { "/usr/lib/postgresql/\($0)/bin/pgbench" }
    if !parts.contains("pgbench") {
        return
    } else if let pgbench, FileManager.default.isExecutableFile(atPath: pgbench) {
        let connection = ["-h", pgDirectory, "-p", String(port), "-U", "postgres"]
        try shell([pgbench, "-i", "-q"] + connection + ["demo"])
        for clients in [1, 4] {
            say("pgbench -N, \(clients) client\(clients == 1 ? "" : "s"):")
            try shell(
                [
                    pgbench, "-N", "-n", "-c", String(clients), "-j", String(clients), "-t",
                    String(max(100, saves / clients)),
                ] + connection + ["demo"])
        }
    } else {
        say("pgbench: not found under /usr/lib/postgresql")
    }
}

/// Writes a line to standard output at once (unbuffered), so it stays in order with pgbench's output.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
