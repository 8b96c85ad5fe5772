import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The context queues a thread holds while it runs a context's block synchronously.
///
/// `DispatchQueue.sync` runs a block on the calling thread, which keeps holding the queue it
/// was running on: a block of a child context, run by `performAndWait` from the main queue, that
/// saves into its main-queue parent would otherwise wait for the main queue it holds. Core Data
/// runs `performAndWait` at once on a queue the thread already holds; so does Strata, with this
/// record kept per thread.
final class HeldContextQueues {
    /// The contexts whose queues the thread holds.
    let contexts: Set<ObjectIdentifier>
    /// Whether the thread holds the main queue.
    let main: Bool

    init(contexts: Set<ObjectIdentifier>, main: Bool) {
        self.contexts = contexts
        self.main = main
    }

    /// The thread-specific slot holding the record of the thread, unretained: the frame of
    /// ``ManagedObjectContext/holdingQueues(_:_:)`` that set it keeps it alive. A pthread key
    /// rather than `Thread.current.threadDictionary`, whose every read and write bridged the
    /// record to an `NSObject` (about 12,000 instructions a `performAndWait`).
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left for the held context queues")
        return key
    }()
    /// Marks each private context queue with its context. The keys are static: a queue keeps
    /// its values under the key's address, and the main queue outlives every context, so a key
    /// made per context and freed with it would leave a value that a key made later at the same
    /// address (another context's, another library's) reads as its own.
    static let contextKey = DispatchSpecificKey<ObjectIdentifier>()
    /// Marks the main queue.
    static let mainKey = DispatchSpecificKey<Bool>()
    /// Marks the main queue once, when the first main-queue context is made.
    static let markMain: Void = DispatchQueue.main.setSpecific(key: mainKey, value: true)

    /// The thread-specific slot telling whether the thread is the main thread: 1 no, 2 yes,
    /// empty until first asked.
    private static let mainThreadKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left for the main-thread mark")
        return key
    }()

    /// Whether the calling thread is the main thread, asked of Foundation once a thread (on
    /// Linux, `Thread.isMainThread` makes two system calls every time).
    static var isMainThread: Bool {
        if let known = pthread_getspecific(mainThreadKey) { return Int(bitPattern: known) == 2 }
        let main = Thread.isMainThread
        pthread_setspecific(mainThreadKey, UnsafeRawPointer(bitPattern: main ? 2 : 1))
        return main
    }

    /// The record of the current thread, if it runs a context's block synchronously.
    // Unretained: the slot holds a record only inside ``with(_:_:)``, which keeps it alive.
    static var current: HeldContextQueues? {
        pthread_getspecific(threadKey).map { Unmanaged<HeldContextQueues>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with `held` as the record of the calling thread, then puts back the one before.
    static func with<T>(_ held: HeldContextQueues, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(threadKey)
        pthread_setspecific(threadKey, Unmanaged.passUnretained(held).toOpaque())
        defer { pthread_setspecific(threadKey, previous) }
        return try withExtendedLifetime(held) { try body() }
    }

    /// The queues the calling thread holds now: those recorded, the context queue it runs on and
    /// the main queue when it runs on it.
    static func heldByCaller() -> HeldContextQueues {
        let recorded = current
        var contexts = recorded?.contexts ?? []
        if let running = DispatchQueue.getSpecific(key: contextKey) { contexts.insert(running) }
        let main = recorded?.main == true || isMainThread || DispatchQueue.getSpecific(key: mainKey) == true
        return HeldContextQueues(contexts: contexts, main: main)
    }
}

extension ManagedObjectContext {
    /// Marks the context's queue, so that a thread running on it can tell (``HeldContextQueues``).
    func markQueue() {
        switch concurrencyType {
        case .privateQueueConcurrencyType:
            queue.setSpecific(key: HeldContextQueues.contextKey, value: ObjectIdentifier(self))
        case .mainQueueConcurrencyType: HeldContextQueues.markMain
        }
    }

    /// Whether the current thread holds the context's queue while it runs another context's
    /// block synchronously.
    var isHeldByCurrentThread: Bool {
        guard let held = HeldContextQueues.current else { return false }
        return concurrencyType == .mainQueueConcurrencyType ? held.main : held.contexts.contains(ObjectIdentifier(self))
    }

    /// Runs `body`, a block of this context run synchronously on its queue, recording that the
    /// thread holds this context's queue and those `caller` held.
    func holdingQueues<T>(_ caller: HeldContextQueues, _ body: () throws -> T) rethrows -> T {
        let held = HeldContextQueues(
            contexts: caller.contexts.union([ObjectIdentifier(self)]),
            main: caller.main || concurrencyType == .mainQueueConcurrencyType)
        return try HeldContextQueues.with(held, body)
    }
}
