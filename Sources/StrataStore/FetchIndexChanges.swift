/// The fetch-index changes of a group of operations, gathered so that each index takes them in
/// one ``OrderedIndex/merge(_:)`` instead of one insertion or removal at a time.
///
/// Changes are recorded in commit order; a pair changed several times (inserted, then removed
/// by a later operation of the group, ...) nets out to what the last change left.
struct FetchIndexChanges: Sendable {
    /// One recorded change, with its place in commit order.
    private struct Pending: Sendable {
        var change: OrderedIndexChange
        var ordinal: Int
    }

    /// The recorded changes, by entity and indexed column.
    private var pending: [Int: [Int: [Pending]]] = [:]
    /// The number of changes recorded so far.
    private var recorded = 0

    /// Creates an empty set of changes.
    init() {}

    /// Records the move of `key`'s entries in the fetch indexes of `entity` on `columns` from
    /// the values of `old` to those of `new` (`nil`: the row is absent before, or after).
    mutating func record(_ entity: Int, _ key: PrimaryKey, columns: some Sequence<Int>, old: Row?, new: Row?) {
        for column in columns {
            let before = old?[column]
            let after = new?[column]
            if before == after { continue }
            if let before {
                pending[entity, default: [:]][column, default: []].append(Pending(change: OrderedIndexChange(value: before, key: key, inserts: false), ordinal: recorded))
                recorded += 1
            }
            if let after {
                pending[entity, default: [:]][column, default: []].append(Pending(change: OrderedIndexChange(value: after, key: key, inserts: true), ordinal: recorded))
                recorded += 1
            }
        }
    }

    /// Applies the recorded changes to `indexes`: per pair, the last change recorded decides
    /// whether the index holds it.
    func apply(to indexes: inout [[Int: OrderedIndex]]) {
        for (entity, columns) in pending {
            for (column, changes) in columns where !changes.isEmpty {
                let sorted = changes.sorted { a, b in
                    if a.change.value < b.change.value { return true }
                    if b.change.value < a.change.value { return false }
                    if a.change.key != b.change.key { return a.change.key < b.change.key }
                    return a.ordinal < b.ordinal
                }
                var net: [OrderedIndexChange] = []
                net.reserveCapacity(sorted.count)
                var index = 0
                while index < sorted.count {
                    // The run of changes to one pair, oldest first: the last one decides.
                    var last = index
                    while last + 1 < sorted.count, Self.samePair(sorted[last + 1].change, sorted[index].change) { last += 1 }
                    net.append(sorted[last].change)
                    index = last + 1
                }
                indexes[entity][column]!.merge(net)
            }
        }
    }

    /// Whether two changes name the same pair: equal keys and values neither less than the other.
    private static func samePair(_ a: OrderedIndexChange, _ b: OrderedIndexChange) -> Bool {
        a.key == b.key && !(a.value < b.value) && !(b.value < a.value)
    }
}
