import Foundation

/// An attribute of an entity: a property holding a value of a fixed type (Core Data's
/// `NSAttributeDescription`).
///
/// Values are held as these Swift types: `Int16`, `Int32`, `Int64`, `Decimal`, `Double`,
/// `Float`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`; a transformable attribute holds
/// whatever its value transformer produces. ``defaultValue``, ``minValue`` and ``maxValue`` read
/// from a model file are of these types.
///
/// `Sendable` once its model is frozen; see ``PropertyDescription``.
// @unchecked Sendable: inherits PropertyDescription's rule (immutable once frozen, every setter
// traps after that).
public class AttributeDescription: PropertyDescription, @unchecked Sendable {
    /// The type of an attribute's values, the newer spelling of ``Strata/AttributeType``
    /// (Core Data's `NSAttributeDescription.AttributeType`). `Sendable`.
    ///
    /// The raw value is the matching ``Strata/AttributeType`` raw value.
    public struct AttributeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The raw value of the matching ``Strata/AttributeType`` case.
        public let rawValue: UInt

        /// Creates a type from the raw value of a ``Strata/AttributeType`` case.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The type matching an ``Strata/AttributeType`` case.
        public init(_ attributeType: Strata.AttributeType) { rawValue = attributeType.rawValue }

        /// No type: only valid for transient attributes.
        public static let undefined = AttributeType(.undefinedAttributeType)
        /// A 16-bit signed integer (`Int16`).
        public static let integer16 = AttributeType(.integer16AttributeType)
        /// A 32-bit signed integer (`Int32`).
        public static let integer32 = AttributeType(.integer32AttributeType)
        /// A 64-bit signed integer (`Int64`).
        public static let integer64 = AttributeType(.integer64AttributeType)
        /// A decimal number (`Decimal`).
        public static let decimal = AttributeType(.decimalAttributeType)
        /// A double-precision number (`Double`).
        public static let double = AttributeType(.doubleAttributeType)
        /// A single-precision number (`Float`).
        public static let float = AttributeType(.floatAttributeType)
        /// A string (`String`).
        public static let string = AttributeType(.stringAttributeType)
        /// A Boolean (`Bool`).
        public static let boolean = AttributeType(.booleanAttributeType)
        /// A date (`Date`).
        public static let date = AttributeType(.dateAttributeType)
        /// Binary data (`Data`).
        public static let binaryData = AttributeType(.binaryDataAttributeType)
        /// A UUID (`UUID`).
        public static let uuid = AttributeType(.UUIDAttributeType)
        /// A URI (`URL`).
        public static let uri = AttributeType(.URIAttributeType)
        /// A value stored as the data its value transformer makes of it.
        public static let transformable = AttributeType(.transformableAttributeType)
        /// A managed object ID.
        public static let objectID = AttributeType(.objectIDAttributeType)
        /// A group of named values, `[String: Any]`; see ``CompositeAttributeDescription``.
        public static let composite = AttributeType(.compositeAttributeType)

        /// The Xcode name of the type, such as `Integer 64`, or the raw value when unknown.
        public var description: String {
            Strata.AttributeType(rawValue: rawValue)?.xmlName ?? "AttributeType(rawValue: \(rawValue))"
        }
    }

    /// The type of the attribute's values. The default is ``Strata/AttributeType/undefinedAttributeType``.
    ///
    /// Always in step with ``type``.
    public var attributeType: Strata.AttributeType = .undefinedAttributeType {
        willSet { ensureMutable("attributeType") }
    }

    /// The type of the attribute's values, in the newer spelling; always in step with
    /// ``attributeType``.
    ///
    /// Setting a value whose raw value is no ``Strata/AttributeType`` case sets
    /// ``Strata/AttributeType/undefinedAttributeType``.
    public var type: AttributeType {
        get { AttributeType(attributeType) }
        set { attributeType = Strata.AttributeType(rawValue: newValue.rawValue) ?? .undefinedAttributeType }
    }

    /// The name of the type that holds the attribute's values.
    ///
    /// Unless set, this is the Swift type matching ``attributeType`` (`"Int64"`, `"String"`,
    /// `"Date"`, ...) and `nil` for undefined and transformable attributes. Set it to name the
    /// class a transformable attribute holds (Xcode's "Custom Class").
    public var attributeValueClassName: String? {
        get { customValueClassName ?? attributeType.valueTypeName }
        set {
            ensureMutable("attributeValueClassName")
            customValueClassName = newValue
        }
    }

    /// The class name set explicitly, if any.
    private var customValueClassName: String?

    /// The value a new object gets for this attribute. The default is `nil`.
    ///
    /// It should be of the Swift type matching ``attributeType``; a model file's default is
    /// converted to it when loaded.
    public var defaultValue: Any? {
        willSet { ensureMutable("defaultValue") }
    }

    /// Whether a large binary value may be kept outside its row. A hint; the default is `false`.
    public var allowsExternalBinaryDataStorage: Bool = false {
        willSet { ensureMutable("allowsExternalBinaryDataStorage") }
    }

    /// The name of the value transformer of a transformable attribute. The default is `nil`.
    public var valueTransformerName: String? {
        willSet { ensureMutable("valueTransformerName") }
    }

    /// Whether persistent history keeps the attribute's value in the tombstone of a deleted
    /// object (Xcode's "Preserve After Deletion"). The default is `false`.
    public var preservesValueInHistoryOnDeletion: Bool = false {
        willSet { ensureMutable("preservesValueInHistoryOnDeletion") }
    }

    /// The smallest valid value, or `nil` for no limit. The default is `nil`.
    ///
    /// For numbers it is a number of the attribute's type (`Int16`, `Int32`, `Int64`, `Decimal`,
    /// `Double`, `Float`); for dates a `Date`; for strings and binary data the smallest length
    /// as an `Int` (characters for strings, bytes for data), as Core Data's minimum.
    public var minValue: Any? {
        willSet { ensureMutable("minValue") }
    }

    /// The largest valid value, or `nil` for no limit. The default is `nil`.
    ///
    /// Of the same kinds as ``minValue``: a number or a `Date`, or for strings and binary data
    /// the largest length as an `Int`.
    public var maxValue: Any? {
        willSet { ensureMutable("maxValue") }
    }

    /// A regular expression (ICU syntax, as `NSRegularExpression`) that every value of a string
    /// attribute must match in full. The default is `nil`.
    public var regularExpressionString: String? {
        willSet { ensureMutable("regularExpressionString") }
    }

    /// Creates an attribute with an empty name and an undefined type.
    public override init() {
        super.init()
    }

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - name: the attribute's name.
    ///   - type: the type of its values.
    public convenience init(name: String, type: AttributeType) {
        self.init()
        self.name = name
        self.type = type
    }

    override var kindTag: String { "attribute" }

    override func hashLayoutFacts(into hasher: inout VersionHasher) {
        super.hashLayoutFacts(into: &hasher)
        hasher.combine(UInt64(attributeType.rawValue))
        hasher.combine(preservesValueInHistoryOnDeletion)
    }
}
