/// A stage of a staged migration from one model version to the next in which the application
/// takes part (Core Data's `NSCustomMigrationStage`): ``willMigrateHandler`` runs with the store
/// open with ``currentModel``, then the store is migrated to ``nextModel`` (by lightweight
/// migration), then ``didMigrateHandler`` runs with the store open with ``nextModel``. The
/// handlers reach the store through the manager's ``StagedMigrationManager/container``.
public final class CustomMigrationStage: MigrationStage {
    /// The model version the stage migrates from.
    public let currentModel: ManagedObjectModelReference
    /// The model version the stage migrates to.
    public let nextModel: ManagedObjectModelReference
    /// Runs before the stage migrates, with the store open with ``currentModel``: prepare the
    /// data for the change here. An error thrown stops the migration; the store stays at
    /// ``currentModel`` (with whatever the handler saved).
    public var willMigrateHandler: ((StagedMigrationManager, CustomMigrationStage) throws -> Void)?
    /// Runs after the stage migrated, with the store open with ``nextModel``: clean up or fill
    /// in data here. An error thrown stops the migration; the store stays at ``nextModel``.
    public var didMigrateHandler: ((StagedMigrationManager, CustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`.
    public init(migratingFrom currentModel: ManagedObjectModelReference, to nextModel: ManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }
}
