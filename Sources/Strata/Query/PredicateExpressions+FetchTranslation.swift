import Foundation

// How each Foundation predicate expression translates (see `FetchPredicate.init(_: Predicate)`).
// An expression type without a conformance here (arithmetic, conditionals, casts, subscripts)
// has no equivalent and is evaluated in memory.

// MARK: Logic

extension PredicateExpressions.Conjunction: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        translator.compound(and: true, lhs, rhs)
    }
}

extension PredicateExpressions.Disjunction: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        translator.compound(and: false, lhs, rhs)
    }
}

extension PredicateExpressions.Negation: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        translator.predicate(wrapped).map { FetchPredicate(.not($0)) }
    }
}

// MARK: Comparisons

extension PredicateExpressions.Equal: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        if let left = translator.expression(lhs), let right = translator.expression(rhs) {
            return translator.comparison(left, .equalTo, right)
        }
        return translator.coalesced(lhs, .equalTo, rhs) { (a: LHS.Output, b: LHS.Output) in a == b }
            ?? translator.coalesced(rhs, .equalTo, lhs) { (a: LHS.Output, b: LHS.Output) in a == b }
    }
}

extension PredicateExpressions.NotEqual: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        if let left = translator.expression(lhs), let right = translator.expression(rhs) {
            return translator.comparison(left, .notEqualTo, right)
        }
        return translator.coalesced(lhs, .notEqualTo, rhs) { (a: LHS.Output, b: LHS.Output) in a != b }
            ?? translator.coalesced(rhs, .notEqualTo, lhs) { (a: LHS.Output, b: LHS.Output) in a != b }
    }
}

extension PredicateExpressions.Comparison: FetchPredicateTranslatable {
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        let comparison: ComparisonOperator
        let test: (LHS.Output, LHS.Output) -> Bool
        switch op {
        case .lessThan: (comparison, test) = (.lessThan, { $0 < $1 })
        case .lessThanOrEqual: (comparison, test) = (.lessThanOrEqualTo, { $0 <= $1 })
        case .greaterThan: (comparison, test) = (.greaterThan, { $0 > $1 })
        case .greaterThanOrEqual: (comparison, test) = (.greaterThanOrEqualTo, { $0 >= $1 })
        }
        if let left = translator.expression(lhs), let right = translator.expression(rhs) {
            return translator.comparison(left, comparison, right)
        }
        return translator.coalesced(lhs, comparison, rhs, test)
    }
}

// MARK: Strings and collections

extension PredicateExpressions.CollectionContainsCollection: FetchPredicateTranslatable {
    /// `string.contains(other)`: `CONTAINS`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        guard Base.Output.self == String.self, Other.Output.self == String.self,
            let string = translator.expression(base), let part = translator.expression(other)
        else { return nil }
        return translator.comparison(string, .contains, part)
    }
}

extension PredicateExpressions.SequenceStartsWith: FetchPredicateTranslatable {
    /// `string.starts(with: prefix)`: `BEGINSWITH`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self,
            let string = translator.expression(base), let prefix = translator.expression(prefix)
        else { return nil }
        return translator.comparison(string, .beginsWith, prefix)
    }
}

extension PredicateExpressions.SequenceContains: FetchPredicateTranslatable {
    /// `[values].contains($0.key)`: `key IN {values}`; `$0.relationship.contains(object)`:
    /// `ANY relationship == object`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        guard LHS.Output.self != String.self, let collection = translator.expression(sequence),
            let element = translator.expression(element)
        else { return nil }
        switch (collection, element) {
        case (.constant, .constant):
            return nil
        case (.constant, _):
            return FetchPredicate(
                .comparison(FetchPredicate.Comparison(left: element, operator: .in, right: collection)))
        case (.keyPath, .constant):
            return FetchPredicate(
                .comparison(
                    FetchPredicate.Comparison(left: collection, operator: .equalTo, right: element, modifier: .any)))
        default:
            return nil
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: FetchPredicateTranslatable {
    /// `$0.relationship.contains { test }`: `ANY` or `SUBQUERY(…).@count > 0`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        translator.subquery(sequence, variable.key, test, all: false)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: FetchPredicateTranslatable {
    /// `$0.relationship.allSatisfy { test }`: `SUBQUERY(…, NOT test).@count == 0`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        translator.subquery(sequence, variable.key, test, all: true)
    }
}

extension PredicateExpressions.RangeExpressionContains: FetchPredicateTranslatable {
    /// `(low...high).contains($0.key)`: `key BETWEEN {low, high}`; `(low..<high)`: `key >= low
    /// AND key < high`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        guard let value = translator.expression(element) else { return nil }
        let bounds: (lower: Any?, upper: Any?, isClosed: Bool)
        if let node = range as? any PredicateRangeNode {
            guard case .constant(let lower)? = translator.expression(node.lowerPart),
                case .constant(let upper)? = translator.expression(node.upperPart)
            else { return nil }
            bounds = (lower, upper, node.isClosed)
        } else if let held = (range as? any PredicateValueHolding)?.heldValue as? any RangeBoundsReadable,
            let lower = FetchPredicateConstant.convert(held.lowerBoundValue),
            let upper = FetchPredicateConstant.convert(held.upperBoundValue)
        {
            bounds = (lower, upper, held.isClosed)
        } else {
            return nil
        }
        guard let lower = bounds.lower, let upper = bounds.upper else { return nil }
        if bounds.isClosed {
            return FetchPredicate(
                .comparison(
                    FetchPredicate.Comparison(left: value, operator: .between, right: .constant([lower, upper]))))
        }
        return FetchPredicate(
            .and([
                translator.comparison(value, .greaterThanOrEqualTo, .constant(lower)),
                translator.comparison(value, .lessThan, .constant(upper)),
            ]))
    }
}

// MARK: Values

extension PredicateExpressions.Variable: FetchExpressionTranslatable {
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? {
        translator.value(of: key)
    }
}

extension PredicateExpressions.KeyPath: FetchExpressionTranslatable, FetchPredicateTranslatable {
    /// `$0.property` (a model key path), `$0.relationship.count` (`@count`), or the value of a
    /// key path of a constant.
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? {
        guard let base = translator.expression(root) else { return nil }
        if case .constant = base {
            return (try? evaluate(PredicateBindings())).flatMap { FetchPredicateConstant.expression($0) }
        }
        switch kind {
        case .collectionCount?:
            guard Root.Output.self is any ManagedObjectCollection.Type else { return nil }
            return FoundationPredicateTranslator.appending("@count", to: base)
        case .some:
            return nil
        case nil:
            guard Root.Output.self is ManagedObject.Type, let name = ManagedKeyPathNames.name(of: keyPath) else {
                return nil
            }
            return FoundationPredicateTranslator.appending(name, to: base)
        }
    }

    /// `$0.relationship.isEmpty`: `relationship.@count == 0`; `$0.string.isEmpty`:
    /// `string == ""`; a Boolean property: `property == YES`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        guard kind == .collectionIsEmpty else {
            return Output.self == Bool.self
                ? fetchExpression(in: translator).map { translator.comparison($0, .equalTo, .constant(true)) } : nil
        }
        guard let base = translator.expression(root), !FoundationPredicateTranslator.isConstant(base) else {
            return nil
        }
        if Root.Output.self == String.self { return translator.comparison(base, .equalTo, .constant("")) }
        guard Root.Output.self is any ManagedObjectCollection.Type,
            let count = FoundationPredicateTranslator.appending("@count", to: base)
        else {
            return nil
        }
        return translator.comparison(count, .equalTo, .constant(0))
    }
}

extension PredicateExpressions.Value: FetchExpressionTranslatable, FetchPredicateTranslatable, PredicateValueHolding {
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? {
        FetchPredicateConstant.expression(value)
    }

    /// A constant `true` or `false`.
    func fetchPredicate(in translator: FoundationPredicateTranslator) -> FetchPredicate? {
        (value as? Bool).map { FetchPredicate(value: $0) }
    }

    var heldValue: Any { value }
}

extension PredicateExpressions.NilLiteral: FetchExpressionTranslatable {
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? { .constant(nil) }
}

extension PredicateExpressions.OptionalFlatMap: FetchExpressionTranslatable {
    /// `$0.relationship?.key`: the key path through the relationship (`nil` when it is `nil`).
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? {
        guard let base = translator.expression(wrapped) else { return nil }
        return translator.binding(variable.key, to: base) { translator.expression(transform) }
    }
}

extension PredicateExpressions.ForcedUnwrap: FetchExpressionTranslatable {
    /// `$0.relationship!.key`: the key path through the relationship.
    func fetchExpression(in translator: FoundationPredicateTranslator) -> FetchExpression? {
        translator.expression(inner)
    }
}

extension PredicateExpressions.NilCoalesce: NilCoalescing {
    var wrappedPart: Any { lhs }
    var fallbackPart: Any { rhs }
}

extension PredicateExpressions.ClosedRange: PredicateRangeNode {
    var lowerPart: Any { lower }
    var upperPart: Any { upper }
    var isClosed: Bool { true }
}

extension PredicateExpressions.Range: PredicateRangeNode {
    var lowerPart: Any { lower }
    var upperPart: Any { upper }
    var isClosed: Bool { false }
}

/// `wrapped ?? fallback`, seen without its types.
protocol NilCoalescing {
    /// The optional expression.
    var wrappedPart: Any { get }
    /// The expression used when it is `nil`.
    var fallbackPart: Any { get }
}

/// A constant of a predicate expression tree, seen without its type.
protocol PredicateValueHolding {
    /// The constant.
    var heldValue: Any { get }
}

/// A range built in a predicate (`low...high`, `low..<high`), seen without its types.
protocol PredicateRangeNode {
    /// The lower bound expression.
    var lowerPart: Any { get }
    /// The upper bound expression.
    var upperPart: Any { get }
    /// Whether the upper bound is included.
    var isClosed: Bool { get }
}

/// A range value captured by a predicate, seen without its type.
protocol RangeBoundsReadable {
    /// The lower bound.
    var lowerBoundValue: Any { get }
    /// The upper bound.
    var upperBoundValue: Any { get }
    /// Whether the upper bound is included.
    var isClosed: Bool { get }
}

extension ClosedRange: RangeBoundsReadable {
    var lowerBoundValue: Any { lowerBound }
    var upperBoundValue: Any { upperBound }
    var isClosed: Bool { true }
}

extension Range: RangeBoundsReadable {
    var lowerBoundValue: Any { lowerBound }
    var upperBoundValue: Any { upperBound }
    var isClosed: Bool { false }
}

/// A to-many relationship's Swift type (`Set<Employee>`, `[Employee]`), whose `count` is `@count`.
protocol ManagedObjectCollection {}
extension Set: ManagedObjectCollection where Element: ManagedObject {}
extension Array: ManagedObjectCollection where Element: ManagedObject {}

/// Converts the Swift values a Foundation predicate captures to predicate constants.
enum FetchPredicateConstant {
    /// A constant expression of `value`, or `nil` when predicates cannot hold it.
    static func expression(_ value: Any) -> FetchExpression? {
        guard let unwrapped = OptionalUnwrapper.unwrap(value) else { return .constant(nil) }
        return convert(unwrapped).map { .constant($0) }
    }

    /// `value` as a predicate constant: numbers, strings, Booleans, dates, data, UUIDs, URLs,
    /// decimals, objects and IDs as they are, raw-representable values as their raw value,
    /// arrays and sets as arrays; `nil` when it is none of these (or is `nil`).
    static func convert(_ value: Any) -> Any? {
        guard let value = OptionalUnwrapper.unwrap(value) else { return nil }
        switch value {
        case is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16, is UInt32, is UInt64,
            is Double, is Float, is Decimal, is String, is Bool, is Date, is Data, is UUID, is URL,
            is ManagedObject, is ManagedObjectID:
            return value
        case let raw as any RawRepresentable:
            return convert(raw.rawValue)
        case let array as [Any]:
            return elements(array)
        case let set as Set<AnyHashable>:
            return elements(Array(set))
        default:
            return nil
        }
    }

    private static func elements(_ values: [Any]) -> [Any]? {
        var converted: [Any] = []
        for value in values {
            guard let element = convert(value) else { return nil }
            converted.append(element)
        }
        return converted
    }
}
