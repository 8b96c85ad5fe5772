/// Reads and checks derived attributes' expressions: the text of a model file's
/// `derivationExpression`, and whether an expression is one Strata computes.
enum DerivationExpression {
    /// The functions of one argument that fold a string.
    static let stringFunctions: Set<String> = ["lowercase:", "uppercase:", "canonical:"]
    /// The functions of a to-many relationship's values.
    static let aggregateFunctions: Set<String> = ["count:", "sum:", "min:", "max:", "average:"]
    /// The collection operators of key paths.
    static let aggregateOperators: Set<String> = ["@count", "@sum", "@min", "@max", "@avg"]

    /// Parses `now()`, `lowercase:(name)`, `sum:(items.price)`, `department.name`,
    /// `items.@count` and the like.
    ///
    /// - Returns: the expression, or `nil` when the text is not one of these forms.
    static func parse(_ text: String) -> FetchExpression? {
        var scanner = Scanner(Array(text.unicodeScalars))
        guard let expression = scanner.expression() else { return nil }
        scanner.skipSpaces()
        return scanner.isAtEnd ? expression : nil
    }

    /// Checks that Strata computes `attribute`'s expression for `entity`'s objects and that its
    /// value fits the attribute's type.
    ///
    /// - Throws: ``ModelError`` ``ModelError/Code/invalidModel`` naming the entity, attribute and
    ///   expression, and saying why.
    static func check(_ attribute: DerivedAttributeDescription, of entity: EntityDescription) throws {
        guard let expression = attribute.derivationExpression else {
            throw ModelError(
                .invalidModel, "derived attribute \(entity.entityName).\(attribute.name) has no derivation expression",
                entityName: entity.entityName, propertyName: attribute.name)
        }
        func refuse(_ reason: String) -> ModelError {
            ModelError(
                .invalidModel,
                "derived attribute \(entity.entityName).\(attribute.name) has the expression \(expression.expressionFormat), which Strata does not compute: \(reason)",
                entityName: entity.entityName, propertyName: attribute.name)
        }
        let type = attribute.attributeType
        let numeric: Set<AttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
            .decimalAttributeType, .doubleAttributeType, .floatAttributeType,
        ]
        switch expression {
        case .keyPath(let path, on: .evaluatedObject):
            switch try walk(path, from: entity, refuse: refuse) {
            case .count:
                guard numeric.contains(type) else {
                    throw refuse("a count needs a number attribute, not \(type.xmlName)")
                }
            case .aggregate(let source):
                guard numeric.contains(type) || source.attributeType == type else {
                    throw refuse("the \(source.attributeType.xmlName) values do not fit a \(type.xmlName) attribute")
                }
            case .value(let source):
                guard source.attributeType == type || (numeric.contains(type) && numeric.contains(source.attributeType))
                else {
                    throw refuse(
                        "\(source.qualifiedName) is \(source.attributeType.xmlName), the attribute is \(type.xmlName)")
                }
            }
        case .function("now", let arguments) where arguments.isEmpty:
            guard type == .dateAttributeType else { throw refuse("now() needs a Date attribute, not \(type.xmlName)") }
        case .function(let name, let arguments) where stringFunctions.contains(name):
            guard arguments.count == 1, case .keyPath(let path, on: .evaluatedObject) = arguments[0],
                case .value(let source) = try walk(path, from: entity, refuse: refuse),
                source.attributeType == .stringAttributeType
            else { throw refuse("\(name) takes the key path of one String attribute") }
            guard type == .stringAttributeType else {
                throw refuse("\(name) needs a String attribute, not \(type.xmlName)")
            }
        case .function(let name, let arguments) where aggregateFunctions.contains(name):
            guard arguments.count == 1, case .keyPath(let path, on: .evaluatedObject) = arguments[0] else {
                throw refuse("\(name) takes one key path through a to-many relationship")
            }
            let operation = name == "count:" ? "@count" : name == "average:" ? "@avg" : "@" + name.dropLast()
            let components = path.split(separator: ".").map(String.init)
            guard let first = components.first else { throw refuse("\(name) has an empty key path") }
            let rewritten = ([first, operation] + components.dropFirst()).joined(separator: ".")
            switch try walk(rewritten, from: entity, refuse: refuse) {
            case .count, .aggregate:
                guard numeric.contains(type) || name == "min:" || name == "max:" else {
                    throw refuse("\(name) needs a number attribute, not \(type.xmlName)")
                }
            case .value: throw refuse("\(name) takes a key path through a to-many relationship")
            }
        default:
            throw refuse(
                "supported are key paths, now(), lowercase:, uppercase:, canonical:, count:, sum:, min:, max:, average: and the @count, @sum, @min, @max and @avg of a to-many relationship"
            )
        }
    }

    /// What a key path of a derivation reads.
    private enum Reading {
        /// One attribute's value.
        case value(AttributeDescription)
        /// The number of a to-many relationship's objects.
        case count
        /// An aggregate of an attribute's values over a to-many relationship's objects.
        case aggregate(AttributeDescription)
    }

    /// Follows `path` from `entity`: to-one relationships, then an attribute; or a to-many
    /// relationship, then `@count` or an aggregate operator and an attribute path.
    private static func walk(
        _ path: String, from entity: EntityDescription, refuse: (String) -> ModelError
    ) throws -> Reading {
        var current = entity
        var components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...]
        var aggregate: String?
        while let key = components.popFirst() {
            if aggregateOperators.contains(key) {
                throw refuse("\(key) follows no to-many relationship")
            }
            guard let property = current.propertiesByName[key] else {
                throw refuse("\(current.entityName) has no property \(key)")
            }
            if let attribute = property as? AttributeDescription {
                guard components.isEmpty else { throw refuse("\(key) is an attribute, not a relationship, in \(path)") }
                guard !attribute.isTransient else { throw refuse("\(key) is transient") }
                return aggregate == nil ? .value(attribute) : .aggregate(attribute)
            }
            guard let relationship = property as? RelationshipDescription,
                let destination = relationship.destinationEntity
            else {
                throw refuse("\(key) is not an attribute or relationship")
            }
            if relationship.isToMany {
                guard aggregate == nil, let operation = components.popFirst(), aggregateOperators.contains(operation)
                else {
                    throw refuse("the to-many relationship \(key) must be followed by @count, @sum, @min, @max or @avg")
                }
                if operation == "@count" {
                    guard components.isEmpty else { throw refuse("@count ends the key path") }
                    return .count
                }
                aggregate = operation
            }
            current = destination
        }
        throw refuse("the key path ends at a relationship, not an attribute")
    }

    /// A cursor over the text of an expression.
    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var position = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var isAtEnd: Bool { position == scalars.count }

        mutating func skipSpaces() {
            while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
        }

        mutating func take(_ scalar: Unicode.Scalar) -> Bool {
            skipSpaces()
            guard position < scalars.count, scalars[position] == scalar else { return false }
            position += 1
            return true
        }

        /// A name: letters, digits, `_` and a leading `@`.
        mutating func name() -> String? {
            skipSpaces()
            let start = position
            if position < scalars.count, scalars[position] == "@" { position += 1 }
            while position < scalars.count,
                scalars[position].properties.isAlphabetic || ("0"..."9").contains(scalars[position])
                    || scalars[position] == "_"
            {
                position += 1
            }
            guard position > start else { return nil }
            return String(String.UnicodeScalarView(scalars[start..<position]))
        }

        /// A function call or a key path.
        mutating func expression() -> FetchExpression? {
            guard var first = name() else { return nil }
            if take(":") { first += ":" }
            if take("(") {
                var arguments: [FetchExpression] = []
                if !take(")") {
                    repeat {
                        guard let argument = expression() else { return nil }
                        arguments.append(argument)
                    } while take(",")
                    guard take(")") else { return nil }
                }
                return .function(first, arguments: arguments)
            }
            guard !first.hasSuffix(":") else { return nil }
            var path = [first]
            while take(".") {
                guard let next = name() else { return nil }
                path.append(next)
            }
            return .keyPath(path.joined(separator: "."))
        }
    }
}
