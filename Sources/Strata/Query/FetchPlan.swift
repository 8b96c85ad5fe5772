/// How a fetch finds its objects, as ``ManagedObjectContext/explain(_:)`` reports it (what
/// SQLite's `EXPLAIN QUERY PLAN` tells of a Core Data fetch). `Sendable`.
///
/// The plan is chosen per fetch from the predicate (after substitution), the sort descriptors,
/// the limit and the sizes of the fetch indexes: comparisons on fetch-indexed attributes and on
/// to-one relationships use the indexes, everything else is evaluated on the rows a scan decodes.
public struct FetchPlan: Sendable, Hashable, CustomStringConvertible {
    /// A use of fetch indexes that finds candidate rows.
    public indirect enum IndexUse: Sendable, Hashable, CustomStringConvertible {
        /// The rows whose `key` meets `condition` (`> 150000`, `IN {1, 2}`, `== nil`), from the
        /// fetch index of `key`'s column.
        case lookup(key: String, condition: String)
        /// The rows every part finds.
        case intersection([IndexUse])
        /// The rows any part finds.
        case union([IndexUse])

        /// `salary > 150000`, `(a == 1) AND (b < 2)`, `(a == 1) OR (a == 2)`.
        public var description: String {
            switch self {
            case .lookup(let key, let condition): return "\(key) \(condition)"
            case .intersection(let parts): return parts.map { "(\($0))" }.joined(separator: " AND ")
            case .union(let parts): return parts.map { "(\($0))" }.joined(separator: " OR ")
            }
        }
    }

    /// How candidate rows are found.
    public enum Access: Sendable, Hashable {
        /// The predicate can match nothing (`FALSEPREDICATE`, a comparison with `nil` that is
        /// always false): nothing is read.
        case none
        /// Every row of the entity's hierarchy is decoded, block by block.
        case scan
        /// Fetch indexes give the candidate rows.
        case index(IndexUse)
        /// The fetch index of the first sort key is walked in sort order (restricted to `within`
        /// when the predicate compares that key), and the walk stops once enough rows match.
        case orderedIndex(key: String, descending: Bool, within: IndexUse?)
    }

    /// What the plan computes.
    public enum Operation: Sendable, Hashable {
        /// Objects, IDs or dictionaries.
        case fetch
        /// A count.
        case count
    }

    /// The entity fetched.
    public var entityName: String
    /// Fetch or count.
    public var operation: Operation
    /// How candidate rows are found.
    public var access: Access
    /// The predicate evaluated on each candidate row, in its format syntax; `nil` when the
    /// indexes answer the predicate exactly.
    public var filter: String?
    /// Whether rows of other entities of the inheritance hierarchy are filtered out by their
    /// entity tag (which needs each candidate row).
    public var filtersEntityTag: Bool
    /// Whether rows are decoded at all; a count answered by indexes decodes none.
    public var readsRows: Bool
    /// Whether the results are sorted in memory after they are found.
    public var sortsInMemory: Bool
    /// For an ordered index walk, the number of matching rows after which it stops (the fetch
    /// offset plus the limit; rows tied with the last on the sort key are read too).
    public var stopsAfter: Int?
    /// Whether the context's unsaved changes are merged in (inserted and changed objects matched
    /// in memory, deleted ones left out): the request includes them, the context has some, and
    /// the results are not dictionaries.
    public var mergesPendingChanges: Bool

    /// Whether the plan uses a fetch index.
    public var usesIndex: Bool {
        switch access {
        case .index, .orderedIndex: return true
        case .none, .scan: return false
        }
    }

    /// Whether the plan decodes every row of the hierarchy.
    public var isScan: Bool { access == .scan }

    /// A readable account, one step a line:
    ///
    ///     fetch Employee
    ///       walk index on salary descending within salary > 150000, stop after 100 matches
    ///       filter rows: (salary > 150000) AND (active == YES)
    public var description: String {
        var lines = ["\(operation == .count ? "count" : "fetch") \(entityName)"]
        switch access {
        case .none:
            lines.append("  no rows can match: nothing is read")
        case .scan:
            lines.append("  scan every row")
        case .index(let use):
            lines.append(
                "  index lookup: \(use)" + (readsRows ? ", read matching rows" : ", rows not read (count from index)"))
        case .orderedIndex(let key, let descending, let within):
            var line = "  walk index on \(key) \(descending ? "descending" : "ascending")"
            if let within { line += " within \(within)" }
            if let stopsAfter { line += ", stop after \(stopsAfter) matches" }
            lines.append(line)
        }
        if filtersEntityTag { lines.append("  filter rows by entity tag") }
        if let filter { lines.append("  filter rows: \(filter)") }
        if sortsInMemory { lines.append("  sort in memory") }
        if mergesPendingChanges { lines.append("  merge unsaved changes of the context") }
        return lines.joined(separator: "\n")
    }
}
