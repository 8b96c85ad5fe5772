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
        var changes: IndexChangeList
    }

    /// The recorded changes, per index (a handful: found by a linear search).
    private var indexes: [IndexChanges] = []
    /// The room each index's list of changes gets when its first change is recorded.
    private var reservedPerIndex = 0

    /// Creates an empty set of changes.
    init() {}

    /// Creates an empty set of changes whose lists make room for `count` changes each as they are
    /// started (a transaction's inserts: no list grows by reallocating as they are recorded).
    init(reservingPerIndex count: Int) {
        reservedPerIndex = count
    }

    /// Records the move of `key`'s entries in the fetch indexes of `entity` on `columns` (its
    /// indexed columns) from the values of `old` to those of `new` (`nil`: the row is absent
    /// before, or after).
    mutating func record(_ entity: Int, _ key: PrimaryKey, columns: [Int], old: IndexedValues?, new: IndexedValues?) {
        for (position, column) in columns.enumerated() {
            record(key, position: position, column: column, slot: slot(entity, column), old: old, new: new)
        }
    }

    /// Records the move of `key`'s entry in the index on `column` (at `position` among its
    /// entity's indexed columns), whose changes are at `slot` of ``indexes``, from the value of
    /// `old` to that of `new`.
    private mutating func record(
        _ key: PrimaryKey, position: Int, column: Int, slot: Int, old: IndexedValues?, new: IndexedValues?
    ) {
        let before = old?.value(at: position, column: column)
        let after = new?.value(at: position, column: column)
        if let before {
            if before == after { return }
            indexes[slot].changes.append(OrderedIndexChange(value: before, key: key, inserts: false))
        }
        if let after { indexes[slot].changes.append(OrderedIndexChange(value: after, key: key, inserts: true)) }
    }

    /// Records the fetch-index changes of a record's operations `ops`: `rows` holds the old and
    /// new images of those on entities with fetch indexes, whose indexed columns, per entity,
    /// are `indexedColumns`.
    mutating func record(_ ops: [RecordOp], rows: [IndexedRowChange], indexedColumns: [[Int]]) {
        // The changes of a run of rows of one entity go to the same indexes: found once a run.
        var entity = -1
        var slots: [Int] = []
        for change in rows {
            let op = ops[change.op]
            if op.entity != entity {
                entity = op.entity
                slots = indexedColumns[entity].map { slot(entity, $0) }
            }
            for (position, column) in indexedColumns[entity].enumerated() {
                record(
                    op.key, position: position, column: column, slot: slots[position], old: change.old, new: change.new)
            }
        }
    }

    /// The number of changes recorded.
    var count: Int { indexes.reduce(0) { $0 + $1.changes.count } }

    /// The number of changes recorded for each index.
    var countsByIndex: [(entity: Int, column: Int, count: Int)] {
        indexes.map { ($0.entity, $0.column, $0.changes.count) }
    }

    /// Whether no change is recorded.
    var isEmpty: Bool { indexes.allSatisfy { $0.changes.isEmpty } }

    /// The new images of the inserts `ops` whose changes these are (a bulk insert's, each of
    /// which recorded one change in each index of its entity, in order), as the rows of an
    /// ``IndexedRowChange`` list: entities with fetch indexes only, in operation order, each
    /// image listing the values of its entity's `indexedColumns`.
    func insertedRows(_ ops: [RecordOp], indexedColumns: [[Int]]) -> [IndexedRowChange] {
        var taken = [Int](repeating: 0, count: indexes.count)
        var rows: [IndexedRowChange] = []
        for (position, op) in ops.enumerated() where op.kind == .insert && !indexedColumns[op.entity].isEmpty {
            let values = indexedColumns[op.entity].map { column -> Value in
                let slot = indexes.firstIndex { $0.entity == op.entity && $0.column == column }!
                defer { taken[slot] += 1 }
                return indexes[slot].changes[taken[slot]].value
            }
            rows.append(IndexedRowChange(op: position, old: nil, new: .list(values)))
        }
        return rows
    }

    /// Records the changes `other` recorded, after those recorded so far: what recording them
    /// here would have recorded (a part of a bulk insert's rows, or a commit's, recorded apart).
    mutating func append(_ other: FetchIndexChanges) {
        guard !indexes.isEmpty else {
            self = other
            return
        }
        for index in other.indexes {
            indexes[slot(index.entity, index.column)].changes.append(contentsOf: index.changes)
        }
    }

    /// The position in ``indexes`` of the changes to the index of `entity` on `column`, added
    /// if there is none yet.
    private mutating func slot(_ entity: Int, _ column: Int) -> Int {
        if let slot = indexes.firstIndex(where: { $0.entity == entity && $0.column == column }) { return slot }
        indexes.append(
            IndexChanges(entity: entity, column: column, changes: IndexChangeList(reservingCapacity: reservedPerIndex)))
        return indexes.count - 1
    }

    /// The net change of each index, in index order: per pair, the last change recorded
    /// decides whether the index holds it. Needs no index: the work of a group's changes is
    /// done before the store's state is locked to merge them. For the indexes `empty` names
    /// (those empty when the group started), the index the insertions make is built too, for
    /// ``SettledFetchIndexChanges/apply(to:)`` to take whole if the index is still empty then.
    func settled(buildingFor empty: [(entity: Int, column: Int)] = []) -> SettledFetchIndexChanges {
        SettledFetchIndexChanges(
            indexes: indexes.map { index in
                let order = Self.indexOrder(index.changes)
                // Changes to distinct keys (a bulk insert's) change distinct pairs: each is the last
                // change of its pair, and no run needs cutting down.
                let net = Self.keysStrictlyRise(index.changes) ? order : Self.netPositions(index.changes, order: order)
                // An index built ahead takes the net changes as they come, when each inserts: no
                // list of them is kept besides.
                if empty.contains(where: { $0.entity == index.entity && $0.column == index.column }),
                    let built = OrderedIndex(onlyInsertions: net.lazy.map { index.changes[$0] })
                {
                    return (index.entity, index.column, [], built)
                }
                return (index.entity, index.column, net.map { index.changes[$0] }, nil)
            })
    }

    /// The positions in `changes` of the net change of each pair, in index order: `order`
    /// (index order) with each run of changes to one pair cut down to its last change, which
    /// decides whether the index holds the pair.
    private static func netPositions(_ changes: IndexChangeList, order: [Int]) -> [Int] {
        var net = order
        var kept = 0
        var position = 0
        while position < order.count {
            // The run of changes to one pair, oldest first.
            var last = position
            while last + 1 < order.count, samePair(changes[order[last + 1]], changes[order[position]]) { last += 1 }
            net[kept] = order[last]
            kept += 1
            position = last + 1
        }
        net.removeLast(net.count - kept)
        return net
    }

    /// Whether each change's key is greater than the key of the change before it: then no two
    /// changes name the same pair.
    private static func keysStrictlyRise(_ changes: IndexChangeList) -> Bool {
        var lastKey = PrimaryKey.min
        for change in changes {
            guard change.key > lastKey else { return false }
            lastKey = change.key
        }
        return true
    }

    /// The positions of `changes` sorted by value, then key, then position (commit order).
    private static func indexOrder(_ changes: IndexChangeList) -> [Int] {
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
    private static func integerOrder(_ changes: IndexChangeList) -> [Int]? {
        // Signed integers as unsigned ones of the same order.
        func unsigned(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }
        // The ranks are listed only once two differ (most columns hold one kind).
        var ranks: [UInt64] = []
        var firstRank: UInt64?
        var values: [UInt64] = []
        values.reserveCapacity(changes.count)
        var keysRise = true
        var lastKey = PrimaryKey.min
        for (position, change) in changes.enumerated() {
            let rank: UInt64
            switch change.value {
            case .null:
                rank = 0
                values.append(0)
            case .int(let value):
                rank = 1
                values.append(unsigned(value))
            case .reference(let value):
                rank = 2
                values.append(unsigned(value))
            default: return nil
            }
            if let firstRank, ranks.isEmpty, rank != firstRank {
                ranks.reserveCapacity(changes.count)
                ranks.append(contentsOf: repeatElement(firstRank, count: position))
            }
            if firstRank == nil { firstRank = rank }
            if !ranks.isEmpty { ranks.append(rank) }
            if change.key < lastKey { keysRise = false }
            lastKey = change.key
        }
        // A few changes (a small save's) sort faster by comparison than by radix passes, each
        // of which clears and sums 256 counts.
        if changes.count < Self.fewChanges {
            let keys = changes.map(\.key)
            guard !ranks.isEmpty else {
                return changes.indices.sorted { a, b in (values[a], keys[a], a) < (values[b], keys[b], b) }
            }
            return changes.indices.sorted { a, b in
                (ranks[a], values[a], keys[a], a) < (ranks[b], values[b], keys[b], b)
            }
        }
        var order = RadixOrder(count: changes.count)
        if !keysRise { order.sort(by: changes.map { unsigned($0.key) }) }
        order.sort(by: values)
        if !ranks.isEmpty { order.sort(by: ranks) }
        return order.positions
    }

    /// Whether two changes name the same pair: equal keys and values neither less than the other.
    private static func samePair(_ a: OrderedIndexChange, _ b: OrderedIndexChange) -> Bool {
        a.key == b.key && !(a.value < b.value) && !(b.value < a.value)
    }
}

/// The net fetch-index changes of a group of operations (``FetchIndexChanges/settled(buildingFor:)``), each
/// index's in index order, ready to be merged.
struct SettledFetchIndexChanges: Sendable {
    /// The net changes, per index; or, for an index built ahead (see
    /// ``FetchIndexChanges/settled(buildingFor:)``), none and the index they make from an empty
    /// one, each of them an insertion.
    fileprivate var indexes: [(entity: Int, column: Int, net: [OrderedIndexChange], built: OrderedIndex?)]

    /// Merges the changes into `fetchIndexes` (per entity, per column): an index still empty
    /// takes the one built ahead, if any; one no longer empty merges its entries.
    func apply(to fetchIndexes: inout [[Int: OrderedIndex]]) {
        for index in indexes {
            if let built = index.built {
                if fetchIndexes[index.entity][index.column]!.count == 0 {
                    fetchIndexes[index.entity][index.column] = built
                } else {
                    fetchIndexes[index.entity][index.column]!.merge(built.insertions)
                }
            } else {
                fetchIndexes[index.entity][index.column]!.merge(index.net)
            }
        }
    }
}
