import Foundation
internal import StrataStore

/// A ``RowFilter`` that is a conjunction of column tests, compiled for the loop over a fetch's
/// rows: integer ranges and Boolean equalities compare the unboxed value, with no reference
/// counting and no closure; other values go through `IndexQuery.matches(_:)`, so every row
/// passes exactly when the filter's ``RowFilter/matches(_:evaluate:)`` says it does.
struct ColumnTests {
    /// One column's test.
    private struct Test {
        /// How the column's value is compared.
        enum Kind {
            /// `.int` values in `lower...upper`.
            case integers
            /// `.bool` values equal to `flag`.
            case boolean
            /// Any value, by the queries.
            case general
        }

        /// The engine column tested.
        var column: Int
        /// How its value is compared.
        var kind: Kind
        /// The smallest integer passing, for ``Kind/integers``.
        var lower: Int64 = 0
        /// The largest integer passing, for ``Kind/integers``.
        var upper: Int64 = 0
        /// The Boolean passing, for ``Kind/boolean``.
        var flag = false
        /// The position of the test's queries in ``ColumnTests/queries``, for values of other kinds.
        var queries: Int
    }

    /// The tests, all of which a row must pass.
    private let tests: [Test]
    /// Each test's queries, as the filter has them.
    private let queries: [[IndexQuery]]
    /// Whether no row passes.
    private let never: Bool

    /// The tests of `filter`, or `nil` when it is not a conjunction of column tests.
    init?(_ filter: RowFilter) {
        var parts: [RowFilter] = [filter]
        if case .and(let all) = filter { parts = all }
        var tests: [Test] = []
        var queries: [[IndexQuery]] = []
        var never = false
        for part in parts {
            switch part {
            case .constant(let value):
                if !value { never = true }
            case .test(let column, let columnQueries):
                var test = Test(column: column, kind: .general, queries: queries.count)
                queries.append(columnQueries)
                if columnQueries.count == 1 { Self.specialize(&test, for: columnQueries[0]) }
                tests.append(test)
            default:
                return nil
            }
        }
        self.tests = tests
        self.queries = queries
        self.never = never
    }

    /// Makes `test` compare unboxed values when `query` is an integer range or equality, or a
    /// Boolean equality.
    private static func specialize(_ test: inout Test, for query: IndexQuery) {
        switch query {
        case .equal(.int(let value)):
            (test.kind, test.lower, test.upper) = (.integers, value, value)
        case .equal(.bool(let value)):
            (test.kind, test.flag) = (.boolean, value)
        case .range(let lower, let upper):
            var low = Int64.min
            var high = Int64.max
            if let lower {
                guard case .int(let value) = lower.value else { return }
                if lower.isInclusive {
                    low = value
                } else {
                    guard value < .max else { return }
                    low = value + 1
                }
            }
            if let upper {
                guard case .int(let value) = upper.value else { return }
                if upper.isInclusive {
                    high = value
                } else {
                    guard value > .min else { return }
                    high = value - 1
                }
            }
            (test.kind, test.lower, test.upper) = (.integers, low, high)
        default:
            break
        }
    }

    /// Whether `row` passes every test.
    func matches(_ row: Row) -> Bool {
        row.values.withUnsafeBufferPointer { values in matches { values[$0] } }
    }

    /// Whether `row` passes every test; an encoded row decodes only the columns tested.
    func matches(_ row: StoredRow) -> Bool {
        switch row {
        case .decoded(let row): return matches(row)
        case .encoded(let row): return matches { row.value($0) }
        }
    }

    /// Whether the row whose column values `value` gives passes every test.
    @inline(__always)
    func matches(value: (Int) throws -> Value) rethrows -> Bool {
        if never { return false }
        for test in tests {
            let stored = try value(test.column)
            switch test.kind {
            case .integers:
                if case .int(let value) = stored {
                    if value < test.lower || value > test.upper { return false }
                    continue
                }
            case .boolean:
                if case .bool(let value) = stored {
                    if value != test.flag { return false }
                    continue
                }
            case .general:
                break
            }
            guard queries[test.queries].contains(where: { $0.matches(stored) }) else { return false }
        }
        return true
    }
}
