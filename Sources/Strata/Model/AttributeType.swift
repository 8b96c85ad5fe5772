/// The type of an attribute's values (Core Data's `NSAttributeType`). `Sendable`.
///
/// The raw values are Core Data's. ``AttributeDescription/AttributeType`` is the newer spelling of
/// the same set; ``AttributeDescription/attributeType`` and ``AttributeDescription/type`` stay in
/// sync.
public enum AttributeType: UInt, Sendable, Hashable, CaseIterable {
    /// No type: only valid for transient attributes.
    case undefinedAttributeType = 0
    /// A 16-bit signed integer, held as `Int16`.
    case integer16AttributeType = 100
    /// A 32-bit signed integer, held as `Int32`.
    case integer32AttributeType = 200
    /// A 64-bit signed integer, held as `Int64`.
    case integer64AttributeType = 300
    /// A decimal number, held as `Decimal`.
    case decimalAttributeType = 400
    /// A double-precision number, held as `Double`.
    case doubleAttributeType = 500
    /// A single-precision number, held as `Float`.
    case floatAttributeType = 600
    /// A string, held as `String`.
    case stringAttributeType = 700
    /// A Boolean, held as `Bool`.
    case booleanAttributeType = 800
    /// A date, held as `Date`.
    case dateAttributeType = 900
    /// Binary data, held as `Data`.
    case binaryDataAttributeType = 1000
    /// A UUID, held as `UUID`.
    case UUIDAttributeType = 1100
    /// A URI, held as `URL`.
    case URIAttributeType = 1200
    /// A value stored as the data a value transformer makes of it.
    case transformableAttributeType = 1800
    /// A managed object ID.
    case objectIDAttributeType = 2000
    /// A group of named values, held as `[String: Any]` (Core Data's composite attribute); see
    /// ``CompositeAttributeDescription``.
    case compositeAttributeType = 2100

    /// The name Xcode writes in a model's `attributeType` XML attribute, such as `"Integer 16"`.
    var xmlName: String {
        switch self {
        case .undefinedAttributeType: "Undefined"
        case .integer16AttributeType: "Integer 16"
        case .integer32AttributeType: "Integer 32"
        case .integer64AttributeType: "Integer 64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Boolean"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Binary"
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URI"
        case .transformableAttributeType: "Transformable"
        case .objectIDAttributeType: "Object ID"
        case .compositeAttributeType: "Composite"
        }
    }

    /// The type whose Xcode XML name is `xmlName`, if any.
    init?(xmlName: String) {
        guard let type = Self.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = type
    }

    /// The name of the Swift type that holds values of this type, or `nil` when it has none of
    /// its own (undefined, transformable).
    var valueTypeName: String? {
        switch self {
        case .undefinedAttributeType, .transformableAttributeType: nil
        case .integer16AttributeType: "Int16"
        case .integer32AttributeType: "Int32"
        case .integer64AttributeType: "Int64"
        case .decimalAttributeType: "Decimal"
        case .doubleAttributeType: "Double"
        case .floatAttributeType: "Float"
        case .stringAttributeType: "String"
        case .booleanAttributeType: "Bool"
        case .dateAttributeType: "Date"
        case .binaryDataAttributeType: "Data"
        case .UUIDAttributeType: "UUID"
        case .URIAttributeType: "URL"
        case .objectIDAttributeType: "ManagedObjectID"
        case .compositeAttributeType: "Dictionary<String, Any>"
        }
    }
}
