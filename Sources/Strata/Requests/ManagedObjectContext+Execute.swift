extension ManagedObjectContext {
    /// Executes a store request, such as a ``PersistentHistoryChangeRequest``, against the
    /// context's stores (Core Data's `execute(_:)`). Call it on the context's queue.
    ///
    /// - Returns: the request's result: a ``PersistentHistoryResult`` for a history request.
    /// - Throws: ``CoreDataError``: `coreData` when the context has no coordinator, and what the
    ///   request throws (see each request).
    public func execute(_ request: PersistentStoreRequest) throws -> PersistentStoreResult {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        return try request.execute(in: self, coordinator: coordinator)
    }
}
