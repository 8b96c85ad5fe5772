extension FetchPredicate {
    /// A copy in which every key path read from a constant (`$FETCH_SOURCE.department` once the
    /// variable is substituted) is replaced by its value, so that the fetch compares with a
    /// constant as if the value had been written in the format.
    func foldingConstantKeyPaths() -> FetchPredicate {
        switch node {
        case .constant, .block: return self
        case .and(let all): return FetchPredicate(.and(all.map { $0.foldingConstantKeyPaths() }))
        case .or(let any): return FetchPredicate(.or(any.map { $0.foldingConstantKeyPaths() }))
        case .not(let inner): return FetchPredicate(.not(inner.foldingConstantKeyPaths()))
        case .comparison(var comparison):
            comparison.left = comparison.left.foldingConstantKeyPaths()
            comparison.right = comparison.right.foldingConstantKeyPaths()
            return FetchPredicate(.comparison(comparison))
        }
    }
}

extension FetchExpression {
    /// The expression with key paths read from constants replaced by their values.
    fileprivate func foldingConstantKeyPaths() -> FetchExpression {
        switch self {
        case .keyPath(let path, on: let operand):
            let folded = operand.foldingConstantKeyPaths()
            guard case .constant(let base) = folded else { return .keyPath(path, on: folded) }
            return .constant(FetchExpression.keyPath(path).expressionValue(with: base))
        case .aggregate(let elements): return .aggregate(elements.map { $0.foldingConstantKeyPaths() })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: collection.foldingConstantKeyPaths(), variable: variable, predicate: predicate)
        default: return self
        }
    }
}
