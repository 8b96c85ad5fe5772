// The one lock type of Strata's modules, so that the thread sanitizer sees every lock (`make tsan`).
// A module built with `MemberImportVisibility` imports `Synchronization` too wherever it calls
// `withLock(_:)`, since in the normal build that member is `Mutex`'s.
public import Synchronization

#if STRATA_TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`: the lock of the thread-sanitizer build (`make tsan`,
/// which compiles with `-DSTRATA_TSAN`).
///
/// The sanitizer learns that one thread's unlock happens before another's lock by intercepting
/// `pthread_mutex_lock` and `pthread_mutex_unlock`. `Synchronization.Mutex` on Linux waits on a
/// futex inside the uninstrumented Synchronization library, which the sanitizer never sees, so
/// under it every access guarded by a `Mutex` reads as a race. This class has `Mutex`'s
/// initializer and `withLock(_:)`, so code written against `Lock` compiles in both builds.
/// It is a class (one allocation for the object, the mutex and the value) because its mutex
/// must not move; its cost matters only in the sanitizer build.
///
/// `Sendable`: the value is only reached inside `withLock(_:)`, under the mutex.
public final class Lock<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

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
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
#else
/// A value guarded by a lock: `Synchronization.Mutex` itself, stored inline in its owner at no
/// cost over using `Mutex` directly.
///
/// Strata's modules name this type rather than `Mutex` so that the thread-sanitizer build
/// (`make tsan`, compiled with `-DSTRATA_TSAN`) can back it with a `pthread_mutex_t`, whose lock
/// and unlock the sanitizer intercepts; `Mutex`'s futex it cannot see. `Sendable`, as `Mutex` is.
public typealias Lock<Value: ~Copyable> = Mutex<Value>
#endif
