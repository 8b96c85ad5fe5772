import Foundation

extension ManagedObjectModel {
    /// The checksum of the model's version, Core Data's `versionChecksum`: the Base64 text of
    /// SHA-256 of the entities' version hashes in entity name order, equal to the one Core Data
    /// computes and Xcode writes to a compiled model's `VersionInfo.plist`
    /// (`NSManagedObjectModel_VersionChecksums`). ``ManagedObjectModelReference`` and
    /// ``LightweightMigrationStage`` name model versions by it.
    public var versionChecksum: String { CoreDataVersionHash.checksum(of: entityVersionHashesByName) }
}
