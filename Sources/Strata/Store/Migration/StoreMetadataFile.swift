import Foundation
internal import StrataStore

#if canImport(Glibc)
import Glibc
#endif

/// A store directory's metadata: a property list, `metadata.plist`, beside the manifest, holding
/// Core Data's metadata keys (store type and UUID, the model's version hashes and identifiers),
/// the keys a program set, and the archive of the model the store was written with.
///
/// It is written when the store is created (or first opened by a build that keeps metadata),
/// replaced atomically and synced, and moves with the store when a migration exchanges it.
enum StoreMetadataFile {
    /// The file's name in the store directory.
    static let fileName = "metadata.plist"
    /// The key of the archived model (``ModelArchive`` as JSON), kept out of the metadata programs see.
    static let archiveKey = "StrataModelArchive"

    /// The metadata of the store at `store` (or of the file `name` beside it), or `nil` when it has none;
    /// the metadata of an in-place migration or rewrite that committed but did not put its file in place yet.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOpen` when the file does not parse.
    static func read(at store: URL, name: String = fileName) throws -> [String: Any]? {
        // An in-place migration interrupted after its commit point: its metadata is the store's.
        if name == fileName,
            let committed = PendingMigrationMetadata.all.lazy.compactMap({ $0.committedMetadata(at: store) }).first
        {
            return committed
        }
        let file = store.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        guard let metadata = try? PropertyListReading.object(from: data) as? [String: Any]
        else {
            throw CoreDataError(.persistentStoreOpen, "the store metadata at \(file.path) does not parse")
        }
        return metadata
    }

    /// Replaces the metadata of the store at `store` (or the file `name` beside it), atomically and durably.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreSave` when it cannot be written.
    static func write(_ metadata: [String: Any], at store: URL, name: String = fileName) throws {
        let file = store.appendingPathComponent(name)
        let temporary = store.appendingPathComponent(fileName + ".tmp")
        do {
            let data = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else { throw POSIXError(.EIO) }
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary.path, file.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            try syncDirectory(store)
        } catch {
            throw CoreDataError(.persistentStoreSave, "cannot write the store metadata at \(file.path): \(error)")
        }
    }

    /// Syncs a directory, so that renames in it survive a crash.
    static func syncDirectory(_ directory: URL) throws {
        let fd = open(directory.path, O_RDONLY)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Core Data's digest of the version hashes (`String`, Base64).
    static let versionHashesDigestKey = "NSStoreModelVersionHashesDigest"
    /// Strata's layout hash of every entity (`[String: Data]`): whether a model opens the store
    /// as it is (``ManagedObjectModel/isConfiguration(withName:compatibleWithStoreMetadata:)``).
    static let layoutHashesKey = "StrataStoreLayoutHashes"

    /// The metadata of a store with identifier `storeID` written with `model`, as Core Data keeps it.
    static func metadata(
        for model: ManagedObjectModel, storeID: String, type: String = SQLiteStoreType
    ) -> [String: Any] {
        [
            StoreTypeKey: type,
            StoreUUIDKey: storeID,
            StoreModelVersionHashesKey: model.entityVersionHashesByName,
            StoreModelVersionChecksumKey: model.versionChecksum,
            versionHashesDigestKey: CoreDataVersionHash.digest(of: model.entityVersionHashesByName),
            layoutHashesKey: model.entityLayoutHashesByName,
            StoreModelVersionIdentifiersKey: model.versionIdentifiers.compactMap { $0.base as? String }.sorted(),
            StoreModelVersionHashesVersionKey: 3,
            PersistenceFrameworkVersionKey: 1.0,
        ]
    }

    /// `metadata` with the model archive of `model` added.
    static func adding(archiveOf model: ManagedObjectModel, to metadata: [String: Any]) -> [String: Any] {
        var metadata = metadata
        // JSONEncoder cannot fail on the archive's plain values.
        metadata[archiveKey] = try? JSONEncoder().encode(ModelArchive(model))
        return metadata
    }

    /// The metadata a program sees: without the model archive.
    static func visible(_ metadata: [String: Any]) -> [String: Any] {
        metadata.filter { $0.key != archiveKey }
    }

    /// The model the store was written with, rebuilt from its archive (`nil` when there is none).
    ///
    /// - Throws: ``CoreDataError`` `migrationMissingSourceModel` when the archive does not parse.
    static func sourceModel(from metadata: [String: Any]) throws -> ManagedObjectModel? {
        guard let data = metadata[archiveKey] as? Data else { return nil }
        do {
            return try JSONDecoder().decode(ModelArchive.self, from: data).model()
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.migrationMissingSourceModel, "the store's model archive does not parse: \(error)")
        }
    }

    /// Writes the metadata of a store just opened with `model` when it has none yet (a new store,
    /// or one written before stores kept metadata).
    static func recordIfMissing(at store: URL, storeID: String, model: ManagedObjectModel) throws {
        // A file there is not parsed again (every open checks for it; the migration check read it).
        guard !FileManager.default.fileExists(atPath: store.appendingPathComponent(fileName).path),
            try read(at: store) == nil
        else { return }
        try write(adding(archiveOf: model, to: metadata(for: model, storeID: storeID)), at: store)
    }

    /// The metadata of the store at `store` when it has no metadata file (a store written before
    /// stores kept metadata): its type and its UUID, read from the engine store opened read-only.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOpen` when there is no store at `store` or it
    ///   cannot be read.
    static func engineMetadata(at store: URL) throws -> [String: Any] {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = false
        do {
            let engine = try Store.open(at: store, schema: nil, configuration: configuration)
            defer { try? engine.close() }
            return [StoreTypeKey: SQLiteStoreType, StoreUUIDKey: engine.storeID.uuidString]
        } catch let error as StoreError {
            throw CoreDataError(
                .persistentStoreOpen, "no store metadata at \(store.path): \(error.message)", underlyingError: error)
        }
    }
}
