import Foundation

/// One result of a fetch before it takes the form the request asks for.
enum FetchCandidate {
    /// A stored row.
    case stored(StoredMatch)
    /// An object of the context, matched on its in-memory state (inserted or changed).
    case object(ManagedObject)

    /// The candidate, leaving in its place a match of no row (references nothing), so that
    /// a candidate moves out of an array without a copy.
    mutating func take() -> FetchCandidate {
        let taken = consume self
        self = .stored(StoredMatch(store: 0, key: 0, tag: nil, row: nil))
        return taken
    }
}

extension ManagedObjectContext {
    /// The candidates of `plan`, sorted by the request's descriptors and cut to its offset and limit.
    func candidates<T>(_ request: FetchRequest<T>, plan: QueryPlan) throws -> ([FetchCandidate], FetchStores) {
        let stores = fetchStores(plan)
        var results: [FetchCandidate] = []
        // Rows are read by an in-memory sort, by dictionaries and by objects loaded from them;
        // IDs and objects returned as faults need none.
        let sortsRows = plan.sortsInMemory && !(request.sortDescriptors ?? []).isEmpty
        let loadsRows =
            request.resultType == .dictionaryResultType
            || (request.resultType == .managedObjectResultType && request.includesPropertyValues)
        let encodedRows = !sortsRows && loadsRows && request.resultType == .managedObjectResultType
        try collectStored(plan, stores: stores, rowsNeeded: sortsRows || loadsRows, encodedRows: encodedRows) {
            results.append(.stored($0))
        }
        if plan.mergesPendingChanges {
            for object in try pendingMatches(plan) { results.append(.object(object)) }
        }
        if plan.sortsInMemory, let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            // With a limit only the first offset + limit in order are kept.
            let (first, overflow) = max(request.fetchOffset, 0).addingReportingOverflow(request.fetchLimit)
            results = try sort(
                results, by: descriptors, plan: plan, stores: stores,
                first: request.fetchLimit > 0 && !overflow ? first : 0)
        }
        return (cut(results, offset: request.fetchOffset, limit: request.fetchLimit), stores)
    }

    /// `items` without the first `offset`, at most `limit` of them (0: no limit). The items
    /// kept are moved, not copied.
    func cut<C>(_ items: consuming [C], offset: Int, limit: Int) -> [C] {
        guard offset > 0 || (limit > 0 && limit < items.count) else { return items }
        let start = min(max(offset, 0), items.count)
        let end = limit > 0 ? min(items.count, start + limit) : items.count
        var kept = items
        kept.removeSubrange(end...)
        kept.removeSubrange(..<start)
        return kept
    }

    /// The number of objects `plan` matches, before offset and limit: from the indexes alone
    /// when they answer the predicate exactly and no entity tag needs checking.
    func countMatches(_ plan: QueryPlan) throws -> Int {
        var total = 0
        let stores = fetchStores(plan)
        if case .index(let access) = plan.source, !plan.readsRows, let coordinator = persistentStoreCoordinator {
            let changed = plan.mergesPendingChanges ? changedKeys(plan) : [:]
            for store in stores.stores {
                total += try reader(store, coordinator: coordinator).countFromIndexes(
                    access, plan: plan, skip: changed[store.identifier] ?? [])
            }
        } else {
            try collectStored(plan, stores: stores) { _ in total += 1 }
        }
        if plan.mergesPendingChanges { total += try pendingMatches(plan).count }
        return total
    }

    /// The store layer's reader of `store` (as this context reads it: see ``readingStore(_:)``).
    func reader(_ store: PersistentStore, coordinator: PersistentStoreCoordinator) -> StoreReader {
        StoreReader(store: store, coordinator: coordinator, isCurrent: queryGeneration?.pins?[store.identifier] == nil)
    }

    /// The coordinator's stores that `plan` reads (all of them without a plan), with their
    /// sequences, read now.
    func fetchStores(_ plan: QueryPlan? = nil) -> FetchStores {
        let affected = plan?.affectedStores
        let stores = (persistentStoreCoordinator?.persistentStores ?? [])
            .filter { store in affected?.contains { $0 === store } ?? true }
            .map(readingStore)
        return FetchStores(stores: stores, sequences: stores.map { $0.rows.lastSequence })
    }

    /// The keys of the stored objects whose unsaved state (changes or deletion) the fetch
    /// evaluates in memory instead of their rows, by store.
    func changedKeys(_ plan: QueryPlan) -> [String: Set<Int64>] {
        var keys: [String: Set<Int64>] = [:]
        let root = IndexLookup.rootName(plan.entity)
        for set in [updatedSet, deletedSet] {
            for object in set where !object.objectID.isTemporaryID {
                guard let store = object.objectID.storeIdentifier, IndexLookup.rootName(object.entity) == root else {
                    continue
                }
                keys[store, default: []].insert(object.objectID.primaryKey)
            }
        }
        addAncestorChangedKeys(to: &keys, root: root)
        return keys
    }

    /// The inserted and changed objects of the fetched entities that meet the predicate in memory.
    func pendingMatches(_ plan: QueryPlan) throws -> [ManagedObject] {
        let entities = Set(plan.concrete.values.map { ObjectIdentifier($0.entity) })
        var matches: [ManagedObject] = []
        for set in [insertedSet, updatedSet] {
            for object in set where !object.isDeleted && entities.contains(ObjectIdentifier(object.entity)) {
                if plan.predicate?.evaluate(with: object) ?? true { matches.append(object) }
            }
        }
        try addAncestorPendingMatches(to: &matches, entities: entities, predicate: plan.predicate)
        return matches
    }

    /// The value at `path` of a candidate: from its row, or from the object.
    func candidateValue(
        atKeyPath path: String, _ candidate: FetchCandidate, plan: QueryPlan, stores: FetchStores
    ) -> Any? {
        switch candidate {
        case .object(let object):
            return try? FetchPredicate.value(atKeyPath: path, of: object)
        case .stored(let match):
            return rowValue(atKeyPath: path, of: match, plan: plan, stores: stores)
        }
    }

    /// `candidates` in the order of `descriptors`, each candidate's keys read once; with
    /// `first` above 0 only the first `first` of that order. Candidates with equal keys keep
    /// their order.
    ///
    /// Below the candidates' count, `first` keeps a heap of the first that many so far as the
    /// candidates go by, its root the last of them: a later candidate is compared with the root,
    /// and most go no further. A page of a large fetch then takes about one comparison a
    /// candidate instead of a sort of them all (SQLite's sorter does the same under a `LIMIT`).
    func sort(
        _ candidates: [FetchCandidate], by descriptors: [FetchSortDescriptor], plan: QueryPlan, stores: FetchStores,
        first: Int = 0
    ) throws -> [FetchCandidate] {
        let keyed = candidates.map { candidate in
            (candidate, descriptors.map { candidateValue(atKeyPath: $0.key, candidate, plan: plan, stores: stores) })
        }
        func precedes(_ left: [Any?], _ right: [Any?]) -> Bool {
            for (index, descriptor) in descriptors.enumerated() {
                switch descriptor.compare(left[index], right[index]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return false
        }
        guard first > 0, first < keyed.count else { return keyed.sorted { precedes($0.1, $1.1) }.map(\.0) }
        // Whether candidate `a` comes before candidate `b`: by their keys, then in arrival order.
        func before(_ a: Int, _ b: Int) -> Bool {
            precedes(keyed[a].1, keyed[b].1) || (a < b && !precedes(keyed[b].1, keyed[a].1))
        }
        var heap: [Int] = []
        heap.reserveCapacity(first)
        for index in keyed.indices {
            if heap.count < first {
                heap.append(index)
                var child = heap.count - 1
                while child > 0, before(heap[(child - 1) / 2], heap[child]) {
                    heap.swapAt(child, (child - 1) / 2)
                    child = (child - 1) / 2
                }
            } else if precedes(keyed[index].1, keyed[heap[0]].1) {
                // A later candidate comes before the root only with smaller keys.
                heap[0] = index
                var parent = 0
                while true {
                    var last = parent
                    let left = 2 * parent + 1, right = left + 1
                    if left < heap.count, before(heap[last], heap[left]) { last = left }
                    if right < heap.count, before(heap[last], heap[right]) { last = right }
                    guard last != parent else { break }
                    heap.swapAt(parent, last)
                    parent = last
                }
            }
        }
        // In arrival order, then sorted stably by the keys alone.
        heap.sort()
        return heap.map { keyed[$0] }.sorted { precedes($0.1, $1.1) }.map(\.0)
    }
}
