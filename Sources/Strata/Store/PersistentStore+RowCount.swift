internal import StrataStore

extension PersistentStore {
    /// The number of rows the store holds for the engine entity `storeEntity`, without reading
    /// them: the engine's count, or 0 for an in-memory store and for an entity the store's
    /// schema does not have yet.
    func storedRowCount(_ storeEntity: Int) -> Int {
        guard let engine = engineStore, engine.schema.entities.indices.contains(storeEntity) else { return 0 }
        return engine.count(storeEntity)
    }
}
