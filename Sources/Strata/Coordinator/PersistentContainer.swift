import Foundation
import Synchronization

/// A model, a coordinator and the contexts that use them, set up together (Core Data's
/// `NSPersistentContainer`).
///
/// `Sendable`: hand the container to any task; use ``viewContext`` on the main queue and
/// ``newBackgroundContext()`` or ``performBackgroundTask(_:)`` elsewhere. Open, as in Core Data:
/// a subclass can override ``defaultDirectoryURL()`` to move its stores.
// @unchecked: the stored properties are constants or kept behind a mutex.
open class PersistentContainer: @unchecked Sendable {
    /// The container's name: the default store is `<name>.strata`.
    public let name: String
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    private let descriptions = Mutex<[PersistentStoreDescription]>([])
    private let mainContext: ManagedObjectContext

    /// Creates a container named `name` for `model`, with one store description at
    /// ``defaultDirectoryURL()`` (the subclass's, when overridden).
    public init(name: String, managedObjectModel model: ManagedObjectModel) {
        self.name = name
        managedObjectModel = model
        persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        mainContext = ManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        mainContext.persistentStoreCoordinator = persistentStoreCoordinator
        mainContext.name = "viewContext"
        let url = type(of: self).defaultDirectoryURL().appendingPathComponent("\(name).strata")
        descriptions.withLock { $0 = [PersistentStoreDescription(url: url)] }
    }

    /// Where stores go when no URL is given: `$XDG_DATA_HOME/strata`, else
    /// `~/.local/share/strata` on Linux and `~/Library/Application Support/strata` on macOS.
    open class func defaultDirectoryURL() -> URL {
        #if os(Linux)
        if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("strata")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/strata")
        #else
        return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0].appendingPathComponent("strata")
        #endif
    }

    /// The descriptions of the stores ``loadPersistentStores(completionHandler:)`` adds.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Adds every described store, calling `block` once per store with its description and
    /// error, if any. A description with ``PersistentStoreDescription/shouldAddStoreAsynchronously``
    /// is added on a background queue, and `block` is called there.
    open func loadPersistentStores(completionHandler block: @escaping @Sendable (PersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            let coordinator = persistentStoreCoordinator
            if description.shouldAddStoreAsynchronously {
                DispatchQueue.global().async { coordinator.addPersistentStore(with: description, completionHandler: block) }
            } else {
                coordinator.addPersistentStore(with: description, completionHandler: block)
            }
        }
    }

    /// The context for the main queue, created with the container.
    public var viewContext: ManagedObjectContext { mainContext }

    /// A new private-queue context on the container's coordinator.
    open func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context.
    open func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context and returns its result.
    ///
    /// - Throws: what `block` throws.
    public func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }
}
