import Logging
import PostgresNIO
import ServiceLifecycle

/// Prunes the shared log below the lowest cursor of the live instances, every
/// ``MirrorConfiguration/pruneInterval``. An instance more than
/// ``MirrorConfiguration/maximumLag`` transactions behind, or unseen for
/// ``MirrorConfiguration/maximumSilence``, is evicted (logged and counted): it no longer holds
/// pruning back, and re-bootstraps from a snapshot when it finds the log pruned past its cursor.
/// Any instance may prune; running it on several is harmless.
public struct MirrorPruneService: Service {
    let mirror: PostgresMirror

    /// Prunes until cancelled or shut down gracefully.
    ///
    /// - Throws: nothing but cancellation; failures are logged and retried next interval.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: mirror.configuration.pruneInterval)
                } catch {
                    return
                }
                do {
                    let connection = try await mirror.connect()
                    do {
                        try await prune(on: connection)
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                } catch {
                    if Task.isCancelled { return }
                    mirror.logger.warning(
                        "pruning the shared log failed", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
        }
    }

    /// Deletes the log entries every live instance has applied, and evicts lagging instances.
    ///
    /// - Returns: the number of entries deleted.
    @discardableResult
    func prune(on connection: PostgresConnection) async throws -> Int {
        let logger = mirror.logger
        let configuration = mirror.configuration
        let head = try await MirrorLogEntry.head(on: connection, forUpdate: false, logger: logger)
        let silence = Double(configuration.maximumSilence.components.seconds)
        let lowest = head - configuration.maximumLag
        var floor = head
        for try await position in try await connection.send(
            """
            SELECT min(pos) FROM strata_instance WHERE seen > now() - make_interval(secs => \(silence)) AND pos >= \(lowest)
            """, logger: logger
        ).decode(Int64?.self) {
            if let position { floor = position }
        }
        for try await (origin, position) in try await connection.send(
            "DELETE FROM strata_instance WHERE pos < \(floor) RETURNING origin, pos", logger: logger
        ).decode((String, Int64).self) {
            mirror.metrics.evictions.increment()
            logger.notice(
                "evicted a lagging instance from the shared log's retention",
                metadata: [
                    "instance": "\(origin)", "cursor": "\(position)", "floor": "\(floor)",
                ])
        }
        let deleted = try await connection.send(
            "DELETE FROM strata_txn WHERE pos <= \(floor) RETURNING pos", logger: logger
        ).collect().count
        mirror.metrics.pruned.increment(by: deleted)
        if deleted > 0 {
            logger.debug("pruned the shared log", metadata: ["entries": "\(deleted)", "floor": "\(floor)"])
        }
        return deleted
    }
}
