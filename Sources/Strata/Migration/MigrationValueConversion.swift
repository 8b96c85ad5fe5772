import Foundation

/// The attribute type changes a lightweight migration converts, and the conversions.
enum MigrationValueConversion {
    private static let integers: [AttributeType] = [
        .integer16AttributeType, .integer32AttributeType, .integer64AttributeType,
    ]
    private static let fractions: Set<AttributeType> = [
        .doubleAttributeType, .floatAttributeType, .decimalAttributeType,
    ]

    /// Whether values of type `source` convert to `destination`: integers to wider integers,
    /// numbers to `Double`/`Float`/`Decimal`, numbers, Booleans, UUIDs and URIs to strings,
    /// strings to numbers and Booleans, integers to and from Booleans.
    static func canConvert(_ source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        let sourceIsNumber = integers.contains(source) || fractions.contains(source)
        if let from = integers.firstIndex(of: source), let to = integers.firstIndex(of: destination) {
            return to > from
        }
        if fractions.contains(destination) { return sourceIsNumber || source == .stringAttributeType }
        if destination == .stringAttributeType {
            return sourceIsNumber || [.booleanAttributeType, .UUIDAttributeType, .URIAttributeType].contains(source)
        }
        if integers.contains(destination) { return source == .booleanAttributeType || source == .stringAttributeType }
        if destination == .booleanAttributeType { return integers.contains(source) || source == .stringAttributeType }
        return false
    }

    /// `value` (of the source attribute's type) as a value of `attribute`; `nil` for a string
    /// that is no number or Boolean.
    ///
    /// - Throws: ``CoreDataError`` `migration` when the value does not fit `attribute`.
    static func convert(_ value: Any?, to attribute: AttributeDescription, entity: EntityDescription) throws -> Any? {
        guard let value else { return nil }
        var converted: Any? = value
        switch attribute.attributeType {
        case .stringAttributeType:
            switch value {
            case let uuid as UUID: converted = uuid.uuidString
            case let url as URL: converted = url.absoluteString
            case let bool as Bool: converted = bool ? "1" : "0"
            case let string as String: converted = string
            default: converted = "\(value)"
            }
        case .booleanAttributeType:
            if let string = value as? String {
                switch string.lowercased() {
                case "1", "true", "yes": converted = true
                case "0", "false", "no": converted = false
                default: converted = nil
                }
            } else if let bool = value as? Bool {
                converted = bool
            } else if let number = ValueConversion.integer(value) {
                converted = number != 0
            }
        case _ where integers.contains(attribute.attributeType):
            if let bool = value as? Bool { converted = Int64(bool ? 1 : 0) }
            if let string = value as? String { converted = Int64(string.trimmingCharacters(in: .whitespaces)) }
        case _ where fractions.contains(attribute.attributeType):
            if let string = value as? String {
                let trimmed = string.trimmingCharacters(in: .whitespaces)
                if attribute.attributeType == .decimalAttributeType {
                    converted = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
                } else {
                    converted = Double(trimmed)
                }
            }
        default:
            break
        }
        do {
            return try ValueConversion.normalize(converted, for: attribute, entity: entity)
        } catch let error as CoreDataError {
            throw CoreDataError(
                .migration, "migrating \(entity.entityName).\(attribute.name): \(error.message)", key: attribute.name,
                underlyingError: error)
        }
    }
}
