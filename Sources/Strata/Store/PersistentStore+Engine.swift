public import StrataStore
import StrataSynchronization
import Synchronization

extension PersistentStore {
    /// What a store holds of the engine: the engine store its rows are, and when its saves return.
    struct Engine: Sendable {
        /// The engine store (`nil` for an in-memory store).
        let store: Store?
        /// When this store's saves return (`nil`: the engine store's own setting). Coordinators
        /// sharing one engine store each keep the durability they added it with.
        let durability: Durability?

        /// The engine side of a store whose rows are `store`, saving with `durability`.
        init(store: Store?, durability: Durability?) {
            self.store = store
            self.durability = durability
        }

        /// The engine side of a store with no engine store (in memory, or pinned to a query
        /// generation).
        init() {
            self.init(store: nil, durability: nil)
        }
    }

    /// The underlying engine store, for history and maintenance (`nil` for an in-memory store).
    /// Every coordinator of the process that added the same directory (not read-only) shares it:
    /// remove the store from its coordinator rather than closing it here.
    public var engineStore: Store? { engine.store }

    /// Whether the engine store is read-only: opened so (``PersistentStoreDescription/isReadOnly``),
    /// or forced so because it keeps persistent history the store was added without.
    var isOpenedReadOnly: Bool { engine.store?.configuration.readOnly ?? false }

    /// Throws the engine's `readOnly` error when the application set ``isReadOnly``.
    func refuseWritesIfMarkedReadOnly() throws {
        guard markedReadOnly.load(ordering: .acquiring) else { return }
        throw StoreError(.readOnly, "the store \(identifier) is read-only (isReadOnly is set)")
    }

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
        guard let durability = engine.durability, transaction.durability == nil else { return transaction }
        var transaction = transaction
        transaction.durability = durability
        return transaction
    }

    /// Gives the rows back: an engine store to the process's shared engine stores (closed, when
    /// `closing`, with its last user), any other store closed when `closing`.
    ///
    /// - Throws: what closing the store throws (its log stays intact).
    func releaseRows(closing: Bool) throws {
        if let store = engine.store {
            try SharedEngineStores.shared.release(store, closing: closing)
        } else if closing {
            try rows.close()
        }
    }
}
