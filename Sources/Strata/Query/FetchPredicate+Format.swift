import Foundation

extension FetchPredicate {
    /// The predicate in Core Data's format syntax.
    public var description: String { predicateFormat }

    /// The predicate in Core Data's format syntax (`salary > 150000 AND (active == YES OR
    /// department.name == "Sales")`), which ``init(format:argumentArray:)`` parses back to the
    /// same predicate.
    ///
    /// Constants print as literals: strings quoted with escapes, dates as
    /// `CAST(<timeIntervalSinceReferenceDate>, "NSDate")` as Core Data prints them, and, in
    /// Strata's own spelling, UUIDs as `CAST("…", "NSUUID")`, URLs as `CAST("…", "NSURL")`,
    /// data as `CAST("<base64>", "NSData")`, decimals as `CAST("…", "NSDecimalNumber")`.
    /// Managed objects and IDs print as `CAST("<URI>", "NSManagedObjectID")`, which does not
    /// parse back: pass them as `%@` arguments. Block predicates print as `BLOCKPREDICATE`.
    public var predicateFormat: String {
        switch node {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .block: return "BLOCKPREDICATE"
        case .and(let all):
            return all.isEmpty ? "TRUEPREDICATE" : all.map(\.operandFormat).joined(separator: " AND ")
        case .or(let any):
            return any.isEmpty ? "FALSEPREDICATE" : any.map(\.operandFormat).joined(separator: " OR ")
        case .not(let inner): return "NOT " + inner.operandFormat
        case .comparison(let comparison):
            var text = ""
            switch comparison.modifier {
            case .direct: break
            case .any: text = "ANY "
            case .all: text = "ALL "
            }
            text += comparison.left.expressionFormat + " " + comparison.operator.rawValue
            if comparison.options.contains(.caseInsensitive) || comparison.options.contains(.diacriticInsensitive) {
                text +=
                    "[" + (comparison.options.contains(.caseInsensitive) ? "c" : "")
                    + (comparison.options.contains(.diacriticInsensitive) ? "d" : "") + "]"
            }
            return text + " " + comparison.right.expressionFormat
        }
    }

    /// The format of the predicate as an operand of AND, OR or NOT: compounds of several
    /// subpredicates in parentheses.
    private var operandFormat: String {
        switch node {
        case .and(let all) where all.count > 1: return "(\(predicateFormat))"
        case .or(let any) where any.count > 1: return "(\(predicateFormat))"
        default: return predicateFormat
        }
    }
}

extension FetchExpression {
    /// The expression in Core Data's format syntax.
    public var expressionFormat: String {
        switch self {
        case .constant(let value): return Self.literal(value)
        case .evaluatedObject: return "SELF"
        case .variable(let name): return "$" + name
        case .aggregate(let elements): return "{" + elements.map(\.expressionFormat).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(collection.expressionFormat), $\(variable), \(predicate.predicateFormat))"
        case .function(let name, let arguments):
            return name + "(" + arguments.map(\.expressionFormat).joined(separator: ", ") + ")"
        case .method(let target, let selector, let arguments):
            return "FUNCTION(" + ([target.expressionFormat, Self.quoted(selector)] + arguments.map(\.expressionFormat))
                .joined(separator: ", ") + ")"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(request.expressionFormat), \(context.expressionFormat), \(countOnly ? "YES" : "NO"))"
        case .keyPath(let path, on: let operand):
            let keys = path.split(separator: ".", omittingEmptySubsequences: false).map { key in
                PredicateParser.reservedWords.contains(key.uppercased()) ? "#" + key : String(key)
            }.joined(separator: ".")
            if case .evaluatedObject = operand { return keys }
            return operand.expressionFormat + "." + keys
        }
    }

    /// The literal that parses back to `value`.
    static func literal(_ value: Any?) -> String {
        guard let value = FetchValue.unwrap(value) else { return "nil" }
        func cast(_ text: String, _ type: String) -> String { "CAST(\(quoted(text)), \"\(type)\")" }
        switch value {
        case let string as String: return quoted(string)
        case let bool as Bool: return bool ? "YES" : "NO"
        case let date as Date: return "CAST(\(number(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case let uuid as UUID: return cast(uuid.uuidString, "NSUUID")
        case let url as URL: return cast(url.absoluteString, "NSURL")
        case let data as Data: return cast(data.base64EncodedString(), "NSData")
        case let object as ManagedObject: return cast(object.objectID.description, "NSManagedObjectID")
        case let id as ManagedObjectID: return cast(id.description, "NSManagedObjectID")
        default: break
        }
        if let numeric = FetchValue.numeric(value) {
            switch numeric {
            case .integer(let integer): return String(integer)
            case .unsigned(let unsigned): return String(unsigned)
            case .floating(let double): return double.isFinite ? number(double) : cast("\(double)", "NSNumber")
            case .decimal(let decimal): return cast("\(decimal)", "NSDecimalNumber")
            }
        }
        if let elements = FetchValue.elements(of: value) {
            return "{" + elements.map(literal).joined(separator: ", ") + "}"
        }
        return quoted("\(value)")
    }

    /// A finite Double that parses back to itself, always with a fraction or exponent.
    private static func number(_ value: Double) -> String {
        let text = "\(value)"
        return text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0"
    }

    /// `text` in double quotes, with quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _
            where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.properties.generalCategory == .format:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
