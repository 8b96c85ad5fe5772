import DequeModule
import Foundation
import StrataSynchronization
import Synchronization

/// At most a number of requests at work in background contexts at once; the others wait their
/// turn in arrival order, suspended, holding no thread. `Sendable`.
///
/// A background context runs each block on a thread of Dispatch's pool, and a save holds that
/// thread until its commit group is durable. Without a limit, a loaded service runs a thread per
/// request in flight (64 at 64 connections, on a machine's few cores), and each commit group
/// wakes all of its writers at once to post their save notifications, contending for
/// `NotificationCenter`'s lock. The limit keeps the threads at work near what the cores and a
/// commit group use, as a SQL service's connection pool does (GRDB's `DatabasePool` reads on at
/// most five connections and writes on one).
public final class ContextLimit: Sendable {
    /// The free places and the requests waiting for one, first first.
    private struct State {
        var free: Int
        var waiting: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let state: Lock<State>

    /// The limit ``ServiceConfiguration/contexts`` defaults to: eight for each core, so that
    /// every core has work while most of the requests at work wait for their commit group.
    public static var defaultLimit: Int { 8 * max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// A limit of `limit` requests at once (at least one).
    public init(_ limit: Int) {
        precondition(limit > 0, "a context limit lets at least one request work")
        state = Lock(State(free: limit))
    }

    /// Runs `body` once a place is free, and frees the place when it returns or throws.
    public func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    /// Takes a free place, or waits for one.
    private func enter() async {
        let entered = state.withLock { state in
            guard state.free > 0 else { return false }
            state.free -= 1
            return true
        }
        if entered { return }
        await withCheckedContinuation { continuation in
            // Checked again under the lock: a place freed since the first check goes to this one.
            let entered = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if entered { continuation.resume() }
        }
    }

    /// Hands the place to the first waiting request, or frees it.
    private func leave() {
        let next = state.withLock { state in
            guard let next = state.waiting.popFirst() else {
                state.free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return next
        }
        next?.resume()
    }
}
