import Foundation
public import StrataStore
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
    /// When this store's saves return (`nil`: the engine store's own setting). Coordinators
    /// sharing one engine store each keep the durability they added it with.
    let durability: Durability?
    /// Held while a batch request reads this store and commits to it (shared with the
    /// coordinators that share the engine store).
    let saveLock: StoreSaveLock
    /// The row versions pinned query generations read (shared with the coordinators that share
    /// the engine store).
    let queryGenerations: QueryGenerationLog

    init(
        type: String, url: URL?, identifier: String, configurationName: String?, options: [AnyHashable: Any]?,
        rows: any RowStore,
        durability: Durability? = nil, saveLock: StoreSaveLock = StoreSaveLock(),
        queryGenerations: QueryGenerationLog = QueryGenerationLog()
    ) {
        self.type = type
        self.url = url
        self.identifier = identifier
        self.configurationName = configurationName
        self.options = options
        self.rows = rows
        self.engineStore = rows as? Store
        self.durability = durability
        self.saveLock = saveLock
        self.queryGenerations = queryGenerations
    }

    /// The underlying engine store, for history and maintenance (`nil` for an in-memory store).
    /// Every coordinator of the process that added the same directory (not read-only) shares it:
    /// remove the store from its coordinator rather than closing it here.
    public let engineStore: Store?

    /// The store's replicator, if any (see ``PersistentStoreReplicator``).
    let replicatorSlot = Mutex<(any PersistentStoreReplicator)?>(nil)

    /// Commits `transaction` through the store's replicator, if it has one, else locally.
    func commit(_ transaction: Transaction) throws -> UInt64 {
        try refuseWritesIfMarkedReadOnly()
        guard let replicator = replicatorSlot.withLock({ $0 }) else { return try commitLocally(transaction) }
        return try replicator.store(self, commit: transaction, locally: commitLocally)
    }

    /// Commits `transaction` with this store's durability; returns its sequence number.
    /// Goes through the query-generation log, which keeps the rows it replaces while a
    /// generation is pinned.
    func commitLocally(_ transaction: Transaction) throws -> UInt64 {
        try queryGenerations.commit(withDurability(transaction), to: rows)
    }

    /// Commits `transaction` (without operations) with the inserts of `inserted`, each row
    /// made as the engine encodes it: as ``commit(_:)`` commits a transaction with those
    /// inserts, which is what happens when a replicator publishes the store's commits.
    func commit(_ transaction: Transaction, inserting inserted: InsertedRows) throws -> UInt64 {
        try refuseWritesIfMarkedReadOnly()
        guard replicatorSlot.withLock({ $0 }) == nil else { return try commit(inserted.appended(to: transaction)) }
        let changes = (0..<inserted.count).lazy.map { index in
            let (entity, key) = inserted.target(index)
            return ReplayedChange(kind: .insert, entity: entity, key: key)
        }
        return try queryGenerations.committing(changes, to: rows) {
            try rows.commit(withDurability(transaction), inserting: inserted)
        }
    }

    /// `transaction` with this store's durability, unless it sets its own.
    private func withDurability(_ transaction: Transaction) -> Transaction {
        guard let durability, transaction.durability == nil else { return transaction }
        var transaction = transaction
        transaction.durability = durability
        return transaction
    }

    /// Whether the application set ``isReadOnly`` on this store.
    let markedReadOnly = Atomic<Bool>(false)

    /// Whether ``close()`` gave the store back.
    private let isClosed = Atomic<Bool>(false)

    /// Closes the store: an engine store shared with other coordinators of the process closes
    /// with the last of them. Calling it twice is harmless.
    func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let engine = rows as? Store {
            try SharedEngineStores.shared.release(engine)
        } else {
            try rows.close()
        }
    }

    /// A store released without being removed stops counting as a user of a shared engine store
    /// (which, unless closed, releases its lock when its last reference goes).
    deinit {
        if let engine = rows as? Store, !isClosed.load(ordering: .acquiring) {
            try? SharedEngineStores.shared.release(engine, closing: false)
        }
    }
}
