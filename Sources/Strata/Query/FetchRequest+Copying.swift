extension FetchRequest {
    /// A new request with the same members, so that a shared request (a model's template, a
    /// fetched property's request) is never changed by its users.
    func copied() -> FetchRequest<ResultType> {
        let copy = FetchRequest<ResultType>()
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
