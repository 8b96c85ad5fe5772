import Foundation

/// An entity rows of a fetch may hold, with what making its objects needs; a class, so that
/// looking it up for each row costs one reference count.
final class ConcreteEntity {
    /// The entity.
    let entity: EntityDescription
    /// Its layout.
    let layout: EntityLayout
    /// The class of its objects.
    let type: ManagedObject.Type

    /// Creates the description.
    init(entity: EntityDescription, layout: EntityLayout, type: ManagedObject.Type) {
        self.entity = entity
        self.layout = layout
        self.type = type
    }
}

/// The plan of one fetch, as the context executes it: where candidate rows come from, what is
/// evaluated on them, and what the fetch needs of each row. A class, so that the closures
/// called for each row capture one reference rather than copy the plan.
final class QueryPlan {
    /// An ordered walk of the fetch index of the first sort key.
    struct Walk {
        /// The engine column.
        var column: Int
        /// The sort key.
        var key: String
        /// Whether the walk goes from the largest value.
        var descending: Bool
        /// The lookup restricting the walk, or `nil` for the whole index (`nil` values included).
        var within: IndexLookup?
        /// Matches after which the walk stops (offset plus limit), ties on the key included.
        var needed: Int
    }

    /// Where candidate rows come from.
    enum Source {
        /// No row can match.
        case nothing
        /// Every row of the hierarchy.
        case scan
        /// The rows an index access finds.
        case index(IndexAccess)
        /// An ordered index walk.
        case walk(Walk)
    }

    /// The entity fetched.
    let entity: EntityDescription
    /// Its layout.
    let layout: EntityLayout
    /// The entity tags that match.
    let tags: Set<Int64>
    /// Whether candidate rows must be checked against ``tags``.
    let filtersTags: Bool
    /// Per tag, the concrete entity, its layout and class.
    let concrete: [Int64: ConcreteEntity]
    /// Whether the hierarchy has more than one entity, so that only a row tells an object's entity.
    let isPolymorphic: Bool
    /// The predicate, after substitution.
    let predicate: FetchPredicate?
    /// Where candidate rows come from.
    let source: Source
    /// The predicate evaluated on each candidate row (`nil`: the source is exact).
    let residual: FetchPredicate?
    /// Whether pending changes are merged in (the request includes them, the context has some,
    /// and the results are not dictionaries).
    let mergesPendingChanges: Bool
    /// Whether counting or fetching.
    let counting: Bool
    /// Whether candidate rows must be decoded.
    let readsRows: Bool
    /// Whether the results are sorted after they are collected.
    let sortsInMemory: Bool
    /// The stores the fetch reads (the request's ``FetchRequest/affectedStores``); `nil`: all.
    let affectedStores: [PersistentStore]?

    /// Creates the plan.
    init(
        entity: EntityDescription, layout: EntityLayout, tags: Set<Int64>, filtersTags: Bool,
        concrete: [Int64: ConcreteEntity],
        isPolymorphic: Bool, predicate: FetchPredicate?, source: Source, residual: FetchPredicate?,
        mergesPendingChanges: Bool,
        counting: Bool, readsRows: Bool, sortsInMemory: Bool, affectedStores: [PersistentStore]?
    ) {
        self.affectedStores = affectedStores
        self.entity = entity
        self.layout = layout
        self.tags = tags
        self.filtersTags = filtersTags
        self.concrete = concrete
        self.isPolymorphic = isPolymorphic
        self.predicate = predicate
        self.source = source
        self.residual = residual
        self.mergesPendingChanges = mergesPendingChanges
        self.counting = counting
        self.readsRows = readsRows
        self.sortsInMemory = sortsInMemory
        var byTag = [ConcreteEntity?](repeating: nil, count: Int(min(concrete.keys.max() ?? -1, 4095) + 1))
        for (tag, entity) in concrete {
            if tag >= 0 && tag < byTag.count { byTag[Int(tag)] = entity }
        }
        concreteByTag = byTag
        fetchedTags = byTag.map { $0 != nil }
    }

    /// ``concrete`` as an array indexed by tag, for tags from 0 to the largest fetched one (at
    /// most 4095), so that finding a row's entity costs no hashing.
    private let concreteByTag: [ConcreteEntity?]
    /// Whether each tag of ``concreteByTag`` is fetched, read with no reference counted.
    private let fetchedTags: [Bool]

    /// The concrete entity of a matched row: from its tag, or the fetched entity's own when the
    /// hierarchy has no other entity.
    func concrete(of match: StoredMatch) -> ConcreteEntity? {
        if let tag = match.tag { return concrete(tag: tag) }
        return isPolymorphic ? nil : concrete(tag: layout.tag)
    }

    /// Whether rows tagged `tag` are of a fetched entity.
    func fetches(tag: Int64) -> Bool {
        tag >= 0 && tag < fetchedTags.count ? fetchedTags[Int(tag)] : concrete[tag] != nil
    }

    /// The concrete entity of rows tagged `tag`, if it is fetched.
    func concrete(tag: Int64) -> ConcreteEntity? {
        tag >= 0 && tag < concreteByTag.count ? concreteByTag[Int(tag)] : concrete[tag]
    }

    /// The public account of the plan.
    var fetchPlan: FetchPlan {
        let access: FetchPlan.Access
        switch source {
        case .nothing: access = .none
        case .scan: access = .scan
        case .index(let index): access = .index(index.use)
        case .walk(let walk):
            access = .orderedIndex(
                key: walk.key, descending: walk.descending, within: walk.within.map { IndexAccess.lookup($0).use })
        }
        var stopsAfter: Int?
        if case .walk(let walk) = source { stopsAfter = walk.needed }
        return FetchPlan(
            entityName: entity.entityName, operation: counting ? .count : .fetch, access: access,
            filter: residual?.predicateFormat,
            filtersEntityTag: filtersTags, readsRows: readsRows, sortsInMemory: sortsInMemory, stopsAfter: stopsAfter,
            mergesPendingChanges: mergesPendingChanges)
    }
}

extension ManagedObjectContext {
    /// Plans `request`: resolves its entity, analyses its predicate against the fetch indexes,
    /// and chooses between a scan, index lookups and an ordered walk from the index sizes.
    ///
    /// - Parameter counting: plan a count rather than a fetch.
    /// - Throws: ``CoreDataError`` when the request names no entity or the context has no
    ///   coordinator; ``FetchPredicateError`` `unknownKey` when the predicate reads a key the entity
    ///   does not have.
    func plan<T>(_ request: FetchRequest<T>, counting: Bool) throws -> QueryPlan {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError(.coreData, "the context has no persistent store coordinator")
        }
        let entity = try request.resolveEntity(in: coordinator.managedObjectModel)
        try request.predicate?.validate(for: entity)
        let mapping = try coordinator.mapping.get()
        let layout = try coordinator.layout(entity)
        let tags = Set(request.includesSubentities ? layout.tags : [layout.tag])
        var concrete: [Int64: ConcreteEntity] = [:]
        let family = mapping.entitiesByTag[layout.storeEntity] ?? [:]
        for (tag, member) in family where tags.contains(tag) {
            concrete[tag] = ConcreteEntity(
                entity: member, layout: mapping.layouts[member.entityName]!,
                type: ManagedObjectClassRegistry.type(for: member))
        }
        // Rows of other entities of the hierarchy exist unless those entities are all abstract.
        let filtersTags = family.contains { !tags.contains($0.key) && !$0.value.isAbstract }
        let isPolymorphic = family.count > 1
        let dictionaries = request.resultType == .dictionaryResultType
        let merges = request.includesPendingChanges && !dictionaries && (hasChanges || nesting.parent != nil)
        let predicate = request.predicate?.applyingStringAffinity(for: entity)
        let stores = coordinator.persistentStores.filter { store in
            request.affectedStores?.contains { $0 === store } ?? true
        }

        var source: QueryPlan.Source = .scan
        var residual = predicate
        if let predicate {
            switch PredicateIndexAnalysis.analyse(predicate, entity: entity, layout: layout, mapping: mapping) {
            case .all:
                residual = nil
            case .none:
                source = .nothing
                residual = nil
            case .scan:
                break
            case .access(let access, let complete):
                let (chosen, droppedParts) = try Self.choose(access, stores: stores, storeEntity: layout.storeEntity)
                source = .index(chosen)
                if complete && chosen.isExact && !droppedParts {
                    residual = nil
                } else if case .lookup(let lookup) = access, lookup.isExact, !droppedParts {
                    // The rows the one exact lookup finds meet its comparison: the rest is tested.
                    residual = PredicateIndexAnalysis.unanswered(
                        predicate, entity: entity, layout: layout, mapping: mapping)
                }
            }
        }

        // A sort on an indexed key with a limit walks that index in order.
        let descriptors = request.sortDescriptors ?? []
        let aggregates =
            dictionaries
            && (request.propertiesToGroupBy != nil || request.returnsDistinctResults
                || (request.propertiesToFetch ?? []).contains { ($0 as? ExpressionDescription)?.function != nil })
        if !counting, !aggregates, request.fetchLimit > 0, let first = descriptors.first,
            let column = QueryPlan.Walk.column(sorting: first, layout: layout, mapping: mapping)
        {
            let needed = request.fetchOffset + request.fetchLimit
            var walk: QueryPlan.Walk?
            switch source {
            case .nothing:
                break
            case .scan:
                walk = QueryPlan.Walk(
                    column: column, key: first.key, descending: !first.ascending, within: nil, needed: needed)
            case .index(let access):
                // When the lookup finds too many rows to read and sort, walk the sort key's own
                // lookup (or the whole index) instead.
                var within: IndexLookup?
                var parts: [IndexAccess] = [access]
                if case .intersection(let all) = access { parts = all }
                for case .lookup(let lookup) in parts where lookup.column == column { within = lookup }
                // Walking the sort key's own lookup reads a part of what the lookup would (and
                // then the lookup's size need not be counted).
                let ownLookup = parts.count == 1 && within != nil
                if try ownLookup
                    || stores.reduce(0, { $0 + (try access.estimate(in: $1, storeEntity: layout.storeEntity)) }) > 4
                        * needed + 1024
                {
                    walk = QueryPlan.Walk(
                        column: column, key: first.key, descending: !first.ascending, within: within, needed: needed)
                    if parts.count > 1 || !(within?.isExact ?? false) { residual = predicate }
                }
            case .walk:
                break
            }
            if let walk { source = .walk(walk) }
        }

        var sortsInMemory = !counting && !descriptors.isEmpty
        // One store's walk returns its matches in order; pending objects and other stores' matches
        // are sorted in.
        if case .walk = source, descriptors.count == 1, stores.count == 1,
            !merges || (insertedSet.isEmpty && updatedSet.isEmpty && nesting.parent == nil)
        {
            sortsInMemory = false
        }
        let needsValues =
            !counting
            && (dictionaries || (request.resultType == .managedObjectResultType && request.includesPropertyValues))
        var readsRows =
            residual != nil || filtersTags || !descriptors.isEmpty && !counting || needsValues
            || (isPolymorphic && !counting)
        switch source {
        case .nothing: readsRows = false
        case .scan, .walk: readsRows = true
        case .index: break
        }
        return QueryPlan(
            entity: entity, layout: layout, tags: tags, filtersTags: filtersTags, concrete: concrete,
            isPolymorphic: isPolymorphic,
            predicate: predicate, source: source, residual: residual, mergesPendingChanges: merges, counting: counting,
            readsRows: readsRows, sortsInMemory: sortsInMemory, affectedStores: request.affectedStores)
    }

    /// The parts of an intersection worth reading: those at most 8 times as large as the
    /// smallest (a larger part costs more to collect than its rows cost to filter), smallest
    /// first; and whether parts were dropped, so that the predicate must be evaluated on the rows.
    private static func choose(
        _ access: IndexAccess, stores: [PersistentStore], storeEntity: Int
    ) throws -> (IndexAccess, Bool) {
        guard case .intersection(let parts) = access else { return (access, false) }
        let sized = try parts.map { part in
            (part, try stores.reduce(0) { $0 + (try part.estimate(in: $1, storeEntity: storeEntity)) })
        }
        .sorted { $0.1 < $1.1 }
        let smallest = sized[0].1
        let kept = sized.filter { $0.1 <= max(8 * smallest, 64) }.map(\.0)
        return (kept.count == 1 ? kept[0] : .intersection(kept), kept.count < parts.count)
    }
}
