import Foundation

/// Where a parsed predicate came from: the format string and the offset of each key path in
/// it, for validation errors.
struct PredicateSource {
    /// The format string.
    var format: String
    /// The offset of the first occurrence of each key path, keyed as
    /// ``FetchPredicate/sourceKey(_:on:)`` spells it.
    var keyPathOffsets: [String: Int]
}

/// A recursive-descent parser for the NSPredicate format grammar.
///
/// Precedence from loosest to tightest: `OR`, `AND`, `NOT`, comparisons. Nesting (parentheses,
/// `NOT`, aggregates, subqueries) is limited to ``maximumDepth`` levels so no input can
/// exhaust the stack.
struct PredicateParser {
    /// How deeply predicates and expressions may nest.
    static let maximumDepth = 100

    /// The words that are keywords in any case; a key spelled like one is written `#word`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "BETWEEN", "ANY", "SOME",
        "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE", "YES", "NO", "TRUE", "FALSE", "NIL", "NULL", "SELF",
        "SUBQUERY", "CAST", "FUNCTION", "FETCH", "FIRST", "LAST", "SIZE",
    ]

    /// The collection operators a key path may contain.
    static let collectionOperators: Set<String> = ["count", "sum", "avg", "min", "max"]

    private let tokens: [PredicateToken]
    private let format: String
    private let arguments: [Any]
    private var index = 0
    private var argumentIndex = 0
    private var depth = 0
    private var keyPathOffsets: [String: Int] = [:]

    private init(format: String, arguments: [Any]) throws(FetchPredicateError) {
        self.format = format
        self.arguments = arguments
        tokens = try PredicateLexer.tokens(of: format)
    }

    /// Parses `format`, taking format specifiers' values from `arguments` in order.
    static func parse(_ format: String, arguments: [Any]) throws(FetchPredicateError) -> FetchPredicate {
        var parser = try PredicateParser(format: format, arguments: arguments)
        let predicate = try parser.predicate()
        guard parser.current.kind == .end else { throw parser.error("unexpected \(parser.describe(parser.current))") }
        predicate.source = PredicateSource(format: format, keyPathOffsets: parser.keyPathOffsets)
        return predicate
    }

    /// Parses `format` as one expression (a key path, a constant, a `$variable`, an aggregate,
    /// a subquery or a cast), taking format specifiers' values from `arguments` in order.
    static func parseExpression(_ format: String, arguments: [Any]) throws(FetchPredicateError) -> FetchExpression {
        var parser = try PredicateParser(format: format, arguments: arguments)
        let expression = try parser.expression()
        guard parser.current.kind == .end else { throw parser.error("unexpected \(parser.describe(parser.current))") }
        return expression
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[index] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func error(
        _ message: String, at offset: Int? = nil, _ code: FetchPredicateError.Code = .malformedFormat
    ) -> FetchPredicateError {
        FetchPredicateError(code, message, format: format, offset: offset ?? current.offset)
    }

    private func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let name): return "\"\(name)\""
        case .escapedIdentifier(let name): return "\"#\(name)\""
        case .variable(let name): return "\"$\(name)\""
        case .collectionOperator(let name): return "\"@\(name)\""
        case .integer(let value): return "number \(value)"
        case .floating(let value): return "number \(value)"
        case .string: return "string"
        case .argument: return "format specifier"
        case .symbol(let symbol): return "\"\(symbol)\""
        case .end: return "end of format"
        }
    }

    /// The keyword the current token spells, upper-cased.
    private var keyword: String? {
        guard case .identifier(let name) = current.kind else { return nil }
        let upper = name.uppercased()
        return Self.reservedWords.contains(upper) ? upper : nil
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func expect(_ symbol: String) throws(FetchPredicateError) {
        guard isSymbol(symbol) else { throw error("expected \"\(symbol)\", found \(describe(current))") }
        advance()
    }

    private mutating func enter() throws(FetchPredicateError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("the predicate nests more than \(Self.maximumDepth) levels deep", at: nil, .tooDeeplyNested)
        }
    }

    // MARK: Predicates

    private mutating func predicate() throws(FetchPredicateError) -> FetchPredicate {
        var any = [try conjunction()]
        while keyword == "OR" || isSymbol("||") {
            advance()
            any.append(try conjunction())
        }
        return any.count == 1 ? any[0] : FetchPredicate(.or(any))
    }

    private mutating func conjunction() throws(FetchPredicateError) -> FetchPredicate {
        var all = [try negation()]
        while keyword == "AND" || isSymbol("&&") {
            advance()
            all.append(try negation())
        }
        return all.count == 1 ? all[0] : FetchPredicate(.and(all))
    }

    private mutating func negation() throws(FetchPredicateError) -> FetchPredicate {
        guard keyword == "NOT" || isSymbol("!") else { return try primary() }
        advance()
        try enter()
        defer { depth -= 1 }
        return FetchPredicate(.not(try negation()))
    }

    private mutating func primary() throws(FetchPredicateError) -> FetchPredicate {
        if isSymbol("(") {
            advance()
            try enter()
            defer { depth -= 1 }
            let inner = try predicate()
            try expect(")")
            return inner
        }
        switch keyword {
        case "TRUEPREDICATE":
            advance()
            return FetchPredicate(.constant(true))
        case "FALSEPREDICATE":
            advance()
            return FetchPredicate(.constant(false))
        default:
            return try comparison()
        }
    }

    private mutating func comparison() throws(FetchPredicateError) -> FetchPredicate {
        var modifier = ComparisonModifier.direct
        var negated = false
        switch keyword {
        case "ANY", "SOME": modifier = .any
        case "ALL": modifier = .all
        case "NONE":
            modifier = .any
            negated = true
        default: break
        }
        if modifier != .direct { advance() }
        let left = try expression()
        let comparisonOperator = try comparisonOperator()
        let options = try comparisonOptions()
        let rightOffset = current.offset
        let right = try expression()
        if comparisonOperator == .matches, case .constant(let pattern as String) = right {
            guard RegularExpressionCache.expression(pattern, options: options) != nil else {
                throw error("invalid regular expression", at: rightOffset)
            }
        }
        if comparisonOperator == .between {
            switch right {
            case .aggregate(let bounds) where bounds.count != 2:
                throw error("BETWEEN needs two bounds", at: rightOffset)
            case .constant(let value?):
                guard let bounds = FetchValue.elements(of: value), bounds.count == 2,
                    !(value is Set<AnyHashable> || value is NSSet)
                else {
                    throw error("BETWEEN needs an array of two bounds", at: rightOffset)
                }
            case .constant(nil):
                throw error("BETWEEN needs two bounds", at: rightOffset)
            default: break
            }
        }
        let comparison = FetchPredicate(
            .comparison(
                FetchPredicate.Comparison(
                    left: left, operator: comparisonOperator, right: right, modifier: modifier, options: options)))
        return negated ? FetchPredicate(.not(comparison)) : comparison
    }

    /// The comparison operators spelled with symbols.
    private static let operatorSymbols: [String: ComparisonOperator] = [
        "=": .equalTo, "==": .equalTo, "!=": .notEqualTo, "<>": .notEqualTo, "<": .lessThan, "<=": .lessThanOrEqualTo,
        "=<": .lessThanOrEqualTo, ">": .greaterThan, ">=": .greaterThanOrEqualTo, "=>": .greaterThanOrEqualTo,
    ]

    /// The comparison operators spelled with keywords.
    private static let operatorWords: [String: ComparisonOperator] = [
        "IN": .in, "CONTAINS": .contains, "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith, "LIKE": .like,
        "MATCHES": .matches, "BETWEEN": .between,
    ]

    private mutating func comparisonOperator() throws(FetchPredicateError) -> ComparisonOperator {
        if case .symbol(let symbol) = current.kind, let found = Self.operatorSymbols[symbol] {
            advance()
            return found
        }
        if let word = keyword, let found = Self.operatorWords[word] {
            advance()
            return found
        }
        throw error("expected a comparison operator, found \(describe(current))")
    }

    private mutating func comparisonOptions() throws(FetchPredicateError) -> ComparisonOptions {
        guard isSymbol("[") else { return [] }
        let start = current.offset
        advance()
        guard case .identifier(let letters) = current.kind, letters.allSatisfy({ "cdnlCDNL".contains($0) }) else {
            throw error("expected comparison options such as [c], [d] or [cd]", at: start)
        }
        advance()
        try expect("]")
        var options: ComparisonOptions = []
        if letters.lowercased().contains("c") { options.insert(.caseInsensitive) }
        if letters.lowercased().contains("d") { options.insert(.diacriticInsensitive) }
        return options
    }

    // MARK: Expressions

    private mutating func nextArgument(at offset: Int) throws(FetchPredicateError) -> Any? {
        guard argumentIndex < arguments.count else {
            throw error("the format specifier has no argument (\(arguments.count) given)", at: offset, .invalidArgument)
        }
        defer { argumentIndex += 1 }
        return FetchValue.unwrap(arguments[argumentIndex])
    }

    private mutating func expression() throws(FetchPredicateError) -> FetchExpression {
        let start = current.offset
        var base: FetchExpression
        var path: [String] = []
        switch current.kind {
        case .integer(let value):
            advance()
            base = .constant(Int(value))
        case .floating(let value):
            advance()
            base = .constant(value)
        case .string(let value):
            advance()
            base = .constant(value)
        case .variable(let name):
            advance()
            base = .variable(name)
        case .escapedIdentifier(let name):
            advance()
            base = .evaluatedObject
            path = [name]
        case .collectionOperator:
            base = .evaluatedObject
        case .argument(let kind):
            advance()
            let value = try nextArgument(at: start)
            switch kind {
            case .object:
                base = .constant(value)
            case .keyPath:
                guard let key = value as? String, let components = Self.keyPathComponents(key) else {
                    throw error(
                        "%K needs a key path string, not \(value.map { "\($0)" } ?? "nil")", at: start, .invalidArgument
                    )
                }
                base = .evaluatedObject
                path = components
            case .signed, .unsigned:
                guard let value, let number = FetchValue.numeric(value), let integer = number.integerValue else {
                    throw error(
                        "%d needs an integer, not \(value.map { "\($0)" } ?? "nil")", at: start, .invalidArgument)
                }
                base = .constant(integer)
            case .floating:
                guard let value, let number = FetchValue.numeric(value) else {
                    throw error("%f needs a number, not \(value.map { "\($0)" } ?? "nil")", at: start, .invalidArgument)
                }
                base = .constant(number.doubleValue)
            }
        case .symbol("{"):
            advance()
            try enter()
            defer { depth -= 1 }
            var elements: [FetchExpression] = []
            if !isSymbol("}") {
                elements.append(try expression())
                while isSymbol(",") {
                    advance()
                    elements.append(try expression())
                }
            }
            try expect("}")
            var constants: [Any] = []
            for element in elements {
                guard case .constant(let value?) = element else { break }
                constants.append(value)
            }
            base = constants.count == elements.count ? .constant(constants) : .aggregate(elements)
        case .identifier(let name):
            switch keyword {
            case nil:
                advance()
                base = .evaluatedObject
                path = [name]
            case "YES", "TRUE":
                advance()
                base = .constant(true)
            case "NO", "FALSE":
                advance()
                base = .constant(false)
            case "NIL", "NULL":
                advance()
                base = .constant(nil)
            case "SELF":
                advance()
                base = .evaluatedObject
            case "SUBQUERY":
                advance()
                base = try subquery()
            case "CAST":
                advance()
                base = try cast(at: start)
            case "FUNCTION":
                advance()
                base = try method()
            case "FETCH":
                advance()
                base = try fetch()
            default:
                throw error("expected a value, found keyword \(describe(current))")
            }
        default:
            throw error("expected a value, found \(describe(current))")
        }
        if case .collectionOperator = current.kind {
            try component(into: &path)
        }
        while isSymbol(".") {
            advance()
            try component(into: &path)
        }
        guard !path.isEmpty else { return base }
        let joined = path.joined(separator: ".")
        let expression = FetchExpression.keyPath(joined, on: base)
        if let key = FetchPredicate.sourceKey(joined, on: base), keyPathOffsets[key] == nil {
            keyPathOffsets[key] = start
        }
        return expression
    }

    /// Appends one key path component (a key, `#key`, `@operator`, or the keys of a `%K`
    /// argument, as in `$FETCH_SOURCE.%K`) to `path`.
    private mutating func component(into path: inout [String]) throws(FetchPredicateError) {
        if let last = path.last, last == "@count" { throw error("@count ends a key path") }
        switch current.kind {
        case .argument(.keyPath):
            let start = current.offset
            advance()
            let value = try nextArgument(at: start)
            guard let key = value as? String, let components = Self.keyPathComponents(key) else {
                throw error(
                    "%K needs a key path string, not \(value.map { "\($0)" } ?? "nil")", at: start, .invalidArgument)
            }
            path += components
            return
        case .identifier(let name) where keyword == nil:
            path.append(name)
        case .escapedIdentifier(let name):
            path.append(name)
        case .collectionOperator(let name):
            guard Self.collectionOperators.contains(name) else {
                throw error("unknown collection operator @\(name); use @count, @sum, @avg, @min or @max")
            }
            path.append("@" + name)
        default:
            throw error("expected a key after \".\", found \(describe(current))")
        }
        advance()
    }

    /// The components of a `%K` key path, or `nil` when it is not made of keys and collection operators.
    static func keyPathComponents(_ keyPath: String) -> [String]? {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (position, component) in components.enumerated() {
            var name = Substring(component)
            if name.first == "@" {
                name = name.dropFirst()
                guard collectionOperators.contains(String(name)), name != "count" || position == components.count - 1
                else { return nil }
            }
            guard let first = name.unicodeScalars.first, PredicateLexer.isIdentifierStart(first),
                name.unicodeScalars.allSatisfy(PredicateLexer.isIdentifierPart)
            else { return nil }
        }
        return components
    }

    private mutating func subquery() throws(FetchPredicateError) -> FetchExpression {
        try expect("(")
        try enter()
        defer { depth -= 1 }
        let collection = try expression()
        try expect(",")
        guard case .variable(let variable) = current.kind else {
            throw error("SUBQUERY needs a $variable after the collection, found \(describe(current))")
        }
        advance()
        try expect(",")
        let predicate = try predicate()
        try expect(")")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// `FUNCTION(target, "selector:", arguments…)`: a method of the target's value.
    private mutating func method() throws(FetchPredicateError) -> FetchExpression {
        try expect("(")
        try enter()
        defer { depth -= 1 }
        let target = try expression()
        try expect(",")
        guard case .string(let selector) = current.kind else {
            throw error("FUNCTION needs a quoted selector after its target, found \(describe(current))")
        }
        advance()
        var arguments: [FetchExpression] = []
        while isSymbol(",") {
            advance()
            arguments.append(try expression())
        }
        try expect(")")
        return .method(of: target, selectorName: selector, arguments: arguments)
    }

    /// `FETCH(request, context, countOnly)`: what a fetch request gets in a context.
    private mutating func fetch() throws(FetchPredicateError) -> FetchExpression {
        try expect("(")
        try enter()
        defer { depth -= 1 }
        let request = try expression()
        try expect(",")
        let context = try expression()
        try expect(",")
        let flagOffset = current.offset
        guard case .constant(let flag as Bool) = try expression() else {
            throw error("FETCH needs YES or NO (count only) last", at: flagOffset)
        }
        try expect(")")
        return .fetch(request: request, context: context, countOnly: flag)
    }

    /// `CAST(value, "Type")` of a constant: dates from their `timeIntervalSinceReferenceDate`,
    /// and Strata's own spellings of UUIDs, URLs, data, decimals and special numbers.
    private mutating func cast(at start: Int) throws(FetchPredicateError) -> FetchExpression {
        try expect("(")
        try enter()
        defer { depth -= 1 }
        let valueOffset = current.offset
        let operand = try expression()
        try expect(",")
        guard case .string(let type) = current.kind else {
            throw error("CAST needs a quoted type name, found \(describe(current))")
        }
        let typeOffset = current.offset
        advance()
        try expect(")")
        guard case .constant(let value) = operand else {
            throw error("CAST is supported on constants only", at: valueOffset)
        }
        let number = value.flatMap(FetchValue.numeric)
        let text = value as? String
        let converted: Any?
        switch type {
        case "NSDate":
            converted = value is Date ? value : number.map { Date(timeIntervalSinceReferenceDate: $0.doubleValue) }
        case "NSNumber": converted = number.map(\.value) ?? text.flatMap { Int($0).map { $0 as Any } ?? Double($0) }
        case "NSDecimalNumber":
            converted =
                (value as? Decimal) ?? text.flatMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
        case "NSString": converted = text ?? number.map { "\($0.value)" }
        case "NSUUID": converted = (value as? UUID) ?? text.flatMap(UUID.init(uuidString:))
        case "NSURL": converted = (value as? URL) ?? text.flatMap { URL(string: $0) }
        case "NSData": converted = (value as? Data) ?? text.flatMap { Data(base64Encoded: $0) }
        case "NSManagedObjectID":
            throw error(
                "an object ID cannot be read back from text; pass the object or its ID as a %@ argument", at: start)
        default:
            throw error("CAST to \"\(type)\" is not supported", at: typeOffset)
        }
        guard let converted else { throw error("CAST cannot make \(type) from this value", at: valueOffset) }
        return .constant(converted)
    }
}
