extension FetchRequest {
    /// The IDs of the stored objects the request matches (its entity, predicate, sort
    /// descriptors, offset, limit and `includesSubentities`), ignoring `context`'s unsaved changes:
    /// what a batch request works on.
    ///
    /// - Throws: ``CoreDataError`` as a fetch does.
    func storedObjectIDs(in context: ManagedObjectContext) throws -> [ManagedObjectID] {
        let request = FetchRequest<ManagedObjectID>()
        request.entityName = entityName
        request.entity = entity
        request.predicate = predicate
        request.sortDescriptors = sortDescriptors
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset
        request.includesSubentities = includesSubentities
        request.resultType = .managedObjectIDResultType
        request.includesPendingChanges = false
        return try context.fetch(request)
    }
}
