import Foundation
import Logging

private let logger = Logger(label: "strata.coordinator")

extension PersistentStoreCoordinator {
    /// Deletes the store at `url` (Core Data's `destroyPersistentStore(at:type:options:)`): a
    /// store of this coordinator at `url` is removed from it first, then the store directory is
    /// deleted. Deleting a store that does not exist does nothing.
    ///
    /// - Parameters:
    ///   - url: the store directory.
    ///   - storeType: ``PersistentStore/StoreType/sqlite`` (a Strata store directory); an
    ///     in-memory store has nothing on disk to delete.
    ///   - options: the store's options (unused: a Strata store keeps nothing outside its
    ///     directory).
    /// - Throws: ``CoreDataError`` `persistentStoreOpen` when the store is open for writing
    ///   elsewhere (another coordinator of this process or another process), `persistentStoreOperation`
    ///   when it cannot be deleted. Nothing is deleted then.
    public func destroyPersistentStore(
        at url: URL, type storeType: PersistentStore.StoreType, options: [String: Any]? = nil
    ) throws {
        try destroyPersistentStore(at: url, ofType: storeType.rawValue, options: options)
    }

    /// Deletes the store at `url` (Core Data's `destroyPersistentStore(at:ofType:options:)`), as
    /// ``destroyPersistentStore(at:type:options:)``.
    ///
    /// - Throws: as ``destroyPersistentStore(at:type:options:)``.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws
    {
        if let store = persistentStore(for: url) { try remove(store) }
        guard storeType != InMemoryStoreType, FileManager.default.fileExists(atPath: url.path) else { return }
        let lock = try StoreDirectoryLock(url)
        defer { lock.release() }
        try Self.removeStoreDirectory(at: url)
        logger.debug("destroyed the store", metadata: ["path": "\(url.path)"])
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL` (Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)`):
    /// the copy is made beside the destination and takes its place in one rename, so a crash
    /// leaves the old destination or the new one. A store of this coordinator at
    /// `destinationURL` is removed from it first.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOpen` when either store is open for writing
    ///   elsewhere or the source does not exist, `persistentStoreOperation` when copying fails
    ///   (the destination is unchanged then).
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [String: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [String: Any]? = nil, type storeType: PersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
            sourceOptions: sourceOptions, ofType: storeType.rawValue)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL` (Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`),
    /// as ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)``.
    ///
    /// - Throws: as ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)``.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil, withPersistentStoreFrom sourceURL: URL,
        sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        guard storeType != InMemoryStoreType else {
            throw CoreDataError(.persistentStoreOperation, "an in-memory store has no files to replace")
        }
        if let store = persistentStore(for: destinationURL) { try remove(store) }
        try Self.copyStore(from: sourceURL, to: destinationURL)
        logger.debug("replaced the store", metadata: ["path": "\(destinationURL.path)", "from": "\(sourceURL.path)"])
    }

    /// Copies `store` to `url` and adds the copy in its place (Core Data's
    /// `migratePersistentStore(_:to:options:type:)`): the original is removed from the
    /// coordinator, its files left as they are; objects of the original are not valid in the
    /// copy's contexts (their IDs name the original store).
    ///
    /// - Parameters:
    ///   - store: a Strata store of this coordinator.
    ///   - url: where the copy goes; no store may be there.
    ///   - options: the options the copy is added with (the original's when `nil`).
    ///   - storeType: ``PersistentStore/StoreType/sqlite``.
    /// - Returns: the added copy.
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` for an in-memory store or one at
    ///   `url` already, `persistentStoreOpen` when the store is open for writing elsewhere. The
    ///   original stays added then.
    @discardableResult
    public func migratePersistentStore(
        _ store: PersistentStore, to url: URL, options: [String: Any]? = nil, type storeType: PersistentStore.StoreType
    ) throws -> PersistentStore {
        try migratePersistentStore(store, to: url, options: options, withType: storeType.rawValue)
    }

    /// Copies `store` to `url` and adds the copy in its place (Core Data's
    /// `migratePersistentStore(_:to:options:withType:)`), as
    /// ``migratePersistentStore(_:to:options:type:)``.
    ///
    /// - Throws: as ``migratePersistentStore(_:to:options:type:)``.
    @discardableResult
    public func migratePersistentStore(
        _ store: PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> PersistentStore {
        guard store.type != InMemoryStoreType, storeType != InMemoryStoreType, let source = store.url else {
            throw CoreDataError(.persistentStoreOperation, "only a store on disk can be copied to \(url.path)")
        }
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError(.persistentStoreOperation, "a store exists at \(url.path) already")
        }
        try remove(store)
        do {
            try Self.copyStore(from: source, to: url)
        } catch {
            // Added again as it was: the copy failed before anything replaced it.
            try addPersistentStore(
                ofType: store.type, configurationName: store.configurationName, at: source, options: store.options)
            throw error
        }
        return try addPersistentStore(
            ofType: storeType, configurationName: store.configurationName, at: url, options: options ?? store.options)
    }

    /// Copies the store directory at `source` (held locked meanwhile) beside `destination`, then
    /// puts the copy in its place: an existing destination (held locked too) is exchanged with
    /// the copy and deleted.
    private static func copyStore(from source: URL, to destination: URL) throws {
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw CoreDataError(.persistentStoreOpen, "no store at \(source.path)")
        }
        let sourceLock = try StoreDirectoryLock(source)
        defer { sourceLock.release() }
        let destinationLock =
            FileManager.default.fileExists(atPath: destination.path) ? try StoreDirectoryLock(destination) : nil
        defer { destinationLock?.release() }
        let copy = migrationStagingURL(for: destination)
        try? FileManager.default.removeItem(at: copy)
        do {
            try FileManager.default.copyItem(at: source, to: copy)
            // The copy's lock file is its own: the source's lock does not travel with it.
            try? FileManager.default.removeItem(at: copy.appendingPathComponent("lock"))
            if destinationLock != nil {
                try exchange(destination, copy)
                try removeStoreDirectory(at: copy)
            } else {
                try FileManager.default.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.moveItem(at: copy, to: destination)
            }
        } catch let error as CoreDataError {
            try? FileManager.default.removeItem(at: copy)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: copy)
            throw CoreDataError(
                .persistentStoreOperation, "cannot copy the store \(source.path) to \(destination.path): \(error)",
                underlyingError: error)
        }
    }

    /// Deletes a store directory.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOperation` when it cannot be deleted.
    private static func removeStoreDirectory(at url: URL) throws {
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw CoreDataError(
                .persistentStoreOperation, "cannot delete the store at \(url.path): \(error)", underlyingError: error)
        }
    }
}

extension PersistentStore {
    /// The store's metadata (Core Data's `metadata`): its type, UUID, model version hashes and
    /// the keys a program set. Setting it writes the program's keys at once (the store keeps
    /// its own); an in-memory store has only its type and UUID, and keeps nothing set.
    ///
    /// Setting it is ``PersistentStoreCoordinator/setMetadata(_:for:)``: it does not throw; a
    /// write that fails is logged as an error and the store keeps its previous metadata.
    public var metadata: [String: Any]! {
        get { storedMetadata ?? [StoreTypeKey: type, StoreUUIDKey: identifier] }
        set {
            guard let url, type != InMemoryStoreType else { return }
            do {
                try PersistentStoreCoordinator.replaceMetadata(newValue ?? [:], at: url)
            } catch {
                logger.error(
                    "cannot write the store metadata", metadata: ["store": "\(url.path)", "error": "\(error)"])
            }
        }
    }

    /// The metadata the store keeps on disk (the keys a program may see), `nil` for an in-memory
    /// store or one whose metadata file cannot be read.
    var storedMetadata: [String: Any]? {
        guard let url, type != InMemoryStoreType, let metadata = try? StoreMetadataFile.read(at: url) else {
            return nil
        }
        return StoreMetadataFile.visible(metadata)
    }
}
