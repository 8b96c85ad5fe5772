import Foundation

extension FetchPredicate {
    /// A copy of the predicate with each `$NAME` replaced by the value of `NAME` in `variables`
    /// (Core Data's `withSubstitutionVariables(_:)`). Subquery iteration variables stay.
    ///
    /// `nil` is passed as `NSNull()` or an optional; arrays and sets become collection constants.
    ///
    /// - Throws: ``FetchPredicateError`` `missingVariable` when a variable has no value (Core
    ///   Data raises an exception).
    public func withSubstitutionVariables(_ variables: [String: Any]) throws(FetchPredicateError) -> FetchPredicate {
        let result = try substituted(variables, bound: [])
        result.source = source
        return result
    }

    fileprivate func substituted(
        _ variables: [String: Any], bound: Set<String>
    ) throws(FetchPredicateError) -> FetchPredicate {
        switch node {
        case .constant, .block: return self
        case .and(let all):
            return FetchPredicate(
                .and(
                    try all.map { predicate throws(FetchPredicateError) in
                        try predicate.substituted(variables, bound: bound)
                    }))
        case .or(let any):
            return FetchPredicate(
                .or(
                    try any.map { predicate throws(FetchPredicateError) in
                        try predicate.substituted(variables, bound: bound)
                    }))
        case .not(let inner): return FetchPredicate(.not(try inner.substituted(variables, bound: bound)))
        case .comparison(var comparison):
            comparison.left = try comparison.left.substituted(variables, bound: bound, format: source?.format)
            comparison.right = try comparison.right.substituted(variables, bound: bound, format: source?.format)
            return FetchPredicate(.comparison(comparison))
        }
    }

    /// Whether two predicates have the same structure and constants (how the parser builds
    /// them: an AND or OR of one subpredicate is that subpredicate, of none a constant).
    func isEquivalent(to other: FetchPredicate) -> Bool {
        switch (normalized.node, other.normalized.node) {
        case (.constant(let a), .constant(let b)): return a == b
        case (.block, .block): return normalized === other.normalized
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.not(let a), .not(let b)): return a.isEquivalent(to: b)
        case (.comparison(let a), .comparison(let b)):
            return a.operator == b.operator && a.modifier == b.modifier
                && a.options.intersection([.caseInsensitive, .diacriticInsensitive])
                    == b.options.intersection([.caseInsensitive, .diacriticInsensitive])
                && a.left.isEquivalent(to: b.left) && a.right.isEquivalent(to: b.right)
        default: return false
        }
    }

    private var normalized: FetchPredicate {
        switch node {
        case .and(let all) where all.isEmpty: return FetchPredicate(.constant(true))
        case .or(let any) where any.isEmpty: return FetchPredicate(.constant(false))
        case .and(let one) where one.count == 1, .or(let one) where one.count == 1: return one[0].normalized
        default: return self
        }
    }
}

extension FetchExpression {
    fileprivate func substituted(
        _ variables: [String: Any], bound: Set<String>, format: String?
    ) throws(FetchPredicateError) -> FetchExpression {
        switch self {
        case .variable(let name) where !bound.contains(name):
            guard let value = variables[name] else {
                throw FetchPredicateError(
                    .missingVariable, "no value for the substitution variable $\(name)", format: format)
            }
            return .constant(FetchValue.unwrap(value))
        case .keyPath(let path, on: let operand):
            return .keyPath(path, on: try operand.substituted(variables, bound: bound, format: format))
        case .aggregate(let elements):
            return .aggregate(
                try elements.map { element throws(FetchPredicateError) in
                    try element.substituted(variables, bound: bound, format: format)
                })
        case .subquery(let collection, let variable, let predicate):
            var inner = bound
            inner.insert(variable)
            return .subquery(
                collection: try collection.substituted(variables, bound: bound, format: format), variable: variable,
                predicate: try predicate.substituted(variables, bound: inner))
        case .function(let name, let arguments):
            return .function(
                name,
                arguments: try arguments.map { argument throws(FetchPredicateError) in
                    try argument.substituted(variables, bound: bound, format: format)
                })
        case .method(let target, let selector, let arguments):
            return .method(
                of: try target.substituted(variables, bound: bound, format: format), selectorName: selector,
                arguments: try arguments.map { argument throws(FetchPredicateError) in
                    try argument.substituted(variables, bound: bound, format: format)
                })
        case .fetch(let request, let context, let countOnly):
            return .fetch(
                request: try request.substituted(variables, bound: bound, format: format),
                context: try context.substituted(variables, bound: bound, format: format), countOnly: countOnly)
        case .constant, .evaluatedObject, .variable: return self
        }
    }

    /// Whether two expressions are the same (constants compared as values; an aggregate of
    /// constants is the same as a collection constant of their values).
    func isEquivalent(to other: FetchExpression) -> Bool {
        switch (self, other) {
        case (.constant(let a), .constant(let b)):
            if let x = a.flatMap(FetchValue.elements(of:)), let y = b.flatMap(FetchValue.elements(of:)) {
                if a is Set<AnyHashable> || b is Set<AnyHashable> { return FetchValue.equal(a, b) }
                return x.count == y.count
                    && zip(x, y).allSatisfy { FetchExpression.constant($0).isEquivalent(to: .constant($1)) }
            }
            if let x = a, let y = b, (x is String) != (y is String) || (x is Date) != (y is Date) { return false }
            if let x = a.flatMap(FetchValue.numeric), let y = b.flatMap(FetchValue.numeric), x.doubleValue.isNaN,
                y.doubleValue.isNaN
            {
                return true
            }
            return FetchValue.equal(a, b)
        case (.aggregate(let a), .constant(let value?)), (.constant(let value?), .aggregate(let a)):
            guard let elements = FetchValue.elements(of: value), elements.count == a.count else { return false }
            return zip(a, elements).allSatisfy { $0.isEquivalent(to: .constant($1)) }
        case (.evaluatedObject, .evaluatedObject): return true
        case (.variable(let a), .variable(let b)): return a == b
        case (.aggregate(let a), .aggregate(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEquivalent(to: $1) }
        case (.keyPath(let a, let x), .keyPath(let b, let y)): return a == b && x.isEquivalent(to: y)
        case (.subquery(let a, let x, let p), .subquery(let b, let y, let q)):
            return x == y && a.isEquivalent(to: b) && p.isEquivalent(to: q)
        default: return false
        }
    }
}
