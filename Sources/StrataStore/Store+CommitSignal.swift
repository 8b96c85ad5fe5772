import StrataSynchronization
import Synchronization

/// Wakes tasks waiting for a store's next commit: the live history tail waits here instead of
/// polling the log. Holds only sequence numbers, never data.
final class CommitSignal: Sendable {
    private struct Waiter {
        var id: UInt64
        var after: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var latest: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
        var closed = false
    }
    private let state = Lock(State())

    /// A store's signal; the store is held weakly, so that an identifier reused by a later
    /// store is not taken for it.
    private struct Entry: Sendable {
        weak var store: Store?
        let signal: CommitSignal
    }

    /// The signals of the stores someone waited on, by store.
    private static let signals = Lock<[ObjectIdentifier: Entry]>([:])

    /// The signal of `store`.
    static func of(_ store: Store) -> CommitSignal {
        signals.withLock { signals in
            if let entry = signals[ObjectIdentifier(store)], entry.store === store { return entry.signal }
            signals = signals.filter { $0.value.store != nil }
            let signal = CommitSignal()
            signal.state.withLock { $0.latest = store.lastSequence }
            signals[ObjectIdentifier(store)] = Entry(store: store, signal: signal)
            return signal
        }
    }

    /// The signal of `store`, if someone waited on it.
    private static func existing(_ store: Store) -> CommitSignal? {
        signals.withLock { signals in
            guard let entry = signals[ObjectIdentifier(store)], entry.store === store else { return nil }
            return entry.signal
        }
    }

    /// Records that `store` committed up to `sequence`, waking the tasks waiting for it; costs
    /// one dictionary lookup when no one waits on the store.
    static func notify(_ store: Store, sequence: UInt64) {
        existing(store)?.publish(sequence)
    }

    /// Wakes every waiter of `store` for good: the store closed.
    static func close(_ store: Store) {
        guard let signal = existing(store) else { return }
        let waiters = signal.state.withLock { state in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    private func publish(_ sequence: UInt64) {
        let ready = state.withLock { state -> [Waiter] in
            state.latest = max(state.latest, sequence)
            let ready = state.waiters.filter { $0.after < state.latest }
            state.waiters.removeAll { $0.after < state.latest }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once a commit after `sequence` happened, the store closed, or the task was cancelled.
    func wait(after sequence: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.closed || state.latest > sequence || Task.isCancelled { return true }
                    state.waiters.append(Waiter(id: id, after: sequence, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }
}

extension Store {
    /// Returns once a transaction after `sequence` is committed, the store is closed, or the
    /// task is cancelled, without polling the log.
    public func waitForCommit(after sequence: UInt64) async {
        await CommitSignal.of(self).wait(after: sequence)
    }
}
