import Foundation
import StrataTestSupport
import Testing
@testable import StrataStore

/// Fetch-index changes applied in bulk (``FetchIndexChanges`` merged into an ``OrderedIndex``)
/// leave the index as applying them one at a time does, including pairs a group inserts and
/// removes again; and a store's fetch index after large replayed groups matches its rows.
@Suite struct FetchIndexBulkChangeTests {
    /// Every (value, key) pair of `index`, in order.
    static func pairs(_ index: OrderedIndex) -> [String] {
        var pairs: [String] = []
        index.forEach { value, key in pairs.append("\(value)/\(key)") }
        return pairs
    }

    /// Dense changes take the merge pass; 60 changes over the ~60 chunks of 20,000 pairs (a
    /// group of small saves) are applied one at a time.
    @Test(arguments: [(0, 3_000), (5, 3_000), (300, 3_000), (5_000, 3_000), (20_000, 60)])
    func bulkChangesMatchOneAtATime(initial: Int, changeCount: Int) {
        var generator = SystemRandomNumberGenerator()
        var reference = OrderedIndex()
        for key in 1...max(initial, 1) where initial > 0 { reference.insert(.int(Int64(key % 97)), key: Int64(key)) }
        var bulk = reference
        var fetchIndexes = [[0: bulk]]
        var changes = FetchIndexChanges()
        var current: [PrimaryKey: Int64] = [:]
        for key in 0..<Int64(initial) { current[key + 1] = (key + 1) % 97 }
        for _ in 0..<changeCount {
            let key = Int64.random(in: 1...Int64(initial + 400), using: &generator)
            let old = current[key].map { Row([.int($0)]) }
            let new: Row? =
                Bool.random(using: &generator) ? Row([.int(Int64.random(in: 0...120, using: &generator))]) : nil
            changes.record(0, key, columns: [0], old: old.map(IndexedValues.row), new: new.map(IndexedValues.row))
            if let old { reference.remove(old[0], key: key) }
            if let new { reference.insert(new[0], key: key) }
            if case .int(let value)? = new?[0] { current[key] = value } else { current[key] = nil }
        }
        changes.settled().apply(to: &fetchIndexes)
        bulk = fetchIndexes[0][0]!
        #expect(bulk.count == reference.count)
        #expect(Self.pairs(bulk) == Self.pairs(reference))
        #expect(bulk.keys(matching: .equal(.int(50))) == reference.keys(matching: .equal(.int(50))))
    }

    @Test func mergeOfStringsSplitsAndEmptiesChunks() {
        var index = OrderedIndex(unsorted: (1...2_000).map { (Value.string(String(format: "%05d", $0)), Int64($0)) })
        var reference = index
        var changes: [OrderedIndexChange] = (1...1_000).map {
            OrderedIndexChange(value: .string(String(format: "%05d", $0)), key: Int64($0), inserts: false)
        }
        changes += (1...1_500).map {
            OrderedIndexChange(value: .string(String(format: "%05da", $0)), key: Int64(10_000 + $0), inserts: true)
        }
        changes.sort { $0.value < $1.value || (!($1.value < $0.value) && $0.key < $1.key) }
        for change in changes {
            if change.inserts {
                reference.insert(change.value, key: change.key)
            } else {
                reference.remove(change.value, key: change.key)
            }
        }
        index.merge(changes)
        #expect(index.count == 2_500)
        #expect(Self.pairs(index) == Self.pairs(reference))
        #expect(index.count(matching: .range(lower: nil, upper: nil)) == 2_500)
    }

    @Test func replayedGroupsLeaveTheFetchIndexMatchingTheRowsAfterReopen() throws {
        let directory = TemporaryDirectory()
        let source = try HistoryReplayBatchTests.source(at: directory.store("Source"), count: 3_000)
        let url = directory.store("Destination")
        var destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        #expect(try destination.replayHistory(from: source) == 3_000)
        func expectIndexMatchesRows(_ store: Store) throws {
            var salaries: [(Value, PrimaryKey)] = []
            try store.scan(TestSchema.employee) { key, row in salaries.append((row[1], key)) }
            let expected = OrderedIndex(unsorted: salaries)
            var keys: [PrimaryKey] = []
            expected.forEach { _, key in keys.append(key) }
            #expect(try store.keys(TestSchema.employee, column: 1, matching: .range(lower: nil, upper: nil)) == keys)
            #expect(keys.count == 3_000)
        }
        try expectIndexMatchesRows(destination)
        try destination.close()
        destination = try Store.open(at: url, schema: TestSchema.schema, configuration: TestSchema.configuration())
        try expectIndexMatchesRows(destination)
        try destination.close()
        try source.close()
    }
}
