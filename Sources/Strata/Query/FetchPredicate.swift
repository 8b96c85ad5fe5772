import Foundation

/// How a comparison predicate compares (Core Data's `NSComparisonPredicate.Operator`).
public enum ComparisonOperator: String, Sendable, Hashable {
    /// `<`
    case lessThan = "<"
    /// `<=`
    case lessThanOrEqualTo = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=`
    case greaterThanOrEqualTo = ">="
    /// `==`
    case equalTo = "=="
    /// `!=`
    case notEqualTo = "!="
    /// The value is one of a collection's elements.
    case `in` = "IN"
    /// A string contains another.
    case contains = "CONTAINS"
    /// A string starts with another.
    case beginsWith = "BEGINSWITH"
    /// A string ends with another.
    case endsWith = "ENDSWITH"
    /// The value lies between the two elements of an array, inclusive.
    case between = "BETWEEN"
    /// A string matches a wildcard pattern (`*` any run of characters, `?` one character).
    case like = "LIKE"
    /// A string matches a regular expression as a whole.
    case matches = "MATCHES"
}

/// How a comparison treats a collection on its left (Core Data's `NSComparisonPredicate.Modifier`).
public enum ComparisonModifier: Sendable, Hashable {
    /// Compare the values themselves.
    case direct
    /// True when every element compares true (`ALL`).
    case all
    /// True when some element compares true (`ANY`, `SOME`).
    case any
}

/// String comparison options (Core Data's `[c]` and `[d]`).
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates options from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Ignore case (`[c]`).
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// Ignore diacritics (`[d]`).
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// The strings are already normalized (`[n]`); accepted and ignored.
    public static let normalized = ComparisonOptions(rawValue: 4)
}

/// A condition objects of a fetch must meet, built from a format string, from comparisons and
/// AND, OR, NOT in code, or from a closure (Core Data's `NSPredicate`, `NSComparisonPredicate`
/// and `NSCompoundPredicate` in one class, renamed so it does not clash with Foundation's
/// `Predicate`).
///
/// ```swift
/// let rich = try FetchPredicate(checkedFormat: "salary > %d AND department.name BEGINSWITH[c] %@", 100_000, "r")
/// ```
///
/// Key paths go through to-one relationships (`department.name`), over to-many ones with `ANY`,
/// `ALL`, `NONE`, collection operators (`employees.@count`, `employees.@avg.salary`) and
/// `SUBQUERY`. Not `Sendable`: a predicate may hold managed objects; use it on one context's queue
/// when it does.
public final class FetchPredicate: CustomStringConvertible {
    enum Node {
        case constant(Bool)
        case comparison(Comparison)
        case and([FetchPredicate])
        case or([FetchPredicate])
        case not(FetchPredicate)
        /// A condition computed by a closure (Core Data's `NSPredicate(block:)`; also what a
        /// Foundation `#Predicate` part that has no format equivalent becomes). Never planned
        /// on an index: evaluated in memory on realized objects.
        case block((Any?, [String: Any]?) -> Bool)
    }

    /// A comparison of two expressions.
    struct Comparison {
        var left: FetchExpression
        var `operator`: ComparisonOperator
        var right: FetchExpression
        var modifier: ComparisonModifier = .direct
        var options: ComparisonOptions = []
    }

    /// How a compound predicate combines its subpredicates (Core Data's
    /// `NSCompoundPredicate.LogicalType`).
    public enum LogicalType: Sendable, Hashable {
        /// The negation of the one subpredicate.
        case not
        /// All subpredicates.
        case and
        /// Any subpredicate.
        case or
    }

    let node: Node

    /// The format string this predicate was parsed from, with key path offsets (root only).
    var source: PredicateSource?

    init(_ node: Node) { self.node = node }

    /// Parses a predicate format string (Core Data's `NSPredicate(format:_:)`), taking the
    /// values of `%@`, `%K`, `%d`, `%f`, … from `arguments` in order.
    ///
    /// `%@` takes any value: strings, numbers, dates, UUIDs, URLs, data, managed objects and
    /// IDs, arrays and sets (for `IN`, `BETWEEN`), and `NSNull()` for `nil`. `%K` takes a key path.
    ///
    /// - Important: A malformed format, or an argument that is missing or of the wrong kind,
    ///   stops the process with the parse error, where Core Data raises an exception. Parse
    ///   formats that come from outside the program (a user, a file, the network) with
    ///   ``init(checkedFormat:_:)``, which throws instead.
    public convenience init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Parses a predicate format string, taking the values of format specifiers from
    /// `argumentArray` (Core Data's `NSPredicate(format:argumentArray:)`); as
    /// ``init(format:_:)``, a malformed format stops the process.
    public convenience init(format: String, argumentArray: [Any]?) {
        do {
            try self.init(checkedFormat: format, argumentArray: argumentArray)
        } catch {
            fatalError("FetchPredicate(format:): \(error)")
        }
    }

    /// Parses a predicate format string as ``init(format:_:)`` does, throwing on a malformed one:
    /// for formats from outside the program.
    ///
    /// - Throws: ``FetchPredicateError`` with the offset in `format` when the format is malformed
    ///   or an argument is missing or of the wrong kind.
    public convenience init(checkedFormat format: String, _ arguments: Any...) throws(FetchPredicateError) {
        try self.init(checkedFormat: format, argumentArray: arguments)
    }

    /// Parses a predicate format string as ``init(format:argumentArray:)`` does, throwing on a
    /// malformed one: for formats from outside the program.
    ///
    /// - Throws: ``FetchPredicateError`` as ``init(checkedFormat:_:)``.
    public convenience init(checkedFormat format: String, argumentArray: [Any]?) throws(FetchPredicateError) {
        let parsed = try PredicateParser.parse(format, arguments: argumentArray ?? [])
        self.init(parsed.node)
        source = parsed.source
    }

    /// A predicate that is always `value` (`TRUEPREDICATE` / `FALSEPREDICATE`).
    public convenience init(value: Bool) { self.init(.constant(value)) }

    /// A predicate computed by `block` from the evaluated object and the substitution variables
    /// (Core Data's `NSPredicate(block:)`). A fetch evaluates it on realized objects.
    public convenience init(block: @escaping (Any?, [String: Any]?) -> Bool) { self.init(.block(block)) }

    /// A comparison of the value at `key` with `value`.
    public convenience init(
        key: String, _ comparison: ComparisonOperator, _ value: Any?, options: ComparisonOptions = []
    ) {
        self.init(
            .comparison(
                Comparison(
                    left: .keyPath(key), operator: comparison, right: .constant(FetchValue.unwrap(value)),
                    options: options)))
    }

    /// A comparison of two expressions (Core Data's
    /// `NSComparisonPredicate(leftExpression:rightExpression:modifier:type:options:)`).
    public convenience init(
        leftExpression: FetchExpression, rightExpression: FetchExpression, modifier: ComparisonModifier = .direct,
        type: ComparisonOperator, options: ComparisonOptions = []
    ) {
        self.init(
            .comparison(
                Comparison(
                    left: leftExpression, operator: type, right: rightExpression, modifier: modifier, options: options))
        )
    }

    /// All of `subpredicates` (Core Data's `NSCompoundPredicate(andPredicateWithSubpredicates:)`);
    /// true when there are none.
    public convenience init(andPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.init(.and(subpredicates))
    }

    /// Any of `subpredicates`; false when there are none.
    public convenience init(orPredicateWithSubpredicates subpredicates: [FetchPredicate]) {
        self.init(.or(subpredicates))
    }

    /// The negation of `subpredicate`.
    public convenience init(notPredicateWithSubpredicate subpredicate: FetchPredicate) { self.init(.not(subpredicate)) }

    /// A compound predicate of `type` (Core Data's `NSCompoundPredicate(type:subpredicates:)`);
    /// `.not` takes exactly one subpredicate.
    public convenience init(type: LogicalType, subpredicates: [FetchPredicate]) {
        switch type {
        case .and: self.init(.and(subpredicates))
        case .or: self.init(.or(subpredicates))
        case .not:
            precondition(subpredicates.count == 1, "a NOT predicate takes exactly one subpredicate")
            self.init(.not(subpredicates[0]))
        }
    }

    // MARK: Core Data accessors

    /// The left expression of a comparison predicate; `nil` for other predicates.
    public var leftExpression: FetchExpression? {
        guard case .comparison(let comparison) = node else { return nil }
        return comparison.left
    }

    /// The right expression of a comparison predicate; `nil` for other predicates.
    public var rightExpression: FetchExpression? {
        guard case .comparison(let comparison) = node else { return nil }
        return comparison.right
    }

    /// The operator of a comparison predicate; `nil` for other predicates.
    public var predicateOperatorType: ComparisonOperator? {
        guard case .comparison(let comparison) = node else { return nil }
        return comparison.operator
    }

    /// The modifier (`ANY`, `ALL`) of a comparison predicate; `nil` for other predicates.
    public var comparisonPredicateModifier: ComparisonModifier? {
        guard case .comparison(let comparison) = node else { return nil }
        return comparison.modifier
    }

    /// The string options of a comparison predicate; empty for other predicates.
    public var options: ComparisonOptions {
        guard case .comparison(let comparison) = node else { return [] }
        return comparison.options
    }

    /// How a compound predicate combines its subpredicates; `nil` for other predicates.
    public var compoundPredicateType: LogicalType? {
        switch node {
        case .and: .and
        case .or: .or
        case .not: .not
        default: nil
        }
    }

    /// The subpredicates of a compound predicate; empty for other predicates.
    public var subpredicates: [FetchPredicate] {
        switch node {
        case .and(let all), .or(let all): all
        case .not(let inner): [inner]
        default: []
        }
    }
}

/// Core Data's `NSCompoundPredicate` spelling: `CompoundPredicate(andPredicateWithSubpredicates:)`.
public typealias CompoundPredicate = FetchPredicate

/// Core Data's `NSComparisonPredicate` spelling:
/// `ComparisonPredicate(leftExpression:rightExpression:modifier:type:options:)`.
public typealias ComparisonPredicate = FetchPredicate
