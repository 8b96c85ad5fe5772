import Strata

/// The predicate of `strata explain`, parsed from Core Data's format syntax.
///
/// Kept apart from ``ExplainCommand``: it is the one place the CLI depends on the predicate
/// format parser.
enum ExplainPredicate {
    /// Parses `format` (no `%@` arguments).
    ///
    /// - Throws: the parser's error, naming the position in the string.
    static func parse(_ format: String) throws -> FetchPredicate {
        try FetchPredicate(format: format, argumentArray: [])
    }
}
