import Foundation
import Synchronization

extension ManagedObjectContext {
    /// The generation the context reads, or `nil` when it is not pinned and reads the stores'
    /// newest state (Core Data's `queryGenerationToken`).
    public var queryGenerationToken: QueryGenerationToken? { queryGeneration }

    /// Pins the context to a generation of its stores, or unpins it (Core Data's
    /// `setQueryGenerationFrom(_:)`).
    ///
    /// Pinned, the context's faults, fetches and counts read the stores as they were at that
    /// generation, whatever other contexts save meanwhile (old rows stay readable, compaction
    /// included). The context moves to the current generation when it saves, merges changes,
    /// calls ``refreshAllObjects()`` or ``reset()``. Objects already registered keep their values
    /// until they are refreshed.
    ///
    /// - Parameter generation: ``QueryGenerationToken/current`` for the stores' state now, the
    ///   ``queryGenerationToken`` of another context of the same coordinator for its
    ///   generation, or `nil` to unpin.
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when the context has no
    ///   coordinator to pin, or the token belongs to the stores of another coordinator; the
    ///   context's generation is unchanged then.
    public func setQueryGenerationFrom(_ generation: QueryGenerationToken?) throws {
        guard let generation else {
            queryGeneration = nil
            return
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(
                .persistentStoreOperation, "a context without a persistent store coordinator has no query generation")
        }
        guard let pins = generation.pins else {
            queryGeneration = QueryGenerationToken(pins: currentPins(of: coordinator))
            return
        }
        let stores = coordinator.persistentStores
        let foreign = pins.filter { identifier, pin in
            !stores.contains { $0.identifier == identifier && $0.queryGenerations === pin.log }
        }
        guard foreign.isEmpty else {
            throw CoreDataError(
                .persistentStoreOperation,
                "the query generation \(generation) is of stores this context's coordinator does not have (\(foreign.keys.sorted().joined(separator: ", ")))"
            )
        }
        queryGeneration = generation
    }

    /// Moves a pinned context to the current generation, as a save, a merge,
    /// `refreshAllObjects()` and `reset()` do.
    func advanceQueryGeneration() {
        guard queryGeneration != nil, let coordinator = persistentStoreCoordinator else { return }
        queryGeneration = QueryGenerationToken(pins: currentPins(of: coordinator))
    }

    private func currentPins(of coordinator: PersistentStoreCoordinator) -> [String: GenerationPin] {
        Dictionary(uniqueKeysWithValues: coordinator.persistentStores.map { ($0.identifier, GenerationPin($0)) })
    }

    // MARK: Reading at the generation

    /// `store` as the context reads it: as of its pinned generation, or as it is.
    func readingStore(_ store: PersistentStore) -> PersistentStore {
        queryGeneration?.pins?[store.identifier]?.store ?? store
    }

    /// The store with `identifier` as the context reads it.
    func readingStore(identifier: String) -> PersistentStore? {
        persistentStoreCoordinator?.store(identifier: identifier).map(readingStore)
    }

    /// The stored row of an object as the context reads it, with the sequence it is as of (the
    /// coordinator's `snapshot(for:)` at the context's generation). `layout` is the layout of
    /// `id`'s entity, which the caller decodes the row with.
    func storedSnapshot(for id: ManagedObjectID, layout: EntityLayout) throws -> (row: StoredRow?, sequence: UInt64) {
        guard let coordinator = persistentStoreCoordinator else { return (nil, 0) }
        guard !id.isTemporaryID, let identifier = id.storeIdentifier else { return (nil, 0) }
        if let store = queryGeneration?.pins?[identifier]?.store {
            return try StoreReader(store: store, coordinator: coordinator, isCurrent: false).snapshot(
                for: id, layout: layout)
        }
        guard let store = currentStore(identifier: identifier, coordinator: coordinator) else { return (nil, 0) }
        return try StoreReader(store: store, coordinator: coordinator, isCurrent: true).snapshot(
            for: id, layout: layout)
    }

    /// The coordinator's store with `identifier`: the one the last call found while the
    /// coordinator's stores did not change since (no lock taken), else looked up.
    func currentStore(identifier: String, coordinator: PersistentStoreCoordinator) -> PersistentStore? {
        let generation = coordinator.storesGeneration.load(ordering: .acquiring)
        if let recent = recentStore, recent.generation == generation, recent.store.identifier == identifier {
            return recent.store
        }
        let store = coordinator.store(identifier: identifier)
        recentStore = store.map { (generation, $0) }
        return store
    }

    /// The layout of `entity`: the one the last fault used while the coordinator's stores did not
    /// change since (a layout changes only as the first store is added), else looked up. Faults
    /// of one entity come in a row: the lookup (the coordinator's mapping, a hashed dictionary)
    /// was ~220 instructions of a fault's ~5,400 (callgrind, W4 at 20k).
    func faultLayout(_ entity: EntityDescription, coordinator: PersistentStoreCoordinator) throws -> EntityLayout {
        let generation = coordinator.storesGeneration.load(ordering: .acquiring)
        if let recent = recentLayout, recent.generation == generation, recent.entity === entity { return recent.layout }
        let layout = try coordinator.layout(entity)
        recentLayout = (generation, entity, layout)
        return layout
    }
}
