import StrataSynchronization
import Synchronization

/// Held while a batch request reads a store and commits to it, so that batch requests run one at
/// a time (context saves take no lock: their commits carry a condition the engine checks).
/// Coordinators sharing one engine store share its lock.
final class StoreSaveLock: Sendable {
    private let mutex = Lock(())

    /// Creates a lock.
    init() {}

    /// Runs `body` holding every lock of `locks` (each once), taken in one fixed order so that
    /// saves over several stores cannot deadlock.
    static func withLocks(_ locks: [StoreSaveLock], _ body: () throws -> Void) throws {
        var unique: [ObjectIdentifier: StoreSaveLock] = [:]
        for lock in locks { unique[ObjectIdentifier(lock)] = lock }
        try withLocks(unique.sorted { $0.key < $1.key }.map(\.value)[...], body)
    }

    private static func withLocks(_ locks: ArraySlice<StoreSaveLock>, _ body: () throws -> Void) throws {
        guard let first = locks.first else { return try body() }
        try first.mutex.withLock { _ in try withLocks(locks.dropFirst(), body) }
    }
}
