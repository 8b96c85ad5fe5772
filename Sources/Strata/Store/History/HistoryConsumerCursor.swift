internal import StrataStore

/// The cursor of one named history consumer as a store keeps it (the store side of a
/// ``PersistentHistoryConsumer``): registered, read, moved and removed through the engine, its
/// errors turned into ``CoreDataError``s.
struct HistoryConsumerCursor: Sendable {
    /// The consumer's name, unique in its store.
    let name: String
    /// The identifier of the store keeping the cursor.
    let storeIdentifier: String
    private let engine: Store

    /// The cursor `name` of `store` (the first store keeping history when `nil`) among the
    /// coordinator's `stores`, registered at the oldest retained history when it is new.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store keeps no history or
    ///   cannot be written.
    init(registering name: String, in store: PersistentStore?, of stores: [PersistentStore]) throws {
        let candidates = store.map { [$0] } ?? stores
        guard let chosen = candidates.first(where: { $0.engineStore?.configuration.historyTracking == true }),
            let engine = chosen.engineStore
        else {
            throw CoreDataError(
                .persistentStoreOperation,
                "no store keeps persistent history; add the store with PersistentHistoryTrackingKey set to true")
        }
        do {
            try engine.registerHistoryConsumer(name)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOperation, "the history consumer cannot be registered: \(error.message)",
                underlyingError: error)
        }
        self.name = name
        storeIdentifier = chosen.identifier
        self.engine = engine
    }

    /// The sequence of the last transaction the consumer applied and, when it was evicted, the
    /// sequence to resync from; `nil` when it was removed. The consumers past the store's bounds
    /// are evicted first (a removed store evicts nothing; its consumers read what it last held).
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the cursors cannot be written.
    func state() throws -> (sequence: UInt64, evictedAt: UInt64?)? {
        do {
            try engine.evictLaggingHistoryConsumers()
        } catch let error as StoreError where error.code == .closed {
            // A removed store evicts nothing; its consumers read what it last held.
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOperation, "the history consumers' cursors cannot be written: \(error.message)",
                underlyingError: error)
        }
        return engine.historyConsumers[name].map { ($0.sequence, $0.evictedAt) }
    }

    /// Moves the cursor to `sequence` (never back), releasing the history before it.
    ///
    /// - Throws: ``CoreDataError`` `persistentHistoryTokenExpired` when the store refuses the move
    ///   (an evicted consumer advanced below its resync point), `persistentStoreOperation` when
    ///   the cursor cannot be written.
    func advance(to sequence: UInt64) throws {
        do {
            try engine.advanceHistoryConsumer(name, to: sequence)
        } catch let error as StoreError where error.code == .historyUnavailable {
            throw CoreDataError(.persistentHistoryTokenExpired, error.message, underlyingError: error)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOperation, "the history consumer's cursor cannot be written: \(error.message)",
                underlyingError: error)
        }
    }

    /// Unregisters the consumer, releasing the history it held.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the store cannot be written.
    func remove() throws {
        do {
            try engine.removeHistoryConsumer(name)
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOperation, "the history consumer cannot be removed: \(error.message)",
                underlyingError: error)
        }
    }
}
