import Foundation
import StrataSynchronization
import Synchronization

/// A store added to a coordinator: a Strata store directory or an in-memory store.
///
/// `Sendable`; its rows are reached through the coordinator and contexts.
public final class PersistentStore: Sendable {
    /// The store's type: ``SQLiteStoreType`` (a Strata store directory) or ``InMemoryStoreType``.
    public let type: String
    /// Where the store lives (`nil` for an in-memory store without one).
    public let url: URL?
    /// The store's unique identifier, part of every object ID's URI.
    public let identifier: String
    /// The model configuration whose entities the store holds (`nil`: all).
    public let configurationName: String?
    /// The options the store was added with, every key kept (Core Data's `options`).
    // nonisolated(unsafe): set once at creation and never changed; the values are the caller's.
    public nonisolated(unsafe) let options: [AnyHashable: Any]?
    let rows: any RowStore
    /// The engine store ``rows`` is, if any, and the durability of this store's saves.
    let engine: Engine
    /// Held while a batch request reads this store and commits to it (shared with the
    /// coordinators that share the engine store).
    let saveLock: StoreSaveLock
    /// The row versions pinned query generations read (shared with the coordinators that share
    /// the engine store).
    let queryGenerations: QueryGenerationLog

    init(
        type: String, url: URL?, identifier: String, configurationName: String?, options: [AnyHashable: Any]?,
        rows: any RowStore, engine: Engine = Engine(), saveLock: StoreSaveLock = StoreSaveLock(),
        queryGenerations: QueryGenerationLog = QueryGenerationLog()
    ) {
        self.type = type
        self.url = url
        self.identifier = identifier
        self.configurationName = configurationName
        self.options = options
        self.rows = rows
        self.engine = engine
        self.saveLock = saveLock
        self.queryGenerations = queryGenerations
    }

    /// The store's replicator, if any (see ``PersistentStoreReplicator``).
    let replicatorSlot = Lock<(any PersistentStoreReplicator)?>(nil)

    /// Whether the application set ``isReadOnly`` on this store.
    let markedReadOnly = Atomic<Bool>(false)

    /// Whether ``close()`` gave the store back.
    private let isClosed = Atomic<Bool>(false)

    /// Closes the store: an engine store shared with other coordinators of the process closes
    /// with the last of them. Calling it twice is harmless.
    func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try releaseRows(closing: true)
    }

    /// A store released without being removed stops counting as a user of a shared engine store
    /// (which, unless closed, releases its lock when its last reference goes).
    deinit {
        if !isClosed.load(ordering: .acquiring) { try? releaseRows(closing: false) }
    }
}
