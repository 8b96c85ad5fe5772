import Foundation
import OrderedCollections

extension ManagedObject {
    /// The model's checks of a value for `key` (the body of `validateValue(_:forKey:)`).
    func validateAgainstModel(_ value: Any?, forKey key: String) throws {
        // The slot being validated, unless an override asks about another key.
        let hinted = Int(validatingSlot)
        let slot = hinted >= 0 && runtime.names[hinted] == key ? hinted : try runtime.slot(key)
        let property = runtime.properties[slot]
        func fail(_ code: CoreDataError.Code, _ reason: String) -> CoreDataError {
            CoreDataError(code, "\(entity.entityName).\(key) \(reason)", object: self, key: key, value: value)
        }
        if let relationship = property as? RelationshipDescription {
            if relationship.isToMany {
                let count = (value as? Set<ManagedObject>)?.count ?? (value as? [ManagedObject])?.count ?? 0
                if count == 0 && !relationship.isOptional && relationship.minCount == 0 {
                    throw fail(.validationRelationshipLacksMinimumCount, "needs at least one object")
                }
                if relationship.minCount > 0 && count < relationship.minCount
                    && !(relationship.isOptional && count == 0)
                {
                    throw fail(
                        .validationRelationshipLacksMinimumCount,
                        "has \(count) objects; at least \(relationship.minCount) are needed")
                }
                if relationship.maxCount > 0 && count > relationship.maxCount {
                    throw fail(
                        .validationRelationshipExceedsMaximumCount,
                        "has \(count) objects; at most \(relationship.maxCount) are allowed")
                }
            } else if value == nil && !relationship.isOptional {
                throw fail(.validationMissingMandatoryProperty, "is required")
            }
            if let value { try checkValidationPredicates(of: property, value, fail: fail) }
            return
        }
        guard let attribute = property as? AttributeDescription else { return }
        guard let present = value else {
            if !attribute.isOptional && !attribute.isTransient {
                throw fail(.validationMissingMandatoryProperty, "is required")
            }
            return
        }
        // A value of the wrong type, kept by setValue(_:forKey:), is invalid (Core Data's
        // "Unacceptable type of value for attribute"). Derived values are computed on save and
        // cannot be set, so they always have the attribute's type.
        if !(attribute is DerivedAttributeDescription), runtime.exactTypes[slot] != ObjectIdentifier(type(of: present)),
            (try? ValueConversion.normalize(present, for: attribute, entity: entity)) == nil
        {
            throw fail(
                .managedObjectValidation,
                "holds \(attribute.attributeType) values; \(type(of: present)) \(present) is not one")
        }
        if !runtime.checksValues[slot] { return }
        if let string = present as? String {
            if let minimum = attribute.minValue.flatMap(FetchValue.number), Double(string.count) < minimum {
                throw fail(.validationStringTooShort, "is shorter than \(Int(minimum)) characters")
            }
            if let maximum = attribute.maxValue.flatMap(FetchValue.number), Double(string.count) > maximum {
                throw fail(.validationStringTooLong, "is longer than \(Int(maximum)) characters")
            }
            if let pattern = attribute.regularExpressionString, !pattern.isEmpty {
                guard let expression = try? NSRegularExpression(pattern: "^(?:\(pattern))$") else {
                    throw fail(.validationStringPatternMatching, "has an invalid regular expression \(pattern)")
                }
                let range = NSRange(string.startIndex..., in: string)
                if expression.firstMatch(in: string, range: range) == nil {
                    throw fail(.validationStringPatternMatching, "does not match \(pattern)")
                }
            }
        } else if let date = present as? Date {
            if let minimum = attribute.minValue as? Date, date < minimum {
                throw fail(.validationDateTooSoon, "is earlier than \(minimum)")
            }
            if let maximum = attribute.maxValue as? Date, date > maximum {
                throw fail(.validationDateTooLate, "is later than \(maximum)")
            }
        } else if let number = FetchValue.number(present) {
            if let minimum = attribute.minValue.flatMap(FetchValue.number), number < minimum {
                throw fail(.validationNumberTooSmall, "is smaller than \(minimum)")
            }
            if let maximum = attribute.maxValue.flatMap(FetchValue.number), number > maximum {
                throw fail(.validationNumberTooLarge, "is larger than \(maximum)")
            }
        }
        try checkValidationPredicates(of: property, present, fail: fail)
    }

    /// Checks `value` against `property`'s ``PropertyDescription/validationPredicates``, each
    /// evaluated with the value as `SELF`; the first that fails throws with its warning.
    private func checkValidationPredicates(
        of property: PropertyDescription, _ value: Any, fail: (CoreDataError.Code, String) -> CoreDataError
    ) throws {
        for (index, predicate) in property.validationPredicates.enumerated() where !predicate.evaluate(with: value) {
            let warning = index < property.validationWarnings.count ? "\(property.validationWarnings[index])" : ""
            let reason = warning.isEmpty ? "fails the validation predicate \(predicate.predicateFormat)" : warning
            throw fail(.managedObjectValidation, reason)
        }
    }

    /// Validates each persistent property with ``validateValue(_:forKey:)``, collecting errors.
    /// When the class does not override `validateValue(_:forKey:)`, a value the model surely
    /// accepts (``ValidationShortcut``) is passed without the call.
    func validateProperties() throws {
        var errors: [CoreDataError] = []
        let shortcuts = isLoaded && lazyRow == nil && !ValidateValueOverride.isOverridden(in: type(of: self))
        for slot in runtime.validatedSlots {
            if shortcuts, passesValidationShortcut(slot) { continue }
            var value = try publicValue(slot)
            let outer = validatingSlot
            validatingSlot = Int16(exactly: slot) ?? -1
            defer { validatingSlot = outer }
            do {
                try validateValue(&value, forKey: runtime.names[slot])
            } catch var error as CoreDataError {
                // An override's error names the object for `NSValidationObjectErrorKey` too.
                if error.validated == nil, error.objectID == nil || error.objectID == objectID {
                    error.objectID = objectID
                    error.validated = ValidatedValue(object: self, value: value)
                }
                errors.append(error)
            }
        }
        try CoreDataError.throwing(errors)
    }
}

extension ManagedObject {
    /// Checks that deny delete rules allow the deletion (the body of `validateForDelete()`).
    func validateDenyRules() throws {
        var errors: [CoreDataError] = []
        for (slot, property) in runtime.properties.enumerated() {
            guard let relationship = property as? RelationshipDescription, relationship.deleteRule == .denyDeleteRule
            else { continue }
            try fireFault()
            try loadToMany(slot)
            let related: [ManagedObjectID]
            switch values[slot] {
            case let id as ManagedObjectID: related = [id]
            case let ids as OrderedSet<ManagedObjectID>: related = Array(ids)
            default: related = []
            }
            let remaining = related.filter { managedObjectContext?.object(with: $0).isDeleted != true }
            if !remaining.isEmpty {
                errors.append(
                    CoreDataError(
                        .validationRelationshipDeniedDelete,
                        "\(entity.entityName).\(relationship.name) denies the delete: it still has \(remaining.count) object(s)",
                        object: self, key: relationship.name))
            }
        }
        try CoreDataError.throwing(errors)
    }
}
