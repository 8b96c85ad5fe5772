import Logging
import PostgresNIO
import ServiceLifecycle

/// Tails the shared log: applies what other instances saved to the local store (each entry with
/// the cursor in one local transaction, so exactly once), posts the remote change notification
/// and merges into the container's view context. Woken by `LISTEN` as a hint, and polls every
/// ``MirrorConfiguration/pollInterval`` whatever happens to notifications. Reconnects after a
/// failure; stops on graceful shutdown or cancellation.
public struct MirrorTailService: Service {
    let mirror: PostgresMirror

    /// Tails the log until cancelled or shut down gracefully.
    ///
    /// - Throws: nothing but cancellation; connection failures are logged and retried.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await tail()
                } catch {
                    if Task.isCancelled { return }
                    mirror.logger.warning("the mirror's tail lost PostgreSQL; retrying", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    private func tail() async throws {
        let connection = try await mirror.connect()
        do {
            try await tail(on: connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    private func tail(on connection: PostgresConnection) async throws {
        let poll = mirror.configuration.pollInterval
        try await withThrowingTaskGroup(of: Void.self) { group in
            let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                try await connection.listen(on: MirrorSchema.channel) { notifications in
                    for try await _ in notifications { wake.yield() }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: poll)
                    wake.yield()
                }
            }
            wake.yield()
            var lastHeartbeat = ContinuousClock.now - .seconds(60)
            do {
                for await _ in wakes {
                    while try await mirror.catchUp(on: connection) {}
                    if ContinuousClock.now - lastHeartbeat >= .seconds(1) {
                        try await mirror.heartbeat(on: connection)
                        lastHeartbeat = .now
                    }
                }
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }
}
