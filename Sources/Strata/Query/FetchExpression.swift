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
    /// The method `selectorName` of the value of `target`, called with the arguments' values
    /// (`FUNCTION($source, "valueForKey:", "name")`,
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.friends)`);
    /// see ``init(forFunction:selectorName:arguments:)``.
    case method(of: FetchExpression, selectorName: String, arguments: [FetchExpression])
    /// The objects the fetch request `request` evaluates to, fetched in the context `context`
    /// evaluates to, or their count (Core Data's `NSFetchRequestExpression`:
    /// `FETCH(request, context, countOnly)`); see ``FetchRequestExpression``.
    case fetch(request: FetchExpression, context: FetchExpression, countOnly: Bool)

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

    /// A method of `target`, called with `parameters` (Core Data's
    /// `NSExpression(forFunction:selectorName:arguments:)`).
    ///
    /// On Linux there is no Objective-C runtime to call any selector: `valueForKey:` and
    /// `valueForKeyPath:` read a key of any value Strata reads keys of, and every other selector
    /// is answered by a target that conforms to ``ExpressionFunctionTarget`` (a migration's
    /// `$manager` and `$entityPolicy`).
    ///
    /// - Parameters:
    ///   - target: an expression, or a constant.
    ///   - name: the selector, with its colons (`"valueForKey:"`).
    ///   - parameters: expressions, or constants.
    public init(forFunction target: Any, selectorName name: String, arguments parameters: [Any]?) {
        func expression(_ value: Any) -> FetchExpression {
            value as? FetchExpression ?? .constant(FetchValue.unwrap(value))
        }
        self = .method(of: expression(target), selectorName: name, arguments: (parameters ?? []).map(expression))
    }

    /// The name of a function expression (the selector of a method); `nil` for others.
    public var function: String? {
        switch self {
        case .function(let name, _), .method(_, let name, _): return name
        default: return nil
        }
    }

    /// The arguments of a function expression; `nil` for others.
    public var arguments: [FetchExpression]? {
        switch self {
        case .function(_, let arguments), .method(_, _, let arguments): return arguments
        default: return nil
        }
    }

    /// What a key path or method is read from (Core Data's `operand`); `nil` for others.
    public var operand: FetchExpression? {
        switch self {
        case .keyPath(_, let operand), .method(let operand, _, _): return operand
        default: return nil
        }
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

    /// The value of the expression for `object`, `nil` when a key cannot be read.
    public func expressionValue(with object: Any?) -> Any? {
        expressionValue(with: object, variables: [:])
    }

    /// The value of the expression for `object` (Core Data's `expressionValue(with:context:)`),
    /// with `context`'s entries as the variables (`$source` is `context["source"]`); `nil` when
    /// a key cannot be read.
    public func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var variables: [String: Any] = [:]
        for case (let key as String, let value) in context ?? [:] { variables[key] = value }
        return expressionValue(with: object, variables: variables)
    }

    /// The value of the expression for `object` with `variables` bound, `nil` when a key cannot
    /// be read.
    func expressionValue(with object: Any?, variables: [String: Any]) -> Any? {
        let evaluation = PredicateEvaluation(valueForKey: FetchPredicate.value(of:forKey:), substitutionVariables: nil)
        return try? evaluation.value(self, object: object, bindings: variables)
    }
}
