import Foundation

/// A type a fetch request can return: managed objects, object IDs, dictionaries or counts.
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
/// Data's `NSFetchRequest`). Use it on one context's queue.
public final class FetchRequest<ResultType: FetchRequestResult>: CustomStringConvertible {
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
    /// How many objects to realize at a time; 0 realizes all (kept for API parity).
    public var fetchBatchSize = 0
    /// What the fetch returns. The default is `.managedObjectResultType`.
    public var resultType: FetchRequestResultType = .managedObjectResultType
    /// Whether unsaved changes of the context are taken into account. The default is `true`.
    public var includesPendingChanges = true
    /// Whether objects of sub-entities match. The default is `true`.
    public var includesSubentities = true
    /// Whether objects come back as faults. Strata loads the row it read anyway, so objects
    /// come back realized; the default is `true`.
    public var returnsObjectsAsFaults = true
    /// Whether property values are fetched with the objects. The default is `true`.
    public var includesPropertyValues = true

    /// Creates a request for the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// Creates a request with no entity yet.
    public init() {}

    /// The entity and predicate.
    public var description: String {
        "<FetchRequest: entity \(entity?.name ?? entityName ?? "?"), predicate \(predicate.map { "\($0)" } ?? "nil")>"
    }

    /// The entity the request names in `model`: the entity of that name, else the entity whose
    /// class has that name (as `fetchRequest()` of a subclass names it).
    func resolveEntity(in model: ManagedObjectModel) throws -> EntityDescription {
        if let entity { return entity }
        guard let name = entityName,
            let entity = model.entitiesByName[name]
                ?? model.entities.first(where: { $0.managedObjectClassName.split(separator: ".").last.map(String.init) == name })
        else {
            throw CoreDataError(.coreData, "the fetch request names no entity of the model (\(entityName ?? "nil"))")
        }
        return entity
    }
}

extension FetchRequestResult where Self: ManagedObject {
    /// A fetch request for this subclass's entity (the entity named as the class, or whose
    /// class name is this class), as Core Data's generated `fetchRequest()`.
    public static func fetchRequest() -> FetchRequest<Self> {
        FetchRequest<Self>(entityName: String(describing: Self.self))
    }
}
