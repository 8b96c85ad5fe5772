import Foundation
import Logging
import ServiceLifecycle

/// Deletes the change feed's history older than the retention while the service group runs, as
/// a Core Data app purges the persistent history its readers are done with: a tenth of the
/// retention apart (at least a second, at most a minute). Named consumers keep what they have
/// not read. Without it the history, and what the store keeps in memory to find it, grows with
/// every write. `Sendable`.
public struct HistoryRetentionService: Service {
    /// The store whose history is deleted.
    public let backend: any Backend
    /// How long a transaction's history is kept.
    public let retention: Duration
    /// Where the deletions are logged (at debug) and their failures (at warning).
    let logger: Logger

    /// Creates the service for `backend`.
    public init(backend: any Backend, retention: Duration, logger: Logger) {
        self.backend = backend
        self.retention = retention
        self.logger = logger
    }

    /// The time between deletions.
    var interval: Duration { min(max(retention / 10, .seconds(1)), .seconds(60)) }

    /// Deletes the expired history every ``interval`` until graceful shutdown.
    public func run() async throws {
        let (seconds, attoseconds) = retention.components
        let kept = TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                do {
                    try await backend.deleteHistory(before: Date(timeIntervalSinceNow: -kept))
                    let oldest = try await backend.oldestToken()
                    logger.debug("deleted expired history", metadata: ["oldestToken": "\(oldest)"])
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("deleting expired history failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
