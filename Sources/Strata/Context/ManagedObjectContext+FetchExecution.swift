import Foundation
import StrataStore

/// A stored row a fetch matched, not made an object yet.
struct StoredMatch {
    /// The position of the row's store in the coordinator's stores.
    var store: Int
    /// The row's primary key.
    var key: PrimaryKey
    /// The row's entity tag, when the row was read.
    var tag: Int64?
    /// The row, when it was read.
    var row: Row?
}

/// One result of a fetch before it takes the form the request asks for.
enum FetchCandidate {
    /// A stored row.
    case stored(StoredMatch)
    /// An object of the context, matched on its in-memory state (inserted or changed).
    case object(ManagedObject)
}

/// The stores and sequences one fetch reads.
struct FetchStores {
    /// The coordinator's stores, in order.
    var stores: [PersistentStore]
    /// Each store's newest sequence, read before its rows.
    var sequences: [UInt64]
}

extension ManagedObjectContext {
    /// The candidates of `plan`, sorted by the request's descriptors and cut to its offset and limit.
    func candidates<T>(_ request: FetchRequest<T>, plan: QueryPlan) throws -> ([FetchCandidate], FetchStores) {
        let stores = fetchStores()
        var results: [FetchCandidate] = []
        try collectStored(plan, stores: stores) { results.append(.stored($0)) }
        if plan.mergesPendingChanges {
            for object in try pendingMatches(plan) { results.append(.object(object)) }
        }
        if plan.sortsInMemory, let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            results = try sort(results, by: descriptors, plan: plan, stores: stores)
        }
        return (cut(results, offset: request.fetchOffset, limit: request.fetchLimit), stores)
    }

    /// `items` without the first `offset`, at most `limit` of them (0: no limit).
    func cut<C>(_ items: [C], offset: Int, limit: Int) -> [C] {
        guard offset > 0 || (limit > 0 && limit < items.count) else { return items }
        let start = min(max(offset, 0), items.count)
        let end = limit > 0 ? min(items.count, start + limit) : items.count
        return Array(items[start..<end])
    }

    /// The number of objects `plan` matches, before offset and limit: from the indexes alone
    /// when they answer the predicate exactly and no entity tag needs checking.
    func countMatches(_ plan: QueryPlan) throws -> Int {
        var total = 0
        let stores = fetchStores()
        if case .index(let access) = plan.source, !plan.readsRows {
            let changed = plan.mergesPendingChanges ? changedKeys(plan) : [:]
            for store in stores.stores {
                if let skip = changed[store.identifier], !skip.isEmpty {
                    total += try access.keys(in: store, storeEntity: plan.layout.storeEntity).count { !skip.contains($0) }
                } else {
                    total += try access.count(in: store, storeEntity: plan.layout.storeEntity)
                }
            }
        } else {
            try collectStored(plan, stores: stores) { _ in total += 1 }
        }
        if plan.mergesPendingChanges { total += try pendingMatches(plan).count }
        return total
    }

    /// The coordinator's stores with their sequences, read now.
    func fetchStores() -> FetchStores {
        let stores = (persistentStoreCoordinator?.persistentStores ?? []).map(readingStore)
        return FetchStores(stores: stores, sequences: stores.map { $0.rows.lastSequence })
    }

    /// The keys of the stored objects whose unsaved state (changes or deletion) the fetch
    /// evaluates in memory instead of their rows, by store.
    func changedKeys(_ plan: QueryPlan) -> [String: Set<PrimaryKey>] {
        var keys: [String: Set<PrimaryKey>] = [:]
        let root = IndexLookup.rootName(plan.entity)
        for set in [updatedSet, deletedSet] {
            for object in set where !object.objectID.isTemporaryID {
                guard let store = object.objectID.storeIdentifier, IndexLookup.rootName(object.entity) == root else { continue }
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

    /// Calls `emit` with every stored row `plan` matches, leaving out the rows of objects whose
    /// unsaved state is evaluated in memory.
    func collectStored(_ plan: QueryPlan, stores: FetchStores, emit: (StoredMatch) throws -> Void) throws {
        guard let coordinator = persistentStoreCoordinator else { return }
        let changed = plan.mergesPendingChanges ? changedKeys(plan) : [:]
        let storeEntity = plan.layout.storeEntity
        let columns = try coordinator.mapping.get().schema.entities[storeEntity].columns
        let storedState = !plan.mergesPendingChanges
        for (position, store) in stores.stores.enumerated() {
            let skip = changed[store.identifier] ?? []
            let filter = plan.residual.map { RowFilter($0, entity: plan.entity, layout: plan.layout, columns: columns, store: store) }
            let tests = filter.flatMap(ColumnTests.init)
            // A count needs only the entity tag and the columns the filter tests.
            let projection = plan.counting ? (filter.map { $0.columns } ?? []).map { [0] + $0.sorted() } : nil
            /// Emits the row when it is of a fetched entity, not skipped, and meets the residual
            /// predicate; returns whether it did.
            @discardableResult
            func consider(_ key: PrimaryKey, _ row: Row) throws -> Bool {
                guard case .int(let tag) = row.values[0], plan.fetches(tag: tag), skip.isEmpty || !skip.contains(key) else { return false }
                if let tests {
                    guard tests.matches(row) else { return false }
                } else if let filter, let concrete = plan.concrete(tag: tag) {
                    let matched = try filter.matches(row) { part in
                        try rowMatches(part, row: row, key: key, entity: concrete.entity, layout: concrete.layout, store: store, storedState: storedState)
                    }
                    guard matched else { return false }
                }
                try emit(StoredMatch(store: position, key: key, tag: tag, row: row))
                return true
            }
            try coordinator.storeCall {
                switch plan.source {
                case .nothing:
                    break
                case .scan:
                    try store.rows.scan(storeEntity, columns: projection) { key, row in try consider(key, row) }
                case .index(let access):
                    let keys = try access.keys(in: store, storeEntity: storeEntity)
                    guard plan.readsRows else {
                        for key in keys where !skip.contains(key) { try emit(StoredMatch(store: position, key: key, tag: nil, row: nil)) }
                        return
                    }
                    try store.rows.forEachRow(storeEntity, keys: keys, columns: projection) { key, row in try consider(key, row) }
                case .walk(let walk):
                    try self.walk(walk, store: store, storeEntity: storeEntity, consider: consider)
                }
            }
        }
    }

    /// Walks the index of a walk's sort key in order, calling `consider` with each row until
    /// `walk.needed` rows were accepted and the key's value changes (rows tied with the last
    /// accepted one may sort before it on later keys). Keys are read in batches sized from the
    /// share of rows accepted so far, so that few rows are decoded past the last one needed, and
    /// each batch's rows with one read per block.
    private func walk(_ walk: QueryPlan.Walk, store: PersistentStore, storeEntity: Int, consider: (PrimaryKey, Row) throws -> Bool) throws {
        var accepted = 0
        var read = 0
        var boundary: Value?
        for query in walk.queries(in: store) {
            var done = 0
            while true {
                // The rows still needed at the acceptance rate seen so far (at first, all rows),
                // plus a margin; at most 8 times the rows read so far, and at least 16.
                let remaining = Double(max(walk.needed - accepted, 1))
                let estimate = accepted > 0 ? remaining * Double(read) / Double(accepted) : remaining
                let batch = Int(max(16, min(estimate * 1.125 + 8, 8 * Double(max(read, walk.needed)), 1e12)))
                let keys = try store.rows.keys(storeEntity, column: walk.column, matching: query, descending: walk.descending, limit: done + batch)
                guard keys.count > done else { break }
                let fresh = Array(keys[done...])
                for (key, row) in zip(fresh, try store.rows.read(storeEntity, keys: fresh)) {
                    guard let row else { continue }
                    read += 1
                    if let boundary, boundary < row[walk.column] || row[walk.column] < boundary { return }
                    if try consider(key, row) {
                        accepted += 1
                        if accepted >= walk.needed, boundary == nil { boundary = row[walk.column] }
                    }
                }
                if keys.count < done + batch { break }
                done = keys.count
            }
        }
    }
}
