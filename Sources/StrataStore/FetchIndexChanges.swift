/// The fetch-index changes of a group of operations, gathered so that each index takes them in
/// one ``OrderedIndex/merge(_:)`` instead of one insertion or removal at a time.
///
/// Changes are recorded in commit order; a pair changed several times (inserted, then removed
/// by a later operation of the group, ...) nets out to what the last change left.
struct FetchIndexChanges: Sendable {
    /// The changes recorded for one index, in commit order.
    private struct IndexChanges: Sendable {
        var entity: Int
        var column: Int
        var changes: [OrderedIndexChange]
    }

    /// The recorded changes, per index (a handful: found by a linear search).
    private var indexes: [IndexChanges] = []

    /// Creates an empty set of changes.
    init() {}

    /// Records the move of `key`'s entries in the fetch indexes of `entity` on `columns` (its
    /// indexed columns) from the values of `old` to those of `new` (`nil`: the row is absent
    /// before, or after).
    mutating func record(_ entity: Int, _ key: PrimaryKey, columns: [Int], old: IndexedValues?, new: IndexedValues?) {
        for (position, column) in columns.enumerated() {
            let before = old?.value(at: position, column: column)
            let after = new?.value(at: position, column: column)
            if before == after { continue }
            let slot = indexes.firstIndex { $0.entity == entity && $0.column == column } ?? {
                indexes.append(IndexChanges(entity: entity, column: column, changes: []))
                return indexes.count - 1
            }()
            if let before { indexes[slot].changes.append(OrderedIndexChange(value: before, key: key, inserts: false)) }
            if let after { indexes[slot].changes.append(OrderedIndexChange(value: after, key: key, inserts: true)) }
        }
    }

    /// Records the fetch-index changes of a record's operations `ops`: `rows` holds the old and
    /// new images of those on entities with fetch indexes, whose indexed columns, per entity,
    /// are `indexedColumns`.
    mutating func record(_ ops: [RecordOp], rows: [IndexedRowChange], indexedColumns: [[Int]]) {
        for change in rows {
            let entity = ops[change.op].entity
            record(entity, ops[change.op].key, columns: indexedColumns[entity], old: change.old, new: change.new)
        }
    }

    /// The net change of each index, in index order: per pair, the last change recorded
    /// decides whether the index holds it. Needs no index: the work of a group's changes is
    /// done before the store's state is locked to merge them.
    func settled() -> SettledFetchIndexChanges {
        SettledFetchIndexChanges(indexes: indexes.map { index in
            let order = Self.indexOrder(index.changes)
            var net: [OrderedIndexChange] = []
            net.reserveCapacity(order.count)
            var position = 0
            while position < order.count {
                // The run of changes to one pair, oldest first: the last one decides.
                var last = position
                while last + 1 < order.count, Self.samePair(index.changes[order[last + 1]], index.changes[order[position]]) { last += 1 }
                net.append(index.changes[order[last]])
                position = last + 1
            }
            return (index.entity, index.column, net)
        })
    }

    /// Applies the recorded changes to `fetchIndexes` (per entity, per column), as
    /// ``settled()`` nets them out.
    func apply(to fetchIndexes: inout [[Int: OrderedIndex]]) {
        settled().apply(to: &fetchIndexes)
    }

    /// The positions of `changes` sorted by value, then key, then position (commit order).
    private static func indexOrder(_ changes: [OrderedIndexChange]) -> [Int] {
        if let order = integerOrder(changes) { return order }
        return changes.indices.sorted { a, b in
            if changes[a].value < changes[b].value { return true }
            if changes[b].value < changes[a].value { return false }
            return (changes[a].key, a) < (changes[b].key, b)
        }
    }

    /// Below this many changes, ``integerOrder(_:)`` sorts by comparison instead of by radix.
    static let fewChanges = 64

    /// The order of ``indexOrder(_:)`` when every value is `null`, an integer or a reference
    /// (integer columns and to-one reference columns, the common cases), by radix sorts on plain
    /// integers; `nil` for any other value. The rank keeps `Value`'s order across these kinds:
    /// `null` first, then integers, then references. When the keys never fall from position to
    /// position (a bulk insert's rising keys), position order is key order: no sort by key.
    private static func integerOrder(_ changes: [OrderedIndexChange]) -> [Int]? {
        // Signed integers as unsigned ones of the same order.
        func unsigned(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }
        var ranks: [UInt64] = []
        var values: [UInt64] = []
        ranks.reserveCapacity(changes.count)
        values.reserveCapacity(changes.count)
        var keysRise = true
        var lastKey = PrimaryKey.min
        for change in changes {
            switch change.value {
            case .null: ranks.append(0); values.append(0)
            case .int(let value): ranks.append(1); values.append(unsigned(value))
            case .reference(let value): ranks.append(2); values.append(unsigned(value))
            default: return nil
            }
            if change.key < lastKey { keysRise = false }
            lastKey = change.key
        }
        // A few changes (a small save's) sort faster by comparison than by radix passes, each
        // of which clears and sums 256 counts.
        if changes.count < Self.fewChanges {
            return changes.indices.sorted { a, b in (ranks[a], values[a], changes[a].key, a) < (ranks[b], values[b], changes[b].key, b) }
        }
        var order = RadixOrder(count: changes.count)
        if !keysRise { order.sort(by: changes.map { unsigned($0.key) }) }
        order.sort(by: values)
        order.sort(by: ranks)
        return order.positions
    }

    /// Whether two changes name the same pair: equal keys and values neither less than the other.
    private static func samePair(_ a: OrderedIndexChange, _ b: OrderedIndexChange) -> Bool {
        a.key == b.key && !(a.value < b.value) && !(b.value < a.value)
    }
}

/// The net fetch-index changes of a group of operations (``FetchIndexChanges/settled()``), each
/// index's in index order, ready to be merged.
struct SettledFetchIndexChanges: Sendable {
    /// The net changes, per index.
    fileprivate var indexes: [(entity: Int, column: Int, net: [OrderedIndexChange])]

    /// Merges the changes into `fetchIndexes` (per entity, per column).
    func apply(to fetchIndexes: inout [[Int: OrderedIndex]]) {
        for index in indexes { fetchIndexes[index.entity][index.column]!.merge(index.net) }
    }
}
