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
}

/// A condition objects of a fetch must meet, built from key comparisons and AND, OR, NOT
/// (Core Data's `NSPredicate`, renamed so it does not clash with Foundation's `Predicate`).
///
/// Keys name attributes or to-one relationships, or are dotted paths through to-one
/// relationships (`department.name`). Use a predicate on one context's queue when it holds
/// managed objects.
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

    let node: Node

    init(_ node: Node) { self.node = node }

    /// A predicate that is always `value` (`TRUEPREDICATE` / `FALSEPREDICATE`).
    public convenience init(value: Bool) { self.init(.constant(value)) }

    /// A comparison of the value at `key` with `value`.
    public convenience init(key: String, _ comparison: ComparisonOperator, _ value: Any?, options: ComparisonOptions = []) {
        self.init(.comparison(Comparison(left: .keyPath(key), operator: comparison, right: .constant(value), options: options)))
    }

    /// All of `subpredicates` (Core Data's `NSCompoundPredicate(andPredicateWithSubpredicates:)`).
    public convenience init(andPredicateWithSubpredicates subpredicates: [FetchPredicate]) { self.init(.and(subpredicates)) }

    /// Any of `subpredicates`.
    public convenience init(orPredicateWithSubpredicates subpredicates: [FetchPredicate]) { self.init(.or(subpredicates)) }

    /// The negation of `subpredicate`.
    public convenience init(notPredicateWithSubpredicate subpredicate: FetchPredicate) { self.init(.not(subpredicate)) }

    /// Whether `object` meets the predicate (Core Data's `evaluate(with:)`).
    ///
    /// A key the object does not have makes a comparison false.
    public func evaluate(with object: ManagedObject) -> Bool {
        evaluate { key in try? FetchPredicate.value(atKeyPath: key, of: object) }
    }

    /// Evaluates the predicate with `lookup` giving the value of each key path.
    func evaluate(_ lookup: (String) -> Any?) -> Bool {
        switch node {
        case .constant(let value): return value
        case .and(let all): return all.allSatisfy { $0.evaluate(lookup) }
        case .or(let any): return any.contains { $0.evaluate(lookup) }
        case .not(let inner): return !inner.evaluate(lookup)
        case .block: return false
        case .comparison(let comparison):
            guard case .keyPath(let key, on: .evaluatedObject) = comparison.left, case .constant(let value) = comparison.right else { return false }
            return Self.compare(lookup(key), comparison.operator, value, options: comparison.options)
        }
    }

    /// Every key path the predicate reads.
    var keyPaths: Set<String> {
        switch node {
        case .constant: return []
        case .and(let all), .or(let all): return all.reduce(into: Set<String>()) { $0.formUnion($1.keyPaths) }
        case .not(let inner): return inner.keyPaths
        case .block: return []
        case .comparison(let comparison):
            guard case .keyPath(let key, on: .evaluatedObject) = comparison.left else { return [] }
            return [key]
        }
    }

    /// The value at a dotted key path of `object`, through to-one relationships.
    static func value(atKeyPath path: String, of object: ManagedObject) throws -> Any? {
        var current: Any? = object
        for key in path.split(separator: ".") {
            guard let object = current as? ManagedObject else { return nil }
            current = try object.value(forKey: String(key))
        }
        return current
    }

    private static func compare(_ left: Any?, _ comparison: ComparisonOperator, _ right: Any?, options: ComparisonOptions) -> Bool {
        let caseInsensitive = options.contains(.caseInsensitive)
        func text(_ value: Any?) -> String? {
            guard var string = value as? String else { return nil }
            if options.contains(.diacriticInsensitive) { string = string.folding(options: .diacriticInsensitive, locale: nil) }
            if caseInsensitive { string = string.lowercased() }
            return string
        }
        switch comparison {
        case .equalTo: return FetchValue.equal(left, right, caseInsensitive: caseInsensitive)
        case .notEqualTo: return !FetchValue.equal(left, right, caseInsensitive: caseInsensitive)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard left != nil, right != nil else { return false }
            let order = FetchValue.compare(left, right, caseInsensitive: caseInsensitive)
            switch comparison {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqualTo: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .in:
            let elements = (right as? [Any]) ?? (right as? Set<AnyHashable>).map { Array($0) as [Any] } ?? []
            return elements.contains { FetchValue.equal(left, $0, caseInsensitive: caseInsensitive) }
        case .between:
            guard let bounds = right as? [Any], bounds.count == 2, left != nil else { return false }
            return FetchValue.compare(left, bounds[0]) != .orderedAscending && FetchValue.compare(left, bounds[1]) != .orderedDescending
        case .contains, .beginsWith, .endsWith, .like, .matches:
            guard let string = text(left), let part = text(right) else { return false }
            switch comparison {
            case .contains: return part.isEmpty || string.contains(part)
            case .beginsWith: return string.hasPrefix(part)
            default: return string.hasSuffix(part)
            }
        }
    }

    /// The predicate in Core Data's format syntax.
    public var description: String { predicateFormat }

    /// The predicate in Core Data's format syntax (`salary > 150000 AND active == YES`).
    public var predicateFormat: String {
        switch node {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let all): return all.isEmpty ? "TRUEPREDICATE" : all.map { "(\($0.predicateFormat))" }.joined(separator: " AND ")
        case .or(let any): return any.isEmpty ? "FALSEPREDICATE" : any.map { "(\($0.predicateFormat))" }.joined(separator: " OR ")
        case .not(let inner): return "NOT (\(inner.predicateFormat))"
        case .block: return "BLOCKPREDICATE"
        case .comparison(let c):
            guard case .keyPath(let key, on: .evaluatedObject) = c.left, case .constant(let value) = c.right else { return "?" }
            let comparison = c.operator, options = c.options
            var modifier = ""
            if !options.isEmpty { modifier = "[" + (options.contains(.caseInsensitive) ? "c" : "") + (options.contains(.diacriticInsensitive) ? "d" : "") + "]" }
            return "\(key) \(comparison.rawValue)\(modifier) \(Self.literal(value))"
        }
    }

    private static func literal(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let string as String: return "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case let bool as Bool: return bool ? "YES" : "NO"
        case let array as [Any]: return "{" + array.map(literal).joined(separator: ", ") + "}"
        case let object as ManagedObject: return object.objectID.description
        case let value?: return "\(value)"
        }
    }
}

/// Core Data's `NSCompoundPredicate` spelling: `CompoundPredicate(andPredicateWithSubpredicates:)`.
public typealias CompoundPredicate = FetchPredicate
