import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import StrataService
import StrataServiceGRDB

/// `strata-service`: the HTTP service over the reference model, on Strata or on SQLite through
/// GRDB, until SIGTERM or SIGINT shut it down gracefully.
@main
struct StrataServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-service",
        abstract: "An HTTP service over Strata (or GRDB): CRUD, lists with predicates, bulk import, a change feed.",
        discussion: """
            The environment configures it first (STRATA_SERVICE_HOST, STRATA_SERVICE_PORT, \
            STRATA_SERVICE_DIRECTORY, STRATA_SERVICE_BACKEND, STRATA_SERVICE_HISTORY_RETENTION, \
            STRATA_SERVICE_CACHE_SIZE, STRATA_SERVICE_CONTEXTS, LOG_LEVEL); \
            the options override it.
            """)

    @Option(help: "The address to listen on (default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on; 0 picks a free one (default 8080).")
    var port: Int?

    @Option(help: "The directory holding the store (default ./strata-service-data).")
    var directory: String?

    @Option(help: "The store behind the routes: strata or grdb (default strata).")
    var backend: String?

    @Option(
        help: """
            How long the change feed keeps a transaction's history, in seconds; named consumers keep \
            what they have not read, and 0 keeps all history (default 300).
            """)
    var historyRetention: String?

    @Option(
        help: """
            The store's cache in MiB: Strata's block cache, or each SQLite connection's page cache \
            (default: the backend's, 256 MiB for Strata, 2 MB for SQLite).
            """)
    var cacheSize: String?

    @Option(
        help: """
            The most requests at work in background contexts at once on Strata; the others wait \
            their turn (default: eight for each core).
            """)
    var contexts: String?

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical (default info).")
    var logLevel: String?

    /// The environment's configuration with the options applied.
    func configuration(environment: [String: String]) throws -> ServiceConfiguration {
        var configuration = try ServiceConfiguration(environment: environment)
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let directory { configuration.directory = URL(fileURLWithPath: directory) }
        if let backend {
            guard let kind = BackendKind(rawValue: backend) else {
                throw ValidationError("--backend \(backend) is not one of strata, grdb")
            }
            configuration.backend = kind
        }
        if let historyRetention {
            configuration.historyRetention = try ServiceConfiguration.historyRetention(
                seconds: historyRetention, source: "--history-retention")
        }
        if let cacheSize {
            configuration.cacheSize = try ServiceConfiguration.cacheSize(mebibytes: cacheSize, source: "--cache-size")
        }
        if let contexts { configuration.contexts = try ServiceConfiguration.contexts(contexts, source: "--contexts") }
        return configuration
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try configuration(environment: environment)
        let levelName = logLevel ?? environment["LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError(
                "the log level \(levelName) is not one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let logger = Logger(label: "strata-service")

        let backend: any Backend =
            switch configuration.backend {
            case .strata:
                try StrataBackend(
                    directory: configuration.directory, logger: logger, cacheSize: configuration.cacheSize,
                    contexts: configuration.contexts)
            case .grdb:
                try GRDBBackend(directory: configuration.directory, logger: logger, cacheSize: configuration.cacheSize)
            }
        let group = ServiceApplication.serviceGroup(
            configuration: configuration, backend: backend, registry: registry, logger: logger
        ) { port in
            logger.notice(
                "strata-service listening",
                metadata: [
                    "address": "http://\(configuration.host):\(port)", "backend": "\(configuration.backend)",
                ])
        }
        try await group.run()
        logger.notice("strata-service stopped")
    }
}
