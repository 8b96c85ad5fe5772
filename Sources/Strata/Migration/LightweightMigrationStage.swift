/// A stage of a staged migration made of model versions that migrate one to the next by
/// lightweight migration (Core Data's `NSLightweightMigrationStage`). The versions are named by
/// their ``ManagedObjectModel/versionChecksum`` and found among the versions of the `.xcdatamodeld`
/// the coordinator's model was loaded from, and the models the manager's custom stages reference.
public final class LightweightMigrationStage: MigrationStage {
    /// The checksums of the model versions, in migration order.
    public let versionChecksums: [String]

    /// A stage through the model versions with these checksums, in order.
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
        super.init()
    }
}
