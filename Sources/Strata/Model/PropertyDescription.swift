import Foundation

/// A property of an entity: an attribute or a relationship (Core Data's `NSPropertyDescription`).
///
/// Properties are edited freely until their ``ManagedObjectModel`` is used by a persistent store
/// coordinator, which freezes it; setting any member after that stops the process with
/// "Can't modify an immutable model", as Core Data raises an exception.
///
/// Equality and hashing are identity: two descriptions are equal only when they are the same
/// object.
///
/// `Sendable`, with care: a property may be shared between threads once its model is frozen.
/// Before that, edit it on one thread at a time.
// @unchecked Sendable: every setter traps once the model is frozen (`frozen` is an atomic flag set
// with release ordering after the last write), so a frozen description is immutable and safe to
// share; unfrozen descriptions are builders that callers confine to one thread.
public class PropertyDescription: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The property's name, the key of its value in a managed object.
    public var name: String {
        willSet { ensureMutable("name") }
    }

    /// The entity the property belongs to, set when the property is added to an entity's
    /// ``EntityDescription/properties``; `nil` before that.
    ///
    /// The reference is weak (``AnchoredReference``): the entity owns its properties.
    public internal(set) var entity: EntityDescription? {
        get { entityReference.target }
        set { entityReference = AnchoredReference(newValue?.anchor) }
    }
    /// The storage of ``entity``.
    private var entityReference = AnchoredReference<EntityDescription>(nil)

    /// Whether the property may be `nil` (for a to-many relationship: empty) when its object is
    /// saved. The default is `true`.
    public var isOptional: Bool = true {
        willSet { ensureMutable("isOptional") }
    }

    /// Whether the property is transient: kept in memory with its object, never saved.
    /// The default is `false`.
    public var isTransient: Bool = false {
        willSet { ensureMutable("isTransient") }
    }

    /// Application data about the property (optional, as Core Data's). Strata does not read it.
    /// The default is empty.
    public var userInfo: [AnyHashable: Any]? = [:] {
        willSet { ensureMutable("userInfo") }
    }

    /// A string mixed into ``versionHash``, to mark a change that the hash would not otherwise
    /// see (such as a change of how a value is interpreted). The default is `nil`.
    public var versionHashModifier: String? {
        willSet { ensureMutable("versionHashModifier") }
    }

    /// The name the property had in an earlier model version, used by migration to match a
    /// renamed property (Xcode's "Renaming ID"). The default is `nil`.
    public var renamingIdentifier: String? {
        willSet { ensureMutable("renamingIdentifier") }
    }

    /// The predicates a value of the property must satisfy when its object is validated, each
    /// evaluated with the value as `SELF` (`SELF >= 0`, `length > 2`), in order; a `nil` value is
    /// not checked. Set with ``setValidationPredicates(_:withValidationWarnings:)``. The default
    /// is empty.
    public private(set) var validationPredicates: [FetchPredicate] = []

    /// The message of each of ``validationPredicates``, in the same order: the reason a validation
    /// error gives when that predicate fails. The default is empty.
    public private(set) var validationWarnings: [Any] = []

    /// Sets ``validationPredicates`` and their ``validationWarnings`` (Core Data's
    /// `setValidationPredicates(_:withValidationWarnings:)`); `nil` clears them.
    ///
    /// A value that fails a predicate makes validation fail with ``CoreDataError``
    /// `managedObjectValidation` naming the object, the key and the predicate's warning.
    ///
    /// - Important: Calling it once the model is frozen stops the process.
    public func setValidationPredicates(
        _ validationPredicates: [FetchPredicate]?, withValidationWarnings validationWarnings: [String]?
    ) {
        ensureMutable("validationPredicates")
        self.validationPredicates = validationPredicates ?? []
        self.validationWarnings = validationWarnings ?? []
    }

    /// Set when the model is frozen.
    let frozen = FreezeFlag()

    /// Creates a property with an empty name.
    public init() {
        name = ""
    }

    /// Core Data's version hash of the property (32 bytes, SHA-256): its name, optionality,
    /// transience and ``versionHashModifier``, and the facts of its kind (an attribute's type,
    /// external storage and history tombstone; a relationship's destination, inverse, counts and
    /// ordering; a composite's elements), laid out as Core Data lays them out, so that the hash
    /// equals the one Core Data and Xcode compute for the same model.
    ///
    /// ``userInfo``, default values, validation rules, the delete rule and
    /// ``renamingIdentifier`` do not change it.
    public var versionHash: Data { Data(CoreDataVersionHash.of(self)) }

    /// A hash of everything about the property that shapes how Strata stores its values: its
    /// name, kind, optionality, transience, ``versionHashModifier`` and the facts of its kind (an
    /// attribute's type and whether its value is kept in history tombstones; a relationship's
    /// destination, inverse, counts and ordering). 8 bytes, stable across runs and platforms;
    /// what a store's layout hashes are made of.
    var layoutHash: Data {
        var hasher = VersionHasher()
        hashLayoutFacts(into: &hasher)
        return hasher.data
    }

    /// Feeds the facts ``layoutHash`` covers; subclasses add their own after calling `super`.
    func hashLayoutFacts(into hasher: inout VersionHasher) {
        hasher.combine(kindTag)
        hasher.combine(name)
        hasher.combine(isOptional)
        hasher.combine(isTransient)
        hasher.combine(versionHashModifier)
    }

    /// Freezes the descriptions the property owns (a composite's elements); called when its
    /// model is frozen.
    func freezeParts() {}

    /// A tag distinguishing the kinds of property in version hashes.
    var kindTag: String { "property" }

    /// Traps when the model is frozen.
    ///
    /// - Parameter member: the member about to be set.
    func ensureMutable(_ member: String) {
        if frozen.isSet {
            immutableModelViolation("\(Swift.type(of: self)).\(member) of \(qualifiedName)")
        }
    }

    /// `Entity.name`, or `name` alone while the property has no entity.
    var qualifiedName: String {
        if let entity { return "\(entity.entityName).\(name)" }
        return name
    }

    /// Whether two descriptions are the same object.
    public static func == (lhs: PropertyDescription, rhs: PropertyDescription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The kind and qualified name, such as `AttributeDescription(Employee.salary)`.
    public var description: String { "\(Swift.type(of: self))(\(qualifiedName))" }
}
