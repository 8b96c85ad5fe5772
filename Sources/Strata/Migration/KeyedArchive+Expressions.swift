import Foundation

extension KeyedArchive {
    /// How deep archived expressions may nest.
    private static let maximumExpressionDepth = 100

    /// The expression an archived `NSExpression` is, read from its keyed-archive fields
    /// (`NSConstantValue`, `NSVariable`, `NSOperand`, `NSSelectorName`, `NSArguments`,
    /// `NSKeyPath`, `NSCollection`, `NSFRExpression`, `NSMOCExpression`, `NSCountOnlyFlag`).
    ///
    /// A key path expression (`$source.name`, `name`) becomes
    /// ``FetchExpression/keyPath(_:on:)``; a function of Foundation's (`sum:`, `now`), whose
    /// operand is Foundation's function class, ``FetchExpression/function(_:arguments:)``; any
    /// other function ``FetchExpression/method(of:selectorName:arguments:)``.
    ///
    /// - Throws: ``ModelError`` `invalidValue` for an expression class Strata does not read or
    ///   a malformed expression.
    func expression(_ reference: PropertyListValue) throws -> FetchExpression {
        var budget = Self.maximumResolutions
        return try expression(reference, depth: 0, budget: &budget)
    }

    /// The expression an archived `NSExpression` is, as ``expression(_:)``, its nodes and values
    /// resolving at most `budget` more references.
    private func expression(_ reference: PropertyListValue, depth: Int, budget: inout Int) throws -> FetchExpression {
        guard depth < Self.maximumExpressionDepth else {
            throw failure("expressions nest deeper than \(Self.maximumExpressionDepth)")
        }
        guard budget > 0 else {
            throw failure("an expression of more than \(Self.maximumResolutions) objects (its parts refer to each other over and over)")
        }
        budget -= 1
        guard let object = try object(reference) else { throw failure("no expression where one belongs") }
        func field(_ key: String) throws -> FetchExpression {
            guard let field = object[key] else { throw failure("\(object.className) without \(key)") }
            return try expression(field, depth: depth + 1, budget: &budget)
        }
        func value(_ field: PropertyListValue) throws -> Any? { try self.value(field, depth: 0, budget: &budget) }
        func string(_ key: String) throws -> String {
            guard let text = try object[key].flatMap({ try value($0) }) as? String else {
                throw failure("\(object.className) without the string \(key)")
            }
            return text
        }
        switch object.className {
        case "NSConstantValueExpression":
            return .constant(try object["NSConstantValue"].flatMap { try value($0) })
        case "NSSelfExpression":
            return .evaluatedObject
        case "NSVariableExpression":
            return .variable(try string("NSVariable"))
        case "NSKeyPathSpecifierExpression":
            return .constant(try string("NSKeyPath"))
        case "NSAggregateExpression":
            return .aggregate(
                try references(object["NSCollection"]).map { try expression($0, depth: depth + 1, budget: &budget) })
        case "NSFetchRequestExpression":
            let countOnly = try object["NSCountOnlyFlag"].flatMap { try value($0) } as? Bool ?? false
            return .fetch(
                request: try field("NSFRExpression"), context: try field("NSMOCExpression"), countOnly: countOnly)
        case "NSFunctionExpression", "NSKeyPathExpression":
            let selector = try string("NSSelectorName")
            let arguments = try references(object["NSArguments"]).map {
                try expression($0, depth: depth + 1, budget: &budget)
            }
            // Foundation's own functions have its function class as their operand: a constant
            // no archive holds a value of. Anything else is the target of a method.
            var target: FetchExpression?
            if let operand = object["NSOperand"] {
                if try self.object(operand)?.className == "NSConstantValueExpression" {
                    target = try? expression(operand, depth: depth + 1, budget: &budget)
                } else {
                    target = try expression(operand, depth: depth + 1, budget: &budget)
                }
            }
            if selector == "valueForKeyPath:", arguments.count == 1,
                case .constant(let path as String)? = arguments.first
            {
                return .keyPath(path, on: target ?? .evaluatedObject)
            }
            guard let target, !target.isConstant else { return .function(selector, arguments: arguments) }
            return .method(of: target, selectorName: selector, arguments: arguments)
        default:
            throw failure("an expression of the class \(object.className), which Strata does not read")
        }
    }
}

extension FetchExpression {
    /// Whether this is a constant expression.
    fileprivate var isConstant: Bool {
        if case .constant = self { return true }
        return false
    }
}
