import Foundation
import StrataSynchronization
import Synchronization

/// The key of the store option that migrates a store through a ``StagedMigrationManager``
/// (Core Data's `NSPersistentStoreStagedMigrationManagerOptionKey`), set on the store's
/// description together with lightweight migration's options.
public let PersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// Migrates a store through a series of stages in the order given (Core Data's
/// `NSStagedMigrationManager`), when a coordinator adds the store with the manager under
/// ``PersistentStoreStagedMigrationManagerOptionKey``.
///
/// The stages make one chain of model versions: each ``LightweightMigrationStage`` adds its
/// versions, each ``CustomMigrationStage`` its current and next model. The migration starts at
/// the version the store was written with and takes every later step of the chain, each as
/// lightweight migration takes it (in place when it can, keeping object IDs and history), a
/// custom stage's handlers running before and after its step; when the chain ends before the
/// coordinator's model, a last lightweight step reaches it. Each step is crash-safe; a
/// migration stopped by an error or a crash leaves the store at the last version it reached,
/// and the next add goes on from there.
public final class StagedMigrationManager {
    /// The stages, in migration order.
    public let stages: [MigrationStage]
    /// The container a custom stage's handlers reach the store through: during a handler, the
    /// store open with the stage's current model (``CustomMigrationStage/willMigrateHandler``)
    /// or next model (``CustomMigrationStage/didMigrateHandler``); otherwise a container
    /// without stores.
    public private(set) var container: PersistentContainer

    /// A manager of `stages`, taken in this order.
    public init(_ stages: [MigrationStage]) {
        self.stages = stages
        container = PersistentContainer(name: "StagedMigration", managedObjectModel: ManagedObjectModel())
    }

    /// One step of the chain: from a model version to the next, with the custom stage that owns it.
    struct Step {
        let source: ManagedObjectModel
        let destination: ManagedObjectModel
        let custom: CustomMigrationStage?
    }

    /// The steps from the version of the store `metadata` describes to `target`.
    ///
    /// - Parameters:
    ///   - metadata: the store's metadata.
    ///   - target: the coordinator's model.
    ///   - known: the models lightweight stages' checksums are looked up in.
    /// - Throws: ``CoreDataError`` `migrationMissingSourceModel` when a checksum names no known
    ///   model, a reference's model does not load or has another checksum, or no version of the
    ///   chain is the store's.
    func steps(
        from metadata: [String: Any], to target: ManagedObjectModel, known: [ManagedObjectModel]
    ) throws -> [Step] {
        var byChecksum: [String: ManagedObjectModel] = [:]
        for model in known { byChecksum[model.versionChecksum] = byChecksum[model.versionChecksum] ?? model }
        var chain: [ManagedObjectModel] = []
        var customs: [Int: CustomMigrationStage] = [:]
        func append(_ model: ManagedObjectModel) {
            if chain.last?.versionChecksum != model.versionChecksum { chain.append(model) }
        }
        for stage in stages {
            if let lightweight = stage as? LightweightMigrationStage {
                for checksum in lightweight.versionChecksums {
                    guard let model = byChecksum[checksum] else {
                        throw CoreDataError(
                            .migrationMissingSourceModel,
                            "no model version has the checksum \(checksum) of the stage \(stage)")
                    }
                    append(model)
                }
            } else if let custom = stage as? CustomMigrationStage {
                for reference in [custom.currentModel, custom.nextModel] {
                    if let problem = reference.problem { throw problem }
                }
                append(custom.currentModel.resolvedModel)
                customs[chain.count - 1] = custom
                append(custom.nextModel.resolvedModel)
            }
        }
        guard
            let start = chain.firstIndex(where: {
                $0.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            })
        else {
            throw CoreDataError(
                .migrationMissingSourceModel,
                "no stage of the staged migration starts from the model version the store was written with")
        }
        if chain.last?.entityLayoutHashesByName != target.entityLayoutHashesByName { chain.append(target) }
        return (start..<(chain.count - 1)).map {
            Step(source: chain[$0], destination: chain[$0 + 1], custom: customs[$0])
        }
    }

    /// Runs `handler` of `stage` with ``container`` holding the store at `url` open with `model`
    /// (migration off), then closes the store.
    ///
    /// - Throws: what adding the store or the handler throws.
    func run(
        _ handler: ((StagedMigrationManager, CustomMigrationStage) throws -> Void)?, of stage: CustomMigrationStage,
        at url: URL, model: ManagedObjectModel, options: [String: Any]
    ) throws {
        guard let handler else { return }
        let opened = PersistentContainer(name: "StagedMigration", managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        for (key, value) in options where key != PersistentStoreStagedMigrationManagerOptionKey {
            description.setOption(value, forKey: key)
        }
        description.shouldMigrateStoreAutomatically = false
        description.shouldAddStoreAsynchronously = false
        opened.persistentStoreDescriptions = [description]
        let failure = Lock<(any Error)?>(nil)
        opened.loadPersistentStores { _, error in failure.withLock { $0 = error } }
        if let error = failure.withLock({ $0 }) { throw error }
        container = opened
        defer {
            for store in opened.persistentStoreCoordinator.persistentStores {
                try? opened.persistentStoreCoordinator.remove(store)
            }
            container = PersistentContainer(name: "StagedMigration", managedObjectModel: ManagedObjectModel())
        }
        try handler(self, stage)
    }
}
