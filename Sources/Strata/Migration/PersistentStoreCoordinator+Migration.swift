internal import CStrataSupport
import Foundation
import Logging

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
    /// the metadata. A change that only appends to the engine layout or retires parts of it is made
    /// in place (``InPlaceMigration``: one manifest replace, object IDs and history kept). A change
    /// whose rows convert one for one, keys kept, rewrites the log in place (``InPlaceRewrite``:
    /// object IDs and history kept). Any other change is migrated through an inferred mapping into a new store
    /// beside this one, read from the old store opened read-only while this method holds the
    /// store's write lock; the new store then takes its place in one atomic exchange of the two
    /// directories: a crash at any point leaves the old store or the new one (a leftover directory
    /// of an interrupted migration is removed when the store is next added).
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreIncompatibleSchema` when the store is open in this
    ///   process with another model, `persistentStoreOpen` when another process has it open,
    ///   `persistentStoreIncompatibleVersionHash` when the store needs a
    ///   migration that is turned off (or the store is read-only), `migrationMissingMappingModel`
    ///   when inference is turned off, `migrationMissingSourceModel` when the store's model is not
    ///   known, `inferredMappingModel` for a change inference cannot map, validation errors of
    ///   the migrated objects and `migration` when the exchange fails. The store is unchanged then
    ///   (after a step of a chain of versions, it is at that step's version).
    ///
    /// A description with a ``StagedMigrationManager`` under
    /// ``PersistentStoreStagedMigrationManagerOptionKey`` migrates through its stages
    /// (``migrateStaged(_:at:metadata:description:)``).
    ///
    /// A model loaded from an `.xcdatamodeld` migrates a store of one of its earlier versions
    /// through each later version in turn, so that the renames of every step are followed; other
    /// stores and models migrate in one step.
    func migrateStoreIfNeeded(_ description: PersistentStoreDescription) throws {
        guard description.typeToOpen == SQLiteStoreType, let url = description.url else { return }
        let staging = Self.migrationStagingURL(for: url)
        // Left by an interrupted migration; removed only while no migration of another process runs.
        if FileManager.default.fileExists(atPath: staging.path), let lock = try? StoreDirectoryLock(url) {
            logger.debug("removing an interrupted migration", metadata: ["path": "\(staging.path)"])
            try? FileManager.default.removeItem(at: staging)
            lock.release()
        }
        for pending in PendingMigrationMetadata.all
        where FileManager.default.fileExists(atPath: url.appendingPathComponent(pending.fileName).path) {
            guard let lock = try? StoreDirectoryLock(url) else { continue }
            defer { lock.release() }
            try pending.resolve(at: url)
        }
        guard Self.flag(description.options[IgnorePersistentStoreVersioningOption]) != true,
            let metadata = try StoreMetadataFile.read(at: url),
            !managedObjectModel.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return }
        guard description.shouldMigrateStoreAutomatically, !description.isReadOnly else {
            throw CoreDataError(
                .persistentStoreIncompatibleVersionHash,
                "the model used to open the store at \(url.path) is incompatible with the one used to create it, and migration is off"
            )
        }
        guard !SharedEngineStores.shared.isOpen(at: url) else {
            throw CoreDataError(
                .persistentStoreIncompatibleSchema,
                "the store at \(url.path) is open in this process with another model; it cannot be migrated while open")
        }
        guard let source = try StoreMetadataFile.sourceModel(from: metadata) else {
            throw CoreDataError(
                .migrationMissingSourceModel, "the store at \(url.path) does not record the model it was written with")
        }
        if let staged = description.options[PersistentStoreStagedMigrationManagerOptionKey] as? StagedMigrationManager {
            return try migrateStaged(staged, at: url, metadata: metadata, description: description)
        }
        // Every step's mapping is found or inferred before any step is taken: a step without one
        // changes nothing. As in Core Data, a mapping model in the bundles comes first; Strata also
        // looks beside the model's own files.
        let modelFolder = managedObjectModel.versionBundleURL.flatMap { Bundle(url: $0.deletingLastPathComponent()) }
        let bundles = [modelFolder].compactMap { $0 } + [Bundle.main] + PersistentContainer.packageResourceBundles()
        var steps: [(source: ManagedObjectModel, destination: ManagedObjectModel, mapping: MappingModel)] = []
        for destination in try versionSteps(after: metadata) {
            let from = steps.last?.destination ?? source
            if let found = MappingModel.mappingModel(in: bundles, from: from, to: destination) {
                steps.append((from, destination, found))
                continue
            }
            guard description.shouldInferMappingModelAutomatically else {
                throw CoreDataError(
                    .migrationMissingMappingModel,
                    "the store at \(url.path) needs a migration, no mapping model in \(bundles.map(\.bundlePath)) maps it, and inferring a mapping model is off"
                )
            }
            steps.append(
                (
                    from, destination,
                    try MappingModel.inferredMappingModel(forSourceModel: from, destinationModel: destination)
                ))
        }
        // Held until the new store took the old one's place: no writer opens the old store meanwhile
        // (released for a step made in place, which takes the engine's own lock).
        var lock: StoreDirectoryLock? = try StoreDirectoryLock(url)
        defer { lock?.release() }
        for step in steps {
            try migrateStep(
                at: url, from: step.source, to: step.destination, mapping: step.mapping, description: description,
                lock: &lock)
        }
    }

    /// The models a store of the version `metadata` describes goes through to this coordinator's
    /// model, which is last: the later versions of the `.xcdatamodeld` the model was loaded
    /// from, in order, when the store's version is one of them; else the model alone.
    ///
    /// - Throws: ``ModelError`` when a version does not load.
    private func versionSteps(after metadata: [String: Any]) throws -> [ManagedObjectModel] {
        guard let bundle = managedObjectModel.versionBundleURL else { return [managedObjectModel] }
        let versions = try ManagedObjectModel.versions(in: bundle).map(ManagedObjectModel.init(checkedContentsOf:))
        let target = managedObjectModel.entityLayoutHashesByName
        guard
            let start = versions.firstIndex(where: {
                $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            }),
            let end = versions.lastIndex(where: { $0.entityLayoutHashesByName == target }), start < end
        else { return [managedObjectModel] }
        return Array(versions[(start + 1)..<end]) + [managedObjectModel]
    }

    /// Migrates the store at `url` from `source` to `destination`: rewrites only the metadata when
    /// the rows stay as they are, changes the engine schema in place when the change allows it
    /// (``InPlaceMigration``), rewrites the log in place keeping keys when it allows that
    /// (``InPlaceRewrite``), else writes a new store beside it and exchanges the two.
    func migrateStep(
        at url: URL, from source: ManagedObjectModel, to destination: ManagedObjectModel, mapping: MappingModel,
        description: PersistentStoreDescription, lock: inout StoreDirectoryLock?
    ) throws {
        let staging = Self.migrationStagingURL(for: url)
        let metadata = try StoreMetadataFile.read(at: url) ?? [:]
        if try StoreRowCompatibility.rowsUnchanged(from: source, to: destination) {
            try AddedUniquenessConstraint.checkStoredObjects(at: url, from: source, to: destination)
            let storeID = metadata[StoreUUIDKey] as? String ?? ""
            try StoreMetadataFile.write(
                StoreMetadataFile.adding(
                    archiveOf: destination,
                    to: metadata.merging(StoreMetadataFile.metadata(for: destination, storeID: storeID)) { _, new in new
                    }),
                at: url)
            logger.debug("migrated store metadata; rows unchanged", metadata: ["path": "\(url.path)"])
            return
        }
        if let inPlace = try InPlaceMigration.plan(at: url, from: source, to: destination) {
            try AddedUniquenessConstraint.checkStoredObjects(at: url, from: source, to: destination)
            lock?.release()
            lock = nil
            do {
                try inPlace.apply(at: url, destination: destination, metadata: metadata)
                return
            } catch let error as CoreDataError where InPlaceMigration.needsRewrite(after: error) {
                // The store went through as many in-place changes as it can record: rewrite it.
                logger.debug(
                    "rewriting a store that cannot change in place",
                    metadata: ["path": "\(url.path)", "reason": "\(error.message)"])
            }
        }
        if let rewrite = try InPlaceRewrite.plan(at: url, from: source, to: destination, mapping: mapping) {
            try AddedUniquenessConstraint.checkStoredObjects(at: url, from: source, to: destination)
            lock?.release()
            lock = nil
            try rewrite.apply(
                at: url, destination: destination, metadata: metadata,
                progress: description.options[PersistentStoreOptionKey.migrationProgress] as? MigrationProgressHandler)
            return
        }
        if lock == nil { lock = try StoreDirectoryLock(url) }
        let manager = MigrationManager(sourceModel: source, destinationModel: destination)
        manager.validatesMigratedObjects = !mapping.isInferred
        let destinationOptions = Self.migrationDestinationOptions(for: description)
        do {
            // Read-only: the old store is neither locked by the engine (the caller holds the lock) nor written.
            try manager.migrateStore(
                from: url, sourceType: SQLiteStoreType,
                options: [IgnorePersistentStoreVersioningOption: true, ReadOnlyPersistentStoreOption: true],
                with: mapping, toDestinationURL: staging, destinationType: SQLiteStoreType,
                destinationOptions: destinationOptions)
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
    static func exchange(_ first: URL, _ second: URL) throws {
        guard strata_rename_exchange(first.path, second.path) == 0 else {
            throw CoreDataError(
                .migration, "cannot exchange \(first.path) with the migrated store: \(String(cString: strerror(errno)))"
            )
        }
        do {
            try StoreMetadataFile.syncDirectory(first.deletingLastPathComponent())
        } catch {
            throw CoreDataError(
                .migration, "cannot sync \(first.deletingLastPathComponent().path) after the migration: \(error)")
        }
        logger.debug("exchanged the migrated store", metadata: ["path": "\(first.path)"])
    }

    /// The write lock of a store directory, taken as the engine takes it (`flock` on its `lock`
    /// file), so that no other process or coordinator opens the store for writing meanwhile.
    final class StoreDirectoryLock {
        private let fd: Int32

        /// Takes the lock of the store at `url`.
        ///
        /// - Throws: ``CoreDataError`` `persistentStoreOpen` when the store is open for writing
        ///   elsewhere (in this process too) or the lock file cannot be opened.
        init(_ url: URL) throws {
            let path = url.appendingPathComponent("lock").path
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw CoreDataError(.persistentStoreOpen, "cannot open \(path): \(String(cString: strerror(errno)))")
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw CoreDataError(
                    .persistentStoreOpen,
                    "the store at \(url.path) is open for writing; close it before it can be migrated")
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
