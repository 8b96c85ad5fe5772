import Foundation

/// A model version a ``CustomMigrationStage`` migrates from or to (Core Data's
/// `NSManagedObjectModelReference`): a model and the checksum it is expected to have.
public final class ManagedObjectModelReference {
    /// The checksum the reference was made with (``ManagedObjectModel/versionChecksum``).
    public let versionChecksum: String
    /// The model; an empty model when a file could not be loaded (the migration then fails
    /// with the load error).
    public let resolvedModel: ManagedObjectModel
    /// Why the model could not be loaded, or why it does not match ``versionChecksum``.
    let problem: CoreDataError?

    /// A reference to `model`, which should have the checksum `versionChecksum`.
    public init(model: ManagedObjectModel, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        resolvedModel = model
        problem = Self.check(model, versionChecksum)
    }

    /// A reference to the model at `fileURL` (an `.xcdatamodel` directory or its `contents`
    /// file), which should have the checksum `versionChecksum`. A file that does not load makes
    /// the migration fail with `migrationMissingSourceModel`.
    public init(fileURL: URL, versionChecksum: String) {
        self.versionChecksum = versionChecksum
        do {
            let model = try ManagedObjectModel(contentsOf: fileURL)
            resolvedModel = model
            problem = Self.check(model, versionChecksum)
        } catch {
            resolvedModel = ManagedObjectModel()
            problem = CoreDataError(
                .migrationMissingSourceModel, "the model of a migration stage at \(fileURL.path) does not load: \(error)", underlyingError: error)
        }
    }

    /// The error of a model whose checksum is not the expected one.
    private static func check(_ model: ManagedObjectModel, _ checksum: String) -> CoreDataError? {
        guard model.versionChecksum != checksum else { return nil }
        return CoreDataError(
            .migrationMissingSourceModel,
            "a migration stage references a model with the checksum \(checksum), but the model's checksum is \(model.versionChecksum)")
    }
}
