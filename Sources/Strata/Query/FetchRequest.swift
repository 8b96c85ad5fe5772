import Foundation

/// A type a fetch request can return: managed objects, object IDs, dictionaries or counts
/// (Core Data's `NSFetchRequestResult`).
///
/// An untyped request is written as in Core Data, `FetchRequest<FetchRequestResult>(entityName:)`:
/// its results come back as `[any FetchRequestResult]`, to cast with `as! [[String: Any]]`,
/// `as! [ManagedObjectID]` or `as! [Employee]`. (A Swift protocol's existential does not
/// conform to the protocol, unlike an `@objc` one, so ``FetchRequest`` does not constrain its
/// result type; a fetch checks it.)
public protocol FetchRequestResult {}

extension ManagedObject: FetchRequestResult {}
extension ManagedObjectID: FetchRequestResult {}
extension Dictionary: FetchRequestResult where Key == String, Value == Any {}
extension Int: FetchRequestResult {}

/// What a fetch returns (Core Data's `NSFetchRequestResultType`).
public enum FetchRequestResultType: Sendable, Hashable {
    /// Managed objects.
    case managedObjectResultType
    /// Object IDs.
    case managedObjectIDResultType
    /// Dictionaries of property values.
    case dictionaryResultType
    /// The number of matching objects.
    case countResultType
}

/// A description of objects to fetch: an entity, a predicate, sort order and limits (Core
/// Data's `NSFetchRequest`). Use it on one context's queue; not `Sendable`.
///
/// `ResultType` is what a fetch returns: a ``ManagedObject`` subclass, ``ManagedObjectID``,
/// `[String: Any]`, `Int`, or ``FetchRequestResult`` for an untyped request. A fetch whose
/// ``resultType`` gives results of another type throws.
public final class FetchRequest<ResultType>: CustomStringConvertible {
    /// The name of the entity to fetch.
    public var entityName: String?
    /// The entity to fetch; when `nil`, ``entityName`` is looked up in the context's model.
    public var entity: EntityDescription?
    /// Which objects to fetch; `nil` fetches all.
    public var predicate: FetchPredicate?
    /// The order of the results.
    public var sortDescriptors: [FetchSortDescriptor]?
    /// The most objects to return; 0 means no limit.
    public var fetchLimit = 0
    /// How many matching objects to skip.
    public var fetchOffset = 0
    /// How many objects to realize at a time; 0 (the default) realizes every object at once.
    ///
    /// With managed-object results, ``ManagedObjectContext/fetchBatched(_:)`` returns a
    /// collection that realizes the objects of a batch when one of them is first accessed;
    /// ``ManagedObjectContext/fetch(_:)`` realizes the first batch and returns the other objects
    /// as faults.
    public var fetchBatchSize = 0
    /// What the fetch returns. The default is `.managedObjectResultType`.
    public var resultType: FetchRequestResultType = .managedObjectResultType
    /// The stores the fetch reads (Core Data's `affectedStores`); `nil`, the default, reads
    /// every store of the context's coordinator.
    public var affectedStores: [PersistentStore]?

    /// Whether unsaved changes of the context are taken into account. The default is `true`.
    ///
    /// Dictionary results always reflect the stores only, as in Core Data.
    public var includesPendingChanges = true
    /// Whether objects of sub-entities match. The default is `true`.
    public var includesSubentities = true
    /// Whether objects may come back as faults. The default is `true`.
    ///
    /// Strata loads the values of every object whose row the fetch read anyway (loading them
    /// costs less than reading them again when the fault fires); objects the fetch found without
    /// reading their rows (from an index alone) come back as faults. With `false`, every object
    /// comes back realized.
    public var returnsObjectsAsFaults = true
    /// Whether property values are fetched with the objects. The default is `true`; with `false`
    /// objects come back as faults and rows are read only when the predicate or sort needs them.
    public var includesPropertyValues = true
    /// The properties of dictionary results: property names (or key paths through to-one
    /// relationships), ``PropertyDescription``s, or ``ExpressionDescription``s. `nil` (the
    /// default) fetches every attribute and to-one relationship.
    public var propertiesToFetch: [Any]?
    /// The properties that group dictionary results: names, key paths, ``PropertyDescription``s
    /// or ``ExpressionDescription``s without function. Every property of ``propertiesToFetch``
    /// that is not an aggregate must be one of them.
    public var propertiesToGroupBy: [Any]?
    /// A condition on the grouped dictionaries (keys are their names), as SQL `HAVING`.
    public var havingPredicate: FetchPredicate?
    /// Whether repeated dictionaries are returned once. The default is `false`.
    public var returnsDistinctResults = false
    /// Relationship key paths (`department`, `department.employees`) whose objects are realized
    /// along with the results, each level in one batch of row reads.
    public var relationshipKeyPathsForPrefetching: [String]?

    /// Creates a request for the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// Creates a request with no entity yet.
    public init() {}

    /// The entity and predicate.
    public var description: String {
        "<FetchRequest: entity \(entity?.entityName ?? entityName ?? "?"), predicate \(predicate.map { "\($0)" } ?? "nil")>"
    }

    /// The entity the request names in `model`: the entity of that name, else the entity whose
    /// class has that name (as `fetchRequest()` of a subclass names it).
    func resolveEntity(in model: ManagedObjectModel) throws -> EntityDescription {
        if let entity { return entity }
        guard let name = entityName,
            let entity = model.entitiesByName[name]
                ?? model.entities.first(where: {
                    $0.managedObjectClassName.split(separator: ".").last.map(String.init) == name
                })
        else {
            throw CoreDataError(.coreData, "the fetch request names no entity of the model (\(entityName ?? "nil"))")
        }
        return entity
    }
}

extension FetchRequestResult where Self: ManagedObject {
    /// A fetch request for this subclass's entity (the entity named as the class, or whose
    /// class name is this class), as Core Data's generated `fetchRequest()`: so
    /// `let request = Employee.fetchRequest()` is a `FetchRequest<Employee>`.
    public static func fetchRequest() -> FetchRequest<Self> {
        FetchRequest<Self>(entityName: String(describing: Self.self))
    }
}

extension ManagedObject {
    /// An untyped fetch request for this class's entity (Core Data's `NSManagedObject.fetchRequest()`),
    /// chosen where the context asks for one, as in the batch-delete idiom
    /// `let request: FetchRequest<FetchRequestResult> = Employee.fetchRequest()`.
    ///
    /// Without such a context, `Employee.fetchRequest()` is the typed request of
    /// ``FetchRequestResult/fetchRequest()``, or of an Xcode-generated
    /// `class func fetchRequest() -> FetchRequest<Employee>` in the subclass.
    @_disfavoredOverload
    public class func fetchRequest() -> FetchRequest<FetchRequestResult> {
        FetchRequest<FetchRequestResult>(entityName: String(describing: self))
    }
}
