import Foundation
import Logging
import PostgresNIO
import Strata
import StrataTestSupport
import Testing
@testable import StrataMirror

/// A private PostgreSQL server for the tests (scripts/private-postgres.sh), in a temporary
/// directory on its own port; stopped when released.
final class PrivatePostgres: Sendable {
    let directory: URL
    let port: Int

    /// Whether the PostgreSQL binaries are installed (the mirror tests are skipped otherwise).
    static let isAvailable: Bool = (try? run(["check"])) != nil

    /// The server the tests share, started on first use.
    static let shared: PrivatePostgres = {
        let server = try! PrivatePostgres()
        atexit { PrivatePostgres.sharedStop() }
        return server
    }()

    private static func sharedStop() {
        try? shared.stop()
        try? FileManager.default.removeItem(at: shared.directory)
    }

    /// Creates the cluster and starts it.
    init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("strata-pg-\(UUID().uuidString.prefix(8))")
        port = Int.random(in: 40_000..<60_000)
        try start()
    }

    deinit {
        try? stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func start() throws { try Self.run(["start", directory.path, String(port)]) }

    func stop(mode: String = "fast") throws { try Self.run(["stop", directory.path, mode]) }

    /// A connection configuration for `database`.
    func configuration(database: String = "postgres") -> PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            unixSocketPath: directory.appendingPathComponent(".s.PGSQL.\(port)").path, username: "postgres",
            password: nil, database: database)
    }

    /// Creates a fresh database and returns its configuration.
    func newDatabase() async throws -> PostgresConnection.Configuration {
        let name = "strata_\(UUID().uuidString.prefix(8).lowercased())"
        let connection = try await PostgresConnection.connect(
            configuration: configuration(), id: 0, logger: Logger(label: "test"))
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test"))
        try await connection.close()
        return configuration(database: name)
    }

    private static func run(_ arguments: [String]) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("scripts/private-postgres.sh")
        let status = try spawnAndWait(script.path, arguments)
        guard status == 0 else {
            throw CoreDataError(
                .coreData, "private-postgres.sh \(arguments.joined(separator: " ")) exited with \(status)")
        }
    }
}

/// Runs `path` with `arguments` and returns its exit status. `posix_spawn` and `waitpid`
/// rather than `Process`, whose exit monitoring misses a child that leaves a daemon running.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> Int32 {
    var pid: pid_t = 0
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let spawned = posix_spawn(&pid, path, nil, nil, argv, environ)
    guard spawned == 0 else { throw CoreDataError(.coreData, "cannot run \(path): error \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

/// The tests' model: `Item(name: String, count: Int64)`.
func mirrorTestModel() -> ManagedObjectModel {
    let item = EntityDescription(name: "Item")
    let name = AttributeDescription(name: "name", type: .string)
    let count = AttributeDescription(name: "count", type: .integer64)
    count.defaultValue = Int64(0)
    item.properties = [name, count]
    let model = ManagedObjectModel()
    model.entities = [item]
    return model
}

/// One instance: a mirrored container on its own store directory.
final class MirrorInstance: @unchecked Sendable {
    let container: MirroredPersistentContainer
    let url: URL
    private var tasks: [Task<Void, any Error>] = []

    /// Opens the instance `name` with its store in `folder`, sharing `postgres` (the model: mirrorTestModel()).
    init(
        _ name: String, folder: TemporaryDirectory, postgres: PostgresConnection.Configuration,
        pollInterval: Duration = .milliseconds(20),
        mode: MirrorConfiguration.Mode = .synchronous, model: ManagedObjectModel = mirrorTestModel(),
        migratesAutomatically: Bool = true
    ) throws {
        var logger = Logger(label: "strata.mirror.\(name)")
        if ProcessInfo.processInfo.environment["STRATA_MIRROR_DEBUG"] != nil { logger.logLevel = .debug }
        var configuration = MirrorConfiguration(postgres: postgres, instanceName: name, logger: logger)
        configuration.pollInterval = pollInterval
        configuration.mode = mode
        container = MirroredPersistentContainer(name: name, managedObjectModel: model, mirror: configuration)
        url = folder.url.appendingPathComponent("\(name).strata")
        let description = PersistentStoreDescription(url: url)
        description.shouldMigrateStoreAutomatically = migratesAutomatically
        container.persistentStoreDescriptions = [description]
        let failure = LockedError()
        container.loadPersistentStores { _, error in failure.set(error) }
        if let error = failure.get() { throw error }
    }

    /// The mirror of the instance's store.
    var mirror: PostgresMirror {
        container.persistentStoreCoordinator.persistentStores[0].replicator as! PostgresMirror
    }

    /// Starts tailing the shared log.
    func startTailing() {
        let tail = MirrorTailService(mirror: mirror)
        tasks.append(Task { try await tail.run() })
    }

    /// Stops tailing and closes the store.
    func close() async throws {
        for task in tasks { task.cancel() }
        for task in tasks { _ = try? await task.value }
        tasks = []
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
    }

    /// Inserts an item and saves.
    @discardableResult
    func insert(_ name: String, count: Int64 = 0) throws -> ManagedObjectID {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let item = EntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(name, forKey: "name")
            item.setValue(count, forKey: "count")
            try context.save()
            return item.objectID
        }
    }

    /// Sets the count of the item named `name` and saves.
    func setCount(_ count: Int64, of name: String) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try FetchPredicate(checkedFormat: "name == %@", name)
            try context.fetch(request)[0].setValue(count, forKey: "count")
            try context.save()
        }
    }

    /// Every item's name and count, read from the store by a new context.
    func items() throws -> [String: Int64] {
        let context = container.newBackgroundContext()
        return try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            var items: [String: Int64] = [:]
            for item in try context.fetch(request) {
                items[item.value(forKey: "name") as! String] = item.value(forKey: "count") as? Int64 ?? 0
            }
            return items
        }
    }

    /// The number of items in the store (duplicates included).
    func itemCount() throws -> Int {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
    }

    /// Waits until `condition` holds for the instance's items (at most 20 s).
    func waitUntil(_ condition: ([String: Int64]) -> Bool) async throws -> Bool {
        for _ in 0..<400 {
            if condition(try items()) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

/// An error set from a completion handler.
final class LockedError: @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?

    func set(_ error: (any Error)?) { lock.withLock { if let error { self.error = error } } }
    func get() -> (any Error)? { lock.withLock { error } }
}

/// Runs `query` (one row, one bigint) on `postgres`.
func queryInt(_ query: PostgresQuery, on postgres: PostgresConnection.Configuration) async throws -> Int64 {
    let logger = Logger(label: "test")
    let connection = try await PostgresConnection.connect(configuration: postgres, id: 0, logger: logger)
    var result: Int64 = 0
    do {
        for try await value in try await connection.query(query, logger: logger).decode(Int64.self) { result = value }
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
    return result
}

/// Waits until the shared log at `postgres` holds `count` entries (at most 20 s).
func waitForLog(_ count: Int64, _ postgres: PostgresConnection.Configuration) async throws -> Bool {
    for _ in 0..<400 {
        if try await queryInt("SELECT count(*) FROM strata_txn", on: postgres) == count { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return false
}
