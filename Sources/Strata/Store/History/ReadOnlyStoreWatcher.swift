import Foundation
import Logging
internal import StrataStore
import StrataSynchronization
import Synchronization

private let logger = Logger(label: "strata.history")

/// Watches the stores a coordinator added read-only with
/// ``PersistentStoreRemoteChangeNotificationPostOptionKey``: a thread per store looks at the end
/// of the log every ``interval`` (one small read of the active segment past the log's end), applies
/// what a writer in another process appended (``StrataStore/Store/followLog()``), and posts the
/// remote change notification when the log moved.
enum ReadOnlyStoreWatcher {
    /// How often a watcher looks at the log.
    static let interval: TimeInterval = 0.2

    /// The engine stores watched.
    private static let watched = Lock<Set<ObjectIdentifier>>([])

    /// Starts watching `store` when it is read-only and asks for remote change notifications.
    static func watch(_ store: PersistentStore) {
        guard let engine = store.engineStore, engine.configuration.readOnly,
            PersistentStoreDescription.flag(store.options?[PersistentStoreRemoteChangeNotificationPostOptionKey])
                == true,
            watched.withLock({ $0.insert(ObjectIdentifier(engine)).inserted })
        else { return }
        let identifier = store.identifier
        let key = ObjectIdentifier(engine)
        logger.debug("watching a read-only store for commits of other processes", metadata: ["store": "\(identifier)"])
        Thread.detachNewThread { [weak engine] in
            defer { watched.withLock { _ = $0.remove(key) } }
            var seen = engine?.lastSequence ?? 0
            while true {
                Thread.sleep(forTimeInterval: interval)
                guard let current = engine, !current.isClosed else { return }
                let newest: UInt64
                do {
                    newest = try current.followLog()
                } catch {
                    logger.debug(
                        "stopped following the log of a read-only store",
                        metadata: ["store": "\(identifier)", "error": "\(error)"])
                    return
                }
                if newest > seen {
                    seen = newest
                    RemoteChangeCenter.postChanges([identifier: newest])
                }
            }
        }
    }
}
