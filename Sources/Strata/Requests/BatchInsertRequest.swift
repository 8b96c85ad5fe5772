import Foundation

/// What executing a ``BatchInsertRequest`` returns in its ``BatchInsertResult/result`` (Core
/// Data's `NSBatchInsertRequestResultType`).
public enum BatchInsertRequestResultType: UInt, Sendable, Hashable {
    /// `true` when the request succeeded.
    case statusOnly = 0
    /// The `[ManagedObjectID]` of the inserted (or upserted) objects.
    case objectIDs = 1
    /// The number (`Int`) of objects inserted or upserted.
    case count = 2
}

/// A request inserting objects of one entity from dictionaries of attribute values, straight
/// in the store in one transaction, without creating managed objects in a context (Core Data's
/// `NSBatchInsertRequest`). Execute it with ``ManagedObjectContext/execute(_:)``, then merge the
/// IDs under `InsertedObjectsKey` with ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// Values are converted to the attributes' types; an attribute a dictionary leaves out gets its
/// default value; a required attribute without a value fails the request. Relationships cannot be
/// set, as in Core Data. Uniqueness constraints are honoured with the executing context's merge
/// policy: under `.error` (the default) an object with the constrained values of a stored or
/// earlier inserted one fails the request; under `mergeByPropertyObjectTrump` the existing row
/// takes the values the dictionary gives (an upsert), under `overwrite` all the new object's
/// values; under `mergeByPropertyStoreTrump` and `rollback` the existing row is kept. A request
/// that fails writes nothing. Persistent history records the insertions and upserts.
public final class BatchInsertRequest: PersistentStoreRequest {
    /// The name of the entity of the inserted objects.
    public let entityName: String
    /// The entity of the inserted objects, when the request was made with one; else it is
    /// looked up by name in the executing context's model.
    public let entity: EntityDescription?
    /// The objects to insert, as attribute values by name.
    public var objectsToInsert: [[String: Any]]?
    /// Called to fill one dictionary per object until it returns `true` (that call's
    /// dictionary is not inserted).
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called to fill one object (of ``entity``, in no context) per object until it returns
    /// `true` (that call's object is not inserted).
    public var managedObjectHandler: ((ManagedObject) -> Bool)?
    /// What the result holds. The default is ``BatchInsertRequestResultType/statusOnly``.
    public var resultType: BatchInsertRequestResultType = .statusOnly

    /// Creates a request inserting `objects` as objects of the entity named `entityName`.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.entity = nil
        self.objectsToInsert = objects
    }

    /// Creates a request inserting `objects` as objects of `entity`.
    public init(entity: EntityDescription, objects: [[String: Any]]) {
        self.entityName = entity.entityName
        self.entity = entity
        self.objectsToInsert = objects
    }

    /// Creates a request inserting objects of `entity` that `handler` fills in a dictionary,
    /// until it returns `true`.
    public init(entity: EntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entity.entityName
        self.entity = entity
        self.dictionaryHandler = handler
    }

    /// Creates a request inserting objects of the entity named `entityName` that `handler`
    /// fills in a dictionary, until it returns `true`.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.entity = nil
        self.dictionaryHandler = handler
    }

    /// Creates a request inserting objects of `entity` whose attributes `handler` sets, until
    /// it returns `true`.
    public init(entity: EntityDescription, managedObjectHandler handler: @escaping (ManagedObject) -> Bool) {
        self.entityName = entity.entityName
        self.entity = entity
        self.managedObjectHandler = handler
    }

    /// Creates a request inserting objects of the entity named `entityName` whose attributes
    /// `handler` sets, until it returns `true`.
    public init(entityName: String, managedObjectHandler handler: @escaping (ManagedObject) -> Bool) {
        self.entityName = entityName
        self.entity = nil
        self.managedObjectHandler = handler
    }

    /// Inserts the objects.
    ///
    /// - Throws: ``CoreDataError``: `keyValueValidation` for an unknown attribute or a value of
    ///   another type, `validationMissingMandatoryProperty` for a required attribute without a
    ///   value, `managedObjectConstraintMerge` for constrained values that exist already under
    ///   the `.error` merge policy, `persistentStoreOperation` when the store fails; nothing is
    ///   written then.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        let fetch = FetchRequest<ManagedObjectID>(entityName: entityName)
        fetch.entity = entity
        let entity = try fetch.resolveEntity(in: coordinator.managedObjectModel)
        var ids: [ManagedObjectID] = []
        var count = 0
        // Gathered first: the handlers run once, however often a concurrent save makes the insert run again.
        var objects: [[String: Any]] = objectsToInsert ?? []
        try forEachHandledObject(of: entity) { objects.append($0) }
        try coordinator.withSaveLock { since in
            var insertion = try BatchInsertion(
                coordinator: coordinator, entity: entity, policy: context.mergePolicy.mergeType,
                author: context.transactionAuthor, contextName: context.name, count: objects.count)
            try insertion.commit(objects, since: since)
            count = insertion.count
            if resultType == .objectIDs { ids = try insertion.objectIDs }
        }
        switch resultType {
        case .statusOnly: return BatchInsertResult(result: true, resultType: resultType)
        case .objectIDs: return BatchInsertResult(result: ids, resultType: resultType)
        case .count: return BatchInsertResult(result: count, resultType: resultType)
        }
    }

    /// Calls `body` with the values of every object the handlers fill (after ``objectsToInsert``).
    private func forEachHandledObject(of entity: EntityDescription, _ body: ([String: Any]) throws -> Void) throws {
        if let dictionaryHandler {
            while true {
                let dictionary = NSMutableDictionary()
                if dictionaryHandler(dictionary) { break }
                var values: [String: Any] = [:]
                for case let (key as String, value) in dictionary { values[key] = value }
                try body(values)
            }
        }
        if let managedObjectHandler {
            // An instance of the entity's class, as Core Data hands the handler, so that the
            // handler can cast it and set its typed properties.
            let type = ManagedObjectClassRegistry.type(for: entity)
            while true {
                let object = type.init(entity: entity, insertInto: nil)
                if managedObjectHandler(object) { break }
                var values: [String: Any] = [:]
                for (name, attribute) in entity.attributesByName
                where !attribute.isTransient && !(attribute is DerivedAttributeDescription) {
                    values[name] = object.value(forKey: name) ?? NSNull()
                }
                try body(values)
            }
        }
    }
}

/// What executing a ``BatchInsertRequest`` returns (Core Data's `NSBatchInsertResult`).
public final class BatchInsertResult: PersistentStoreResult {
    /// The result the request's ``BatchInsertRequest/resultType`` asked for: `true`, the
    /// `[ManagedObjectID]` inserted or upserted, or their number as `Int`.
    public let result: Any?
    /// The kind of ``result``.
    public let resultType: BatchInsertRequestResultType

    init(result: Any?, resultType: BatchInsertRequestResultType) {
        self.result = result
        self.resultType = resultType
    }
}
