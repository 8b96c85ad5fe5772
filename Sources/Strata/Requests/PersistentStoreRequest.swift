/// A request a context executes against its stores with ``ManagedObjectContext/execute(_:)``
/// (Core Data's `NSPersistentStoreRequest`): the base of ``PersistentHistoryChangeRequest`` and of
/// the batch requests.
public class PersistentStoreRequest {
    /// The stores the request applies to; `nil` (the default) for every store of the context's
    /// coordinator that the request concerns.
    public var affectedStores: [PersistentStore]?

    /// Creates a request for every store.
    init() {}

    /// Runs the request for `context`, whose coordinator is `coordinator`. Each kind of request
    /// overrides it.
    ///
    /// - Throws: ``CoreDataError``.
    func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        throw CoreDataError(.persistentStoreOperation, "\(type(of: self)) is not a request Strata executes")
    }

    /// The stores the request applies to: ``affectedStores`` or else every store of `coordinator`.
    func stores(of coordinator: PersistentStoreCoordinator) -> [PersistentStore] {
        affectedStores ?? coordinator.persistentStores
    }
}

/// What executing a ``PersistentStoreRequest`` returns (Core Data's `NSPersistentStoreResult`):
/// the base of ``PersistentHistoryResult`` and of the batch results.
public class PersistentStoreResult {
    /// Creates a result.
    init() {}
}
