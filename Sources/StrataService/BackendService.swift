import Logging
import ServiceLifecycle

/// Keeps a ``Backend`` open for as long as the service group runs and closes it on graceful
/// shutdown. `Sendable`.
///
/// It goes before the HTTP server in the group: a group shuts its services down in reverse
/// order, so the server stops taking requests and finishes the ones in flight (their saves
/// included) before the store closes.
public struct BackendService: Service {
    /// The store to close.
    public let backend: any Backend
    /// Where the close is logged.
    let logger: Logger

    /// Creates the service for `backend`.
    public init(backend: any Backend, logger: Logger) {
        self.backend = backend
        self.logger = logger
    }

    /// Waits for graceful shutdown, then closes the store.
    ///
    /// - Throws: what closing the store throws.
    public func run() async throws {
        try? await gracefulShutdown()
        try await backend.close()
        logger.info("store closed")
    }
}
