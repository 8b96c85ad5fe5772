/// A property whose value is the result of a fetch request, evaluated when the property is first
/// read (Core Data's `NSFetchedPropertyDescription`).
///
/// A fetched property is not stored: ``ManagedObject/value(forKey:)`` runs ``fetchRequest`` in
/// the object's context and returns the fetched objects as an array, which the object keeps
/// until ``ManagedObjectContext/refresh(_:mergeChanges:)`` refreshes it. In the request's
/// predicate, `$FETCH_SOURCE` stands for the object whose property is read and
/// `$FETCHED_PROPERTY` for this description (`$FETCHED_PROPERTY.userInfo.key` reads its
/// ``PropertyDescription/userInfo``), as in Core Data.
///
/// Fetched properties do not change the entity's ``EntityDescription/versionHash``: adding or
/// editing one keeps the store compatible.
///
/// `Sendable` once its model is frozen; see ``PropertyDescription``.
// @unchecked Sendable: inherits PropertyDescription's rule (immutable once frozen, every setter
// traps after that). The fetch request is copied before each use, never changed by Strata.
public final class FetchedPropertyDescription: PropertyDescription, @unchecked Sendable {
    /// The request whose results are the property's value. The default is `nil`, which makes the
    /// value an empty array.
    ///
    /// The request is read, never changed, when the property is evaluated: its entity (or
    /// entity name), predicate, sort descriptors, limit, offset, result type and sub-entity
    /// setting apply.
    public var fetchRequest: FetchRequest<FetchRequestResult>? {
        willSet { ensureMutable("fetchRequest") }
    }

    /// Creates a fetched property with an empty name and no request.
    public override init() {
        super.init()
    }

    /// Creates a fetched property.
    ///
    /// - Parameters:
    ///   - name: the property's name.
    ///   - fetchRequest: the request whose results are its value.
    public convenience init(name: String, fetchRequest: FetchRequest<FetchRequestResult>?) {
        self.init()
        self.name = name
        self.fetchRequest = fetchRequest
    }

    override var kindTag: String { "fetchedProperty" }
}
