/// Why a predicate could not be built, substituted or validated: a malformed format string, a
/// format argument of the wrong kind, a missing substitution variable, or a key the entity does
/// not have. `Sendable`.
///
/// Core Data raises an Objective-C exception in these cases; Strata throws this error instead.
public struct FetchPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. An extensible set.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The raw value.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The raw value.
        public var description: String { rawValue }

        /// The format string does not follow the predicate grammar.
        public static let malformedFormat = Code(rawValue: "malformedFormat")
        /// A format specifier (`%@`, `%K`, `%d`, …) has no argument, or one of the wrong kind.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// The predicate nests deeper than the parser allows.
        public static let tooDeeplyNested = Code(rawValue: "tooDeeplyNested")
        /// A substitution variable has no value.
        public static let missingVariable = Code(rawValue: "missingVariable")
        /// A key path names no property of the entity.
        public static let unknownKey = Code(rawValue: "unknownKey")
    }

    /// What went wrong.
    public var code: Code
    /// A description of the problem.
    public var message: String
    /// The format string the predicate was parsed from, when it was.
    public var format: String?
    /// Where in ``format`` the problem is, counted in Unicode scalars (characters of an ASCII
    /// format) from 0, when known.
    public var offset: Int?
    /// The key path that is at fault, for ``Code/unknownKey``.
    public var keyPath: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, format: String? = nil, offset: Int? = nil, keyPath: String? = nil) {
        self.code = code
        self.message = message
        self.format = format
        self.offset = offset
        self.keyPath = keyPath
    }

    /// The message, with the position and format string when known.
    public var description: String {
        var text = "\(code): \(message)"
        if let offset { text += " at offset \(offset)" }
        if let format { text += " in \"\(format)\"" }
        return text
    }
}
