internal import StrataStore

extension QueryPlan.Walk {
    /// The index queries walked in order, for the rows of `store`.
    func queries(in store: PersistentStore) -> [IndexQuery] {
        if let within { return within.queries(in: store) }
        let all: [IndexQuery] = [.equal(.null), .range(lower: nil, upper: nil)]
        return descending ? all.reversed() : all
    }

    /// The column an ordered walk for `descriptor` reads the fetch index of: the column of its
    /// key (one key, not a key path) in rows laid out as `layout`, when that column has a fetch
    /// index ordering values as `descriptor` does; `nil` otherwise.
    static func column(sorting descriptor: FetchSortDescriptor, layout: EntityLayout, mapping: StoreMapping) -> Int? {
        guard !descriptor.key.containsASCII("."), let column = layout.columns[descriptor.key] else { return nil }
        let schema = mapping.schema.entities[layout.storeEntity].columns[column]
        guard schema.hasFetchIndex, sortsInIndexOrder(schema.type, descriptor) else { return nil }
        return column
    }

    /// Whether `descriptor` orders the values of a column of `type` as its fetch index does:
    /// numbers, Booleans, dates, UUIDs, and strings compared with `compare:` (references order by
    /// key in the index and by URI in memory; data and transformable values are not compared
    /// alike either).
    private static func sortsInIndexOrder(_ type: ColumnType, _ descriptor: FetchSortDescriptor) -> Bool {
        switch type {
        case .int16, .int32, .int64, .float, .double, .decimal, .bool, .date, .uuid: return true
        case .string: return descriptor.comparison == .compare
        case .binary, .transformable, .uri, .reference: return false
        }
    }
}
