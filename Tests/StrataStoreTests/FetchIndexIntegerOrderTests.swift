import Foundation
import Testing
@testable import StrataStore

/// Fetch-index changes of reference columns and of columns with nulls (the to-one foreign keys a
/// bulk insert writes), applied in bulk, leave the index as applying them one at a time does:
/// `null` first, then integers, then references, the last change to a pair deciding.
@Suite struct FetchIndexIntegerOrderTests {
    /// The kinds of values one test column holds.
    enum Kinds: String, CaseIterable, Sendable {
        case references, referencesAndNulls, integersAndNulls, integersReferencesAndNulls
    }

    /// A random value of `kinds`.
    static func value(_ kinds: Kinds, using generator: inout some RandomNumberGenerator) -> Value {
        let number = Int64.random(in: -20...60, using: &generator)
        let pick = Int.random(in: 0..<3, using: &generator)
        switch kinds {
        case .references: return .reference(number)
        case .referencesAndNulls: return pick == 0 ? .null : .reference(number)
        case .integersAndNulls: return pick == 0 ? .null : .int(number)
        case .integersReferencesAndNulls: return [Value.null, .int(number), .reference(number)][pick]
        }
    }

    /// Thousands of changes (sorted by radix) and a small save's few (sorted by comparison,
    /// at most two a call, fewer than ``FetchIndexChanges/fewChanges``, over few keys so that
    /// pairs change twice).
    @Test(arguments: Kinds.allCases, [4_000, 20])
    func bulkChangesMatchOneAtATime(kinds: Kinds, changeCount: Int) {
        var generator = SystemRandomNumberGenerator()
        var reference = OrderedIndex()
        var current: [PrimaryKey: Value] = [:]
        for key in Int64(1)...500 {
            let value = Self.value(kinds, using: &generator)
            reference.insert(value, key: key)
            current[key] = value
        }
        var fetchIndexes = [[0: reference]]
        var changes = FetchIndexChanges()
        let keys: ClosedRange<Int64> = changeCount < FetchIndexChanges.fewChanges ? 1...12 : 1...700
        for _ in 0..<changeCount {
            let key = Int64.random(in: keys, using: &generator)
            let old = current[key].map { Row([$0]) }
            let new: Row? =
                Int.random(in: 0..<4, using: &generator) == 0 ? nil : Row([Self.value(kinds, using: &generator)])
            changes.record(0, key, columns: [0], old: old.map(IndexedValues.row), new: new.map(IndexedValues.row))
            if let old { reference.remove(old[0], key: key) }
            if let new { reference.insert(new[0], key: key) }
            current[key] = new?[0]
        }
        changes.settled().apply(to: &fetchIndexes)
        let bulk = fetchIndexes[0][0]!
        #expect(bulk.count == reference.count)
        #expect(FetchIndexBulkChangeTests.pairs(bulk) == FetchIndexBulkChangeTests.pairs(reference))
        #expect(bulk.keys(matching: .equal(.null)) == reference.keys(matching: .equal(.null)))
        #expect(bulk.keys(matching: .equal(.reference(7))) == reference.keys(matching: .equal(.reference(7))))
    }

    /// Changes to keys in rising order, as a bulk insert or a delete of rows in key order records
    /// them: each key changed once (no two changes name one pair, and none is cut from the net
    /// changes) or, with `repeatsKeys`, now and then changed again at once (a pair inserted and
    /// removed in one group), leave the index as applying them one at a time does.
    @Test(arguments: Kinds.allCases, [false, true])
    func risingKeyChangesMatchOneAtATime(kinds: Kinds, repeatsKeys: Bool) {
        var generator = SystemRandomNumberGenerator()
        var reference = OrderedIndex()
        var current: [PrimaryKey: Value] = [:]
        for key in stride(from: Int64(2), through: 2_000, by: 2) {
            let value = Self.value(kinds, using: &generator)
            reference.insert(value, key: key)
            current[key] = value
        }
        var fetchIndexes = [[0: reference]]
        var changes = FetchIndexChanges()
        // Removes the key's value when it has one, else inserts one.
        func change(_ key: PrimaryKey) {
            let old = current[key]
            let new = old == nil ? Self.value(kinds, using: &generator) : nil
            changes.record(0, key, columns: [0], old: old.map { .row(Row([$0])) }, new: new.map { .row(Row([$0])) })
            if let old { reference.remove(old, key: key) }
            if let new { reference.insert(new, key: key) }
            current[key] = new
        }
        for key in Int64(1)...3_000 {
            change(key)
            if repeatsKeys && Int.random(in: 0..<4, using: &generator) == 0 { change(key) }
        }
        changes.settled().apply(to: &fetchIndexes)
        let bulk = fetchIndexes[0][0]!
        #expect(bulk.count == reference.count)
        #expect(FetchIndexBulkChangeTests.pairs(bulk) == FetchIndexBulkChangeTests.pairs(reference))
    }
}
