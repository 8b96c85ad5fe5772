internal import StrataStore

extension PersistentStore {
    /// Whether the store keeps persistent history: an engine store with history tracking on.
    var keepsHistory: Bool { engineStore?.configuration.historyTracking == true }

    /// The sequence of the store's newest transaction when it keeps persistent history (where a
    /// history token made now points); `nil` when it keeps none.
    var newestHistorySequence: UInt64? {
        guard let engine = engineStore, engine.configuration.historyTracking else { return nil }
        return engine.lastSequence
    }
}
