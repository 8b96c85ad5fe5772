import Foundation

extension FetchPredicate {
    /// The predicate with numbers compared to a String attribute of `entity` turned into their
    /// text, as SQLite's text affinity converts them: Core Data's SQLite store matches
    /// `name IN {9, 10, 11}` and `name == 9` against the string "9", and fetches do the same.
    /// Comparisons of other attributes, and Booleans, are left as they are.
    func applyingStringAffinity(for entity: EntityDescription) -> FetchPredicate {
        let rewritten: Node
        switch node {
        case .comparison(var comparison):
            guard case .keyPath(let path, .evaluatedObject) = comparison.left,
                entity.attributesByName[path]?.attributeType == .stringAttributeType,
                let right = Self.text(of: comparison.right)
            else { return self }
            comparison.right = right
            rewritten = .comparison(comparison)
        case .and(let all): rewritten = .and(all.map { $0.applyingStringAffinity(for: entity) })
        case .or(let any): rewritten = .or(any.map { $0.applyingStringAffinity(for: entity) })
        case .not(let inner): rewritten = .not(inner.applyingStringAffinity(for: entity))
        case .constant, .block: return self
        }
        let predicate = FetchPredicate(rewritten)
        predicate.source = source
        return predicate
    }

    /// `expression` with its numbers (alone, or in a constant collection) as text; `nil` when it
    /// holds no number to convert.
    private static func text(of expression: FetchExpression) -> FetchExpression? {
        guard case .constant(let value?) = expression else { return nil }
        if let number = numberText(value) { return .constant(number) }
        let elements: [Any]
        switch value {
        case let array as [Any]: elements = array
        case let set as Set<AnyHashable>: elements = Array(set)
        default: return nil
        }
        guard elements.contains(where: { numberText($0) != nil }) else { return nil }
        return .constant(elements.map { numberText($0) ?? $0 })
    }

    /// A number's text as SQLite writes it (`9`, `9.5`), `nil` for anything else.
    private static func numberText(_ value: Any) -> String? {
        guard !(value is Bool), !(value is String), let number = FetchValue.numeric(value) else { return nil }
        if let integer = number.integerValue { return String(integer) }
        return String(number.doubleValue)
    }
}
