import Foundation

/// A value in a predicate: a constant, the evaluated object, a key path, a substitution
/// variable, an aggregate or a subquery (Core Data's `NSExpression`, renamed so it does not
/// clash with Foundation's `Expression`). Not `Sendable`: a constant may be a managed object.
public indirect enum FetchExpression {
    /// A constant value (`42`, `"text"`, `nil`, a date, a managed object or its ID, an array
    /// or set). The parser makes `{1, 2, 3}` of constants an array constant.
    case constant(Any?)
    /// The object being evaluated (`SELF`).
    case evaluatedObject
    /// A dotted key path (`department.name`, `employees.@count`, `@sum.salary`) read from
    /// `operand`, by default the evaluated object.
    case keyPath(String, on: FetchExpression = .evaluatedObject)
    /// A substitution variable (`$NAME`), replaced by ``FetchPredicate/withSubstitutionVariables(_:)``,
    /// or a subquery's iteration variable.
    case variable(String)
    /// A collection of expressions (`{1, 2, $x}`).
    case aggregate([FetchExpression])
    /// The elements of `collection` that meet `predicate`, each bound to `variable`
    /// (`SUBQUERY(employees, $e, $e.salary > 10)`).
    case subquery(collection: FetchExpression, variable: String, predicate: FetchPredicate)
    /// A function of its arguments' values (`now()`, `lowercase:(name)`, `sum:(items.price)`);
    /// see ``init(forFunction:arguments:)`` for the functions Strata evaluates.
    case function(String, arguments: [FetchExpression])

    /// A key path read from the evaluated object (Core Data's `NSExpression(forKeyPath:)`).
    public init(forKeyPath keyPath: String) { self = .keyPath(keyPath) }

    /// A constant (Core Data's `NSExpression(forConstantValue:)`).
    public init(forConstantValue value: Any?) { self = .constant(FetchValue.unwrap(value)) }

    /// A substitution variable (Core Data's `NSExpression(forVariable:)`).
    public init(forVariable name: String) { self = .variable(name) }

    /// A collection of expressions (Core Data's `NSExpression(forAggregate:)`).
    public init(forAggregate elements: [FetchExpression]) { self = .aggregate(elements) }

    /// A subquery (Core Data's `NSExpression(forSubquery:usingIteratorVariable:predicate:)`).
    public init(
        forSubquery collection: FetchExpression, usingIteratorVariable variable: String, predicate: FetchPredicate
    ) {
        self = .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// A function of `arguments` (Core Data's `NSExpression(forFunction:arguments:)`).
    ///
    /// Evaluated: `now` (the current date), `lowercase:`, `uppercase:` and `canonical:` (case
    /// and diacritics folded) of a string, and `count:`, `sum:`, `min:`, `max:` and `average:` of
    /// a collection; any other name evaluates to no value. Fetch predicates evaluate functions on
    /// realized objects only.
    ///
    /// - Parameters:
    ///   - name: the function's name, with its colon when it takes arguments (`"lowercase:"`).
    ///   - arguments: its arguments.
    public init(forFunction name: String, arguments: [FetchExpression]) {
        self = .function(name, arguments: arguments)
    }

    /// The name of a function expression; `nil` for others.
    public var function: String? {
        guard case .function(let name, _) = self else { return nil }
        return name
    }

    /// The arguments of a function expression; `nil` for others.
    public var arguments: [FetchExpression]? {
        guard case .function(_, let arguments) = self else { return nil }
        return arguments
    }

    /// The evaluated object, `SELF` (Core Data's `NSExpression.expressionForEvaluatedObject()`).
    public static func expressionForEvaluatedObject() -> FetchExpression { .evaluatedObject }

    /// The key path of a key path expression; `nil` for others.
    public var keyPath: String? {
        guard case .keyPath(let path, _) = self else { return nil }
        return path
    }

    /// The value of a constant expression; `nil` for others.
    public var constantValue: Any? {
        guard case .constant(let value) = self else { return nil }
        return value
    }

    /// The name of a variable expression; `nil` for others.
    public var variable: String? {
        guard case .variable(let name) = self else { return nil }
        return name
    }

    /// The value of the expression for `object` (Core Data's `expressionValue(with:context:)`),
    /// `nil` when a key cannot be read.
    public func expressionValue(with object: Any?) -> Any? {
        let evaluation = PredicateEvaluation(valueForKey: FetchPredicate.value(of:forKey:), substitutionVariables: nil)
        return try? evaluation.value(self, object: object, bindings: [:])
    }
}
