import Foundation
internal import StrataStore

/// A lookup in the fetch index of one column of the fetched hierarchy.
struct IndexLookup {
    /// What the lookup finds: store-independent queries, or related objects (whose keys are
    /// per store).
    enum Target {
        /// Index queries on an attribute column; their results are unioned.
        case queries([IndexQuery])
        /// Rows whose to-one column names one of the objects (`nil`: no object), of the
        /// relationship's destination hierarchy, named `root`.
        case references([ManagedObjectID?], root: String)
    }

    /// The engine column.
    var column: Int
    /// The property name.
    var key: String
    /// What is looked up.
    var target: Target
    /// Whether the rows found are exactly those meeting the comparison (else the comparison is
    /// evaluated again on each row).
    var isExact: Bool
    /// The comparison's operator, for ``condition``.
    var operation: ComparisonOperator
    /// The comparison's constant, for ``condition``.
    var constant: Any?

    /// The comparison, for ``FetchPlan``: `> 150000`. Made only when a plan is explained, not
    /// for every fetch planned.
    var condition: String { "\(operation.rawValue) \(PredicateIndexAnalysis.describe(constant))" }

    /// The queries for the rows of `store`.
    func queries(in store: PersistentStore) -> [IndexQuery] {
        switch target {
        case .queries(let queries):
            return queries
        case .references(let ids, let root):
            var values: [Value] = []
            for id in ids {
                guard let id else {
                    values.append(.null)
                    continue
                }
                guard !id.isTemporaryID, id.storeIdentifier == store.identifier, IndexLookup.rootName(id.entity) == root
                else { continue }
                values.append(.reference(id.primaryKey))
            }
            return values.count == 1 ? [.equal(values[0])] : [.in(values)]
        }
    }

    /// The name of an entity's inheritance root.
    static func rootName(_ entity: EntityDescription) -> String {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root.entityName
    }
}

/// Fetch-index lookups combined: what a planned predicate reads from the indexes.
indirect enum IndexAccess {
    /// One lookup.
    case lookup(IndexLookup)
    /// The rows every part finds.
    case intersection([IndexAccess])
    /// The rows any part finds.
    case union([IndexAccess])

    /// Whether the rows found are exactly those meeting the predicate part planned.
    var isExact: Bool {
        switch self {
        case .lookup(let lookup): return lookup.isExact
        case .intersection(let parts), .union(let parts): return parts.allSatisfy(\.isExact)
        }
    }

    /// The public account of the access.
    var use: FetchPlan.IndexUse {
        switch self {
        case .lookup(let lookup): return .lookup(key: lookup.key, condition: lookup.condition)
        case .intersection(let parts): return .intersection(parts.map(\.use))
        case .union(let parts): return .union(parts.map(\.use))
        }
    }

    /// The number of rows the access finds in `store` (exact for a lookup and a union of
    /// disjoint parts, an upper bound otherwise). Reads no rows.
    func estimate(in store: PersistentStore, storeEntity: Int) throws -> Int {
        switch self {
        case .lookup(let lookup):
            return try lookup.queries(in: store).reduce(0) {
                $0 + (try store.rows.countKeys(storeEntity, column: lookup.column, matching: $1))
            }
        case .intersection(let parts):
            return try parts.map { try $0.estimate(in: store, storeEntity: storeEntity) }.min() ?? 0
        case .union(let parts):
            return try parts.reduce(0) { $0 + (try $1.estimate(in: store, storeEntity: storeEntity)) }
        }
    }

    /// The keys of the rows the access finds in `store`, without repeats; a lookup's in index
    /// order. Reads no rows.
    func keys(in store: PersistentStore, storeEntity: Int) throws -> [PrimaryKey] {
        switch self {
        case .lookup(let lookup):
            let queries = lookup.queries(in: store)
            if queries.count == 1 {
                return try store.rows.keys(
                    storeEntity, column: lookup.column, matching: queries[0], descending: false, limit: nil)
            }
            var keys: [PrimaryKey] = []
            for query in queries {
                keys += try store.rows.keys(
                    storeEntity, column: lookup.column, matching: query, descending: false, limit: nil)
            }
            return keys
        case .intersection(let parts):
            guard let first = parts.first else { return [] }
            var keys = try first.keys(in: store, storeEntity: storeEntity)
            for part in parts.dropFirst() where !keys.isEmpty {
                let other = Set(try part.keys(in: store, storeEntity: storeEntity))
                keys.removeAll { !other.contains($0) }
            }
            return keys
        case .union(let parts):
            var seen = Set<PrimaryKey>()
            var keys: [PrimaryKey] = []
            for part in parts {
                for key in try part.keys(in: store, storeEntity: storeEntity) where seen.insert(key).inserted {
                    keys.append(key)
                }
            }
            return keys
        }
    }

    /// The number of rows the access finds in `store`, counted in the indexes without
    /// collecting keys when it is one lookup.
    func count(in store: PersistentStore, storeEntity: Int) throws -> Int {
        if case .lookup = self { return try estimate(in: store, storeEntity: storeEntity) }
        return try keys(in: store, storeEntity: storeEntity).count
    }
}
