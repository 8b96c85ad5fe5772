import Logging
import NIOCore
import PostgresNIO
import StrataSynchronization
import Synchronization

extension PostgresConnection {
    /// Runs `query` unless the connection is closed. postgres-nio writes a query to its channel
    /// without a promise for the write: on a closed channel the query is dropped and whoever
    /// awaits it stays suspended for ever. So the check and the write run together on the
    /// channel's event loop (``EventLoopTaskExecutor``), where nothing closes the channel in
    /// between: a query written to an open channel reaches postgres-nio's handler, which answers
    /// it or fails it when the connection closes.
    ///
    /// - Throws: ``MirrorError/connectionLost`` when the connection is closed; what the query throws.
    @discardableResult
    func send(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            guard !isClosed else { throw MirrorError.connectionLost }
            return try await self.query(query, logger: logger, file: file, line: line)
        }
    }

    /// Runs `body`, failing as soon as the connection closes under it or `seconds` pass, and then
    /// closing the connection. A connection already closed fails at once, before `body` sends
    /// anything (see ``send(_:logger:file:line:)``).
    ///
    /// - Parameter executor: where `body` runs (the blocking bridge's executor for a save).
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; ``MirrorError/connectionLost`` or ``MirrorError/timedOut(_:)``.
    func withDeadline<T: Sendable>(
        seconds: Double, on executor: (any TaskExecutor)? = nil, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard !isClosed else { throw MirrorError.connectionLost }
        let race = DeadlineRace<T>()
        return try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            let work = Task(executorPreference: executor) {
                do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
            }
            let watchdog = Task(executorPreference: executor) { [self] in
                let end = ContinuousClock.now + .seconds(seconds)
                while !race.isFinished {
                    if isClosed || ContinuousClock.now >= end {
                        if race.finish(.failure(isClosed ? MirrorError.connectionLost : MirrorError.timedOut(seconds)))
                        {
                            work.cancel()
                            try? await close()
                        }
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            race.onFinish { watchdog.cancel() }
        }
    }
}

/// Runs jobs on a NIO event loop: a job's synchronous steps run in one event loop task, so
/// nothing else on that loop (a channel closing) happens between them.
private final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute { job.runSynchronously(on: executor) }
    }
}

/// The first of a body and its watchdog to finish resumes the continuation.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var finished = false
        var onFinish: (@Sendable () -> Void)?
    }
    private let state = Lock(State())

    var isFinished: Bool { state.withLock { $0.finished } }

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Runs `body` once the race is over (at once if it is).
    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinish = body
            return false
        }
        if run { body() }
    }

    /// Resumes the continuation with `result` unless it was resumed; returns whether it was this call.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, then) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer {
                state.continuation = nil
                state.onFinish = nil
            }
            return (state.continuation, state.onFinish)
        }
        guard let continuation else { return false }
        continuation.resume(with: result)
        then?()
        return true
    }
}
