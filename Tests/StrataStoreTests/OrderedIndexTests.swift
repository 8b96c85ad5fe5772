import StrataTestSupport
import Testing
@testable import StrataStore

/// A plain sorted array with the semantics ``OrderedIndex`` must have, answering by scanning.
private struct ModelIndex {
    /// The pairs, sorted by value, then key.
    private(set) var pairs: [(value: Value, key: PrimaryKey)] = []

    /// Whether neither value is less than the other.
    static func same(_ a: Value, _ b: Value) -> Bool {
        !(a < b) && !(b < a)
    }

    /// Whether `a` sorts before `b`: by value, then by key.
    static func precedes(_ a: (value: Value, key: PrimaryKey), _ b: (value: Value, key: PrimaryKey)) -> Bool {
        a.value < b.value || (same(a.value, b.value) && a.key < b.key)
    }

    /// Adds the pair unless an equal one is there.
    mutating func insert(_ value: Value, key: PrimaryKey) {
        guard !pairs.contains(where: { Self.same($0.value, value) && $0.key == key }) else { return }
        let index = pairs.firstIndex { Self.precedes((value, key), $0) } ?? pairs.count
        pairs.insert((value, key), at: index)
    }

    /// Removes the pair if there.
    mutating func remove(_ value: Value, key: PrimaryKey) {
        pairs.removeAll { Self.same($0.value, value) && $0.key == key }
    }

    /// Whether `value` matches `query`.
    static func matches(_ value: Value, _ query: IndexQuery) -> Bool {
        switch query {
        case .equal(let wanted):
            return same(value, wanted)
        case .in(let wanted):
            return wanted.contains { same(value, $0) }
        case .range(let lower, let upper):
            if value.isNull { return false }
            if let lower, lower.isInclusive ? value < lower.value : !(lower.value < value) { return false }
            if let upper, upper.isInclusive ? upper.value < value : !(value < upper.value) { return false }
            return true
        }
    }

    /// The keys matching `query`, in order or reversed, at most `limit` of them.
    func keys(matching query: IndexQuery, descending: Bool, limit: Int?) -> [PrimaryKey] {
        let keys = pairs.filter { Self.matches($0.value, query) }.map(\.key)
        return Array((descending ? keys.reversed() : keys).prefix(limit ?? Int.max))
    }
}

/// Tests of ``OrderedIndex``.
@Suite struct OrderedIndexTests {
    /// All pairs of `index`, in order.
    private func pairs(_ index: OrderedIndex) -> [Pair] {
        var pairs: [Pair] = []
        index.forEach { pairs.append(Pair(value: $0, key: $1)) }
        return pairs
    }

    /// An index with a few integers, duplicates and nulls.
    private func smallIndex() -> OrderedIndex {
        var index = OrderedIndex()
        for (value, key) in [(5, 1), (3, 2), (5, 3), (1, 4), (9, 5), (3, 6)] as [(Int64, PrimaryKey)] {
            index.insert(.int(value), key: key)
        }
        index.insert(.null, key: 7)
        index.insert(.null, key: 0)
        return index
    }

    /// Small hand-checked queries.
    @Test func basicQueries() {
        let index = smallIndex()
        #expect(index.count == 8)
        #expect(index.keys(matching: .equal(.int(5))) == [1, 3])
        #expect(index.keys(matching: .equal(.int(4))) == [])
        #expect(index.keys(matching: .equal(.null)) == [0, 7])
        #expect(index.keys(matching: .range(lower: nil, upper: nil)) == [4, 2, 6, 1, 3, 5])
        #expect(
            index.keys(matching: .range(lower: IndexBound(.int(3), inclusive: true), upper: nil)) == [2, 6, 1, 3, 5])
        #expect(index.keys(matching: .range(lower: IndexBound(.int(3), inclusive: false), upper: nil)) == [1, 3, 5])
        #expect(
            index.keys(matching: .range(lower: nil, upper: IndexBound(.int(5), inclusive: true))) == [4, 2, 6, 1, 3])
        #expect(index.keys(matching: .range(lower: nil, upper: IndexBound(.int(5), inclusive: false))) == [4, 2, 6])
        #expect(
            index.keys(
                matching: .range(
                    lower: IndexBound(.int(5), inclusive: false), upper: IndexBound(.int(3), inclusive: true))) == [])
        #expect(
            index.keys(matching: .range(lower: IndexBound(.null, inclusive: true), upper: nil)) == [4, 2, 6, 1, 3, 5])
        #expect(index.keys(matching: .in([.int(9), .int(3), .null, .int(9)])) == [0, 7, 2, 6, 5])
        #expect(index.keys(matching: .in([.int(9), .int(3), .int(9)]), descending: true) == [5, 6, 2])
        #expect(index.keys(matching: .range(lower: nil, upper: nil), descending: true, limit: 2) == [5, 3])
        #expect(index.keys(matching: .equal(.int(5)), limit: 0) == [])
        #expect(
            index.count(
                matching: .range(
                    lower: IndexBound(.int(2), inclusive: true), upper: IndexBound(.int(9), inclusive: false))) == 4)
        #expect(index.count(matching: .in([.int(5), .int(5), .int(1)])) == 3)
    }

    /// Inserting a pair twice keeps one; removing an absent pair does nothing.
    @Test func setSemantics() {
        var index = smallIndex()
        index.insert(.int(5), key: 1)
        #expect(index.count == 8)
        index.remove(.int(5), key: 2)
        index.remove(.int(6), key: 1)
        #expect(index.count == 8)
        index.remove(.int(5), key: 1)
        #expect(index.keys(matching: .equal(.int(5))) == [3])
        #expect(index.count == 7)
    }

    /// Pairs inserted one at a time take little more memory than their entries (1.07 to 1.09
    /// times here; 1.99 when a split chunk kept the storage it had doubled to), whether inserts
    /// land at the ends of runs (ascending keys) or anywhere; deleting most of them gives most
    /// of the memory back.
    @Test(arguments: [false, true])
    func memoryFollowsTheEntries(ascending: Bool) {
        var generator = SplitMix64(seed: 12)
        let count = 20_000
        var values = (0..<count).map { Int64($0) }
        if !ascending { values.shuffle(using: &generator) }
        var index = OrderedIndex()
        for (key, value) in values.enumerated() { index.insert(.int(value % 7), key: PrimaryKey(key)) }
        let entries = count * index.entryBytes
        #expect(index.memoryBytes <= entries * 5 / 4, "\(index.memoryBytes) for \(entries) of entries")

        let kept = values.indices.filter { $0 % 10 == 0 }
        for key in values.indices where key % 10 != 0 { index.remove(.int(values[key] % 7), key: PrimaryKey(key)) }
        #expect(index.count == kept.count)
        #expect(index.keys(matching: .equal(.int(3))) == kept.filter { values[$0] % 7 == 3 }.map { PrimaryKey($0) })
        let left = kept.count * index.entryBytes
        #expect(index.memoryBytes <= 4 * left + entries / 10, "\(index.memoryBytes) for \(left) of entries")
    }

    /// Integers and references take 16 bytes a pair, with their nulls; a pair that does not fit
    /// (another kind of value, a negative key) turns the index into 32-byte pairs, losing none
    /// and keeping the order; a value of another kind equal to a held one removes it, as in an
    /// index of mixed values.
    @Test func packedPairsChangeRepresentationWhenAPairDoesNotFit() {
        var index = OrderedIndex()
        index.insert(.null, key: 4)
        index.insert(.null, key: 2)
        #expect(index.entryBytes == 16)
        index.insert(.reference(9), key: 1)
        index.insert(.reference(3), key: 5)
        #expect(index.entryBytes == 16)
        #expect(pairs(index) == [Pair(value: .null, key: 2), Pair(value: .null, key: 4),
            Pair(value: .reference(3), key: 5), Pair(value: .reference(9), key: 1)])
        #expect(index.keys(matching: .range(lower: IndexBound(.reference(4), inclusive: true), upper: nil)) == [1])

        var ints = OrderedIndex(unsorted: [(.int(-7), 3), (.int(Int64.max), 1), (.int(Int64.min), 2), (.null, 9)])
        #expect(ints.entryBytes == 16)
        #expect(ints.keys(matching: .range(lower: nil, upper: nil)) == [2, 3, 1])
        ints.remove(.double(-7), key: 3)
        #expect(ints.keys(matching: .range(lower: nil, upper: nil)) == [2, 1], "-7.0 equals -7")
        ints.insert(.int(5), key: -1)
        #expect(ints.entryBytes == 32)
        ints.insert(.string("a"), key: 6)
        #expect(pairs(ints) == [Pair(value: .null, key: 9), Pair(value: .int(Int64.min), key: 2),
            Pair(value: .int(5), key: -1), Pair(value: .int(Int64.max), key: 1), Pair(value: .string("a"), key: 6)])
        #expect(ints.count == 5)

        var mixed = OrderedIndex(unsorted: [(.reference(2), 1), (.int(2), 2)])
        #expect(mixed.entryBytes == 32)
        mixed.merge([OrderedIndexChange(value: .int(2), key: 2, inserts: false)])
        #expect(pairs(mixed) == [Pair(value: .reference(2), key: 1)])
    }

    /// A bulk-built index holds the same pairs as one built by inserting.
    @Test func bulkBuildMatchesInserts() {
        var generator = SplitMix64(seed: 10)
        let input = (0..<5_000).map { _ in
            (
                Value.int(Int64.random(in: 0..<40, using: &generator)),
                PrimaryKey.random(in: 0..<3_000, using: &generator)
            )
        }
        var inserted = OrderedIndex()
        for (value, key) in input { inserted.insert(value, key: key) }
        let bulk = OrderedIndex(unsorted: input)
        #expect(bulk.count == inserted.count)
        #expect(pairs(bulk) == pairs(inserted))
        #expect(OrderedIndex(unsorted: []).count == 0)
    }

    /// Random inserts, removes and queries agree with the model, for several kinds of columns.
    @Test(arguments: Domain.allCases, [false, true])
    fileprivate func matchesModel(domain: Domain, bulkStart: Bool) {
        var generator = SplitMix64(seed: UInt64(domain.rawValue * 2 + (bulkStart ? 1 : 0)))
        var model = ModelIndex()
        var index = OrderedIndex()
        if bulkStart {
            let start = (0..<1_500).map { _ in
                (domain.randomValue(using: &generator), PrimaryKey.random(in: 0..<1_000, using: &generator))
            }
            index = OrderedIndex(unsorted: start)
            for (value, key) in start { model.insert(value, key: key) }
        }
        let steps = 8_000
        var peak = 0
        for step in 0..<steps {
            let growing = step < 3_000
            let roll = Int.random(in: 0..<10, using: &generator)
            if roll < (growing ? 8 : 1) {
                let value = domain.randomValue(using: &generator)
                let key = PrimaryKey.random(in: 0..<1_000, using: &generator)
                index.insert(value, key: key)
                model.insert(value, key: key)
            } else if let existing = model.pairs.randomElement(using: &generator), roll < 9 {
                index.remove(existing.value, key: existing.key)
                model.remove(existing.value, key: existing.key)
            } else {
                let value = domain.randomValue(using: &generator)
                let key = PrimaryKey.random(in: 0..<1_000, using: &generator)
                index.remove(value, key: key)
                model.remove(value, key: key)
            }
            peak = max(peak, index.count)
            if step % 10 == 0 {
                let query = domain.randomQuery(using: &generator)
                let descending = Bool.random(using: &generator)
                let limit = Bool.random(using: &generator) ? nil : Int.random(in: 0...60, using: &generator)
                let expected = model.keys(matching: query, descending: descending, limit: limit)
                #expect(
                    index.keys(matching: query, descending: descending, limit: limit) == expected,
                    "step \(step): \(query) descending \(descending) limit \(String(describing: limit))")
                #expect(
                    index.count(matching: query) == model.keys(matching: query, descending: false, limit: nil).count,
                    "step \(step): count of \(query)")
            }
            if step % 500 == 0 || step == steps - 1 {
                #expect(pairs(index) == model.pairs.map { Pair(value: $0.value, key: $0.key) }, "step \(step)")
                #expect(index.count == model.pairs.count, "step \(step)")
            }
        }
        #expect(peak > 3 * OrderedIndex.maxChunkSize, "the index should grow to several chunks")
        #expect(index.count < peak / 4, "the removing half should shrink the index")
    }
}

/// A pair as seen through ``OrderedIndex/forEach(_:)``, comparable with `==`.
private struct Pair: Equatable {
    /// The value.
    var value: Value
    /// The key.
    var key: PrimaryKey
}

/// The kinds of column the random test fills an index with.
private enum Domain: Int, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Few distinct integers, each on many rows, and some nulls.
    case integers
    /// Short strings and some nulls.
    case strings
    /// Integers and doubles mixed, some numerically equal across kinds.
    case numbers

    /// The name shown for the test case.
    var testDescription: String { String(describing: self) }

    /// A random value of this domain, null about one time in twelve.
    func randomValue(using generator: inout SplitMix64) -> Value {
        if Int.random(in: 0..<12, using: &generator) == 0 { return .null }
        switch self {
        case .integers:
            return .int(Int64.random(in: -3..<12, using: &generator))
        case .strings:
            let length = Int.random(in: 0...3, using: &generator)
            return .string(String((0..<length).map { _ in "ab Z".randomElement(using: &generator)! }))
        case .numbers:
            let half = Int64.random(in: -10..<10, using: &generator)
            return half % 2 == 0 && Bool.random(using: &generator) ? .int(half / 2) : .double(Double(half) / 2)
        }
    }

    /// A random query over values of this domain.
    func randomQuery(using generator: inout SplitMix64) -> IndexQuery {
        /// A random bound, or none one time in four.
        func bound(_ generator: inout SplitMix64) -> IndexBound? {
            Int.random(in: 0..<4, using: &generator) == 0
                ? nil
                : IndexBound(randomValue(using: &generator), inclusive: Bool.random(using: &generator))
        }
        switch Int.random(in: 0..<3, using: &generator) {
        case 0:
            return .equal(randomValue(using: &generator))
        case 1:
            let count = Int.random(in: 0...5, using: &generator)
            return .in((0..<count).map { _ in randomValue(using: &generator) })
        default:
            return .range(lower: bound(&generator), upper: bound(&generator))
        }
    }
}
