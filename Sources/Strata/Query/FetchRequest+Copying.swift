extension FetchRequest {
    /// A new request with the same members, so that a shared request (a model's template, a
    /// fetched property's request) is never changed by its users.
    func copied() -> FetchRequest<ResultType> {
        copied(as: ResultType.self)
    }

    /// ``copied()`` with the results typed `Result`, as Core Data's untyped requests (templates,
    /// fetched properties' requests) are run as typed ones.
    func copied<Result>(as _: Result.Type) -> FetchRequest<Result> {
        let copy = FetchRequest<Result>()
        copy.entityName = entityName
        copy.entity = entity
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.resultType = resultType
        copy.includesPendingChanges = includesPendingChanges
        copy.affectedStores = affectedStores
        copy.includesSubentities = includesSubentities
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.includesPropertyValues = includesPropertyValues
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.returnsDistinctResults = returnsDistinctResults
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        return copy
    }
}
