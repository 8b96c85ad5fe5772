import Foundation
import Logging
import ServiceLifecycle
import Strata
import StrataSynchronization
import Synchronization

/// A persistent container whose store is one instance's replica of a dataset shared through
/// PostgreSQL (StrataMirror's counterpart of Core Data's `NSPersistentCloudKitContainer`).
///
/// Use it as a ``PersistentContainer``: load the stores, save contexts. Each save also becomes
/// one PostgreSQL transaction (see ``MirrorConfiguration/Mode``); what other instances save
/// arrives through ``services``, which the application runs in its `ServiceGroup`:
///
/// ```swift
/// let container = MirroredPersistentContainer(name: "Shop", managedObjectModel: model, mirror: configuration)
/// container.loadPersistentStores { _, error in … }
/// container.viewContext.automaticallyMergesChangesFromParent = true
/// let group = ServiceGroup(services: container.services + [app], logger: logger)
/// try await group.run()
/// ```
///
/// The model gains one entity, `StrataMirrorState`, holding the store's cursor in the shared log.
open class MirroredPersistentContainer: PersistentContainer, @unchecked Sendable {
    // @unchecked: the mirrors are kept behind a mutex.
    /// How the container reaches PostgreSQL.
    public let mirrorConfiguration: MirrorConfiguration
    private let mirrors = Lock<[PostgresMirror]>([])

    /// Creates a container named `name` for `model`, mirrored as `configuration` says.
    ///
    /// - Parameters:
    ///   - name: the container's name (the default store is `<name>.strata`).
    ///   - model: the model; it gains the `StrataMirrorState` entity.
    ///   - configuration: the PostgreSQL server and this instance's name.
    public init(name: String, managedObjectModel model: ManagedObjectModel, mirror configuration: MirrorConfiguration) {
        MirrorState.addEntity(to: model)
        mirrorConfiguration = configuration
        super.init(name: name, managedObjectModel: model)
    }

    /// Adds every described store and makes each a mirrored replica before `block` is called
    /// for it. PostgreSQL need not be reachable: saves fail with
    /// ``CoreDataError/Code/persistentStoreSave`` until it is, and the tail catches up once it is.
    ///
    /// An error for a store that is not a store directory (an in-memory store cannot be mirrored).
    /// In asynchronous mode the stores track persistent history (the export reads it). A store
    /// whose mirror state an older build wrote is upgraded first, whether or not the
    /// description migrates automatically (``MirrorState/upgradeStore(at:logger:)``).
    open override func loadPersistentStores(
        completionHandler block: @escaping (PersistentStoreDescription, (any Error)?) -> Void
    ) {
        if mirrorConfiguration.mode == .asynchronous {
            for description in persistentStoreDescriptions { description.isHistoryTrackingEnabled = true }
        }
        for description in persistentStoreDescriptions {
            guard let url = description.url else { continue }
            do {
                try MirrorState.upgradeStore(at: url, logger: mirrorConfiguration.logger)
            } catch {
                // Loading the store reports why it cannot be opened.
                mirrorConfiguration.logger.warning(
                    "could not upgrade the store's mirror state",
                    metadata: [
                        "store": "\(url.path)", "error": "\(String(reflecting: error))",
                    ])
            }
        }
        super.loadPersistentStores { [self] description, error in
            guard error == nil else { return block(description, error) }
            do {
                try attachMirror(for: description)
                block(description, nil)
            } catch {
                block(description, error)
            }
        }
    }

    private func attachMirror(for description: PersistentStoreDescription) throws {
        let coordinator = persistentStoreCoordinator
        guard let url = description.url, let store = coordinator.persistentStore(for: url) else {
            throw CoreDataError(.persistentStoreInvalidType, "only a store directory can be mirrored")
        }
        let mirror = try PostgresMirror(configuration: mirrorConfiguration, coordinator: coordinator, store: store) {
            [weak self] changes in
            self?.merge(changes)
        }
        store.replicator = mirror
        mirrors.withLock { $0.append(mirror) }
        mirrorConfiguration.logger.debug(
            "mirroring a store through PostgreSQL",
            metadata: [
                "store": "\(url.path)", "instance": "\(mirrorConfiguration.instanceName)",
                "cursor": "\((try? mirror.cursor()) ?? 0)",
            ])
    }

    /// Merges what the mirror applied into the view context, when it merges automatically.
    private func merge(_ changes: [ReplicatedChanges]) {
        guard viewContext.automaticallyMergesChangesFromParent else { return }
        for change in changes {
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: change.remoteContextSaveData, into: [viewContext])
        }
    }

    /// The background work of the mirror, to run in the application's `ServiceGroup`: for each
    /// mirrored store, the tail of the shared log, its pruning and the local checkpoints.
    /// Empty until the stores are loaded.
    public var services: [any Service] {
        mirrors.withLock { $0 }.flatMap { mirror -> [any Service] in
            [
                MirrorTailService(mirror: mirror), MirrorPruneService(mirror: mirror),
                MirrorCheckpointService(mirror: mirror),
            ]
        }
    }

    /// Whether local saves wait to be exported to PostgreSQL: in asynchronous mode, saves
    /// committed locally that the tail has not yet appended to the shared log (say, while
    /// PostgreSQL is unreachable); always `false` in synchronous mode, where a save is in
    /// PostgreSQL before it commits locally. Check it before stopping an instance for good.
    ///
    /// - Throws: ``CoreDataError`` when a store's history cannot be read.
    public func hasPendingExports() throws -> Bool {
        try mirrors.withLock { $0 }.contains { mirror in
            try mirror.store.withReplicationLock { try !mirror.pendingSaves().transactions.isEmpty }
        }
    }

    /// The last log position each mirrored store holds, by store identifier.
    ///
    /// - Throws: ``CoreDataError`` when a store cannot be read.
    public func mirrorCursors() throws -> [String: Int64] {
        var cursors: [String: Int64] = [:]
        for mirror in mirrors.withLock({ $0 }) { cursors[mirror.store.identifier] = try mirror.cursor() }
        return cursors
    }
}
