import Foundation
internal import StrataStore

/// A predicate compiled for the rows of one store: comparisons of a column with a constant
/// become tests of the row's `Value` (as a fetch index compares), with no conversion of values
/// to objects; anything else is evaluated by the general predicate evaluator.
indirect enum RowFilter {
    /// Always this.
    case constant(Bool)
    /// Whether the column's value meets one of the queries, as an index lookup finds it.
    case test(column: Int, queries: [IndexQuery])
    /// All parts.
    case and([RowFilter])
    /// Any part.
    case or([RowFilter])
    /// Not the part.
    case not(RowFilter)
    /// A predicate evaluated on the row's values by the general evaluator.
    case predicate(FetchPredicate)

    /// Compiles `predicate` on rows of `entity`'s hierarchy in `store`.
    init(
        _ predicate: FetchPredicate, entity: EntityDescription, layout: EntityLayout, columns: [ColumnSchema],
        store: PersistentStore
    ) {
        switch predicate.node {
        case .constant(let value):
            self = .constant(value)
        case .and(let parts):
            self = .and(parts.map { RowFilter($0, entity: entity, layout: layout, columns: columns, store: store) })
        case .or(let parts):
            self = .or(parts.map { RowFilter($0, entity: entity, layout: layout, columns: columns, store: store) })
        case .not(let inner):
            self = .not(RowFilter(inner, entity: entity, layout: layout, columns: columns, store: store))
        case .comparison(let comparison):
            switch PredicateIndexAnalysis.analyse(
                comparison, entity: entity, layout: layout, columns: columns, requiresIndex: false)
            {
            case .none?:
                self = .constant(false)
            case .access(.lookup(let lookup), _)? where lookup.isExact:
                self = .test(column: lookup.column, queries: lookup.queries(in: store))
            default:
                self = .predicate(predicate)
            }
        default:
            self = .predicate(predicate)
        }
    }

    /// The columns the filter reads, or `nil` when a part is evaluated by the general evaluator
    /// (which may read any column).
    var columns: Set<Int>? {
        switch self {
        case .constant: return []
        case .test(let column, _): return [column]
        case .and(let parts), .or(let parts):
            var all = Set<Int>()
            for part in parts {
                guard let columns = part.columns else { return nil }
                all.formUnion(columns)
            }
            return all
        case .not(let inner): return inner.columns
        case .predicate: return nil
        }
    }

    /// Whether `row` passes, with `evaluate` evaluating the parts that are predicates.
    func matches(_ row: Row, evaluate: (FetchPredicate) throws -> Bool) rethrows -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .test(let column, let queries):
            for query in queries where query.matches(row.values[column]) { return true }
            return false
        case .and(let parts):
            for part in parts where try !part.matches(row, evaluate: evaluate) { return false }
            return true
        case .or(let parts):
            for part in parts where try part.matches(row, evaluate: evaluate) { return true }
            return false
        case .not(let inner):
            return try !inner.matches(row, evaluate: evaluate)
        case .predicate(let predicate):
            return try evaluate(predicate)
        }
    }
}
