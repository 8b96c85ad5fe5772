// strata-mirror-demo: three Strata instances, as separate processes, share one dataset through a
// private PostgreSQL server. They save concurrently; one is killed with SIGKILL and restarted,
// PostgreSQL is restarted midway; then every store must hold the same data.
//
//   strata-mirror-demo [SAVES] [MODE]   runs the demo (SAVES per instance, default 200) in MODE
//                                  (synchronous or asynchronous; both, one after the other, by default)
//   strata-mirror-demo instance …  one instance (started by the demo)
//   strata-mirror-demo bench [SAVES] [CHANGES] [RATE] [PARTS]   the figures (Bench.swift)
//   strata-mirror-demo writer …    one writing instance of the bench (BenchWriter.swift)
//   strata-mirror-demo follow …    an instance applying the log, for the kill soak (Follow.swift)
import Foundation
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Strata
import StrataMirror
import StrataSynchronization
import Synchronization

// MARK: The instance

/// Collects the mirror's lag samples (swift-metrics timer `strata_mirror_lag`); other metrics are dropped.
final class LagCollector: MetricsFactory, TimerHandler, @unchecked Sendable {
    let samples = Lock<[Int64]>([])
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { NOOPMetricsHandler.instance }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        label == "strata_mirror_lag" ? self : NOOPMetricsHandler.instance
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func recordNanoseconds(_ duration: Int64) { samples.withLock { $0.append(duration) } }
}

func demoModel() -> ManagedObjectModel {
    let item = EntityDescription(name: "Item")
    let count = AttributeDescription(name: "count", type: .integer64)
    count.defaultValue = Int64(0)
    item.properties = [AttributeDescription(name: "name", type: .string), count]
    let model = ManagedObjectModel()
    model.entities = [item]
    return model
}

func postgresConfiguration(socket: String) -> PostgresConnection.Configuration {
    PostgresConnection.Configuration(unixSocketPath: socket, username: "postgres", password: nil, database: "demo")
}

/// Every item as `name=count`, sorted: what must be identical across the stores.
func digest(_ container: PersistentContainer) throws -> [String] {
    let context = container.newBackgroundContext()
    return try context.performAndWait {
        try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            .map { "\($0.value(forKey: "name") as! String)=\($0.value(forKey: "count") as? Int64 ?? 0)" }.sorted()
    }
}

/// Saves `body`'s changes, retrying while PostgreSQL is unreachable and after conflicts.
func saveRetrying(_ container: PersistentContainer, _ body: (ManagedObjectContext) throws -> Void) throws {
    while true {
        let context = container.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        do {
            try context.performAndWait {
                try body(context)
                try context.save()
            }
            return
        } catch let error as CoreDataError where error.code == .persistentStoreSave || error.code == .managedObjectMerge
        {
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

func runInstance(_ arguments: [String]) async throws {
    let (name, work, socket, saves, prefix) = (
        arguments[0], arguments[1], arguments[2], Int(arguments[3])!, arguments[4]
    )
    let mode: MirrorConfiguration.Mode = arguments[5] == "asynchronous" ? .asynchronous : .synchronous
    let collector = LagCollector()
    MetricsSystem.bootstrap(collector)
    var logger = Logger(label: "strata.mirror.\(name)")
    logger.logLevel = .error
    var configuration = MirrorConfiguration(
        postgres: postgresConfiguration(socket: socket), instanceName: name, logger: logger)
    configuration.pollInterval = .milliseconds(20)
    configuration.mode = mode
    let container = MirroredPersistentContainer(name: name, managedObjectModel: demoModel(), mirror: configuration)
    container.persistentStoreDescriptions = [
        PersistentStoreDescription(url: URL(fileURLWithPath: "\(work)/\(name).strata"))
    ]
    container.loadPersistentStores { _, error in
        if let error { fatalError("\(name): \(error)") }
    }
    let services = Task { [logger] in try await ServiceGroup(services: container.services, logger: logger).run() }

    // Saves block their thread while PostgreSQL answers: run them off the cooperative pool.
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread.detachNewThread {
            continuation.resume(
                with: Result {
                    for index in 0..<saves {
                        try saveRetrying(container) { context in
                            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
                            item.setValue("\(name)-\(prefix)\(index)", forKey: "name")
                            // Every fourth save also bumps an item another instance may be bumping: conflicts.
                            if index % 4 == 3 {
                                let request = FetchRequest<ManagedObject>(entityName: "Item")
                                request.fetchLimit = 1
                                request.predicate = FetchPredicate(format: "name ENDSWITH %@", "-\(prefix)\(index / 8)")
                                if let other = try context.fetch(request).first {
                                    other.setValue((other.value(forKey: "count") as? Int64 ?? 0) + 1, forKey: "count")
                                }
                            }
                        }
                        Thread.sleep(forTimeInterval: Double.random(in: 0.002...0.015))
                        // Halfway: the demo kills this instance now if it is the one to kill.
                        if index == saves / 2 {
                            _ = FileManager.default.createFile(atPath: "\(work)/\(name).half", contents: nil)
                        }
                    }
                })
        }
    }
    // Done once every save is in the shared log (asynchronous saves wait for their export).
    while try container.hasPendingExports() { try await Task.sleep(for: .milliseconds(20)) }
    _ = FileManager.default.createFile(atPath: "\(work)/\(name).done", contents: nil)

    // Wait until the demo has restarted the killed instance and every instance is done, then
    // until this store holds the whole log. (An instance that finished before the kill must
    // still receive what the restarted one saves.)
    var connection: PostgresConnection?
    while true {
        do {
            if connection?.isClosed ?? true {
                connection = try await PostgresConnection.connect(
                    configuration: postgresConfiguration(socket: socket), id: 1, logger: logger)
            }
            let done = try FileManager.default.contentsOfDirectory(atPath: work).filter { $0.hasSuffix(".done") }.count
            var head: Int64 = -1
            for try await position in try await connection!.query("SELECT pos FROM strata_head", logger: logger).decode(
                Int64.self)
            { head = position }
            let restarted = FileManager.default.fileExists(atPath: "\(work)/\(restartedMarker)")
            if restarted, done == 3, try container.mirrorCursors().values.first == head { break }
        } catch {
            // PostgreSQL restarting: close what is left of the connection (PostgresNIO requires
            // it before the last reference goes) and connect again.
            try? await connection?.close()
            connection = nil
        }
        try await Task.sleep(for: .milliseconds(100))
    }
    try? await connection?.close()
    services.cancel()
    _ = try? await services.value
    try digest(container).joined(separator: "\n").write(
        toFile: "\(work)/\(name).digest", atomically: true, encoding: .utf8)
    try collector.samples.withLock { $0 }.map(String.init).joined(separator: "\n")
        .write(toFile: "\(work)/\(name).lag.\(prefix.isEmpty ? "0" : "1")", atomically: true, encoding: .utf8)
}

// MARK: The demo

/// The file the demo creates in the work directory once the killed instance runs again: no
/// instance stops before it exists.
let restartedMarker = "restarted"

/// Starts `path` with `arguments`; returns its process ID. `posix_spawn` rather than `Process`,
/// whose exit monitoring misses a child that leaves a daemon (the PostgreSQL server) running.
func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
    var pid: pid_t = 0
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let spawned = posix_spawn(&pid, path, nil, nil, argv, environ)
    guard spawned == 0 else { throw CoreDataError(.coreData, "cannot run \(path): error \(spawned)") }
    return pid
}

/// Waits for `pid` to end; returns its exit status (128 + the signal when killed).
func wait(for pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

func shell(_ arguments: [String]) throws {
    let status = wait(for: try spawn(arguments[0], Array(arguments.dropFirst())))
    guard status == 0 else {
        throw CoreDataError(.coreData, "\(arguments.joined(separator: " ")) exited with \(status)")
    }
}

func launch(_ arguments: [String]) throws -> pid_t {
    try spawn(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, ["instance"] + arguments)
}

/// scripts/private-postgres.sh (`STRATA_PG_SCRIPT` overrides it), found from this source file
/// with symbolic links resolved (the Benchmarks package builds these sources through one).
func privatePostgresScript() -> String {
    ProcessInfo.processInfo.environment["STRATA_PG_SCRIPT"]
        ?? URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("../../scripts/private-postgres.sh").standardized.path
}

/// Runs the demo; returns whether the stores ended identical and the log gap-free.
func runDemo(saves: Int, mode: MirrorConfiguration.Mode) async throws -> Bool {
    let script = privatePostgresScript()
    let work = FileManager.default.temporaryDirectory.appendingPathComponent(
        "strata-mirror-demo-\(UUID().uuidString.prefix(8))"
    ).path
    let pgDirectory = "/tmp/strata-demo-pg-\(UUID().uuidString.prefix(8))"
    let port = Int.random(in: 40_000..<60_000)
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    print("mirror-demo: starting a private PostgreSQL server in \(pgDirectory) (port \(port))")
    try shell([script, "start", pgDirectory, String(port)])
    defer {
        try? shell([script, "stop", pgDirectory])
        try? FileManager.default.removeItem(atPath: pgDirectory)
        try? FileManager.default.removeItem(atPath: work)
    }
    let socket = "\(pgDirectory)/.s.PGSQL.\(port)"
    let logger = Logger(label: "strata.mirror.demo")
    let admin = try await PostgresConnection.connect(
        configuration: PostgresConnection.Configuration(
            unixSocketPath: socket, username: "postgres", password: nil, database: "postgres"),
        id: 0, logger: logger)
    try await admin.query("CREATE DATABASE demo", logger: logger)
    try await admin.close()

    let names = ["alpha", "bravo", "charlie"]
    print("mirror-demo: \(names.count) instances save \(saves) transactions each, concurrently, in \(mode) mode")
    var processes = try names.map { try launch([$0, work, socket, String(saves), "", "\(mode)"]) }

    // Kill bravo halfway through its saves (asynchronous saves are fast: a fixed delay could
    // find every instance done already).
    let giveUp = ContinuousClock.now + .seconds(60)
    while !FileManager.default.fileExists(atPath: "\(work)/bravo.half") && ContinuousClock.now < giveUp {
        try await Task.sleep(for: .milliseconds(5))
    }
    print("mirror-demo: SIGKILL bravo (pid \(processes[1])) halfway through its saves")
    kill(processes[1], SIGKILL)
    _ = wait(for: processes[1])
    try? FileManager.default.removeItem(atPath: "\(work)/bravo.done")  // in case it had finished
    try await Task.sleep(for: .seconds(1))
    print("mirror-demo: restarting PostgreSQL (immediate shutdown)")
    try shell([script, "stop", pgDirectory, "immediate"])
    try await Task.sleep(for: .seconds(1))
    try shell([script, "start", pgDirectory, String(port)])
    print("mirror-demo: restarting bravo; it resumes from its cursor")
    processes[1] = try launch(["bravo", work, socket, String(saves / 2), "r", "\(mode)"])
    _ = FileManager.default.createFile(atPath: "\(work)/\(restartedMarker)", contents: nil)

    for (name, process) in zip(names, processes) {
        let status = wait(for: process)
        guard status == 0 else { throw CoreDataError(.coreData, "instance \(name) exited with \(status)") }
    }
    let digests = try names.map { try String(contentsOfFile: "\(work)/\($0).digest", encoding: .utf8) }
    let identical = Set(digests).count == 1

    let check = try await PostgresConnection.connect(
        configuration: postgresConfiguration(socket: socket), id: 2, logger: logger)
    var (transactions, lowest, highest) = (Int64(0), Int64(0), Int64(0))
    for try await row in try await check.query(
        "SELECT count(*), coalesce(min(pos), 0), coalesce(max(pos), 0) FROM strata_txn", logger: logger
    )
    .decode((Int64, Int64, Int64).self) {
        (transactions, lowest, highest) = row
    }
    try await check.close()
    let gapFree = transactions == highest - lowest + 1
    print(
        "mirror-demo: each store holds \(digests[0].split(separator: "\n").count) items; log positions \(lowest)...\(highest), gap-free: \(gapFree ? "yes" : "no")"
    )

    var lags: [Int64] = []
    for file in try FileManager.default.contentsOfDirectory(atPath: work) where file.contains(".lag.") {
        lags += try String(contentsOfFile: "\(work)/\(file)", encoding: .utf8).split(separator: "\n").compactMap {
            Int64($0)
        }
    }
    lags.sort()
    func percentile(_ p: Double) -> String {
        guard !lags.isEmpty else { return "n/a" }
        return String(format: "%.1f", Double(lags[min(lags.count - 1, Int(Double(lags.count) * p))]) / 1e6)
    }
    print("mirror-demo: \(mode) mode")
    print(
        "mirror: \(highest) transactions, 3 instances, lag p50 \(percentile(0.5)) ms p99 \(percentile(0.99)) ms, identical: \(identical && gapFree ? "yes" : "no")"
    )
    return identical && gapFree
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "instance" {
    try await runInstance(Array(arguments.dropFirst()))
} else if arguments.first == "follow" && arguments.count == 5 {
    try await runFollower(Array(arguments.dropFirst()))
} else if arguments.first == "writer" {
    try await runWriter(Array(arguments.dropFirst()))
} else if arguments.first == "bench" {
    let options = Array(arguments.dropFirst())
    try await runBench(
        saves: options.first.flatMap { Int($0) } ?? 2_000,
        changes: options.dropFirst().first.flatMap { Int($0) } ?? 100_000,
        rate: options.dropFirst(2).first.flatMap { Double($0) } ?? 1_000,
        parts: options.dropFirst(3).first.map { Set($0.split(separator: ",").map(String.init)) } ?? BenchPart.all)
} else {
    let modes: [MirrorConfiguration.Mode] =
        switch arguments.dropFirst().first {
        case "synchronous": [.synchronous]
        case "asynchronous": [.asynchronous]
        default: [.synchronous, .asynchronous]
        }
    var identical = true
    for mode in modes {
        if try await !runDemo(saves: arguments.first.flatMap { Int($0) } ?? 200, mode: mode) { identical = false }
    }
    if !identical { exit(1) }
}
