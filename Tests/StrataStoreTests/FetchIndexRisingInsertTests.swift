import Foundation
import Testing
@testable import StrataStore

/// A bulk insert's fetch-index changes (inserts of rising keys, the shape a batch insert
/// commits) applied in bulk leave the index as inserting them one at a time does: values in
/// order, equal values in key order, for integer, mixed and string columns; and a group that
/// also removes or repeats a key still nets out as before.
@Suite struct FetchIndexRisingInsertTests {
    /// The kinds of values one test column holds.
    enum Kinds: String, CaseIterable, Sendable {
        case integers, integersReferencesAndNulls, strings, stringsAndNulls
    }

    /// A random value of `kinds`, from few distinct ones, so that many keys share a value.
    static func value(_ kinds: Kinds, using generator: inout some RandomNumberGenerator) -> Value {
        let number = Int64.random(in: -5...12, using: &generator)
        let pick = Int.random(in: 0..<3, using: &generator)
        switch kinds {
        case .integers: return .int(number)
        case .integersReferencesAndNulls: return [Value.null, .int(number), .reference(number)][pick]
        case .strings: return .string("name \(number)")
        case .stringsAndNulls: return pick == 0 ? .null : .string("name \(number)")
        }
    }

    @Test(arguments: Kinds.allCases)
    func risingInsertsMatchOneAtATime(kinds: Kinds) {
        var generator = SystemRandomNumberGenerator()
        var reference = OrderedIndex()
        for key in Int64(1)...300 { reference.insert(Self.value(kinds, using: &generator), key: key) }
        var fetchIndexes = [[0: reference]]
        var changes = FetchIndexChanges()
        // Keys above the stored ones, rising with gaps, as allocated blocks give them.
        var key: PrimaryKey = 300
        for _ in 0..<3_000 {
            key += Int64.random(in: 1...3, using: &generator)
            let value = Self.value(kinds, using: &generator)
            changes.record(0, key, columns: [0], old: nil, new: IndexedValues.list([value]))
            reference.insert(value, key: key)
        }
        changes.settled().apply(to: &fetchIndexes)
        let bulk = fetchIndexes[0][0]!
        #expect(bulk.count == reference.count)
        #expect(FetchIndexBulkChangeTests.pairs(bulk) == FetchIndexBulkChangeTests.pairs(reference))
        let probe = Self.value(kinds, using: &generator)
        #expect(bulk.keys(matching: .equal(probe)) == reference.keys(matching: .equal(probe)))
    }

    @Test func aKeyInsertedTwiceOrRemovedInTheGroupNetsOut() {
        var fetchIndexes = [[0: OrderedIndex()]]
        var changes = FetchIndexChanges()
        changes.record(0, 1, columns: [0], old: nil, new: IndexedValues.list([.int(5)]))
        changes.record(0, 2, columns: [0], old: nil, new: IndexedValues.list([.int(3)]))
        // Key 1 again (not rising): moved from 5 to 4, then key 2 removed.
        changes.record(0, 1, columns: [0], old: IndexedValues.list([.int(5)]), new: IndexedValues.list([.int(4)]))
        changes.record(0, 2, columns: [0], old: IndexedValues.list([.int(3)]), new: nil)
        changes.settled().apply(to: &fetchIndexes)
        let index = fetchIndexes[0][0]!
        #expect(index.count == 1)
        #expect(index.keys(matching: .equal(.int(4))) == [1])
        #expect(index.keys(matching: .equal(.int(5))).isEmpty)
    }
}
