import OrderedCollections

/// What executing a ``BatchDeleteRequest`` returns in its ``BatchDeleteResult/result`` (Core
/// Data's `NSBatchDeleteRequestResultType`).
public enum BatchDeleteRequestResultType: UInt, Sendable, Hashable {
    /// `true` when the request succeeded.
    case resultTypeStatusOnly = 0
    /// The `[ManagedObjectID]` of the deleted objects.
    case resultTypeObjectIDs = 1
    /// The number (`Int`) of objects deleted.
    case resultTypeCount = 2
}

/// A request deleting objects straight in the store, in one transaction per store, without
/// loading them into a context (Core Data's `NSBatchDeleteRequest`). Execute it with
/// ``ManagedObjectContext/execute(_:)``; the context's registered objects do not change, so
/// merge the deleted IDs with ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// Relationships:
/// - a relationship with the **deny** rule that holds an object makes the whole request fail with
///   `validationRelationshipDeniedDelete`;
/// - a relationship with the **cascade** rule deletes its objects too, recursively, so that no
///   object is left holding a deleted one (Core Data documents that its batch delete does not
///   cascade; Strata does, since it keeps the relationship's rows consistent);
/// - the to-one inverses of surviving objects that point at a deleted object are set to `nil`
///   (**nullify**); when such an inverse is required the request fails with
///   `validationMissingMandatoryProperty`, since it would leave an invalid object;
/// - the deleted objects leave the many-to-many, ordered and inverse-less to-many relationships
///   that held them (their join rows are deleted).
///
/// A request that fails writes nothing. Persistent history records the deletions (and the
/// nullified relationships as updates).
public final class BatchDeleteRequest: PersistentStoreRequest {
    /// The fetch request selecting the objects to delete, when the request was made with one.
    /// Its entity, predicate, sort descriptors, offset and limit apply; pending changes of the
    /// executing context are not taken into account.
    public let fetchRequest: FetchRequest<FetchRequestResult>
    /// The objects to delete, when the request was made with object IDs.
    let objectIDs: [ManagedObjectID]?
    /// What the result holds. The default is ``BatchDeleteRequestResultType/resultTypeStatusOnly``.
    public var resultType: BatchDeleteRequestResultType = .resultTypeStatusOnly

    /// Creates a request deleting the objects `fetchRequest` finds in the stores.
    public init(fetchRequest: FetchRequest<FetchRequestResult>) {
        self.fetchRequest = fetchRequest
        self.objectIDs = nil
    }

    /// Creates a request deleting the objects with `objectIDs` (which must be permanent IDs of
    /// objects of one entity hierarchy, as in Core Data; Strata accepts any).
    public init(objectIDs: [ManagedObjectID]) {
        let request = FetchRequest<FetchRequestResult>()
        request.entity = objectIDs.first?.entity
        self.fetchRequest = request
        self.objectIDs = objectIDs
    }

    /// Deletes the objects.
    ///
    /// - Throws: ``CoreDataError``: `validationRelationshipDeniedDelete` and
    ///   `validationMissingMandatoryProperty` (see the type), `coreData` for a temporary object
    ///   ID, `persistentStoreOperation` when a store fails; nothing is written then.
    override func execute(
        in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator
    ) throws -> PersistentStoreResult {
        var deleted: [ManagedObjectID] = []
        try coordinator.withSaveLock { since in
            var deletion = BatchDeletion(coordinator: coordinator)
            var sequences: [String: UInt64] = [:]
            if let objectIDs {
                try deletion.delete(objectIDs)
            } else {
                // The rows the fetch read serve the deletion, and the store's commit, too.
                let found = try fetchRequest.storedMatches(in: context)
                try deletion.delete(found, in: context)
                for (store, sequence) in zip(found.stores.stores, found.stores.sequences) {
                    sequences[store.identifier] = sequence
                }
            }
            try deletion.commit(
                author: context.transactionAuthor, contextName: context.name, sequences: sequences, since: since)
            deleted = deletion.deleted.elements
        }
        switch resultType {
        case .resultTypeStatusOnly: return BatchDeleteResult(result: true, resultType: resultType)
        case .resultTypeObjectIDs: return BatchDeleteResult(result: deleted, resultType: resultType)
        case .resultTypeCount: return BatchDeleteResult(result: deleted.count, resultType: resultType)
        }
    }
}

/// What executing a ``BatchDeleteRequest`` returns (Core Data's `NSBatchDeleteResult`).
public final class BatchDeleteResult: PersistentStoreResult {
    /// The result the request's ``BatchDeleteRequest/resultType`` asked for: `true`, the
    /// `[ManagedObjectID]` deleted (cascaded deletions included), or their number as `Int`.
    public let result: Any?
    /// The kind of ``result``.
    public let resultType: BatchDeleteRequestResultType

    init(result: Any?, resultType: BatchDeleteRequestResultType) {
        self.result = result
        self.resultType = resultType
    }
}
