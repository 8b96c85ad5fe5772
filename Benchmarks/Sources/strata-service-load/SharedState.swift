import Synchronization

/// State the tasks of a run share, behind a lock: a class, so that tasks can capture it.
/// `Sendable`.
final class SharedState<State: Sendable>: Sendable {
    /// The state.
    private let mutex: Mutex<State>

    /// Shares `state`.
    init(_ state: State) {
        mutex = Mutex(state)
    }

    /// Runs `body` with the state, holding the lock.
    func withLock<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
