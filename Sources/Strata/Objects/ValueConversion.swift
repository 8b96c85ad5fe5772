import Foundation

/// Converts attribute values between what users set, what objects hold and what the engine stores.
enum ValueConversion {
    /// The value an object holds for `value` set on `attribute`: numbers (`NSNumber` and
    /// `NSDecimalNumber` too) converted exactly to the attribute's type, `[UInt8]` to `Data`.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` naming the entity, attribute and value type.
    static func normalize(_ value: Any?, for attribute: AttributeDescription, entity: EntityDescription) throws -> Any?
    {
        guard let value else { return nil }
        if attribute is DerivedAttributeDescription {
            throw CoreDataError(
                .keyValueValidation,
                "\(entity.entityName).\(attribute.name) is a derived attribute: it is computed on save and cannot be set",
                key: attribute.name)
        }
        func mismatch() -> CoreDataError {
            CoreDataError(
                .keyValueValidation,
                "\(entity.entityName).\(attribute.name) holds \(attribute.attributeType) values; \(type(of: value)) \(value) does not fit",
                key: attribute.name)
        }
        switch attribute.attributeType {
        case .integer16AttributeType:
            guard let number = integer(value), let exact = Int16(exactly: number) else { throw mismatch() }
            return exact
        case .integer32AttributeType:
            guard let number = integer(value), let exact = Int32(exactly: number) else { throw mismatch() }
            return exact
        case .integer64AttributeType:
            guard let number = integer(value) else { throw mismatch() }
            return number
        case .doubleAttributeType:
            guard let number = floating(value) else { throw mismatch() }
            return number
        case .floatAttributeType:
            guard let number = floating(value) else { throw mismatch() }
            return Float(number)
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return decimal }
            if type(of: value) is NSDecimalNumber.Type, let decimal = value as? NSDecimalNumber {
                return decimal.decimalValue
            }
            if let number = integer(value) { return Decimal(number) }
            if let number = floating(value) { return Decimal(number) }
            throw mismatch()
        case .booleanAttributeType:
            if let bool = value as? Bool { return bool }
            guard let number = integer(value), number == 0 || number == 1 else { throw mismatch() }
            return number == 1
        case .stringAttributeType:
            guard let string = value as? String else { throw mismatch() }
            return string
        case .dateAttributeType:
            guard let date = value as? Date else { throw mismatch() }
            return date
        case .binaryDataAttributeType:
            if let data = value as? Data { return data }
            if let bytes = value as? [UInt8] { return Data(bytes) }
            throw mismatch()
        case .UUIDAttributeType:
            guard let uuid = value as? UUID else { throw mismatch() }
            return uuid
        case .URIAttributeType:
            guard let url = value as? URL else { throw mismatch() }
            return url
        case .objectIDAttributeType:
            guard let id = value as? ManagedObjectID else { throw mismatch() }
            return id
        case .compositeAttributeType:
            guard let composite = attribute as? CompositeAttributeDescription else { throw mismatch() }
            return try CompositeValues.normalize(value, for: composite, entity: entity)
        default:
            return value
        }
    }

    /// The Swift type ``normalize(_:for:entity:)`` keeps a value of as it is for attributes of
    /// `attributeType`, if there is one.
    static func exactType(of attributeType: AttributeType) -> Any.Type? {
        switch attributeType {
        case .stringAttributeType: String.self
        case .integer64AttributeType: Int64.self
        case .integer32AttributeType: Int32.self
        case .integer16AttributeType: Int16.self
        case .doubleAttributeType: Double.self
        case .floatAttributeType: Float.self
        case .booleanAttributeType: Bool.self
        case .dateAttributeType: Date.self
        case .binaryDataAttributeType: Data.self
        case .UUIDAttributeType: UUID.self
        case .URIAttributeType: URL.self
        case .decimalAttributeType: Decimal.self
        default: nil
        }
    }

    /// The value as an `Int64` when it is an integer of any width that fits.
    static func integer(_ value: Any) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        case let v as UInt32: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as Double: return Int64(exactly: v)
        case let v as Float: return Int64(exactly: v)
        default:
            // An `NSNumber` object (checked by its class: a Swift number never reaches here).
            guard type(of: value) is NSNumber.Type, let v = value as? NSNumber else { return nil }
            if type(of: value) is NSDecimalNumber.Type { return Int64(exactly: v.doubleValue) }
            return Double(v.int64Value) == v.doubleValue ? v.int64Value : nil
        }
    }

    private static func floating(_ value: Any) -> Double? {
        switch value {
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
        case let v as NSNumber where type(of: value) is NSNumber.Type: return v.doubleValue
        default: return integer(value).map(Double.init)
        }
    }
}
