import Logging
import ServiceLifecycle
import Strata

/// Writes a checkpoint of the local store every ``MirrorConfiguration/checkpointInterval``, so
/// that a restarted instance replays little of its local log before it resumes tailing; and a
/// last one on graceful shutdown.
public struct MirrorCheckpointService: Service {
    let mirror: PostgresMirror

    /// Checkpoints until cancelled or shut down gracefully.
    ///
    /// - Throws: nothing but cancellation; failures are logged.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: mirror.configuration.checkpointInterval)
                } catch {
                    break
                }
                checkpoint()
            }
        }
        checkpoint()
    }

    private func checkpoint() {
        do {
            try mirror.engine.checkpoint()
            mirror.logger.debug("checkpointed the local store")
        } catch {
            mirror.logger.warning("checkpointing the local store failed", metadata: ["error": "\(error)"])
        }
    }
}
