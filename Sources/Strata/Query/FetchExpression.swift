import Foundation

/// A value in a predicate: a constant, the evaluated object, a key path, a substitution
/// variable, an aggregate or a subquery (Core Data's `NSExpression`, renamed so it does not
/// clash with Foundation's `Expression`).
public indirect enum FetchExpression {
    /// A constant value (`42`, `"text"`, `nil`, a date, a managed object or its ID).
    case constant(Any?)
    /// The object being evaluated (`SELF`).
    case evaluatedObject
    /// A dotted key path (`department.name`, `employees.@count`, `@sum.salary`) read from
    /// `operand`, by default the evaluated object.
    case keyPath(String, on: FetchExpression = .evaluatedObject)
    /// A substitution variable (`$NAME`), replaced by ``FetchPredicate/withSubstitutionVariables(_:)``,
    /// or a subquery's iteration variable.
    case variable(String)
    /// A collection of expressions (`{1, 2, 3}`).
    case aggregate([FetchExpression])
    /// The elements of `collection` that meet `predicate`, each bound to `variable`
    /// (`SUBQUERY(employees, $e, $e.salary > 10)`).
    case subquery(collection: FetchExpression, variable: String, predicate: FetchPredicate)
}
