import Foundation

/// One token of a predicate format string, with its offset in Unicode scalars.
struct PredicateToken {
    /// What a token is.
    enum Kind: Equatable {
        /// A name: a key, or a keyword when it spells one in any case.
        case identifier(String)
        /// A `#name`: a key even when it spells a keyword.
        case escapedIdentifier(String)
        /// A `$NAME`.
        case variable(String)
        /// An `@count`, `@sum`, … collection operator.
        case collectionOperator(String)
        /// An integer literal.
        case integer(Int64)
        /// A floating-point literal (or an integer too large for 64 bits).
        case floating(Double)
        /// A quoted string, unescaped.
        case string(String)
        /// A format specifier: `%@`, `%K`, `%d`, `%f`, …
        case argument(ArgumentKind)
        /// Punctuation or an operator spelled with symbols (`(`, `==`, `&&`, …).
        case symbol(String)
        /// The end of the format.
        case end
    }

    /// The kinds of format specifiers.
    enum ArgumentKind: Equatable {
        /// `%@`: any value.
        case object
        /// `%K`: a key path.
        case keyPath
        /// `%d`, `%i`, `%ld`, `%lld`, …: a signed integer.
        case signed
        /// `%u`, `%lu`, `%x`, …: an unsigned integer.
        case unsigned
        /// `%f`, `%lf`, `%e`, `%g`, …: a floating-point number.
        case floating
    }

    var kind: Kind
    var offset: Int
}

/// Splits a predicate format string into tokens.
struct PredicateLexer {
    /// The second characters of two-character symbols (`==`, `=<`, `&&`, …), by the first.
    private static let pairs: [Unicode.Scalar: [Unicode.Scalar]] = [
        "=": ["=", "<", ">"], "!": ["="], "<": [">", "="], ">": ["="], "&": ["&"], "|": ["|"],
    ]

    private let scalars: [Unicode.Scalar]
    private let format: String
    private var position = 0

    init(_ format: String) {
        self.format = format
        scalars = Array(format.unicodeScalars)
    }

    /// Every token of the format, ending with `.end`.
    static func tokens(of format: String) throws(FetchPredicateError) -> [PredicateToken] {
        var lexer = PredicateLexer(format)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(.malformedFormat, message, format: format, offset: offset)
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    /// Whether `scalar` can start a key or keyword.
    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    /// Whether `scalar` can continue a key or keyword.
    static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
    }

    private mutating func identifier() -> String {
        var name = String.UnicodeScalarView()
        while let scalar = peek(), Self.isIdentifierPart(scalar) {
            name.append(scalar)
            position += 1
        }
        return String(name)
    }

    private mutating func next() throws(FetchPredicateError) -> PredicateToken {
        while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        let start = position
        guard let scalar = peek() else { return PredicateToken(kind: .end, offset: start) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken { PredicateToken(kind: kind, offset: start) }
        if Self.isIdentifierStart(scalar) { return token(.identifier(identifier())) }
        switch scalar {
        case "#", "$", "@":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw error("\"\(scalar)\" must be followed by a name", at: start)
            }
            let name = identifier()
            return token(
                scalar == "#" ? .escapedIdentifier(name) : scalar == "$" ? .variable(name) : .collectionOperator(name))
        case "0"..."9":
            return token(try number(negative: false))
        case "-":
            guard let next = peek(1), ("0"..."9").contains(next) else {
                throw error("arithmetic is not supported; \"-\" must start a number", at: start)
            }
            position += 1
            return token(try number(negative: true))
        case "\"", "'":
            return token(.string(try string(quote: scalar)))
        case "%":
            return token(.argument(try argument()))
        default:
            break
        }
        if let seconds = Self.pairs[scalar], let second = peek(1), seconds.contains(second) {
            position += 2
            return token(.symbol(String(Character(scalar)) + String(Character(second))))
        }
        if "=!<>(){},.[]".unicodeScalars.contains(scalar) {
            position += 1
            return token(.symbol(String(Character(scalar))))
        }
        throw error("unexpected character \"\(scalar.escaped(asASCII: true))\"", at: start)
    }

    private mutating func number(negative: Bool) throws(FetchPredicateError) -> PredicateToken.Kind {
        let start = negative ? position - 1 : position
        if peek() == "0", let base = peek(1),
            let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][Character(base)]
        {
            position += 2
            var digits = ""
            while let scalar = peek(),
                scalar.properties.isASCIIHexDigit || scalar == "_" || Self.isIdentifierPart(scalar)
            {
                digits.unicodeScalars.append(scalar)
                position += 1
            }
            guard let magnitude = UInt64(digits, radix: radix) else {
                throw error("malformed base-\(radix) number", at: start)
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { throw error("number out of range", at: start) }
                return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            guard magnitude <= UInt64(Int64.max) else { return .floating(Double(magnitude)) }
            return .integer(Int64(magnitude))
        }
        var text = negative ? "-" : ""
        var isFloating = false
        func digits() {
            while let scalar = peek(), ("0"..."9").contains(scalar) {
                text.unicodeScalars.append(scalar)
                position += 1
            }
        }
        digits()
        if peek() == ".", let next = peek(1), ("0"..."9").contains(next) {
            isFloating = true
            text += "."
            position += 1
            digits()
        }
        if let e = peek(), e == "e" || e == "E" {
            var ahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { ahead = 2 }
            if let digit = peek(ahead), ("0"..."9").contains(digit) {
                isFloating = true
                for _ in 0..<ahead {
                    text.unicodeScalars.append(peek()!)
                    position += 1
                }
                digits()
            }
        }
        if let scalar = peek(), Self.isIdentifierPart(scalar) {
            throw error("malformed number", at: start)
        }
        if !isFloating, let integer = Int64(text) { return .integer(integer) }
        guard let value = Double(text) else { throw error("malformed number", at: start) }
        return .floating(value)
    }

    private mutating func string(quote: Unicode.Scalar) throws(FetchPredicateError) -> String {
        let start = position
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw error("unterminated string", at: start) }
            position += 1
            if scalar == quote { return String(result) }
            guard scalar == "\\" else {
                result.append(scalar)
                continue
            }
            let escapeStart = position - 1
            guard let escaped = peek() else { throw error("unterminated string", at: start) }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "t": result.append("\t")
            case "0": result.append("\0")
            case "a": result.append("\u{07}")
            case "b": result.append("\u{08}")
            case "f": result.append("\u{0C}")
            case "v": result.append("\u{0B}")
            case "u", "x":
                var hex = ""
                let count = escaped == "x" ? 2 : 4
                if escaped == "u", peek() == "{" {
                    position += 1
                    while let digit = peek(), digit != "}", hex.count < 9 {
                        hex.unicodeScalars.append(digit)
                        position += 1
                    }
                    guard peek() == "}" else { throw error("malformed \\u{…} escape", at: escapeStart) }
                    position += 1
                } else {
                    for _ in 0..<count {
                        guard let digit = peek(), digit.properties.isASCIIHexDigit else {
                            throw error("\\\(escaped) needs \(count) hexadecimal digits", at: escapeStart)
                        }
                        hex.unicodeScalars.append(digit)
                        position += 1
                    }
                }
                guard let code = UInt32(hex, radix: 16), let value = Unicode.Scalar(code) else {
                    throw error("\\\(escaped)\(hex) is not a Unicode scalar", at: escapeStart)
                }
                result.append(value)
            default: result.append(escaped)
            }
        }
    }

    private mutating func argument() throws(FetchPredicateError) -> PredicateToken.ArgumentKind {
        let start = position
        position += 1
        var length = ""
        while let scalar = peek(), "hlqLzjt".unicodeScalars.contains(scalar), length.count < 2 {
            length.unicodeScalars.append(scalar)
            position += 1
        }
        guard let conversion = peek() else { throw error("incomplete format specifier", at: start) }
        position += 1
        switch conversion {
        case "@" where length.isEmpty: return .object
        case "K" where length.isEmpty: return .keyPath
        case "d", "i", "D": return .signed
        case "u", "x", "X", "o", "O", "U": return .unsigned
        case "f", "F", "e", "E", "g", "G", "a", "A": return .floating
        default:
            throw error("unsupported format specifier \"%\(length)\(conversion.escaped(asASCII: true))\"", at: start)
        }
    }
}
