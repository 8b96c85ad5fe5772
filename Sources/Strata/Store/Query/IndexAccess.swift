import Foundation
internal import StrataStore

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
