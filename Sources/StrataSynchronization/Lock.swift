// The one lock type of Strata's modules: a pthread mutex on Linux and in the thread-sanitizer
// build (`make tsan`), `Synchronization.Mutex` elsewhere. A module built with
// `MemberImportVisibility` imports `Synchronization` too wherever it calls `withLock(_:)`, since
// on Darwin that member is `Mutex`'s.
#if STRATA_TSAN || os(Linux)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t` (the default kind: not fair, no spinning): the lock of
/// Linux and of the thread-sanitizer build.
///
/// - On Linux, `Synchronization.Mutex` (Swift 6.3) waits on a priority-inheritance futex, whose
///   contended unlock hands the lock to the longest waiter: no other thread may take it until
///   that waiter is scheduled and runs. With more runnable threads than cores (a service's
///   dispatch pool under load) the store's state lock then convoys: each acquisition waits for a
///   wake-up, and reads that take the lock a few times per request wait tens of milliseconds
///   (swiftlang/swift#88440). glibc's mutex leaves the lock free on unlock and wakes one waiter,
///   so a running thread takes it meanwhile, as `NIOLock` and SQLite's mutexes do.
/// - The thread sanitizer learns that one thread's unlock happens before another's lock by
///   intercepting `pthread_mutex_lock` and `pthread_mutex_unlock`; `Mutex`'s futex it cannot see.
///
/// It has `Mutex`'s initializer and `withLock(_:)`, so code written against `Lock` compiles on
/// every platform. It is a class because its mutex must not move: holders keep a reference.
/// `withLock(_:)` is inlinable, as `Mutex`'s is, so that each caller's body is specialized and
/// inlined rather than called through the generic entry point.
///
/// `Sendable`: the value is only reached inside `withLock(_:)`, under the mutex.
public final class Lock<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the guarded value while holding the mutex, and returns what it returns.
    /// - Throws: What `body` throws; the mutex is released either way.
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
#else
public import Synchronization

/// A value guarded by a lock: `Synchronization.Mutex` itself (on Darwin an `os_unfair_lock`),
/// stored inline in its owner at no cost over using `Mutex` directly.
///
/// Strata's modules name this type rather than `Mutex` so that Linux and the thread-sanitizer
/// build can back it with a `pthread_mutex_t` (see the other declaration). `Sendable`, as
/// `Mutex` is.
public typealias Lock<Value: ~Copyable> = Mutex<Value>
#endif
