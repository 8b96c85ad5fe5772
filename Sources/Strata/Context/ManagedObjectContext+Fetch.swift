import Foundation

extension ManagedObjectContext {
    /// The objects (or IDs, dictionaries, or count) a fetch request matches, from the stores and
    /// this context's unsaved changes (Core Data's `fetch(_:)`).
    ///
    /// Unsaved inserted objects that match are included, objects changed in the context are
    /// matched on their in-memory state, deleted ones are left out, and objects already
    /// realized in the context are returned as they are, never overwritten. Dictionary results
    /// reflect the stores only, as in Core Data. With a ``FetchRequest/fetchBatchSize``, the
    /// objects after the first batch come back as faults (``fetchBatched(_:)`` realizes them a
    /// batch at a time).
    ///
    /// Costs: see ``explain(_:)`` for how the rows are found; each block read once per fetch.
    ///
    /// - Throws: ``CoreDataError`` when the request names no entity of the model, asks for
    ///   results of another type than `T`, has inconsistent dictionary properties, or a store
    ///   read fails.
    public func fetch<T>(_ request: FetchRequest<T>) throws -> [T] {
        switch request.resultType {
        case .countResultType:
            return try typed([try count(for: request)])
        case .managedObjectIDResultType:
            let plan = try plan(request, counting: false)
            let (candidates, stores) = try candidates(request, plan: plan)
            return try typed(candidates.map { objectID(of: $0, plan: plan, stores: stores) })
        case .dictionaryResultType:
            return try typed(try dictionaries(request))
        case .managedObjectResultType:
            let (objects, allOfClass) = try fetchObjects(request)
            keepUntilEventEnds(objects)
            guard let typed = Self.cast(objects, to: T.self, allOfClass: allOfClass) else {
                throw CoreDataError(
                    .coreData,
                    "the fetched objects are not \(T.self); register the subclass with \(T.self).register(for:)")
            }
            return typed
        }
    }

    /// The objects a request matches, in a collection that realizes them in batches of
    /// ``FetchRequest/fetchBatchSize`` when one of a batch is first accessed (Core Data's
    /// batched fetch results). With a batch size of 0 every object is realized at once.
    ///
    /// Only the matching IDs are kept until a batch is touched; each batch costs one read per
    /// block holding its rows.
    ///
    /// - Throws: as ``fetch(_:)``; ``CoreDataError`` `coreData` when the request's result type
    ///   is not managed objects.
    public func fetchBatched<T: ManagedObject>(_ request: FetchRequest<T>) throws -> FetchedResults<T> {
        guard request.resultType == .managedObjectResultType else {
            throw CoreDataError(
                .coreData,
                "fetchBatched(_:) returns managed objects; the request's result type is \(request.resultType)")
        }
        let plan = try plan(request, counting: false)
        let (candidates, stores) = try candidates(request, plan: plan)
        let elements = candidates.map { candidate -> FetchedResults<T>.Entry in
            switch candidate {
            case .object(let object): return .object(object)
            case .stored: return .id(objectID(of: candidate, plan: plan, stores: stores))
            }
        }
        let results = FetchedResults<T>(elements: elements, batchSize: request.fetchBatchSize, context: self)
        if request.fetchBatchSize <= 0 { try results.realizeAll() }
        return results
    }

    /// The number of objects `request` would fetch (Core Data's `count(for:)`), after its offset
    /// and limit, without creating objects.
    ///
    /// Answered from the fetch indexes alone, reading no rows, when they answer the predicate
    /// exactly (see ``explainCount(for:)``). For dictionary requests that group, aggregate or
    /// return distinct results, the number of dictionaries.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        if request.resultType == .dictionaryResultType && DictionaryResults.isAggregating(request) {
            return try dictionaries(request).count
        }
        let total = try countMatches(try plan(request, counting: true))
        let afterOffset = max(0, total - request.fetchOffset)
        return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
    }

    /// How ``fetch(_:)`` finds the objects of `request`: which fetch indexes, whether it scans,
    /// what it evaluates on the rows, whether it stops early. Reads no rows.
    ///
    /// - Throws: ``CoreDataError`` when the request names no entity of the model.
    public func explain<T>(_ request: FetchRequest<T>) throws -> FetchPlan {
        try plan(request, counting: request.resultType == .countResultType).fetchPlan
    }

    /// How ``count(for:)`` counts the objects of `request`: from the indexes alone, or by
    /// decoding candidate rows. Reads no rows.
    ///
    /// - Throws: ``CoreDataError`` when the request names no entity of the model.
    public func explainCount<T>(for request: FetchRequest<T>) throws -> FetchPlan {
        try plan(request, counting: true).fetchPlan
    }

    /// `objects` as `[T]`, or `nil` when one is not a `T`: when every object's class is `T`
    /// itself (`allOfClass`: a fetch of one entity into its own subclass), the array as it is,
    /// without a dynamic cast per object.
    private static func cast<T>(_ objects: [ManagedObject], to _: T.Type, allOfClass: Bool) -> [T]? {
        if T.self is ManagedObject.Type, allOfClass { return unsafeBitCast(objects, to: [T].self) }
        return objects as? [T]
    }

    /// Whether `object`'s class is `T` itself, not a subclass.
    ///
    /// Asked of each object as a fetch makes or finds it, while its memory is in the cache: asked
    /// of a million objects after the fetch, it waited for memory for each (3.7% of `perf`
    /// samples of strata-graph-bench W6 at 1M rows).
    private static func isExactly<T>(_ object: ManagedObject, _: T.Type) -> Bool {
        ObjectIdentifier(type(of: object)) == ObjectIdentifier(T.self)
    }

    /// `values` as `[T]`, or an error naming the types.
    private func typed<T, V>(_ values: [V]) throws -> [T] {
        guard let typed = values as? [T] else {
            throw CoreDataError(
                .coreData, "the fetch returns \(V.self) values, not \(T.self); set the request's resultType to match")
        }
        return typed
    }

    /// The managed objects of a fetch: realized (the first batch only with a batch size),
    /// registered, with the request's relationships prefetched; and whether every one's class
    /// is `T` itself.
    private func fetchObjects<T>(_ request: FetchRequest<T>) throws -> (objects: [ManagedObject], allOfClass: Bool) {
        let plan = try plan(request, counting: false)
        if Self.streams(request, plan: plan) { return try streamObjects(request, plan: plan) }
        let (fetched, stores) = try candidates(request, plan: plan)
        var candidates = consume fetched
        let realized =
            request.includesPropertyValues
            ? (request.fetchBatchSize > 0 && request.returnsObjectsAsFaults
                ? min(request.fetchBatchSize, candidates.count) : candidates.count)
            : 0
        var objects: [ManagedObject] = []
        objects.reserveCapacity(candidates.count)
        var unread: [ManagedObjectID] = []
        let references = ReferenceIDs()
        var allOfClass = true
        for index in candidates.indices {
            // Moved out of the array, not copied: its row moves on into the object.
            let candidate = candidates[index].take()
            let object = try self.object(
                for: candidate, plan: plan, stores: stores, loading: index < realized, references: references)
            if index < realized && !object.isLoaded { unread.append(object.objectID) }
            allOfClass = allOfClass && Self.isExactly(object, T.self)
            objects.append(object)
        }
        if !unread.isEmpty { _ = try realizeObjects(unread) }
        if let paths = request.relationshipKeyPathsForPrefetching, !paths.isEmpty {
            try prefetch(paths, for: Array(objects.prefix(max(realized, 0))))
        }
        return (objects, allOfClass)
    }

    /// Whether the objects of `request` can be made as their rows are read: every object is
    /// realized, and no pending change, sort, offset or limit needs all the rows first.
    private static func streams<T>(_ request: FetchRequest<T>, plan: QueryPlan) -> Bool {
        request.includesPropertyValues && request.fetchBatchSize <= 0 && request.fetchOffset <= 0
            && request.fetchLimit <= 0
            && !plan.mergesPendingChanges && !(plan.sortsInMemory && !(request.sortDescriptors ?? []).isEmpty)
    }

    /// The managed objects of a fetch that ``streams(_:plan:)``, each made and registered as its
    /// row is read, so that a row is released as soon as its object holds its values; and
    /// whether every one's class is `T` itself.
    private func streamObjects<T>(
        _ request: FetchRequest<T>, plan: QueryPlan
    ) throws -> (objects: [ManagedObject], allOfClass: Bool) {
        let stores = fetchStores(plan)
        let references = ReferenceIDs()
        var objects: [ManagedObject] = []
        var unread: [ManagedObjectID] = []
        if case .scan = plan.source, plan.residual == nil {
            // Every row of the entity's table is read: room for as many objects.
            let entity = plan.layout.storeEntity
            let rows = stores.stores.reduce(0) { $0 + $1.storedRowCount(entity) }
            objects.reserveCapacity(rows)
        }
        var allOfClass = true
        try collectStored(plan, stores: stores, encodedRows: true) { (match: consuming StoredMatch) in
            let object = try self.object(for: match, plan: plan, stores: stores, loading: true, references: references)
            if !object.isLoaded { unread.append(object.objectID) }
            allOfClass = allOfClass && Self.isExactly(object, T.self)
            objects.append(consume object)
        }
        if !unread.isEmpty { _ = try realizeObjects(unread) }
        if let paths = request.relationshipKeyPathsForPrefetching, !paths.isEmpty {
            try prefetch(paths, for: objects)
        }
        return (objects, allOfClass)
    }

    /// The ID of a candidate, with its concrete entity when its row was read.
    func objectID(of candidate: FetchCandidate, plan: QueryPlan, stores: FetchStores) -> ManagedObjectID {
        switch candidate {
        case .object(let object):
            return object.objectID
        case .stored(let match):
            let entity = plan.concrete(of: match)?.entity ?? plan.entity
            let id = ManagedObjectID(
                entity: entity, storeIdentifier: stores.stores[match.store].identifier, primaryKey: match.key)
            return registered[id]?.objectID ?? id
        }
    }

    /// The object of a candidate: the registered one (its fault fulfilled from the row when
    /// `loading`), or a new object registered with the context, loaded from the row when
    /// `loading` and the row was read, else a fault. `references` are the IDs of related objects
    /// the fetch made so far, shared by the objects it loads.
    private func object(
        for candidate: consuming FetchCandidate, plan: QueryPlan, stores: FetchStores, loading: Bool,
        references: ReferenceIDs
    ) throws -> ManagedObject {
        switch consume candidate {
        case .object(let object): return object
        case .stored(let match):
            return try object(for: match, plan: plan, stores: stores, loading: loading, references: references)
        }
    }

    /// The object of the stored row `match`, as ``object(for:plan:stores:loading:references:)``
    /// makes it of a candidate.
    private func object(
        for match: consuming StoredMatch, plan: QueryPlan, stores: FetchStores, loading: Bool, references: ReferenceIDs
    ) throws -> ManagedObject {
        let concrete = plan.concrete(of: match)
        let entity = concrete?.entity ?? plan.entity
        let storeIdentifier = stores.stores[match.store].identifier
        let id =
            recentIDs.id(entity: entity, storeIdentifier: storeIdentifier, primaryKey: match.key)
            ?? ManagedObjectID(entity: entity, storeIdentifier: storeIdentifier, primaryKey: match.key)
        // The row is moved, not copied, into the object it loads.
        var row = loading ? match.row.take() : nil
        if let existing = registered[id] {
            if !existing.isLoaded, let concrete, row != nil {
                try load(
                    existing, from: row.take()!, layout: concrete.layout, sequence: stores.sequences[match.store],
                    references: references)
                existing.awakeFromFetch()
            }
            return existing
        }
        guard let concrete else { return self.object(with: id) }
        let object = concrete.type.init(faultFor: consume id, in: self)
        if row != nil {
            // Unwrapped as it is taken: a binding (`if let`) would copy the row.
            try load(
                object, from: row.take()!, layout: concrete.layout, sequence: stores.sequences[match.store],
                references: references)
            register(object)
            object.awakeFromFetch()
        } else {
            register(object)
        }
        return object
    }
}
