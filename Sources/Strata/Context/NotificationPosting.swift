import Dispatch
import Foundation
import Synchronization

/// Posts Strata's notifications (contexts, undo managers, remote changes) to
/// `NotificationCenter.default`, one thread at a time where it can.
///
/// Foundation's notification center on Linux takes a `Mutex` for every post, to read its
/// observers. That mutex is a priority-inheritance futex, which hands itself to the thread waiting
/// for it when it is released: with more saving threads than cores, the thread it is handed to is
/// often not running, every thread posting meanwhile waits behind it, and the lock can stay
/// contended for the rest of a burst of saves. `perf` of W2.concurrent16 (16 writers, 2 cores,
/// four notifications a save) counted ~1,900 of the writers' 8,000 posts blocking in the kernel
/// in the runs where that happened, which took twice as long as the others.
///
/// So a post first takes ``gate``, a lock that is not handed over (a woken waiter competes for it
/// again), and Foundation's lock is seldom contended. The gate is held while the observers run, as
/// Foundation calls them inside the post: an observer's own post on the same thread takes it again
/// (it is recursive), and a post waits for it only until its holder has held it for ``patience``,
/// then posts without it. So an observer that waits for another thread (which may itself be
/// posting) cannot make that thread wait forever, and one that runs long delays the posts of other
/// threads by ``patience`` at most, once, however many they make meanwhile.
enum NotificationPosting {
    /// Taken around each post.
    private static let gate = NSRecursiveLock()

    /// When the gate's holder took it (`DispatchTime` nanoseconds), 0 while it is free. Set and
    /// cleared by the holder's outermost post only, while it holds the gate.
    private static let heldSince = Atomic<UInt64>(0)

    /// How long a holder keeps other threads' posts waiting before they post without the gate.
    private static let patience: UInt64 = 2_000_000

    /// Posts `name` from `object` with `userInfo` to `NotificationCenter.default`, its observers
    /// called on this thread before it returns.
    static func post(_ name: Notification.Name, object: Any?, userInfo: [AnyHashable: Any]? = nil) {
        let gated = gate.try() || waitForGate()
        // A post from an observer finds the gate held since its outer post.
        let outermost = gated && heldSince.load(ordering: .relaxed) == 0
        if outermost { heldSince.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
        defer {
            if outermost { heldSince.store(0, ordering: .relaxed) }
            if gated { gate.unlock() }
        }
        NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
    }

    /// Waits for the gate held by another thread until its holder has held it for ``patience``;
    /// returns whether it was taken.
    private static func waitForGate() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        let since = heldSince.load(ordering: .relaxed)
        let deadline = (since == 0 ? now : since) + patience
        guard deadline > now else { return false }
        return gate.lock(before: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
    }
}
