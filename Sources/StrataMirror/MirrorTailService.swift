import Logging
import PostgresNIO
import ServiceLifecycle

/// Tails the shared log: applies what other instances saved to the local store (each entry with
/// the cursor in one local transaction, so exactly once), posts the remote change notification
/// and merges into the container's view context; in asynchronous mode it also exports the
/// local saves. Woken by `LISTEN` as a hint, and polls every
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
                    mirror.logger.warning(
                        "the mirror's tail lost PostgreSQL; retrying",
                        metadata: ["error": "\(String(reflecting: error))"])
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

    /// Tails on `connection` until it fails or the task is cancelled. The `LISTEN` runs in a
    /// task of its own that nothing waits for: postgres-nio may leave a listener suspended when
    /// the server goes away mid-`LISTEN`, and the caller closes the connection anyway.
    private func tail(on connection: PostgresConnection) async throws {
        let poll = mirror.configuration.pollInterval
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let listener = Task {
            try await connection.listen(on: MirrorSchema.channel) { notifications in
                for try await _ in notifications { wake.yield() }
            }
        }
        let poller = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: poll)
                wake.yield()
            }
        }
        mirror.wakeTail.withLock { $0 = { wake.yield() } }
        defer {
            mirror.wakeTail.withLock { $0 = nil }
            listener.cancel()
            poller.cancel()
        }
        wake.yield()
        var lastHeartbeat = ContinuousClock.now - .seconds(60)
        for await _ in wakes {
            // Each exchange with PostgreSQL has a deadline: a server that vanished without
            // closing the socket fails it.
            while try await mirror.step(on: connection) {}
            if ContinuousClock.now - lastHeartbeat >= .seconds(1) {
                try await connection.withDeadline(seconds: PostgresMirror.deadline) { [self] in
                    try await mirror.heartbeat(on: connection)
                }
                lastHeartbeat = .now
            }
        }
    }
}
