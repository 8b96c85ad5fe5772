import CStrataSupport
import Foundation
import Logging
import StrataStore

#if canImport(Glibc)
import Glibc
#endif

private let logger = Logger(label: "strata.migration")

extension PersistentStoreCoordinator {
    /// Brings the store a description names to this coordinator's model before it is opened:
    /// lightweight migration, as Core Data's ``MigratePersistentStoresAutomaticallyOption`` and
    /// ``InferMappingModelAutomaticallyOption`` ask (both on by default in a description).
    ///
    /// Nothing happens for a new store, a store whose metadata matches the model, a store written
    /// before Strata kept metadata (the engine's schema check decides), or with
    /// ``IgnorePersistentStoreVersioningOption``. A change that leaves every stored row as it is
    /// (same engine schema, every entity at its place, no property made required) only rewrites
    /// the metadata. Any other change is migrated through an inferred mapping into a new store
    /// beside this one, read from the old store opened read-only while this method holds the
    /// store's write lock; the new store then takes its place in one atomic exchange of the two
    /// directories: a crash at any point leaves the old store or the new one (a leftover directory
    /// of an interrupted migration is removed when the store is next added).
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreIncompatibleVersionHash` when the store needs a
    ///   migration that is turned off (or the store is read-only), `migrationMissingMappingModel`
    ///   when inference is turned off, `migrationMissingSourceModel` when the store's model is not
    ///   known, `inferredMappingModel` for a change inference cannot map, validation errors of
    ///   the migrated objects and `migration` when the exchange fails. The store is unchanged then.
    func migrateStoreIfNeeded(_ description: PersistentStoreDescription, mapping: StoreMapping) throws {
        guard description.typeToOpen == SQLiteStoreType, let url = description.url else { return }
        let staging = Self.migrationStagingURL(for: url)
        // Left by an interrupted migration; removed only while no migration of another process runs.
        if FileManager.default.fileExists(atPath: staging.path), let lock = try? StoreDirectoryLock(url) {
            logger.debug("removing an interrupted migration", metadata: ["path": "\(staging.path)"])
            try? FileManager.default.removeItem(at: staging)
            lock.release()
        }
        guard Self.flag(description.options[IgnorePersistentStoreVersioningOption]) != true,
            let metadata = try StoreMetadataFile.read(at: url),
            !managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return }
        guard description.shouldMigrateStoreAutomatically, !description.isReadOnly else {
            throw CoreDataError(
                .persistentStoreIncompatibleVersionHash,
                "the model used to open the store at \(url.path) is incompatible with the one used to create it, and migration is off")
        }
        guard description.shouldInferMappingModelAutomatically else {
            throw CoreDataError(.migrationMissingMappingModel, "the store at \(url.path) needs a migration and inferring a mapping model is off")
        }
        guard let source = try StoreMetadataFile.sourceModel(from: metadata) else {
            throw CoreDataError(.migrationMissingSourceModel, "the store at \(url.path) does not record the model it was written with")
        }
        let mappingModel = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: managedObjectModel)
        // Held until the new store took the old one's place: no writer opens the old store meanwhile.
        let lock = try StoreDirectoryLock(url)
        defer { lock.release() }
        let storeID = metadata[StoreUUIDKey] as? String ?? ""
        if try StoreRowCompatibility.rowsUnchanged(from: source, to: self, mapping: mapping) {
            try StoreMetadataFile.write(
                StoreMetadataFile.adding(archiveOf: managedObjectModel, to: metadata.merging(StoreMetadataFile.metadata(for: managedObjectModel, storeID: storeID)) { _, new in new }),
                at: url)
            logger.debug("migrated store metadata; rows unchanged", metadata: ["path": "\(url.path)"])
            return
        }
        let manager = MigrationManager(sourceModel: source, destinationModel: managedObjectModel)
        var destinationOptions: [AnyHashable: Any] = [PersistentStoreOptionKey.durability: Durability.relaxed]
        destinationOptions[PersistentHistoryTrackingKey] = description.options[PersistentHistoryTrackingKey]
        do {
            // Read-only: the old store is neither locked by the engine (this lock is held) nor written.
            try manager.migrateStore(
                from: url, type: SQLiteStoreType, options: [IgnorePersistentStoreVersioningOption: true, ReadOnlyPersistentStoreOption: true],
                with: mappingModel, toDestinationURL: staging, destinationType: SQLiteStoreType, destinationOptions: destinationOptions)
            try Self.exchange(url, staging)
        } catch {
            try? FileManager.default.removeItem(at: staging)
            throw error
        }
        try? FileManager.default.removeItem(at: staging)
    }

    /// Where a migration of the store at `url` writes the new store: a hidden sibling directory.
    static func migrationStagingURL(for url: URL) -> URL {
        let store = url.standardizedFileURL
        return store.deletingLastPathComponent().appendingPathComponent(".\(store.lastPathComponent).migration")
    }

    /// Exchanges two directories atomically and syncs their parent.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the system cannot exchange them.
    private static func exchange(_ first: URL, _ second: URL) throws {
        guard strata_rename_exchange(first.path, second.path) == 0 else {
            throw CoreDataError(.migration, "cannot exchange \(first.path) with the migrated store: \(String(cString: strerror(errno)))")
        }
        do {
            try StoreMetadataFile.syncDirectory(first.deletingLastPathComponent())
        } catch {
            throw CoreDataError(.migration, "cannot sync \(first.deletingLastPathComponent().path) after the migration: \(error)")
        }
        logger.debug("exchanged the migrated store", metadata: ["path": "\(first.path)"])
    }

    /// The write lock of a store directory, taken as the engine takes it (`flock` on its `lock`
    /// file), so that no other process or coordinator opens the store for writing meanwhile.
    private final class StoreDirectoryLock {
        private let fd: Int32

        /// Takes the lock of the store at `url`.
        ///
        /// - Throws: ``CoreDataError`` `persistentStoreOpen` when the store is open for writing
        ///   elsewhere (in this process too) or the lock file cannot be opened.
        init(_ url: URL) throws {
            let path = url.appendingPathComponent("lock").path
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw CoreDataError(.persistentStoreOpen, "cannot open \(path): \(String(cString: strerror(errno)))") }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw CoreDataError(.persistentStoreOpen, "the store at \(url.path) is open for writing; close it before it can be migrated")
            }
        }

        /// Releases the lock.
        func release() {
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
    }

    /// A Boolean option's value (`Bool`, a number or `"YES"`/`"true"`).
    private static func flag(_ value: Any?) -> Bool? {
        switch value {
        case let bool as Bool: bool
        case let number as Int: number != 0
        case let string as String: ["yes", "true", "1"].contains(string.lowercased())
        default: nil
        }
    }
}
