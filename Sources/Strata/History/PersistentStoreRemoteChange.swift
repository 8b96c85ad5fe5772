import Foundation
import Logging
import StrataSynchronization
import Synchronization

private let logger = Logger(label: "strata.history")

extension Notification.Name {
    /// Posted after each save to a store, to every coordinator in the process that has the store
    /// added with ``PersistentStoreRemoteChangeNotificationPostOptionKey`` set (Core Data's
    /// `NSPersistentStoreRemoteChange`), the saving one included, and in a process that added
    /// the store read-only with the option, within a fraction of a second of another process's
    /// commit. The object is the receiving
    /// coordinator; `userInfo` holds the store's ``PersistentHistoryToken`` after the save under
    /// ``PersistentHistoryTokenKey`` (when the store keeps history), its identifier under
    /// ``StoreUUIDKey`` and its URL under `"storeURL"`.
    public static let PersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
}

/// The `userInfo` key of a remote change notification's ``PersistentHistoryToken`` (Core Data's
/// `NSPersistentHistoryTokenKey`).
public let PersistentHistoryTokenKey = "historyToken"

/// The `userInfo` key of a remote change notification's store identifier (Core Data's `NSStoreUUIDKey`).
public let StoreUUIDKey = "NSStoreUUID"

/// The coordinators of the process that have stores added, so that a save reaches every one
/// that has the saved store.
enum RemoteChangeCenter {
    /// A coordinator, held weakly.
    private struct Entry: Sendable {
        weak var coordinator: PersistentStoreCoordinator?
    }

    private static let coordinators = Lock<[Entry]>([])

    /// Registers `coordinator` (once) for remote change notifications of its stores, and
    /// watches its read-only stores for commits of other processes (``ReadOnlyStoreWatcher``).
    ///
    /// Only a coordinator that adds a store with ``PersistentStoreRemoteChangeNotificationPostOptionKey``
    /// is registered: no other receives a notification, and the weak reference kept here gives
    /// the coordinator a side table, which sends every retain and release of it (a context
    /// takes one on each fault, fetch and save) down the runtime's slow path.
    static func register(_ coordinator: PersistentStoreCoordinator) {
        coordinators.withLock { entries in
            entries.removeAll { $0.coordinator == nil }
            if !entries.contains(where: { $0.coordinator === coordinator }) {
                entries.append(Entry(coordinator: coordinator))
            }
        }
        for store in coordinator.persistentStores { ReadOnlyStoreWatcher.watch(store) }
    }

    /// Posts a remote change notification for each store in `sequences` (the sequence a save
    /// committed to it, by store identifier) to every registered coordinator that has that store
    /// with ``PersistentStoreRemoteChangeNotificationPostOptionKey`` set.
    static func postChanges(_ sequences: [String: UInt64]) {
        guard !sequences.isEmpty else { return }
        let receivers = coordinators.withLock { $0.compactMap(\.coordinator) }
        for (identifier, sequence) in sequences {
            for coordinator in receivers {
                guard let store = coordinator.store(identifier: identifier),
                    PersistentStoreDescription.flag(
                        store.options?[PersistentStoreRemoteChangeNotificationPostOptionKey]) == true
                else { continue }
                var info: [AnyHashable: Any] = [StoreUUIDKey: identifier]
                if let url = store.url { info["storeURL"] = url }
                if store.keepsHistory {
                    info[PersistentHistoryTokenKey] = PersistentHistoryToken(
                        storeIdentifier: identifier, sequence: sequence)
                }
                logger.debug(
                    "posting a remote change notification",
                    metadata: ["store": "\(identifier)", "sequence": "\(sequence)"])
                NotificationCenter.default.post(name: .PersistentStoreRemoteChange, object: coordinator, userInfo: info)
            }
        }
    }
}
