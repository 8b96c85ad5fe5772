/// An attribute whose value is computed from other values of its object when the object is
/// saved (Core Data's `NSDerivedAttributeDescription`).
///
/// Strata computes ``derivationExpression`` for every inserted or updated object of the entity
/// on ``ManagedObjectContext/save()``, and again for the objects a save changes through the
/// relationship the expression reads, so that the stored value is always current, as Core
/// Data's store does. The value is stored like any other attribute, so fetches, sorts and fetch
/// indexes use it. It is read-only: a save of an object whose derived attribute was set to
/// another value fails with ``CoreDataError`` `managedObjectValidation` naming the object and key.
///
/// The expressions Core Data supports, each checked when the model is used (a ``ModelError``
/// ``ModelError/Code/invalidModel`` naming the entity, attribute and expression otherwise):
/// - a key path to an attribute of the object or of an object reached through to-one
///   relationships (`name`, `department.name`), copied;
/// - `now()`, the date of the save (a Date attribute);
/// - `lowercase:(key)`, `uppercase:(key)` and `canonical:(key)` (case and diacritics folded) of a
///   string key path (a String attribute);
/// - `relationship.@count` or `count:(relationship)` of a to-many relationship;
/// - `relationship.@sum.key`, `@max`, `@min`, `@avg`, or `sum:(relationship.key)`, `max:`,
///   `min:`, `average:` of the values of a to-many relationship's objects.
///
/// `Sendable` once its model is frozen; see ``PropertyDescription``.
// @unchecked Sendable: inherits PropertyDescription's rule (immutable once frozen, every setter
// traps after that). The expression holds no objects: only key paths, function names and constants.
public final class DerivedAttributeDescription: AttributeDescription, @unchecked Sendable {
    /// The expression whose value the attribute takes on save. The default is `nil`, which the
    /// model refuses when it is used.
    public var derivationExpression: FetchExpression? {
        willSet { ensureMutable("derivationExpression") }
    }

    /// Creates a derived attribute with an empty name, an undefined type and no expression.
    public override init() {
        super.init()
    }

    /// Creates a derived attribute (Core Data's `init(name:type:derivationExpression:)`).
    ///
    /// - Parameters:
    ///   - name: the attribute's name.
    ///   - type: the type of its values.
    ///   - derivationExpression: the expression whose value it takes on save.
    public convenience init(name: String, type: AttributeType, derivationExpression: FetchExpression) {
        self.init()
        self.name = name
        self.type = type
        self.derivationExpression = derivationExpression
    }

    override var kindTag: String { "derivedAttribute" }
}
