import Foundation
internal import StrataStore

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

    /// The engine value of an object's attribute value.
    ///
    /// - Throws: ``CoreDataError`` when a transformable value has no transformer that encodes it.
    static func storeValue(_ value: Any?, for attribute: AttributeDescription) throws -> Value {
        guard let value else { return .null }
        if let stored = exactStoreValue(value, type: attribute.attributeType) { return stored }
        if let composite = attribute as? CompositeAttributeDescription {
            return .data(try CompositeValues.encode(value, for: composite))
        }
        switch value {
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Double: return .double(v)
        case let v as Float: return .float(v)
        case let v as Decimal: return .decimal(v)
        case let v as Bool: return .bool(v)
        case let v as String: return .string(v)
        case let v as Date: return .date(v)
        case let v as UUID: return .uuid(v)
        case let v as ManagedObjectID: return .uri(v.uriRepresentation())
        case let v as URL: return .uri(v)
        case let v as Data where attribute.attributeType != .transformableAttributeType: return .data(v)
        default:
            return .data(try ValueTransformers.encode(value, for: attribute))
        }
    }

    /// The engine value of `value` when it is exactly of the Swift type an attribute of
    /// `attributeType` holds (what ``normalize(_:for:entity:)`` makes), or an `Int` that fits an
    /// integer attribute: one comparison of the value's type, where ``storeValue(_:for:)`` casts
    /// to each type in turn. `nil` for any other value (and for composite attributes).
    static func exactStoreValue(_ value: Any, type attributeType: AttributeType) -> Value? {
        func open<Held>(_ held: Held) -> Value? {
            func exactly<T>(_: T.Type) -> T? { Held.self == T.self ? unsafeBitCast(held, to: T.self) : nil }
            switch attributeType {
            case .stringAttributeType: return exactly(String.self).map(Value.string)
            case .integer64AttributeType:
                return (exactly(Int64.self) ?? exactly(Int.self).map(Int64.init)).map(Value.int)
            case .integer32AttributeType:
                return (exactly(Int32.self) ?? exactly(Int.self).flatMap { Int32(exactly: $0) }).map { .int(Int64($0)) }
            case .integer16AttributeType:
                return (exactly(Int16.self) ?? exactly(Int.self).flatMap { Int16(exactly: $0) }).map { .int(Int64($0)) }
            case .doubleAttributeType: return exactly(Double.self).map(Value.double)
            case .floatAttributeType: return exactly(Float.self).map(Value.float)
            case .booleanAttributeType: return exactly(Bool.self).map(Value.bool)
            case .dateAttributeType: return exactly(Date.self).map(Value.date)
            case .binaryDataAttributeType: return exactly(Data.self).map(Value.data)
            case .UUIDAttributeType: return exactly(UUID.self).map(Value.uuid)
            case .decimalAttributeType: return exactly(Decimal.self).map(Value.decimal)
            default: return nil
            }
        }
        return open(value)
    }

    /// The object value of an engine value that needs no conversion: the payload itself.
    static func plainValue(_ value: Value) -> Any? {
        switch value {
        case .null: return nil
        case .int(let v): return v
        case .double(let v): return v
        case .float(let v): return v
        case .decimal(let v): return v
        case .bool(let v): return v
        case .string(let v): return v
        case .date(let v): return v
        case .uuid(let v): return v
        case .uri(let v): return v
        case .data(let v): return v
        case .reference(let v): return v
        }
    }
}
