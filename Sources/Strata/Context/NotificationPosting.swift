import Foundation

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
/// (it is recursive), and a post that cannot take it within ``patience`` (an observer that waits
/// for another thread, which may itself be posting, or one that runs long) posts without it. No
/// post waits for another longer than that, and none can wait for one that waits for it.
enum NotificationPosting {
    /// Taken around each post.
    private static let gate = NSRecursiveLock()

    /// How long a post waits for the gate before it posts without it.
    static let patience: TimeInterval = 0.001

    /// Posts `name` from `object` with `userInfo` to `NotificationCenter.default`, its observers
    /// called on this thread before it returns.
    static func post(_ name: Notification.Name, object: Any?, userInfo: [AnyHashable: Any]? = nil) {
        let gated = gate.lock(before: Date(timeIntervalSinceNow: patience))
        defer { if gated { gate.unlock() } }
        NotificationCenter.default.post(name: name, object: object, userInfo: userInfo)
    }
}
