#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that many threads read at once and that seldom changes, behind a reader-writer lock
/// (`pthread_rwlock_t`): readers never wait for one another, only for a writer.
///
/// The coordinator keeps its stores in one: every save reads them four times (the store of each
/// new object's entity, the stores it commits to, the replicator check). Behind a `Mutex` (a
/// priority-inheritance futex, which hands itself to the thread waiting for it, often one not
/// running when there are more threads than cores) the 16 writers of W2.concurrent16 on 2 cores
/// could queue on those reads for the rest of the run: ~4,100 `FUTEX_LOCK_PI` calls in such a
/// run, against ~20 in the others, and 0.30 s instead of 0.12.
final class ReadMostly<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is read only under the read lock and written only under the write lock.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var value: Value

    /// Keeps `value`.
    init(_ value: Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
        self.value = value
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// The result of `body` on the value, read while other threads may read it too.
    func read<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// The result of `body` changing the value, while no other thread reads or changes it.
    func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
