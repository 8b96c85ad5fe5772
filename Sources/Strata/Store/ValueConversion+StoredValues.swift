import Foundation
internal import StrataStore

extension ValueConversion {
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
