import Foundation

extension PersistentStoreCoordinator {
    /// The metadata of the store at `url`, read without adding it (Core Data's
    /// `metadataForPersistentStore(ofType:at:options:)`): ``StoreTypeKey``, ``StoreUUIDKey``,
    /// ``StoreModelVersionHashesKey``, ``StoreModelVersionIdentifiersKey`` and the keys a program
    /// set with ``setMetadata(_:for:)``.
    ///
    /// A store written before Strata kept metadata has only its type and UUID until it is next added.
    ///
    /// - Parameters:
    ///   - storeType: ``SQLiteStoreType`` (``StrataStoreType``).
    ///   - url: the store directory.
    ///   - options: ignored (Core Data's store options).
    /// - Returns: the metadata.
    /// - Throws: ``CoreDataError`` `persistentStoreInvalidType` for another type,
    ///   `persistentStoreOpen` when there is no store at `url` or it cannot be read.
    public class func metadataForPersistentStore(
        ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        guard storeType == SQLiteStoreType || storeType == StrataStoreType else {
            throw CoreDataError(.persistentStoreInvalidType, "\(storeType) stores keep no metadata on disk")
        }
        if let metadata = try StoreMetadataFile.read(at: url) { return StoreMetadataFile.visible(metadata) }
        return try StoreMetadataFile.engineMetadata(at: url)
    }

    /// The metadata of the store at `url` (Core Data's `metadataForPersistentStore(type:at:options:)`).
    ///
    /// - Throws: as ``metadataForPersistentStore(ofType:at:options:)``.
    public class func metadataForPersistentStore(
        type: PersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: type.rawValue, at: url, options: options)
    }

    /// The metadata of an added store (Core Data's `metadata(for:)`); an in-memory store's is
    /// made from the coordinator's model.
    public func metadata(for store: PersistentStore) -> [String: Any] {
        store.storedMetadata
            ?? StoreMetadataFile.metadata(for: managedObjectModel, storeID: store.identifier, type: store.type)
    }

    /// Replaces the metadata of an added store with `metadata` (Core Data's `setMetadata(_:for:)`),
    /// keeping the store's type, UUID and model version hashes, which the store owns.
    ///
    /// Core Data writes the metadata with the next save; Strata writes it at once (an in-memory
    /// store keeps none). As Core Data's, the method does not throw: a write that fails is logged
    /// as an error and the store keeps its previous metadata.
    public func setMetadata(_ metadata: [String: Any]?, for store: PersistentStore) {
        store.metadata = metadata
    }

    /// Replaces the metadata of the store at `url` without adding it (Core Data's
    /// `setMetadata(_:forPersistentStoreOfType:at:options:)`), keeping the store's type, UUID and
    /// model version hashes, which the store owns.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreInvalidType` for a type other than
    ///   ``SQLiteStoreType``, `persistentStoreOpen` when the store's metadata cannot be read,
    ///   `persistentStoreSave` when it cannot be written.
    public class func setMetadata(
        _ metadata: [String: Any], forPersistentStoreOfType storeType: String, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) throws {
        guard storeType == SQLiteStoreType || storeType == StrataStoreType else {
            throw CoreDataError(.persistentStoreInvalidType, "\(storeType) stores keep no metadata on disk")
        }
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest").path) else {
            throw CoreDataError(.persistentStoreOpen, "no store at \(url.path)")
        }
        try replaceMetadata(metadata, at: url)
    }

    /// Writes `metadata` with the keys the store owns taken from its current metadata.
    static func replaceMetadata(_ metadata: [String: Any], at url: URL) throws {
        let current = try StoreMetadataFile.read(at: url) ?? [:]
        var updated = metadata
        for key in [
            StoreTypeKey, StoreUUIDKey, StoreModelVersionHashesKey, StoreModelVersionIdentifiersKey,
            StoreModelVersionHashesVersionKey, StoreModelVersionChecksumKey, StoreMetadataFile.versionHashesDigestKey,
            StoreMetadataFile.layoutHashesKey, StoreMetadataFile.archiveKey,
        ] {
            updated[key] = current[key]
        }
        try StoreMetadataFile.write(updated, at: url)
    }
}
