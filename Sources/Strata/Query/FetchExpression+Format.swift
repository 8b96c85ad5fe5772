extension FetchExpression {
    /// Parses an expression format string (Core Data's `NSExpression(format:_:)`), taking the
    /// values of `%@`, `%K`, `%d`, `%f`, … from `arguments` in order: a key path (`name`,
    /// `department.name`, `employees.@count`), a constant, a `$variable`, an aggregate
    /// (`{1, 2}`), a subquery, or a function of a derived attribute (`now()`,
    /// `lowercase:(name)`, `sum:(items.price)`).
    ///
    /// - Important: A malformed format stops the process with the parse error, where Core Data
    ///   raises an exception; parse formats from outside the program with
    ///   ``init(checkedFormat:_:)``.
    public init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Parses an expression format string as ``init(format:_:)`` does, taking the values of
    /// format specifiers from `argumentArray` (Core Data's `NSExpression(format:argumentArray:)`).
    public init(format: String, argumentArray: [Any]) {
        do {
            try self.init(checkedFormat: format, argumentArray: argumentArray)
        } catch {
            fatalError("FetchExpression(format:): \(error)")
        }
    }

    /// Parses an expression format string as ``init(format:_:)`` does, throwing on a malformed
    /// one: for formats from outside the program.
    ///
    /// - Throws: ``FetchPredicateError`` with the offset in `format`.
    public init(checkedFormat format: String, _ arguments: Any...) throws(FetchPredicateError) {
        try self.init(checkedFormat: format, argumentArray: arguments)
    }

    /// Parses an expression format string as ``init(format:argumentArray:)`` does, throwing on
    /// a malformed one.
    ///
    /// - Throws: ``FetchPredicateError`` with the offset in `format`.
    public init(checkedFormat format: String, argumentArray: [Any]) throws(FetchPredicateError) {
        if argumentArray.isEmpty, let derivation = DerivationExpression.parse(format) {
            self = derivation
        } else {
            self = try PredicateParser.parseExpression(format, arguments: argumentArray)
        }
    }
}
