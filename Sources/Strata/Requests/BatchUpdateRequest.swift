/// What executing a ``BatchUpdateRequest`` returns in its ``BatchUpdateResult/result`` (Core
/// Data's `NSBatchUpdateRequestResultType`).
public enum BatchUpdateRequestResultType: UInt, Sendable, Hashable {
    /// `true` when the request succeeded.
    case statusOnlyResultType = 0
    /// The `[ManagedObjectID]` of the updated objects.
    case updatedObjectIDsResultType = 1
    /// The number (`Int`) of objects updated.
    case updatedObjectsCountResultType = 2
}

/// A request setting attributes of every stored object of an entity that meets a predicate,
/// straight in the store in one transaction per store, without loading the objects (Core
/// Data's `NSBatchUpdateRequest`). Execute it with ``ManagedObjectContext/execute(_:)``; the
/// context's registered objects do not change, so merge the updated IDs with
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// As in Core Data, no validation rule, `willSave` or derived attribute runs; values are
/// converted to the attributes' types, required attributes cannot be set to `nil`, and a value
/// that would give two objects the values of a uniqueness constraint fails the request. A
/// request that fails writes nothing. Persistent history records the updates.
public final class BatchUpdateRequest: PersistentStoreRequest {
    /// The name of the entity whose objects are updated.
    public let entityName: String
    /// The entity whose objects are updated, when the request was made with one; else it is
    /// looked up by name in the executing context's model.
    public let entity: EntityDescription?
    /// Which objects to update; `nil` (the default) updates all.
    public var predicate: FetchPredicate?
    /// Whether objects of sub-entities are updated too. The default is `true`.
    public var includesSubentities = true
    /// The new values, by attribute name (or ``AttributeDescription``): constants, or
    /// ``FetchExpression/constant(_:)`` expressions; `NSNull` or `nil` clears an optional attribute.
    public var propertiesToUpdate: [AnyHashable: Any]?
    /// What the result holds. The default is ``BatchUpdateRequestResultType/statusOnlyResultType``.
    public var resultType: BatchUpdateRequestResultType = .statusOnlyResultType

    /// Creates a request updating objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
        self.entity = nil
    }

    /// Creates a request updating objects of `entity`.
    public init(entity: EntityDescription) {
        self.entityName = entity.entityName
        self.entity = entity
    }

    /// Updates the objects.
    ///
    /// - Throws: ``CoreDataError``: `keyValueValidation` for an unknown attribute or a value of
    ///   another type, `validationMissingMandatoryProperty` for `nil` on a required attribute,
    ///   `managedObjectConstraintMerge` when two objects would share a uniqueness constraint's
    ///   values, `persistentStoreOperation` when a store fails; nothing is written then.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        let fetch = FetchRequest<ManagedObjectID>(entityName: entityName)
        fetch.entity = entity
        fetch.predicate = predicate
        fetch.includesSubentities = includesSubentities
        let entity = try fetch.resolveEntity(in: coordinator.managedObjectModel)
        let update = try BatchUpdate(coordinator: coordinator, entity: entity, values: propertiesToUpdate ?? [:])
        var updated: [ManagedObjectID] = []
        var count = 0
        let wantsIDs = resultType == .updatedObjectIDsResultType
        try coordinator.withSaveLock { since in
            (updated, count) = try update.commit(matching: fetch, in: context, since: since, listingIDs: wantsIDs)
        }
        switch resultType {
        case .statusOnlyResultType: return BatchUpdateResult(result: true, resultType: resultType)
        case .updatedObjectIDsResultType: return BatchUpdateResult(result: updated, resultType: resultType)
        case .updatedObjectsCountResultType: return BatchUpdateResult(result: count, resultType: resultType)
        }
    }
}

/// What executing a ``BatchUpdateRequest`` returns (Core Data's `NSBatchUpdateResult`).
public final class BatchUpdateResult: PersistentStoreResult {
    /// The result the request's ``BatchUpdateRequest/resultType`` asked for: `true`, the
    /// `[ManagedObjectID]` updated, or their number as `Int`.
    public let result: Any?
    /// The kind of ``result``.
    public let resultType: BatchUpdateRequestResultType

    init(result: Any?, resultType: BatchUpdateRequestResultType) {
        self.result = result
        self.resultType = resultType
    }
}
