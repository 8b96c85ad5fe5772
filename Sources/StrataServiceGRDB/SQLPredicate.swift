import Foundation
import GRDB
import Strata
import StrataService

/// A Core Data predicate as an SQL condition with its arguments: what a GRDB user serving the
/// same API writes. `Sendable`.
///
/// The predicate is parsed by Strata's parser (`FetchPredicate(checkedFormat:)`), so both
/// backends accept the same syntax and report the same parse errors; the translation covers
/// comparisons of an attribute with constants (`==`, `!=`, `<`, `<=`, `>`, `>=`, `BEGINSWITH`,
/// `CONTAINS`, `ENDSWITH`, `IN`, `BETWEEN`, with `[c]`), `AND`, `OR`, `NOT`, `TRUEPREDICATE`
/// and `FALSEPREDICATE`; anything else is a bad request naming what is not translated.
struct SQLPredicate: Sendable {
    /// The condition, with `?` for each argument.
    let sql: String
    /// The values of the `?`s, in order.
    let arguments: StatementArguments

    /// Translates `format` over the columns `columns`.
    ///
    /// - Throws: ``ServiceError`` `badRequest` with the parser's message for a malformed
    ///   format, or naming the part that has no translation or the key that is no column.
    init(format: String, columns: Set<String>) throws(ServiceError) {
        let predicate: FetchPredicate
        do {
            predicate = try FetchPredicate(checkedFormat: format, argumentArray: nil)
        } catch {
            throw ServiceError(.badRequest, error.description)
        }
        var values: [(any DatabaseValueConvertible)?] = []
        sql = try Self.condition(predicate, columns: columns, values: &values)
        arguments = StatementArguments(values)
    }

    /// The SQL of `predicate`, appending its arguments to `values`.
    private static func condition(
        _ predicate: FetchPredicate, columns: Set<String>, values: inout [(any DatabaseValueConvertible)?]
    ) throws(ServiceError) -> String {
        if let type = predicate.compoundPredicateType {
            var parts: [String] = []
            for part in predicate.subpredicates { parts.append(try condition(part, columns: columns, values: &values)) }
            switch type {
            case .and: return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
            case .or: return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
            case .not: return "NOT (\(parts[0]))"
            }
        }
        guard let comparison = predicate.predicateOperatorType, let left = predicate.leftExpression,
            let right = predicate.rightExpression
        else {
            // Neither compound nor comparison: TRUEPREDICATE or FALSEPREDICATE.
            return predicate.evaluate(with: nil) ? "1" : "0"
        }
        guard predicate.comparisonPredicateModifier == .direct || predicate.comparisonPredicateModifier == nil else {
            throw unsupported(predicate, "ANY and ALL")
        }
        let key: String
        let constant: Any?
        let operation: ComparisonOperator
        if let name = left.keyPath, right.keyPath == nil, right.function == nil {
            (key, constant, operation) = (name, right.constantValue, comparison)
        } else if let name = right.keyPath, left.keyPath == nil, left.function == nil,
            let flipped = comparison.flipped
        {
            (key, constant, operation) = (name, left.constantValue, flipped)
        } else {
            throw unsupported(predicate, "comparisons other than an attribute with a constant")
        }
        guard columns.contains(key) else {
            throw ServiceError(
                .badRequest,
                "the predicate names \(key), which is not one of \(columns.sorted().joined(separator: ", "))")
        }
        let caseless = predicate.options.contains(.caseInsensitive)
        let column = caseless ? "lower(\(key))" : key
        let argument = caseless ? "lower(?)" : "?"
        func bind(_ value: Any?) throws(ServiceError) {
            guard let converted = databaseValue(value) else {
                throw unsupported(predicate, "the constant \(value.map { "\($0)" } ?? "nil")")
            }
            values.append(converted)
        }
        switch operation {
        case .equalTo, .notEqualTo:
            if constant == nil || constant is NSNull {
                return operation == .equalTo ? "\(key) IS NULL" : "\(key) IS NOT NULL"
            }
            try bind(constant)
            return "\(column) \(operation == .equalTo ? "=" : "<>") \(argument)"
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            try bind(constant)
            return "\(column) \(operation.rawValue) \(argument)"
        case .beginsWith:
            try bind(constant)
            try bind(constant)
            return "substr(\(column), 1, length(?)) = \(argument)"
        case .endsWith:
            try bind(constant)
            try bind(constant)
            return "substr(\(column), -length(?)) = \(argument)"
        case .contains:
            try bind(constant)
            return "instr(\(column), \(argument)) > 0"
        case .in:
            guard let elements = constant as? [Any], !elements.isEmpty else {
                throw unsupported(predicate, "IN without a list of constants")
            }
            for element in elements { try bind(element) }
            return "\(column) IN (" + Array(repeating: argument, count: elements.count).joined(separator: ", ") + ")"
        case .between:
            guard let bounds = constant as? [Any], bounds.count == 2 else {
                throw unsupported(predicate, "BETWEEN without two constants")
            }
            try bind(bounds[0])
            try bind(bounds[1])
            return "\(column) BETWEEN \(argument) AND \(argument)"
        case .like, .matches:
            throw unsupported(predicate, operation.rawValue)
        }
    }

    /// The bad request for a predicate part the translation does not cover.
    private static func unsupported(_ predicate: FetchPredicate, _ what: String) -> ServiceError {
        ServiceError(.badRequest, "the GRDB backend does not translate \(what) (in \(predicate))")
    }

    /// `value` as SQLite stores it, or `nil` for a value of no column type (and for `nil`).
    private static func databaseValue(_ value: Any?) -> (any DatabaseValueConvertible)? {
        switch value {
        case let value as Bool: value
        case let value as Int: value
        case let value as Int64: value
        case let value as Double: value
        case let value as String: value
        case let value as Date: value
        case let value as Data: value
        case let value as NSNumber: value.doubleValue
        default: nil
        }
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`5 < salary` is `salary > 5`); `nil` when the
    /// operator has no mirror.
    var flipped: ComparisonOperator? {
        switch self {
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        case .equalTo: .equalTo
        case .notEqualTo: .notEqualTo
        default: nil
        }
    }
}
