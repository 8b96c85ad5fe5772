import Foundation
internal import StrataStore

extension PersistentStoreCoordinator {
    /// Opens the store `description` describes, to be added: a store directory (migrated first
    /// when the description asks for it, and shared with the coordinators of this process that
    /// added it, unless read-only) or a store in memory.
    ///
    /// - Throws: as ``addPersistentStore(type:configuration:at:options:)``.
    func openStore(_ description: PersistentStoreDescription) throws -> PersistentStore {
        let mapping = try self.mapping.get()
        let rows: any RowStore
        var engine: Store?
        let identifier: String
        var saveLock = StoreSaveLock()
        var queryGenerations = QueryGenerationLog()
        let type = description.typeToOpen
        switch type {
        case InMemoryStoreType:
            rows = InMemoryRowStore(schema: mapping.schema)
            identifier = UUID().uuidString
        case SQLiteStoreType:
            guard let url = description.url else {
                throw CoreDataError(.persistentStoreOpen, "a Strata store needs a URL")
            }
            let configuration = description.storeConfiguration
            try migrateStoreIfNeeded(description)
            let layout = try layout(forStoreAt: url, configuration: configuration)
            do {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                // A writable store directory is opened once per process and shared.
                let store: Store
                if description.isReadOnly {
                    store = try Store.open(at: url, schema: layout.schema, configuration: configuration)
                } else {
                    (store, saveLock, queryGenerations) = try SharedEngineStores.shared.acquire(
                        at: url, schema: layout.schema, configuration: configuration)
                }
                rows = store
                engine = store
                identifier = store.storeID.uuidString
                if !description.isReadOnly {
                    try StoreMetadataFile.recordIfMissing(at: url, storeID: identifier, model: managedObjectModel)
                }
            } catch let error as StoreError where error.code == .schemaMismatch {
                throw CoreDataError(
                    .persistentStoreIncompatibleSchema, "the store at \(url.path) was written with another model",
                    underlyingError: error)
            } catch let error as StoreError {
                var message = "the store at \(url.path) cannot be opened: \(error.message)"
                if (error.cause as? SystemCallError)?.errno == EROFS {
                    message += "; its file system is read-only: add it with isReadOnly (ReadOnlyPersistentStoreOption)"
                }
                throw CoreDataError(.persistentStoreOpen, message, underlyingError: error)
            }
        default:
            throw CoreDataError(.persistentStoreInvalidType, "unknown store type \(description.type)")
        }
        return PersistentStore(
            type: description.type, url: description.url, identifier: identifier,
            configurationName: description.configuration, options: description.options, rows: rows,
            engine: PersistentStore.Engine(
                store: engine, durability: type == SQLiteStoreType ? description.durability : nil),
            saveLock: saveLock, queryGenerations: queryGenerations)
    }

    /// The layout to open the store at `url` with: when the store was migrated in place (its
    /// engine schema is this model's layout laid over the stored one) and no store is added yet,
    /// that layout, which the coordinator adopts (``adoptLayout(_:)``); else the coordinator's.
    private func layout(forStoreAt url: URL, configuration: StoreConfiguration) throws -> StoreMapping {
        let mapping = try self.mapping.get()
        guard let stored = try? Store.storedSchema(at: url, configuration: configuration), stored != mapping.schema,
            let evolved = try? mapping.evolved(onto: stored), evolved.schema == stored
        else { return mapping }
        return adoptLayout(evolved) ?? mapping
    }
}
