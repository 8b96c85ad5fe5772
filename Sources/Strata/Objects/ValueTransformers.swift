import Foundation
import StrataSynchronization
import Synchronization

/// Turns the value of a transformable attribute into data for the store and back (Core Data's
/// `NSValueTransformer` for transformable attributes). Register one by name with
/// ``ValueTransformers/register(_:forName:)`` and name it in the attribute's
/// `valueTransformerName`.
public protocol AttributeValueTransformer: Sendable {
    /// Encodes a value for the store.
    ///
    /// - Throws: when the value cannot be encoded; the save fails with that error.
    func transformedValue(_ value: Any) throws -> Data
    /// Decodes a stored value.
    ///
    /// - Throws: when the data cannot be decoded; the fault fails with that error.
    func reverseTransformedValue(_ data: Data) throws -> Any
}

/// The default transformer: property-list types (strings, numbers, dates, data, arrays and
/// dictionaries of them) as binary property lists, as Core Data's secure unarchiving default
/// accepts the standard value classes.
public struct PropertyListValueTransformer: AttributeValueTransformer {
    /// Creates the transformer.
    public init() {}

    /// Encodes a property-list value as a binary property list.
    public func transformedValue(_ value: Any) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
    }

    /// Decodes a property list, as `PropertyListSerialization` returns it; a damaged binary
    /// one throws ``ModelError`` `invalidValue`.
    public func reverseTransformedValue(_ data: Data) throws -> Any {
        try PropertyListReading.object(from: data)
    }
}

/// The registry of named transformers.
public enum ValueTransformers {
    private static let registry = Lock<[String: any AttributeValueTransformer]>([:])

    /// Registers `transformer` under `name`, replacing any other of that name.
    public static func register(_ transformer: any AttributeValueTransformer, forName name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`, if any.
    public static func transformer(forName name: String) -> (any AttributeValueTransformer)? {
        registry.withLock { $0[name] }
    }

    private static func transformer(for attribute: AttributeDescription) throws -> any AttributeValueTransformer {
        guard let name = attribute.valueTransformerName, !name.isEmpty,
            !["NSSecureUnarchiveFromData", "NSSecureUnarchiveFromDataTransformer"].contains(name)
        else { return PropertyListValueTransformer() }
        guard let transformer = transformer(forName: name) else {
            throw CoreDataError(
                .coreData, "no value transformer is registered under the name \(name) (attribute \(attribute.name))",
                key: attribute.name)
        }
        return transformer
    }

    /// Encodes a transformable attribute's value.
    static func encode(_ value: Any, for attribute: AttributeDescription) throws -> Data {
        do {
            return try transformer(for: attribute).transformedValue(value)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(
                .keyValueValidation,
                "\(attribute.name): the value \(type(of: value)) could not be transformed: \(error)",
                key: attribute.name)
        }
    }

    /// Decodes a transformable attribute's stored data.
    static func decode(_ data: Data, for attribute: AttributeDescription) throws -> Any {
        do {
            return try transformer(for: attribute).reverseTransformedValue(data)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(
                .coreData, "\(attribute.name): stored data could not be transformed back: \(error)", key: attribute.name
            )
        }
    }
}
