import Foundation
import StrataSynchronization
import Synchronization
import Testing

/// `Lock`, the one lock of Strata's modules: it excludes, releases on a throw, and does not hand
/// itself to a waiter on unlock (a thread that unlocks can take it again before the waiter it
/// woke runs), which keeps a busy lock from convoying when threads outnumber cores.
@Suite struct SynchronizationLockTests {
    /// Threads adding to a plain integer under the lock lose no addition.
    @Test func threadsAddingUnderTheLockLoseNothing() {
        let lock = Lock(0)
        let threads = 8
        let additions = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<additions { lock.withLock { $0 += 1 } }
        }
        #expect(lock.withLock { $0 } == threads * additions)
    }

    /// A body that throws leaves the lock free: another thread takes it at once.
    @Test func aThrowingBodyReleasesTheLock() {
        struct Failure: Error {}
        let lock = Lock("before")
        #expect(throws: Failure.self) {
            try lock.withLock { value throws(Failure) in
                value = "changed"
                throw Failure()
            }
        }
        let taken = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.withLock { _ in }
            taken.signal()
        }
        #expect(taken.wait(timeout: .now() + 10) == .success)
        #expect(lock.withLock { $0 } == "changed")
    }

    /// The guarded value is released with the lock.
    @Test func theValueIsReleasedWithTheLock() {
        final class Released: Sendable {
            let flag = Atomic(false)
        }
        final class Tracked: Sendable {
            let released: Released
            init(_ released: Released) { self.released = released }
            deinit { released.flag.store(true, ordering: .releasing) }
        }
        let released = Released()
        do {
            let lock = Lock(Tracked(released))
            lock.withLock { _ in }
        }
        let wasReleased = released.flag.load(ordering: .acquiring)
        #expect(wasReleased)
    }

    /// With a waiter blocked on the lock, the holder unlocks and locks again at once: the lock
    /// is not handed to the waiter, so in some trials the holder takes it again before the
    /// waiter runs. A fair lock (a priority-inheritance futex, which `Synchronization.Mutex` is
    /// on Linux) gives it to the waiter every time.
    @Test func anUnlockingThreadCanRetakeTheLockBeforeTheWaiterItWoke() {
        var retaken = 0
        for _ in 0..<20 {
            // The value: whether the waiter got in.
            let lock = Lock(false)
            let waiting = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            lock.withLock { _ in
                Thread.detachNewThread {
                    waiting.signal()
                    lock.withLock { $0 = true }
                    done.signal()
                }
                waiting.wait()
                // Long enough for the waiter to block in the kernel.
                Thread.sleep(forTimeInterval: 0.02)
            }
            if lock.withLock({ !$0 }) { retaken += 1 }
            done.wait()
        }
        #expect(retaken > 0)
    }
}
