import Foundation

extension FetchPredicate {
    /// Checks that every key path of the predicate names properties of `entity`: through to-one
    /// and to-many relationships to their destinations, past collection operators, and on
    /// subquery elements. A fetch calls it before it runs.
    ///
    /// - Throws: ``FetchPredicateError`` `unknownKey` naming the key path and, for a predicate
    ///   parsed from a format string, its offset in the format.
    public func validate(for entity: EntityDescription) throws(FetchPredicateError) {
        try PredicateValidation(source: source).check(self, evaluated: .entity(entity, toMany: false), variables: [:])
    }

    /// The key under which the parser records the offset of the key path `path` read from `operand`.
    static func sourceKey(_ path: String, on operand: FetchExpression) -> String? {
        switch operand {
        case .evaluatedObject: return path
        case .variable(let name): return "$\(name).\(path)"
        default: return nil
        }
    }
}

/// What validation knows of an expression's value.
private enum ValueShape {
    /// Objects of an entity: one, or a collection.
    case entity(EntityDescription, toMany: Bool)
    /// An attribute's value.
    case attribute(AttributeDescription)
    /// Anything else: not checked further.
    case unknown
}

/// One validation of a predicate against an entity.
private struct PredicateValidation {
    let source: PredicateSource?

    func check(
        _ predicate: FetchPredicate, evaluated: ValueShape, variables: [String: ValueShape]
    ) throws(FetchPredicateError) {
        switch predicate.node {
        case .constant, .block: return
        case .and(let all), .or(let all):
            for inner in all { try check(inner, evaluated: evaluated, variables: variables) }
        case .not(let inner): try check(inner, evaluated: evaluated, variables: variables)
        case .comparison(let comparison):
            _ = try shape(comparison.left, evaluated: evaluated, variables: variables)
            _ = try shape(comparison.right, evaluated: evaluated, variables: variables)
        }
    }

    func shape(
        _ expression: FetchExpression, evaluated: ValueShape, variables: [String: ValueShape]
    ) throws(FetchPredicateError) -> ValueShape {
        switch expression {
        case .constant: return .unknown
        case .evaluatedObject: return evaluated
        case .variable(let name): return variables[name] ?? .unknown
        case .aggregate(let elements):
            for element in elements { _ = try shape(element, evaluated: evaluated, variables: variables) }
            return .unknown
        case .function(_, let arguments):
            for argument in arguments { _ = try shape(argument, evaluated: evaluated, variables: variables) }
            return .unknown
        case .method(let target, _, let arguments):
            for argument in [target] + arguments {
                _ = try shape(argument, evaluated: evaluated, variables: variables)
            }
            return .unknown
        case .fetch(let request, let context, _):
            _ = try shape(request, evaluated: evaluated, variables: variables)
            _ = try shape(context, evaluated: evaluated, variables: variables)
            return .unknown
        case .subquery(let collection, let variable, let predicate):
            var element = ValueShape.unknown
            if case .entity(let entity, _) = try shape(collection, evaluated: evaluated, variables: variables) {
                element = .entity(entity, toMany: false)
            }
            var inner = variables
            inner[variable] = element
            try check(predicate, evaluated: element, variables: inner)
            if case .entity(let entity, _) = element { return .entity(entity, toMany: true) }
            return .unknown
        case .keyPath(let path, on: let operand):
            var current = try shape(operand, evaluated: evaluated, variables: variables)
            for key in path.dottedKeys {
                if key == "@count" { return .unknown }
                if key.hasPrefix("@") || key == "self" || key == "SELF" { continue }
                switch current {
                case .unknown: return .unknown
                case .attribute(let composite as CompositeAttributeDescription):
                    guard let element = composite.elementsByName[key] else {
                        throw unknownKey(
                            path, on: operand, "the composite attribute \(composite.name) has no element \(key)")
                    }
                    current = .attribute(element)
                case .attribute(let attribute):
                    guard
                        attribute.attributeType == .transformableAttributeType
                            || attribute.attributeType == .undefinedAttributeType
                    else {
                        throw unknownKey(
                            path, on: operand,
                            "\(attribute.name) is a \(attribute.attributeType) attribute, which has no key \(key)")
                    }
                    return .unknown
                case .entity(let entity, let toMany):
                    guard let property = entity.propertiesByName[key] else {
                        throw unknownKey(path, on: operand, "\(entity.entityName) has no property \(key)")
                    }
                    if let relationship = property as? RelationshipDescription,
                        let destination = relationship.destinationEntity
                    {
                        current = .entity(destination, toMany: toMany || relationship.isToMany)
                    } else if let attribute = property as? AttributeDescription {
                        current = .attribute(attribute)
                    } else {
                        current = .unknown
                    }
                }
            }
            return path.containsASCII("@") ? .unknown : current
        }
    }

    private func unknownKey(_ path: String, on operand: FetchExpression, _ message: String) -> FetchPredicateError {
        let offset = FetchPredicate.sourceKey(path, on: operand).flatMap { source?.keyPathOffsets[$0] }
        return FetchPredicateError(
            .unknownKey, "the key path \(path) is not valid: \(message)", format: source?.format, offset: offset,
            keyPath: path)
    }
}
