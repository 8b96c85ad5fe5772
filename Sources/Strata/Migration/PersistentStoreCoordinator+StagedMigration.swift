import Foundation
import Logging

private let logger = Logger(label: "strata.migration")

extension PersistentStoreCoordinator {
    /// Migrates the store at `url`, whose metadata is `metadata`, through the stages of
    /// `manager` to this coordinator's model (``StagedMigrationManager``): every step's mapping
    /// is inferred first (a step that cannot be inferred changes nothing), then each step is
    /// taken as lightweight migration takes it, a custom stage's handlers running around its step.
    ///
    /// - Throws: ``CoreDataError`` `migrationMissingSourceModel` when the stages do not name the
    ///   store's version or a model cannot be found, `inferredMappingModel` for a step inference
    ///   cannot map, what a handler throws, and the errors of a lightweight step. The store is
    ///   then at the last version it reached.
    func migrateStaged(
        _ manager: StagedMigrationManager, at url: URL, metadata: [String: Any], description: PersistentStoreDescription
    ) throws {
        var known = [managedObjectModel]
        if let bundle = managedObjectModel.versionBundleURL {
            known += try ManagedObjectModel.versions(in: bundle).map(ManagedObjectModel.init(checkedContentsOf:))
        }
        let steps = try manager.steps(from: metadata, to: managedObjectModel, known: known)
        let mappings = try steps.map {
            try MappingModel.inferredMappingModel(forSourceModel: $0.source, destinationModel: $0.destination)
        }
        var lock: StoreDirectoryLock? = try StoreDirectoryLock(url)
        defer { lock?.release() }
        for (index, (step, mapping)) in zip(steps, mappings).enumerated() {
            if let custom = step.custom, custom.willMigrateHandler != nil {
                // The handler opens the store: the directory lock is taken again by the step that needs it.
                lock?.release()
                lock = nil
                try manager.run(
                    custom.willMigrateHandler, of: custom, at: url, model: step.source, options: description.options)
            }
            try migrateStep(
                at: url, from: step.source, to: step.destination, mapping: mapping, description: description,
                lock: &lock)
            if let custom = step.custom, custom.didMigrateHandler != nil {
                lock?.release()
                lock = nil
                try manager.run(
                    custom.didMigrateHandler, of: custom, at: url, model: step.destination, options: description.options
                )
            }
            logger.debug(
                "took a step of a staged migration",
                metadata: [
                    "path": "\(url.path)", "step": "\(index + 1)", "of": "\(steps.count)",
                    "stage": "\(step.custom.map { "\($0)" } ?? "lightweight")",
                ])
        }
    }
}
