import Foundation

extension ManagedObjectModel {
    /// A checksum of the model's version, as Core Data's `versionChecksum`: a Base64 string equal
    /// for two models that store objects the same way (the entities' version hashes), used by
    /// ``ManagedObjectModelReference`` and ``LightweightMigrationStage`` to name model versions.
    ///
    /// Strata's checksum is the Base64 text of the model's 8-byte version hash; it differs from
    /// the one Xcode writes to `VersionInfo.plist`, so take it from this property.
    public var versionChecksum: String { versionHash.base64EncodedString() }
}
