import Foundation
import Testing
@testable import StrataStore

/// A group's fetch-index changes recorded in parts (a bulk insert's, on several cores) and joined
/// settle as recording them at once does; an index built ahead from a bulk load's insertions is
/// taken only while the index is still empty, and merged into it otherwise; a group that
/// removes a pair builds nothing ahead and still nets out.
@Suite struct FetchIndexBuiltAheadTests {
    /// A random value among few: mostly integers, some strings.
    static func randomValue(using generator: inout some RandomNumberGenerator) -> Value {
        Int.random(in: 0..<4, using: &generator) == 0
            ? .string("s\(Int.random(in: 0..<5, using: &generator))")
            : .int(Int64.random(in: -3...9, using: &generator))
    }

    /// A change of a random pair among few values and keys, so that pairs repeat and net out.
    static func randomChange(
        using generator: inout some RandomNumberGenerator
    ) -> (key: PrimaryKey, old: Value?, new: Value?) {
        let key = PrimaryKey.random(in: 1...400, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: return (key, nil, randomValue(using: &generator))
        case 1: return (key, randomValue(using: &generator), nil)
        default: return (key, randomValue(using: &generator), randomValue(using: &generator))
        }
    }

    /// The index `changes` leave in `start`.
    static func applied(_ changes: SettledFetchIndexChanges, to start: OrderedIndex) -> OrderedIndex {
        var fetchIndexes = [[0: start]]
        changes.apply(to: &fetchIndexes)
        return fetchIndexes[0][0]!
    }

    @Test(arguments: [1, 2, 3, 7])
    func changesRecordedInPartsSettleAsRecordedAtOnce(parts: Int) {
        var generator = SystemRandomNumberGenerator()
        let changes = (0..<2_000).map { _ in Self.randomChange(using: &generator) }
        var whole = FetchIndexChanges()
        for change in changes {
            whole.record(
                0, change.key, columns: [0], old: change.old.map { .list([$0]) }, new: change.new.map { .list([$0]) })
        }
        var joined = FetchIndexChanges()
        let size = (changes.count + parts - 1) / parts
        for start in stride(from: 0, to: changes.count, by: size) {
            var part = FetchIndexChanges()
            for change in changes[start..<min(start + size, changes.count)] {
                part.record(
                    0, change.key, columns: [0], old: change.old.map { .list([$0]) },
                    new: change.new.map { .list([$0]) })
            }
            joined.append(part)
        }
        var start = OrderedIndex()
        for key in PrimaryKey(1)...200 { start.insert(.int(key % 7), key: key) }
        for base in [OrderedIndex(), start] {
            let expected = FetchIndexBulkChangeTests.pairs(Self.applied(whole.settled(), to: base))
            #expect(FetchIndexBulkChangeTests.pairs(Self.applied(joined.settled(), to: base)) == expected)
            #expect(
                FetchIndexBulkChangeTests.pairs(Self.applied(joined.settled(buildingFor: [(0, 0)]), to: base))
                    == expected)
        }
    }

    @Test func anIndexBuiltAheadIsTakenWhileEmptyAndMergedOtherwise() {
        var changes = FetchIndexChanges()
        var reference = OrderedIndex()
        for key in PrimaryKey(1)...5_000 {
            let value = Value.int(key * 7_919 % 1_000)
            changes.record(0, key, columns: [0], old: nil, new: .list([value]))
            reference.insert(value, key: key)
        }
        let settled = changes.settled(buildingFor: [(0, 0)])
        #expect(
            FetchIndexBulkChangeTests.pairs(Self.applied(settled, to: OrderedIndex()))
                == FetchIndexBulkChangeTests.pairs(reference))
        // A commit filled the index between the group's start and its apply: the built index
        // is merged into what is there.
        var filled = OrderedIndex()
        filled.insert(.int(-1), key: 9_001)
        filled.insert(.int(500), key: 9_002)
        reference.insert(.int(-1), key: 9_001)
        reference.insert(.int(500), key: 9_002)
        let merged = Self.applied(settled, to: filled)
        #expect(merged.count == 5_002)
        #expect(FetchIndexBulkChangeTests.pairs(merged) == FetchIndexBulkChangeTests.pairs(reference))
    }

    @Test func aGroupThatRemovesAPairBuildsNothingAheadAndNetsOut() {
        var changes = FetchIndexChanges()
        for key in PrimaryKey(1)...100 { changes.record(0, key, columns: [0], old: nil, new: .list([.int(key)])) }
        // Key 50 moves to 5, which leaves the removal of (5, 5) as key 5's own last change.
        changes.record(0, 50, columns: [0], old: .list([.int(50)]), new: .list([.int(5)]))
        changes.record(0, 5, columns: [0], old: .list([.int(5)]), new: nil)
        var start = OrderedIndex()
        start.insert(.int(5), key: 5)
        start.insert(.int(1_000), key: 1_000)
        for base in [OrderedIndex(), start] {
            let index = Self.applied(changes.settled(buildingFor: [(0, 0)]), to: base)
            #expect(index.keys(matching: .equal(.int(5))) == [50])
            #expect(index.keys(matching: .equal(.int(50))).isEmpty)
            #expect(index.count == 99 + (base.count == 0 ? 0 : 1))
        }
    }

    @Test func aListOfSegmentsReadsAsOneInOrder() {
        var list = IndexChangeList()
        var expected: [PrimaryKey] = []
        for segment in 0..<5 {
            var part = IndexChangeList()
            for offset in 0..<(segment * 3) {
                let key = PrimaryKey(expected.count + 1)
                part.append(OrderedIndexChange(value: .int(Int64(offset)), key: key, inserts: true))
                expected.append(key)
            }
            list.append(contentsOf: part)
        }
        list.append(OrderedIndexChange(value: .null, key: 999, inserts: false))
        expected.append(999)
        #expect(list.count == expected.count)
        #expect(list.map(\.key) == expected)
        #expect((0..<list.count).map { list[$0].key } == expected)
    }
}
