import Foundation
import Logging
import StrataSynchronization
import Synchronization

/// Connects contexts to stores: opens stores for a model, maps entities to rows, assigns
/// permanent IDs and serializes saves (Core Data's `NSPersistentStoreCoordinator`).
///
/// `Sendable`: every context of every queue shares one coordinator, and its ``RowCache`` of the
/// rows faults read.
public final class PersistentStoreCoordinator: Sendable {
    /// The model, frozen when the coordinator is created.
    public let managedObjectModel: ManagedObjectModel
    /// How the model is laid out in the engine: the model's own layout, or the one a store
    /// migrated in place keeps (``adoptLayout(_:)``).
    ///
    /// Read without a lock (once or twice per fault) until a store's layout is adopted: the
    /// model's layout never changes, and an adopted one changes only while no store is added.
    var mapping: Result<StoreMapping, CoreDataError> {
        hasAdoptedLayout.load(ordering: .acquiring) ? layout.withLock { $0 } : modelMapping
    }
    /// The model's own layout.
    private let modelMapping: Result<StoreMapping, CoreDataError>
    /// Whether ``adoptLayout(_:)`` took a store's layout (then in ``layout``).
    private let hasAdoptedLayout = Atomic<Bool>(false)
    private let layout: Lock<Result<StoreMapping, CoreDataError>>
    /// The stores added, in order: read by every save, changed only by adding or removing one.
    private let stores = ReadMostly<[PersistentStore]>([])
    /// Advanced after every change of the stores, so that a context may keep a store it looked
    /// up while the generation stays the same (``ManagedObjectContext/currentStore(identifier:coordinator:)``).
    let storesGeneration = Atomic<UInt64>(0)
    /// The rows faults read, shared by the coordinator's contexts.
    let rowCache = RowCache()

    /// Creates a coordinator for `model`, freezing it (a model in use cannot change).
    public init(managedObjectModel model: ManagedObjectModel) {
        managedObjectModel = model
        let mapping = model.storeMapping()
        modelMapping = mapping
        layout = Lock(mapping)
    }

    /// Takes `evolved`, the layout of a store migrated in place (this model's layout laid over
    /// the store's), as the coordinator's layout when no store is added yet.
    ///
    /// - Returns: `evolved`, or `nil` when a store is added already (the layout stays as it is).
    func adoptLayout(_ evolved: StoreMapping) -> StoreMapping? {
        stores.write { stores in
            guard stores.isEmpty else { return nil }
            layout.withLock { $0 = .success(evolved) }
            hasAdoptedLayout.store(true, ordering: .releasing)
            return evolved
        }
    }

    /// The stores added, in order.
    public var persistentStores: [PersistentStore] {
        stores.read { $0 }
    }

    /// Opens (creating if needed) a store and adds it (Core Data's
    /// `addPersistentStore(type:configuration:at:options:)`).
    ///
    /// A store directory another coordinator of this process already added (not read-only) is
    /// shared with it: both read and write one open engine store, which closes with the last.
    ///
    /// - Parameters:
    ///   - type: `.sqlite` (or `.strata`) for a store directory, `.inMemory` for a store in memory.
    ///   - configuration: the model configuration whose entities the store holds (`nil`: all).
    ///   - url: the store directory (`Name.strata`); ignored for an in-memory store.
    ///   - options: options by key (``PersistentHistoryTrackingKey``, ``ReadOnlyPersistentStoreOption``,
    ///     ``PersistentStoreOptionKey``, …); every key is kept in the store's `options`.
    /// - Returns: the added store.
    /// - Throws: ``CoreDataError`` `persistentStoreIncompatibleSchema` when the store was written
    ///   (or is open in this process) with another model, `persistentStoreOpen` when it is locked
    ///   by another process or cannot be opened (the underlying `StoreError` is attached),
    ///   `persistentStoreInvalidType` for a type Strata does not have.
    @discardableResult
    public func addPersistentStore(
        type: PersistentStore.StoreType, configuration: String? = nil, at url: URL?, options: [String: Any]? = nil
    ) throws -> PersistentStore {
        try addPersistentStore(ofType: type.rawValue, configurationName: configuration, at: url, options: options)
    }

    /// Opens (creating if needed) a store of the type named `storeType` and adds it (Core Data's
    /// `addPersistentStore(ofType:configurationName:at:options:)`).
    ///
    /// - Parameters:
    ///   - storeType: ``SQLiteStoreType`` (``StrataStoreType``) or ``InMemoryStoreType``.
    ///   - configuration: the model configuration whose entities the store holds (`nil`: all).
    ///   - url: the store directory (`Name.strata`); ignored for an in-memory store.
    ///   - options: options by key; keys that are not strings are ignored.
    /// - Returns: the added store.
    /// - Throws: as ``addPersistentStore(type:configuration:at:options:)``.
    @discardableResult
    public func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at url: URL?,
        options: [AnyHashable: Any]? = nil
    ) throws -> PersistentStore {
        let description = PersistentStoreDescription()
        description.type = storeType
        description.url = url
        description.configuration = configuration
        // Only the options passed: Core Data migrates here only when asked to (a description's
        // own defaults, used by containers, ask for it).
        description.setOption(nil, forKey: MigratePersistentStoresAutomaticallyOption)
        description.setOption(nil, forKey: InferMappingModelAutomaticallyOption)
        for (key, value) in options ?? [:] {
            if let key = key.base as? String { description.setOption(value, forKey: key) }
        }
        return try addPersistentStore(description)
    }

    /// Adds the store a description describes and calls `completionHandler` with the result
    /// (Core Data's `addPersistentStore(with:completionHandler:)`).
    public func addPersistentStore(
        with description: PersistentStoreDescription,
        completionHandler: @escaping (PersistentStoreDescription, (any Error)?) -> Void
    ) {
        do {
            _ = try addPersistentStore(description)
            completionHandler(description, nil)
        } catch {
            completionHandler(description, error)
        }
    }

    private func addPersistentStore(_ description: PersistentStoreDescription) throws -> PersistentStore {
        let store = try openStore(description)
        stores.write { $0.append(store) }
        storesGeneration.add(1, ordering: .releasing)
        if PersistentStoreDescription.flag(description.options[PersistentStoreRemoteChangeNotificationPostOptionKey])
            == true
        {
            RemoteChangeCenter.register(self)
        }
        return store
    }

    /// Closes and removes a store. Contexts must not use its objects afterwards. An engine store
    /// other coordinators of the process also added stays open until the last removes it.
    ///
    /// - Throws: what closing the store throws (its log stays intact).
    public func remove(_ store: PersistentStore) throws {
        stores.write { $0.removeAll { $0 === store } }
        storesGeneration.add(1, ordering: .releasing)
        rowCache.remove(store)
        try store.close()
    }

    /// The store at `url`, if one was added.
    public func persistentStore(for url: URL) -> PersistentStore? {
        stores.read { $0.first { $0.url?.standardizedFileURL == url.standardizedFileURL } }
    }

    /// The ID an object's URI names, or `nil` when the URI is not one of this coordinator's
    /// stores and model.
    public func managedObjectID(forURIRepresentation url: URL) -> ManagedObjectID? {
        guard url.scheme == "x-coredata", let host = url.host, !host.isEmpty else { return nil }
        let parts = url.path.split(separator: "/")
        guard parts.count == 2, let entity = managedObjectModel.entitiesByName[String(parts[0])],
            parts[1].first == "p", let key = Int64(parts[1].dropFirst()), key > 0,
            let store = store(identifier: host)
        else { return nil }
        // The store's own identifier string: comparing it with the store's is then one pointer
        // comparison, on every fault of the object.
        return ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
    }

    /// The store with `identifier`.
    func store(identifier: String) -> PersistentStore? {
        stores.read { $0.first { $0.identifier == identifier } }
    }

    /// The store new objects of `entity` are saved to: the first whose configuration holds it.
    func store(for entity: EntityDescription) throws -> PersistentStore {
        let configurations = managedObjectModel.configurations
        let store = stores.read { stores in
            stores.first { store in
                guard let name = store.configurationName, configurations.contains(name) else { return true }
                return managedObjectModel.entities(forConfigurationName: name)?.contains { $0 === entity } ?? false
            }
        }
        guard let store else {
            throw CoreDataError(
                .persistentStoreOperation,
                "no store holds objects of \(entity.entityName); add a persistent store first")
        }
        return store
    }

    /// Runs `body` holding the save lock of every store added (batch requests of every
    /// coordinator sharing one of these stores run one at a time) and between the stores'
    /// replicators' begin and end calls, passing it each store's newest sequence before it reads;
    /// runs it again when its commit fails its condition on the commits since (``BatchWriter``),
    /// as a concurrent context save made it do.
    func withSaveLock(_ body: ([String: UInt64]) throws -> Void) throws {
        let stores = persistentStores
        try StoreSaveLock.withLocks(stores.map(\.saveLock)) {
            try PersistentStore.replicating(stores) {
                while true {
                    var since: [String: UInt64] = [:]
                    for store in stores { since[store.identifier] = store.rows.lastSequence }
                    do {
                        return try body(since)
                    } catch is SaveConflict {
                        continue
                    }
                }
            }
        }
    }

    /// Runs a context save's checks and commit (`body`): as they are when no store has a
    /// replicator (concurrent saves share group commit); else holding every store's save lock
    /// and between the replicators' begin and end calls, one save at a time, as a replicator
    /// publishing each save before it commits locally needs.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` and the replicators throw.
    func withReplicatedSave<T>(_ body: () throws -> T) throws -> T {
        let stores = persistentStores
        guard stores.contains(where: { $0.replicator != nil }) else { return try body() }
        var result: T?
        try StoreSaveLock.withLocks(stores.map(\.saveLock)) {
            try PersistentStore.replicating(stores) { result = try body() }
        }
        return result!
    }

    /// The layout of `entity`.
    ///
    /// - Throws: ``CoreDataError`` `coreData` when the model cannot be stored, or has no entity
    ///   of `entity`'s name.
    func layout(_ entity: EntityDescription) throws -> EntityLayout {
        if !hasAdoptedLayout.load(ordering: .acquiring), case .success(let mapping) = modelMapping {
            return try mapping.requiredLayout(of: entity)
        }
        return try mapping.get().requiredLayout(of: entity)
    }
}
