/// An error loading or checking a managed object model: a missing or unreadable file, malformed
/// XML, or a model that contradicts itself (an unknown type, a destination that does not exist,
/// a cycle of parent entities). `Sendable`.
///
/// The ``message`` names the entity and property concerned and, for a model file, the line.
public struct ModelError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. An extensible set of codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The model file (or the `contents` file of a model bundle) does not exist.
        public static let fileNotFound = Code("fileNotFound")
        /// The model file exists but could not be read; ``ModelError/cause`` holds why.
        public static let unreadableFile = Code("unreadableFile")
        /// The file is not well-formed XML (or the `.xccurrentversion` is not a property list).
        public static let malformedXML = Code("malformedXML")
        /// The XML is well-formed but is not a model: wrong root element, a required XML
        /// attribute missing, an element in the wrong place, an inconsistent inverse, a fetched
        /// property without a request, a composite without elements, or a derived attribute
        /// whose expression Strata does not compute.
        public static let invalidModel = Code("invalidModel")
        /// An attribute's `attributeType` is not one Strata knows.
        public static let unknownAttributeType = Code("unknownAttributeType")
        /// A value in the model does not parse: a default value (such as a fraction for an
        /// integer attribute), a minimum or maximum, a count, a delete rule, an index order or
        /// collation, a fetch request's predicate or result type.
        public static let invalidValue = Code("invalidValue")
        /// A relationship's destination or inverse entity, a parent entity, a configuration's
        /// member entity, a fetch request's entity or a composite attribute's definition does
        /// not exist.
        public static let missingEntity = Code("missingEntity")
        /// A relationship's inverse, a fetch index element, a compound index or a uniqueness
        /// constraint names a property the entity does not have.
        public static let missingProperty = Code("missingProperty")
        /// Parent entities form a cycle.
        public static let inheritanceCycle = Code("inheritanceCycle")
        /// Two entities, or two properties of one entity (inherited ones included), share a name.
        public static let duplicateName = Code("duplicateName")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence saying what failed, naming the entity, property and line concerned.
    public var message: String
    /// The file concerned, if any.
    public var path: String?
    /// The line of ``path`` concerned (1-based), if known.
    public var line: Int?
    /// The entity concerned, if any.
    public var entityName: String?
    /// The property concerned, if any.
    public var propertyName: String?
    /// The underlying error, such as the file system's or the XML parser's.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: what kind of failure this is.
    ///   - message: a sentence saying what failed.
    ///   - path: the file concerned.
    ///   - line: the line concerned.
    ///   - entityName: the entity concerned.
    ///   - propertyName: the property concerned.
    ///   - cause: the underlying error.
    public init(
        _ code: Code,
        _ message: String,
        path: String? = nil,
        line: Int? = nil,
        entityName: String? = nil,
        propertyName: String? = nil,
        cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.entityName = entityName
        self.propertyName = propertyName
        self.cause = cause
    }

    /// The code and message, then the file and line when known.
    public var description: String {
        var text = "ModelError.\(code): \(message)"
        if let path {
            text += " (\(path)"
            if let line { text += ":\(line)" }
            text += ")"
        }
        return text
    }
}
