import Foundation
internal import StrataStore

/// Converts the values batch requests are given into stored values.
enum BatchValues {
    /// The stored value of `value` for `attribute` of `entity`: a ``FetchExpression`` constant
    /// unwrapped, `NSNull` read as `nil`, numbers converted exactly to the attribute's type.
    ///
    /// - Throws: ``CoreDataError`` `validationMissingMandatoryProperty` for `nil` on a required
    ///   attribute, `keyValueValidation` for a value of another type or an expression that is
    ///   not a constant.
    static func storeValue(
        _ value: Any?, for attribute: AttributeDescription, entity: EntityDescription
    ) throws -> Value {
        var plain = value
        if let expression = plain as? FetchExpression {
            guard case .constant(let constant) = expression else {
                throw CoreDataError(
                    .keyValueValidation,
                    "\(entity.entityName).\(attribute.name): a batch request takes constant values, not \(expression)",
                    key: attribute.name)
            }
            plain = constant
        }
        if plain is NSNull { plain = nil }
        if plain == nil, !attribute.isOptional {
            throw CoreDataError(
                .validationMissingMandatoryProperty, "\(entity.entityName).\(attribute.name) is required",
                key: attribute.name)
        }
        return try ValueConversion.storeValue(
            try ValueConversion.normalize(plain, for: attribute, entity: entity), for: attribute)
    }

    /// The stored attribute of `entity` named by `key` (a name or an ``AttributeDescription``).
    ///
    /// - Throws: ``CoreDataError`` `keyValueValidation` when `key` names no stored attribute.
    static func attribute(_ key: AnyHashable, of entity: EntityDescription) throws -> AttributeDescription {
        let name = (key.base as? PropertyDescription)?.name ?? key.base as? String
        guard let name, let attribute = entity.attributesByName[name], !attribute.isTransient,
            !(attribute is DerivedAttributeDescription)
        else {
            throw CoreDataError(
                .keyValueValidation, "\(entity.entityName) has no stored attribute \(key.base) a batch request can set",
                key: name)
        }
        return attribute
    }
}
