internal import StrataStore

/// One uniqueness constraint of the entity declaring it, with the values an object has for it
/// as the store compares them: attribute values as stored values (exact: dates to the fraction
/// of a second, data by content), related objects by ID.
struct ConstraintKey: Hashable {
    /// The entity declaring the constraint (whose objects and sub-entities' objects it keeps apart).
    var owner: ObjectIdentifier
    /// The constrained properties' names.
    var constraint: [String]
    /// The object's values for them.
    private var values: [ConstrainedValue]

    /// The key of `object`'s values for `constraint` of `owner`, or `nil` when one of them is nil
    /// (a constraint does not apply to missing values).
    ///
    /// - Throws: ``CoreDataError`` when a transformable value has no transformer that encodes it.
    init?(of object: ManagedObject, _ constraint: [String], owner: EntityDescription) throws {
        var values: [ConstrainedValue] = []
        for name in constraint {
            guard let slot = object.runtime.slots[name], let value = object.values[slot] else { return nil }
            if let attribute = object.runtime.properties[slot] as? AttributeDescription {
                values.append(.stored(try ValueConversion.storeValue(value, for: attribute)))
            } else if let id = value as? ManagedObjectID {
                values.append(.object(id))
            } else {
                return nil
            }
        }
        self.owner = ObjectIdentifier(owner)
        self.constraint = constraint
        self.values = values
    }
}

/// A constrained property's value as the store compares it: a stored value or a related object's ID.
private enum ConstrainedValue: Hashable {
    case stored(Value)
    case object(ManagedObjectID)
}
