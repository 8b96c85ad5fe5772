internal import StrataStore

/// The stored objects a batch request works on, found by one fetch of the stores (the
/// engine's rows tested against the predicate where they lie), with the rows it read.
struct StoredMatches {
    /// The plan of the fetch.
    let plan: QueryPlan
    /// The stores the fetch read.
    let stores: FetchStores
    /// The matches, in the order the request finds them; each holds its whole row, as the store
    /// holds it now, when the fetch read it (a scan, a walk, an index lookup with a residual
    /// test, not at a pinned query generation), else only its key.
    var matches: [StoredMatch]

    /// The ID of `match`, as the fetch of IDs would return it (the context's registered ID when
    /// it has one).
    func objectID(of match: StoredMatch, in context: ManagedObjectContext) -> ManagedObjectID {
        context.objectID(of: .stored(match), plan: plan, stores: stores)
    }
}

extension FetchRequest {
    /// The stored objects the request matches (its entity, predicate, sort descriptors, offset,
    /// limit and `includesSubentities`), ignoring `context`'s unsaved changes, with the rows the
    /// fetch read: what a batch request works on, without reading the rows a second time.
    ///
    /// - Throws: ``CoreDataError`` as a fetch does.
    func storedMatches(in context: ManagedObjectContext) throws -> StoredMatches {
        // A fetch of objects with their values reads whole rows, and keeps them.
        let request = FetchRequest<ManagedObject>()
        request.entityName = entityName
        request.entity = entity
        request.predicate = predicate
        request.sortDescriptors = sortDescriptors
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset
        request.includesSubentities = includesSubentities
        request.resultType = .managedObjectResultType
        request.includesPropertyValues = true
        request.includesPendingChanges = false
        let plan = try context.plan(request, counting: false)
        let (candidates, stores) = try context.candidates(request, plan: plan)
        var matches: [StoredMatch] = []
        matches.reserveCapacity(candidates.count)
        // Rows read at a pinned query generation may be older than the store's: those are left
        // out (read again from the store), so that a batch request never writes stale values.
        let pinned = stores.stores.map { context.queryGeneration?.pins?[$0.identifier] != nil }
        for case .stored(var match) in candidates {
            if pinned[match.store] { match.row = nil }
            matches.append(match)
        }
        return StoredMatches(plan: plan, stores: stores, matches: matches)
    }
}
