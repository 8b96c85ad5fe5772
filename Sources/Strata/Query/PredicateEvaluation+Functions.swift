import Foundation

extension PredicateEvaluation {
    /// The value of the function `name` of `arguments` (see
    /// ``FetchExpression/init(forFunction:arguments:)``).
    ///
    /// - Throws: ``Failure`` for an unknown function or arguments it does not take.
    static func function(_ name: String, _ arguments: [Any?]) throws -> Any? {
        switch (name, arguments.count) {
        case ("now", 0), ("now:", 0): return Date()
        case ("lowercase:", 1), ("uppercase:", 1), ("canonical:", 1):
            guard let value = FetchValue.unwrap(arguments[0]) else { return nil }
            guard let string = value as? String else { throw Failure() }
            switch name {
            case "lowercase:": return string.lowercased()
            case "uppercase:": return string.uppercased()
            default: return canonical(string)
            }
        case ("count:", 1):
            guard let value = FetchValue.unwrap(arguments[0]) else { return 0 }
            guard let elements = FetchValue.elements(of: value) else { throw Failure() }
            return elements.count
        case ("sum:", _), ("min:", _), ("max:", _), ("average:", _):
            var values: [Any] = []
            for argument in arguments {
                guard let value = FetchValue.unwrap(argument) else { continue }
                if let elements = FetchValue.elements(of: value) {
                    values += elements.compactMap { $0 }
                } else {
                    values.append(value)
                }
            }
            let operation = name == "average:" ? "@avg" : "@" + name.dropLast()
            return try aggregate(operation, values)
        default:
            throw Failure()
        }
    }

    /// A string with case, diacritics and width folded, as Core Data's `canonical:`
    /// (the form `[cd]` comparisons match).
    static func canonical(_ string: String) -> String {
        string.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
    }
}
