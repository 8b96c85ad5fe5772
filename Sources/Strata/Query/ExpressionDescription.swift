import Foundation

/// A computed value fetched with dictionary results: a function (count, sum, average, min, max)
/// of a key path over the matching objects, or over each group of ``FetchRequest/propertiesToGroupBy``
/// (Core Data's `NSExpressionDescription` with an `NSExpression(forFunction:arguments:)`).
///
/// Put it in ``FetchRequest/propertiesToFetch``; its ``PropertyDescription/name`` is the key of the
/// value in each result dictionary. Without a ``function`` it fetches the key path's value, as
/// `NSExpression(forKeyPath:)` does. Not `Sendable` beyond its superclass's rules: build it on one
/// thread.
public final class ExpressionDescription: PropertyDescription, @unchecked Sendable {
    /// An aggregate function (Core Data's `count:`, `sum:`, `average:`, `min:`, `max:`).
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// The number of values that are not `nil`.
        case count = "count:"
        /// The sum of the numbers.
        case sum = "sum:"
        /// The mean of the numbers.
        case average = "average:"
        /// The smallest value.
        case min = "min:"
        /// The largest value.
        case max = "max:"
    }

    /// The function computed, or `nil` for the plain value of ``keyPath``.
    public var function: Function?
    /// The key path (through to-one relationships) whose values the function reads.
    public var keyPath: String
    /// The type of the result (Core Data's `expressionResultType`): numbers are converted to it
    /// (`.integer64AttributeType` gives `Int64`, `.doubleAttributeType` gives `Double`, …). The
    /// default, `.undefinedAttributeType`, keeps the natural type: `Int` for counts, `Double`
    /// for averages, the attribute's type for sums of integers, min and max.
    public var expressionResultType: AttributeType

    /// Creates a description named `name` computing `function` over `keyPath`.
    public init(name: String, function: Function?, keyPath: String, resultType: AttributeType = .undefinedAttributeType)
    {
        self.function = function
        self.keyPath = keyPath
        self.expressionResultType = resultType
        super.init()
        self.name = name
    }

    /// Creates a description with no name and the plain value of no key path (Core Data's
    /// `NSExpressionDescription()`): set ``PropertyDescription/name``, ``expression`` and
    /// ``expressionResultType``.
    public override init() {
        function = nil
        keyPath = ""
        expressionResultType = .undefinedAttributeType
        super.init()
    }

    /// The expression computed (Core Data's `expression`): `FetchExpression(forKeyPath:)` for a
    /// key path's value, `FetchExpression.expressionForEvaluatedObject()` for the object (its ID
    /// in a result dictionary), or `FetchExpression(forFunction: "sum:", arguments:
    /// [FetchExpression(forKeyPath: "salary")])` for one of the ``Function``s over a key path.
    ///
    /// - Important: setting another kind of expression stops the program, as Core Data raises
    ///   when such a fetch runs.
    public var expression: FetchExpression? {
        get {
            guard !keyPath.isEmpty else { return nil }
            let path = keyPath == "SELF" ? FetchExpression.evaluatedObject : FetchExpression(forKeyPath: keyPath)
            return function.map { FetchExpression(forFunction: $0.rawValue, arguments: [path]) } ?? path
        }
        set {
            switch newValue {
            case nil:
                (function, keyPath) = (nil, "")
            case .evaluatedObject?:
                (function, keyPath) = (nil, "SELF")
            case .keyPath(let path, .evaluatedObject)?:
                (function, keyPath) = (nil, path)
            case .function(let name, let arguments)?:
                guard let function = Function(rawValue: name), arguments.count == 1,
                    case .keyPath(let path, .evaluatedObject) = arguments[0]
                else {
                    preconditionFailure(
                        "ExpressionDescription.expression: \(name) of \(arguments) is not a function of one key path")
                }
                (self.function, keyPath) = (function, path)
            case let other?:
                preconditionFailure("ExpressionDescription.expression: \(other) is not a key path or a function of one")
            }
        }
    }

    /// How it prints: `total = sum:(salary)`.
    public override var description: String {
        "\(name) = " + (function.map { "\($0.rawValue)(\(keyPath))" } ?? keyPath)
    }

    /// The result of the function over `values` (the key path's value for each object of a group,
    /// `nil` included), converted to ``expressionResultType``.
    func aggregate(_ values: [Any?]) -> Any? {
        let present = values.compactMap { $0 }
        let result: Any?
        switch function {
        case nil:
            result = values.first ?? nil
        case .count:
            result = present.count
        case .sum, .average:
            let numbers = present.compactMap { FetchValue.number($0) }
            if function == .average {
                result = numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
            } else if case let integers = present.compactMap(ValueConversion.integer), integers.count == present.count {
                result = integers.reduce(Int64(0), &+)
            } else {
                result = numbers.reduce(0, +)
            }
        case .min:
            result = present.min { FetchValue.compare($0, $1) == .orderedAscending }
        case .max:
            result = present.max { FetchValue.compare($0, $1) == .orderedAscending }
        }
        return convert(result)
    }

    /// `value` as ``expressionResultType``.
    private func convert(_ value: Any?) -> Any? {
        guard let value, let number = FetchValue.number(value) else { return value }
        switch expressionResultType {
        case .integer16AttributeType: return Int16(exactly: number.rounded(.towardZero)) ?? value
        case .integer32AttributeType: return Int32(exactly: number.rounded(.towardZero)) ?? value
        case .integer64AttributeType:
            if let exact = value as? Int64 { return exact }
            return Int64(exactly: number.rounded(.towardZero)) ?? value
        case .doubleAttributeType: return number
        case .floatAttributeType: return Float(number)
        case .decimalAttributeType:
            if let exact = value as? Decimal { return exact }
            if let integer = ValueConversion.integer(value) { return Decimal(integer) }
            return Decimal(number)
        default: return value
        }
    }
}
