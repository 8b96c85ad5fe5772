import Foundation

extension ManagedObjectModel {
    /// Whether a store whose metadata is `metadata` holds the entities of the configuration
    /// `configuration` exactly as this model describes them (Core Data's
    /// `isConfiguration(withName:compatibleWithStoreMetadata:)`): the store's
    /// ``StoreModelVersionHashesKey`` names the configuration's entities, each with this model's
    /// ``EntityDescription/versionHash``, and, where the store records Strata's layout hashes
    /// (which also cover fetch indexes), each with this model's layout. A store written before
    /// Strata kept Core Data's hashes records its layout hashes as its version hashes.
    ///
    /// - Parameters:
    ///   - configuration: a configuration of the model, or `nil` for all its entities.
    ///   - metadata: a store's metadata
    ///     (``PersistentStoreCoordinator/metadataForPersistentStore(ofType:at:options:)``).
    /// - Returns: `false` when the metadata has no version hashes or any hash differs.
    public func isConfiguration(
        withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]
    ) -> Bool {
        guard let stored = metadata[StoreModelVersionHashesKey] as? [String: Any],
            let entities = entities(forConfigurationName: configuration)
        else { return false }
        guard Set(stored.keys) == Set(entities.map(\.entityName)) else { return false }
        let layouts = metadata[StoreMetadataFile.layoutHashesKey] as? [String: Any]
        return entities.allSatisfy { entity in
            guard let hash = stored[entity.entityName] as? Data else { return false }
            if let layouts { return hash == entity.versionHash && layouts[entity.entityName] as? Data == entity.layoutHash }
            return hash == entity.layoutHash
        }
    }
}

extension ManagedObjectModel {
    /// The model the store at `url` was written with, rebuilt from the archive Strata keeps in
    /// the store's metadata; `nil` for a store written before Strata kept one. (Strata's
    /// addition: Core Data finds the source model among an app's model versions by the store's
    /// version hashes.)
    ///
    /// The model holds the entities, attributes, relationships, fetch indexes and uniqueness
    /// constraints that shape the store, not default values, validation rules or fetched properties.
    ///
    /// - Throws: ``CoreDataError`` `persistentStoreOpen` when the metadata cannot be read,
    ///   `migrationMissingSourceModel` when the archive does not parse.
    public static func storeModel(at url: URL) throws -> ManagedObjectModel? {
        guard let metadata = try StoreMetadataFile.read(at: url) else { return nil }
        return try StoreMetadataFile.sourceModel(from: metadata)
    }
}
