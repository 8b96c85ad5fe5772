import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Strata
import StrataMirror

/// `strata-mirror-demo follow STORE SOCKET DATABASE NAME`: the instance `NAME` (the demo's model,
/// synchronous mode, a small batch size) opens its store at `STORE` and applies the shared log of
/// PostgreSQL's `DATABASE` (reached at the Unix socket `SOCKET`) until it holds the log's head as
/// it was at the start, with the tail service alone (nothing prunes the log). Prints
/// `start CURSOR HEAD` once the store is open and `caught up CURSOR` at the end, then exits 0.
/// The kill soak kills it at a random moment of the apply and checks the store against the log.
func runFollower(_ arguments: [String]) async throws {
    let (store, socket, database, name) = (arguments[0], arguments[1], arguments[2], arguments[3])
    var logger = Logger(label: "strata.mirror.\(name)")
    logger.logLevel = .error
    let postgres = PostgresConnection.Configuration(
        unixSocketPath: socket, username: "postgres", password: nil, database: database)
    var configuration = MirrorConfiguration(postgres: postgres, instanceName: name, logger: logger)
    configuration.pollInterval = .milliseconds(10)
    configuration.batchSize = 50
    let container = MirroredPersistentContainer(name: name, managedObjectModel: demoModel(), mirror: configuration)
    container.persistentStoreDescriptions = [PersistentStoreDescription(url: URL(fileURLWithPath: store))]
    let failure = LoadFailure()
    container.loadPersistentStores { _, error in failure.error = error }
    if let error = failure.error { throw error }
    let connection = try await PostgresConnection.connect(configuration: postgres, id: 1, logger: logger)
    var head: Int64 = 0
    for try await position in try await connection.query("SELECT pos FROM strata_head", logger: logger).decode(
        Int64.self)
    {
        head = position
    }
    try await connection.close()
    announce("start \(try container.mirrorCursors().values.first ?? 0) \(head)")
    let tail = container.services.filter { $0 is MirrorTailService }
    let services = Task { [logger] in try await ServiceGroup(services: tail, logger: logger).run() }
    while try container.mirrorCursors().values.first ?? 0 < head { try await Task.sleep(for: .milliseconds(2)) }
    announce("caught up \(try container.mirrorCursors().values.first ?? 0)")
    services.cancel()
    _ = try? await services.value
}

/// Writes `line` to standard output at once (unbuffered), so that a process that kills this one
/// has it.
private func announce(_ line: String) { FileHandle.standardOutput.write(Data("\(line)\n".utf8)) }

/// The error `loadPersistentStores` reports, if any; set once before it returns.
private final class LoadFailure: @unchecked Sendable {
    // @unchecked: written by the completion handler, which runs before loadPersistentStores
    // returns, and read only after that, on the same thread.
    var error: (any Error)?
}
