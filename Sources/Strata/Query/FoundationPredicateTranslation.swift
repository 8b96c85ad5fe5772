import Foundation

extension FetchPredicate {
    /// A predicate equivalent to a Foundation `#Predicate` on a `ManagedObject` subclass (Core
    /// Data's `NSPredicate(_:)` taking a `Predicate`).
    ///
    /// ```swift
    /// let predicate = FetchPredicate(#Predicate<Employee> { $0.salary > 100_000 && $0.name.starts(with: "A") })
    /// // salary > 100000 AND name BEGINSWITH "A": planned on the salary index like a format predicate
    /// ```
    ///
    /// The expression tree is translated to comparisons on model key paths: `==`, `!=`, `<`,
    /// `<=`, `>`, `>=`, `&&`, `||`, `!`, `contains` and `starts(with:)` on strings, ranges
    /// (`(1...9).contains($0.salary)` is `BETWEEN`), `contains` on an array of values (`IN`),
    /// optional chaining through to-one relationships (`$0.department?.name`), `??` with a
    /// constant, `count` and `isEmpty` of to-many relationships (`@count`), and `contains(where:)`
    /// and `allSatisfy` on to-many relationships (`ANY`, `SUBQUERY`). Any part that has no such
    /// equivalent (arithmetic, conditionals, computed properties, casts) becomes a block predicate
    /// that evaluates that part of the Foundation predicate in memory, so the rest of an `&&` still
    /// uses the fetch indexes.
    ///
    /// Key paths are matched to model properties by reading them once on probe instances of the
    /// subclass (see ``Managed``); a key path is read only when it is writable, as `@Managed`
    /// properties are, so read-only computed properties are never run during translation.
    public convenience init<Root: ManagedObject>(_ predicate: Predicate<Root>) {
        let variable = predicate.variable
        let translator = FoundationPredicateTranslator(root: variable.key) { part in
            FetchPredicate(
                .block { object, _ in
                    guard let object = object as? Root else { return false }
                    return (try? part.evaluate(PredicateBindings((variable, object)))) ?? false
                })
        }
        let expression = predicate.expression
        let translated =
            translator.predicate(expression) ?? translator.block(expression) ?? FetchPredicate(value: false)
        self.init(translated.node)
    }
}

/// A Foundation predicate expression with a predicate equivalent (a Boolean expression).
protocol FetchPredicateTranslatable {
    /// The equivalent predicate, or `nil` when there is none.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate?
}

/// A Foundation predicate expression with an expression equivalent (a value).
protocol FetchExpressionTranslatable {
    /// The equivalent expression, or `nil` when there is none.
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression?
}

/// Walks the expression tree of a Foundation predicate, keeping what its variables stand for.
final class FoundationPredicateTranslator {
    private let root: PredicateExpressions.VariableID
    private let makeBlock: (any PredicateExpression<Bool>) -> FetchPredicate
    /// What each variable in scope stands for: the root is the evaluated object, an optional
    /// chain's variable the key path before it, a subquery's variable its iteration variable.
    private var variables: [PredicateExpressions.VariableID: FetchExpression] = [:]
    /// Whether the walk is outside every subquery, where the root variable is the evaluated
    /// object and an untranslatable part can be evaluated in memory on its own.
    private var isRootScope = true
    private var subqueries = 0

    init(root: PredicateExpressions.VariableID, block: @escaping (any PredicateExpression<Bool>) -> FetchPredicate) {
        self.root = root
        self.makeBlock = block
        variables[root] = .evaluatedObject
    }

    /// The predicate equivalent to the Boolean expression `expression`, or `nil`.
    func predicate(_ expression: Any) -> FetchPredicate? {
        if let translatable = expression as? any FetchPredicateTranslatable {
            return translatable.fetchPredicate(in: self)
        }
        // A Boolean value (`$0.active`) is true when it equals YES.
        if expression is any PredicateExpression<Bool>, let value = self.expression(expression) {
            return comparison(value, .equalTo, .constant(true))
        }
        return nil
    }

    /// A block predicate evaluating the Boolean expression `expression` in memory, when the walk
    /// is outside subqueries (inside, the expression needs the subquery's variable).
    func block(_ expression: Any) -> FetchPredicate? {
        guard isRootScope, let boolean = expression as? any PredicateExpression<Bool> else { return nil }
        return makeBlock(boolean)
    }

    /// The expression equivalent to the value expression `expression`, or `nil`.
    func expression(_ expression: Any) -> FetchExpression? {
        (expression as? any FetchExpressionTranslatable)?.fetchExpression(in: self)
    }

    /// What `variable` stands for, or `nil` for a variable out of scope (or the root inside a
    /// subquery, where key paths are read from the subquery's elements).
    func value(of variable: PredicateExpressions.VariableID) -> FetchExpression? {
        if variable == root && !isRootScope { return nil }
        return variables[variable]
    }

    /// Runs `body` with `variable` standing for `value`.
    func binding<Result>(
        _ variable: PredicateExpressions.VariableID, to value: FetchExpression, subquery: Bool = false,
        _ body: () -> Result
    ) -> Result {
        let saved = (variables, isRootScope)
        variables[variable] = value
        if subquery { isRootScope = false }
        defer { (variables, isRootScope) = saved }
        return body()
    }

    /// A new subquery variable name.
    func newVariableName() -> String {
        subqueries += 1
        return "x\(subqueries)"
    }

    /// `left op right`, with a constant moved to the right of an ordering comparison so that the
    /// planner sees `key op constant`.
    func comparison(_ left: FetchExpression, _ op: ComparisonOperator, _ right: FetchExpression) -> FetchPredicate {
        if case .constant = left, !Self.isConstant(right), let mirrored = Self.mirrored[op] {
            return FetchPredicate(.comparison(FetchPredicate.Comparison(left: right, operator: mirrored, right: left)))
        }
        return FetchPredicate(.comparison(FetchPredicate.Comparison(left: left, operator: op, right: right)))
    }

    private static let mirrored: [ComparisonOperator: ComparisonOperator] = [
        .equalTo: .equalTo, .notEqualTo: .notEqualTo, .lessThan: .greaterThan,
        .lessThanOrEqualTo: .greaterThanOrEqualTo,
        .greaterThan: .lessThan, .greaterThanOrEqualTo: .lessThanOrEqualTo,
    ]

    /// Whether `expression` is a constant.
    static func isConstant(_ expression: FetchExpression) -> Bool {
        if case .constant = expression { return true }
        return false
    }

    /// `lhs && rhs` or `lhs || rhs`, nested compounds of the same kind flattened; outside
    /// subqueries, a part without equivalent becomes a block predicate (unless both are, then the
    /// whole is left to the caller, to evaluate as one block).
    func compound(and: Bool, _ lhs: Any, _ rhs: Any) -> FetchPredicate? {
        let left = predicate(lhs)
        let right = predicate(rhs)
        guard left != nil || right != nil else { return nil }
        guard let left = left ?? block(lhs), let right = right ?? block(rhs) else { return nil }
        var parts: [FetchPredicate] = []
        for part in [left, right] {
            switch (part.node, and) {
            case (.and(let inner), true), (.or(let inner), false): parts += inner
            default: parts.append(part)
            }
        }
        return FetchPredicate(and ? .and(parts) : .or(parts))
    }

    /// `(wrapped ?? fallback) op constant`, as `wrapped op constant`, or `wrapped == nil` when
    /// `fallback op constant` holds (`test` tells).
    func coalesced<Value>(
        _ lhs: Any, _ op: ComparisonOperator, _ rhs: Any, _ test: (Value, Value) -> Bool
    ) -> FetchPredicate? {
        guard let coalesce = lhs as? any NilCoalescing, let wrapped = expression(coalesce.wrappedPart),
            let fallback = (coalesce.fallbackPart as? any PredicateValueHolding)?.heldValue as? Value,
            let constant = (rhs as? any PredicateValueHolding)?.heldValue as? Value,
            let right = expression(rhs)
        else { return nil }
        let direct = comparison(wrapped, op, right)
        if test(fallback, constant) {
            return FetchPredicate(.or([direct, comparison(wrapped, .equalTo, .constant(nil))]))
        }
        return FetchPredicate(.and([comparison(wrapped, .notEqualTo, .constant(nil)), direct]))
    }

    /// `SUBQUERY(collection, $x, test).@count > 0` (or, for `allSatisfy`,
    /// `SUBQUERY(collection, $x, NOT test).@count == 0`); `ANY collection.key op constant` when
    /// the test is one comparison of the element's key with a constant.
    func subquery(
        _ collection: Any, _ variable: PredicateExpressions.VariableID, _ test: Any, all: Bool
    ) -> FetchPredicate? {
        guard let collection = expression(collection) else { return nil }
        let name = newVariableName()
        guard let inner = binding(variable, to: .variable(name), subquery: true, { predicate(test) }) else {
            return nil
        }
        if !all, case .comparison(var comparison) = inner.node, comparison.modifier == .direct,
            case .keyPath(let key, on: .variable(name)) = comparison.left, Self.isConstant(comparison.right),
            case .keyPath(let path, on: .evaluatedObject) = collection
        {
            comparison.left = .keyPath(path + "." + key)
            comparison.modifier = .any
            return FetchPredicate(.comparison(comparison))
        }
        let elements = FetchExpression.subquery(
            collection: collection, variable: name, predicate: all ? FetchPredicate(.not(inner)) : inner)
        return comparison(.keyPath("@count", on: elements), all ? .equalTo : .greaterThan, .constant(0))
    }

    /// `base.key`: a key appended to a key path, or read from a variable or object.
    static func appending(_ key: String, to base: FetchExpression) -> FetchExpression? {
        switch base {
        case .evaluatedObject: return .keyPath(key)
        case .keyPath(let path, on: let origin):
            guard !path.hasSuffix("@count") else { return nil }
            return .keyPath(path + "." + key, on: origin)
        case .variable: return .keyPath(key, on: base)
        default: return nil
        }
    }
}
