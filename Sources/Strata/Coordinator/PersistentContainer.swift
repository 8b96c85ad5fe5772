import Foundation
import StrataSynchronization
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
    private let descriptions = Lock<[PersistentStoreDescription]>([])
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
    /// `$HOME/.local/share/strata` on Linux (the password database's home directory when `HOME`
    /// is unset) and `~/Library/Application Support/strata` on macOS.
    open class func defaultDirectoryURL() -> URL {
        #if os(Linux)
        // Two variables read with getenv: every container computes this, and
        // `ProcessInfo.environment` copies the whole environment into a dictionary.
        func variable(_ name: String) -> String? {
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if let data = variable("XDG_DATA_HOME") {
            return URL(fileURLWithPath: data).appendingPathComponent("strata")
        }
        let home = variable("HOME").map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/strata")
        #else
        return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
            .appendingPathComponent("strata")
        #endif
    }

    /// The descriptions of the stores ``loadPersistentStores(completionHandler:)`` adds.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Adds every described store, calling `block` once per store with its description and
    /// error, if any. A description with ``PersistentStoreDescription/shouldAddStoreAsynchronously``
    /// is added on a background queue, and `block` is called there; every other one is added,
    /// and `block` called, before this returns (so `block` may set the caller's variables, as
    /// Core Data's loading code does).
    open func loadPersistentStores(
        completionHandler block: @escaping (PersistentStoreDescription, (any Error)?) -> Void
    ) {
        for description in persistentStoreDescriptions {
            let coordinator = persistentStoreCoordinator
            if description.shouldAddStoreAsynchronously {
                // The caller asked for `block` on another thread: what it captures is its to guard.
                let bound = QueueBound(value: block)
                DispatchQueue.global().async {
                    coordinator.addPersistentStore(with: description, completionHandler: bound.value)
                }
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

    /// Runs `block` on a new private-queue context, asynchronously.
    open func performBackgroundTask(_ block: @escaping (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context and returns its result (Core Data's
    /// `async rethrows` form, with the block's own error type).
    ///
    /// - Throws: what `block` throws.
    nonisolated(nonsending) public func performBackgroundTask<T, E: Error>(
        _ block: @escaping (ManagedObjectContext) throws(E) -> T
    ) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(E) -> T in try block(context) }
    }
}
