import Foundation

/// Converts the values of composite attributes (``CompositeAttributeDescription``): checks what
/// users set, and encodes the dictionary into the one column that stores it.
///
/// The stored form is a binary property list of the elements that have a value, each as a
/// property-list value (UUIDs, URLs and decimals as strings, nested composites as
/// dictionaries), read back to the elements' types.
enum CompositeValues {
    /// The dictionary a composite holds for `value`: each element converted to its type as a
    /// plain attribute's value is.
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` for a value that is not a dictionary of
    ///   the composite's elements, or an element value that does not fit.
    static func normalize(
        _ value: Any, for composite: CompositeAttributeDescription, entity: EntityDescription
    ) throws -> [String: Any] {
        let dictionary: [String: Any]
        if let plain = value as? [String: Any] {
            dictionary = plain
        } else if let bridged = value as? NSDictionary, let plain = bridged as? [String: Any] {
            dictionary = plain
        } else {
            throw CoreDataError(
                .keyValueValidation,
                "\(entity.entityName).\(composite.name) is a composite attribute and holds [String: Any] dictionaries, not \(type(of: value))",
                key: composite.name)
        }
        let elements = composite.elementsByName
        var result: [String: Any] = [:]
        for (key, element) in dictionary {
            guard let attribute = elements[key] else {
                throw CoreDataError(
                    .keyValueValidation,
                    "\(entity.entityName).\(composite.name) has no element \(key) (elements: \(composite.elements.map(\.name).joined(separator: ", ")))",
                    key: composite.name)
            }
            guard let element = FetchValue.unwrap(element) else { continue }
            result[key] = try ValueConversion.normalize(element, for: attribute, entity: entity)
        }
        return result
    }

    /// The stored bytes of a composite's dictionary.
    ///
    /// - Throws: ``CoreDataError`` when an element value cannot be stored.
    static func encode(_ value: Any, for composite: CompositeAttributeDescription) throws -> Data {
        guard let dictionary = value as? [String: Any] else {
            throw CoreDataError(
                .coreData, "\(composite.qualifiedName) holds \(type(of: value)), not a dictionary of its elements")
        }
        do {
            return try PropertyListSerialization.data(
                fromPropertyList: propertyList(dictionary, composite), format: .binary, options: 0)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.coreData, "\(composite.qualifiedName) cannot be stored: \(error)")
        }
    }

    /// The dictionary of stored bytes.
    ///
    /// - Throws: ``CoreDataError`` when the bytes are not a stored composite.
    static func decode(_ data: Data, for composite: CompositeAttributeDescription) throws -> [String: Any] {
        let plist: Any
        do {
            plist = try PropertyListReading.object(from: data)
        } catch {
            throw CoreDataError(
                .coreData, "the stored value of \(composite.qualifiedName) is not a composite: \(error)")
        }
        guard let stored = plist as? [String: Any] else {
            throw CoreDataError(.coreData, "the stored value of \(composite.qualifiedName) is not a dictionary")
        }
        return try value(stored, composite)
    }

    /// The property list of a composite's dictionary.
    private static func propertyList(
        _ dictionary: [String: Any], _ composite: CompositeAttributeDescription
    ) throws -> [String: Any] {
        let elements = composite.elementsByName
        var result: [String: Any] = [:]
        for (key, value) in dictionary {
            guard let element = elements[key] else { continue }
            switch value {
            case let nested as [String: Any]:
                guard let inner = element as? CompositeAttributeDescription else {
                    throw CoreDataError(
                        .coreData, "\(composite.qualifiedName).\(key) holds a dictionary but is not a composite")
                }
                result[key] = try propertyList(nested, inner)
            case let v as Int16: result[key] = Int64(v)
            case let v as Int32: result[key] = Int64(v)
            case let v as Float: result[key] = Double(v)
            case let v as Decimal: result[key] = v.description
            case let v as UUID: result[key] = v.uuidString
            case let v as URL: result[key] = v.absoluteString
            case is Int64, is Double, is Bool, is String, is Date, is Data: result[key] = value
            default:
                throw CoreDataError(
                    .coreData,
                    "\(composite.qualifiedName).\(key) holds \(type(of: value)), which a composite element cannot store"
                )
            }
        }
        return result
    }

    /// The dictionary of a stored property list, each element of its type.
    private static func value(
        _ stored: [String: Any], _ composite: CompositeAttributeDescription
    ) throws -> [String: Any] {
        var result: [String: Any] = [:]
        for element in composite.elements {
            guard let value = stored[element.name] else { continue }
            let converted: Any?
            switch element.attributeType {
            case .compositeAttributeType:
                // An element declared composite but not a ``CompositeAttributeDescription`` has no elements to read.
                converted = try (value as? [String: Any]).flatMap { nested in
                    try (element as? CompositeAttributeDescription).map { try self.value(nested, $0) }
                }
            case .integer16AttributeType: converted = ValueConversion.integer(value).flatMap { Int16(exactly: $0) }
            case .integer32AttributeType: converted = ValueConversion.integer(value).flatMap { Int32(exactly: $0) }
            case .integer64AttributeType: converted = ValueConversion.integer(value)
            case .doubleAttributeType: converted = FetchValue.number(value)
            case .floatAttributeType: converted = FetchValue.number(value).map { Float($0) }
            case .decimalAttributeType:
                converted = (value as? String).flatMap {
                    Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX"))
                }
            case .booleanAttributeType: converted = value as? Bool ?? ValueConversion.integer(value).map { $0 != 0 }
            case .UUIDAttributeType: converted = (value as? String).flatMap(UUID.init(uuidString:))
            case .URIAttributeType: converted = (value as? String).flatMap(URL.init(string:))
            default: converted = value
            }
            guard let converted else {
                throw CoreDataError(
                    .coreData,
                    "the stored element \(composite.qualifiedName).\(element.name) is not a \(element.attributeType.xmlName)"
                )
            }
            result[element.name] = converted
        }
        return result
    }
}
